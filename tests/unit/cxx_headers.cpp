// The public headers must compile as C++ and link against the C library.
#include <tfrec/tfrec.h>

#include <cstring>

#include "harness.h"

static void test_headers_in_cxx(void)
{
    const char digits[] = "123456789";
    CHECK(tfrec_crc32c(digits, std::strlen(digits)) == 0xE3069283u);
    CHECK(tfrec_crc32c_unmask(tfrec_crc32c_mask(0x12345678u)) == 0x12345678u);
    CHECK(std::strcmp(tfrec_strerror(TFREC_E_BAD_DATA_CRC), "bad data CRC") == 0);
    tfrec_reader_options ro = tfrec_reader_options();
    tfrec_writer_options wo = tfrec_writer_options();
    CHECK(ro.compression == TFREC_COMPRESSION_AUTO && wo.level == 0);
}

TESTS(TEST(test_headers_in_cxx))

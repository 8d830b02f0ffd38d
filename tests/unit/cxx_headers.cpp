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
    CHECK(TFREC_CHECK_VERSION() == TFREC_OK);
}

// The INIT macros work in C++ too (built with -Wextra -pedantic, so a
// missing-initializer warning would show), and give what the library wants.
static void test_init_macros_in_cxx(void)
{
    tfrec_reader_options ro = TFREC_READER_OPTIONS_INIT;
    tfrec_writer_options wo = TFREC_WRITER_OPTIONS_INIT;
    tfrec_reader_stats st = TFREC_READER_STATS_INIT;
    tfrec_image_info info = TFREC_IMAGE_INFO_INIT;
    tfrec_bt_writer_options bo = TFREC_BT_WRITER_OPTIONS_INIT;
    tfrec_imagenet_options io = TFREC_IMAGENET_OPTIONS_INIT;
    tfrec_imagenet_merge_options mo = TFREC_IMAGENET_MERGE_OPTIONS_INIT;
    CHECK(ro.struct_size == sizeof ro && ro.compression == TFREC_COMPRESSION_AUTO);
    CHECK(wo.struct_size == sizeof wo && wo.level == 0);
    CHECK(st.struct_size == sizeof st && st.records == 0);
    CHECK(info.struct_size == sizeof info && info.width == 0);
    CHECK(bo.struct_size == sizeof bo && bo.batch_rows == 0);
    CHECK(io.struct_size == sizeof io && io.output_dir == NULL && io.num_tasks == 0);
    CHECK(mo.struct_size == sizeof mo && mo.parts == NULL && mo.open_source == NULL);
    /* A call through the core (the program links only libtfrec). */
    tfrec_reader *r = NULL;
    CHECK(tfrec_reader_open(&r, "/nonexistent/x.tfrecord", &ro) < 0 && r == NULL);
}

TESTS(TEST(test_headers_in_cxx), TEST(test_init_macros_in_cxx))

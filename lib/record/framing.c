/* Public framing helpers for code that builds records itself. */
#include "record/framing.h"

#include "tfrec/record.h"

void tfrec_record_header(uint8_t header[12], uint64_t len)
{
    for (int i = 0; i < 8; i++)
        header[i] = (uint8_t)(len >> (8 * i));
    frame_store32(header + 8, frame_length_crc(header));
}

uint32_t tfrec_record_footer_crc(const void *data, size_t len)
{
    return tfrec_crc32c_mask(tfrec_crc32c(data, len));
}

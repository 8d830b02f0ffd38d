/* Images: probe, verify at each level, and normalisation (the PNG and
 * CMYK/YCCK conversion paths): a converted image must itself be a JPEG
 * that verifies fully, with the dimensions reported.
 * Input: one control byte, then the image file. */
#include "fuzz.h"
#include "tfrec/tfrec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in in = { data, size };
    unsigned flags = fuzz_byte(&in);
    tfrec_image_info info = TFREC_IMAGE_INFO_INIT;
    int probed = tfrec_image_probe(in.p, in.n, &info);
    if (probed == TFREC_OK)
        FUZZ_ASSERT(info.width > 0 && info.height > 0 && info.format != TFREC_IMAGE_UNKNOWN);
    switch (flags & 3) {
    case 0: break; /* probe only */
    case 1:
    case 2: {
        int level = (flags & 3) == 1 ? TFREC_VERIFY_HEADER + ((flags >> 2) & 1) : TFREC_VERIFY_FULL;
        int rc = tfrec_image_verify(in.p, in.n, level, &info);
        if (rc == TFREC_OK)
            FUZZ_ASSERT(probed == TFREC_OK);
        break;
    }
    case 3: {
        tfrec_image_normalize_options o = TFREC_IMAGE_NORMALIZE_OPTIONS_INIT;
        o.quality = 1 + (int)((flags >> 2) & 7) * 14;
        o.verify = 1 + (int)((flags >> 5) & 1) * 2; /* HEADER or FULL */
        o.grayscale_to_rgb = (flags >> 6) & 1;
        uint8_t *out = NULL;
        size_t out_len = 0;
        int action = -1;
        tfrec_image_info oi = TFREC_IMAGE_INFO_INIT;
        int rc = tfrec_image_normalize(in.p, in.n, &o, &out, &out_len, &oi, &action);
        if (rc == TFREC_OK && action == TFREC_IMAGE_KEPT) {
            FUZZ_ASSERT(out == NULL);
        } else if (rc == TFREC_OK) {
            FUZZ_ASSERT(out != NULL && out_len > 0);
            tfrec_image_info back = TFREC_IMAGE_INFO_INIT;
            FUZZ_ASSERT(tfrec_image_verify(out, out_len, TFREC_VERIFY_FULL, &back) == TFREC_OK);
            FUZZ_ASSERT(back.format == TFREC_IMAGE_JPEG && back.width == oi.width &&
                        back.height == oi.height);
        }
        tfrec_free(out);
        break;
    }
    }
    return 0;
}

/* Re-encoding to RGB JPEG: CMYK/YCCK and grayscale JPEGs are decoded and
 * compressed again row by row, so memory stays at a few rows whatever the
 * image size; decoded pixel buffers (PNG) are compressed directly. */
#include "image/image_internal.h"

#include <stdlib.h>
#include <string.h>

#include "image/jpeg_glue.h"

#include <jerror.h>
#include "util/errors.h"

static void setup_compress(struct jpeg_compress_struct *cc, int w, int h, int components,
                           int quality)
{
    cc->image_width = (JDIMENSION)w;
    cc->image_height = (JDIMENSION)h;
    cc->input_components = components;
    cc->in_color_space = components == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(cc);
    /* force_baseline: quantisation tables stay 8-bit at low qualities. */
    jpeg_set_quality(cc, quality, TRUE);
}

/* 8-bit a*b/255, rounded. */
static inline JSAMPLE mul255(unsigned a, unsigned b)
{
    unsigned t = a * b + 128;
    return (JSAMPLE)((t + (t >> 8)) >> 8);
}

/* Adobe applications write CMYK inverted (0 = full ink) and mark the file
 * with an APP14 "Adobe" segment; others write plain CMYK. */
void tfrec_img_cmyk_row_to_rgb(const uint8_t *in, uint8_t *out, size_t w, int inverted)
{
    for (size_t x = 0; x < w; x++, in += 4, out += 3) {
        unsigned c = in[0], m = in[1], y = in[2], k = in[3];
        if (!inverted) {
            c = 255 - c;
            m = 255 - m;
            y = 255 - y;
            k = 255 - k;
        }
        out[0] = mul255(c, k);
        out[1] = mul255(m, k);
        out[2] = mul255(y, k);
    }
}

int tfrec_img_jpeg_to_rgb_jpeg(const uint8_t *d, size_t len, int quality, uint8_t **out,
                               size_t *out_len, tfrec_image_info *info)
{
    struct jpeg_decompress_struct dc;
    struct jpeg_compress_struct cc;
    img_jerr e;
    img_jprogress prog;
    img_mem_dest dest = { 0 };
    JSAMPLE *volatile in_row = NULL;
    JSAMPLE *volatile rgb_row = NULL;
    volatile int have_cc = 0;

    dc.err = tfrec_img_jerr_init(&e);
    cc.err = &e.pub;
    if (setjmp(e.jump)) {
        jpeg_destroy_decompress(&dc);
        if (have_cc)
            jpeg_destroy_compress(&cc);
        free(in_row);
        free(rgb_row);
        free(dest.buf);
        return tfrec_fail(NULL, TFREC_E_IMAGE, "cannot convert JPEG to RGB: %s", e.msg);
    }
    tfrec_img_jpeg_read_header_mem(&dc, &prog, d, len);
    if ((uint64_t)dc.image_width * dc.image_height > IMG_MAX_CONVERT_PIXELS) {
        snprintf(e.msg, sizeof e.msg, "%ux%u pixels is above the conversion limit of 2^28",
                 (unsigned)dc.image_width, (unsigned)dc.image_height);
        longjmp(e.jump, 1);
    }
    int cmyk = dc.jpeg_color_space == JCS_CMYK || dc.jpeg_color_space == JCS_YCCK;
    /* libjpeg turns YCCK into CMYK itself; CMYK to RGB is ours. */
    dc.out_color_space = cmyk ? JCS_CMYK : JCS_RGB;
    int inverted = dc.saw_Adobe_marker;
    jpeg_start_decompress(&dc);
    JDIMENSION w = dc.output_width;

    jpeg_create_compress(&cc);
    have_cc = 1;
    tfrec_img_mem_dest_init(&cc, &dest, len);
    setup_compress(&cc, (int)w, (int)dc.output_height, 3, quality);
    jpeg_start_compress(&cc, TRUE);

    in_row = malloc((size_t)w * (size_t)dc.output_components);
    rgb_row = cmyk ? malloc((size_t)w * 3) : NULL;
    if (!in_row || (cmyk && !rgb_row))
        ERREXIT1(&dc, JERR_OUT_OF_MEMORY, 12);
    while (dc.output_scanline < dc.output_height) {
        JSAMPROW r[1] = { in_row };
        jpeg_read_scanlines(&dc, r, 1);
        if (cmyk) {
            tfrec_img_cmyk_row_to_rgb(in_row, rgb_row, w, inverted);
            r[0] = rgb_row;
        }
        jpeg_write_scanlines(&cc, r, 1);
    }
    jpeg_finish_decompress(&dc);
    jpeg_finish_compress(&cc);
    if (info) {
        tfrec_image_info_init(info);
        info->format = TFREC_IMAGE_JPEG;
        info->width = (int)w;
        info->height = (int)dc.output_height;
        info->components = 3;
        info->colorspace = TFREC_CS_YCBCR;
    }
    jpeg_destroy_decompress(&dc);
    jpeg_destroy_compress(&cc);
    free(in_row);
    free(rgb_row);
    *out = dest.buf;
    *out_len = dest.len;
    return TFREC_OK;
}

int tfrec_img_encode_jpeg(const uint8_t *pixels, int w, int h, int components, int quality,
                          uint8_t **out, size_t *out_len)
{
    struct jpeg_compress_struct cc;
    img_jerr e;
    img_mem_dest dest = { 0 };
    cc.err = tfrec_img_jerr_init(&e);
    if (setjmp(e.jump)) {
        jpeg_destroy_compress(&cc);
        free(dest.buf);
        return tfrec_fail(NULL, TFREC_E_IMAGE, "JPEG encoding failed: %s", e.msg);
    }
    jpeg_create_compress(&cc);
    tfrec_img_mem_dest_init(&cc, &dest, (size_t)w * (size_t)h / 2 + 1024);
    setup_compress(&cc, w, h, components, quality);
    jpeg_start_compress(&cc, TRUE);
    size_t stride = (size_t)w * (size_t)components;
    while (cc.next_scanline < cc.image_height) {
        JSAMPROW r[1] = { (JSAMPROW)(pixels + stride * cc.next_scanline) };
        jpeg_write_scanlines(&cc, r, 1);
    }
    jpeg_finish_compress(&cc);
    jpeg_destroy_compress(&cc);
    *out = dest.buf;
    *out_len = dest.len;
    return TFREC_OK;
}

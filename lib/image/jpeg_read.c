/* JPEG header probe and verification decodes through libjpeg-turbo. */
#include "image/image_internal.h"

#include <stdlib.h>
#include <string.h>

#include "image/jpeg_glue.h"
#include "util/errors.h"

static int colorspace_of(J_COLOR_SPACE cs)
{
    switch (cs) {
    case JCS_GRAYSCALE: return TFREC_CS_GRAY;
    case JCS_YCbCr: return TFREC_CS_YCBCR;
    case JCS_RGB: return TFREC_CS_RGB;
    case JCS_CMYK: return TFREC_CS_CMYK;
    case JCS_YCCK: return TFREC_CS_YCCK;
    default: return TFREC_CS_UNKNOWN;
    }
}

static void fill_info(const struct jpeg_decompress_struct *c, tfrec_image_info *info)
{
    tfrec_image_info_init(info);
    info->format = TFREC_IMAGE_JPEG;
    info->width = (int)c->image_width;
    info->height = (int)c->image_height;
    info->components = c->num_components;
    info->colorspace = colorspace_of(c->jpeg_color_space);
    info->progressive = c->progressive_mode ? 1 : 0;
    info->adobe = c->saw_Adobe_marker ? 1 : 0;
}

int tfrec_img_jpeg_probe(const uint8_t *d, size_t len, tfrec_image_info *info)
{
    struct jpeg_decompress_struct c;
    img_jerr e;
    c.err = tfrec_img_jerr_init(&e);
    if (setjmp(e.jump)) {
        jpeg_destroy_decompress(&c);
        return tfrec_fail(NULL, TFREC_E_IMAGE, "bad JPEG header: %s", e.msg);
    }
    jpeg_create_decompress(&c);
    jpeg_mem_src(&c, d, (unsigned long)len);
    jpeg_read_header(&c, TRUE);
    fill_info(&c, info);
    jpeg_destroy_decompress(&c);
    if (info->colorspace == TFREC_CS_UNKNOWN)
        return tfrec_fail(NULL, TFREC_E_IMAGE, "unsupported JPEG with %d components",
                          info->components);
    return TFREC_OK;
}

int tfrec_img_jpeg_decode_check(const uint8_t *d, size_t len, int full)
{
    struct jpeg_decompress_struct c;
    img_jerr e;
    img_jprogress prog;
    JSAMPLE *volatile row = NULL;
    c.err = tfrec_img_jerr_init(&e);
    if (setjmp(e.jump)) {
        jpeg_destroy_decompress(&c);
        free(row);
        return tfrec_fail(NULL, TFREC_E_IMAGE, "JPEG decode failed: %s", e.msg);
    }
    tfrec_img_jpeg_read_header_mem(&c, &prog, d, len);
    if (c.jpeg_color_space == JCS_CMYK || c.jpeg_color_space == JCS_YCCK)
        c.out_color_space = JCS_CMYK;
    else if (full)
        c.out_color_space = JCS_RGB;
    if (!full) {
        /* Every coefficient is still Huffman-decoded; only the IDCT and
         * upsampling get nearly free at 1/8 scale. */
        c.scale_num = 1;
        c.scale_denom = 8;
        c.dct_method = JDCT_IFAST;
        c.do_fancy_upsampling = FALSE;
        c.do_block_smoothing = FALSE;
    }
    jpeg_start_decompress(&c);
    row = malloc((size_t)c.output_width * (size_t)c.output_components);
    if (!row) {
        jpeg_destroy_decompress(&c);
        return tfrec_fail(NULL, TFREC_E_NOMEM, "out of memory decoding JPEG");
    }
    while (c.output_scanline < c.output_height) {
        JSAMPROW rows[1] = { row };
        jpeg_read_scanlines(&c, rows, 1);
    }
    /* Reads on to EOI: a file cut after the last scan's data still fails. */
    jpeg_finish_decompress(&c);
    jpeg_destroy_decompress(&c);
    free(row);
    return TFREC_OK;
}

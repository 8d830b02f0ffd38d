/* JPEG to a fixed-size RGB crop (tfrec/image_decode.h): decode at the
 * smallest of the DCT scales 1/8, 2/8, 4/8 that still covers the resized
 * size (libjpeg's IDCT then does most of the shrinking, nearly for free),
 * else at full size, then resample only the crop window. */
#include "tfrec/image_decode.h"

#include <stdlib.h>
#include <string.h>

#include <jerror.h>

#include "image/image_internal.h"
#include "image/jpeg_glue.h"
#include "util/errors.h"
#include "util/struct_size.h"

enum { DEFAULT_SIZE = 224, MAX_SIDE = 16384 };

TFREC_DEFINE_STRUCT_INIT(tfrec_image_decode_options)
TFREC_DEFINE_STRUCT_INIT(tfrec_image_decode_result)

int tfrec_img_decode_settle(tfrec_image_decode_options *o)
{
    if (!o->size)
        o->size = DEFAULT_SIZE;
    if (!o->resize) /* torchvision's usual pair, 256 for 224 */
        o->resize = (int)(((long)o->size * 8 + 6) / 7);
    if (o->size < 1 || o->size > MAX_SIDE || o->resize < o->size || o->resize > MAX_SIDE)
        return tfrec_fail(NULL, TFREC_E_INVALID,
                          "image decode: size %d and resize %d (need 1 <= size <= resize <= %d)",
                          o->size, o->resize, MAX_SIDE);
    if (o->crop != TFREC_CROP_CENTER && o->crop != TFREC_CROP_RANDOM)
        return tfrec_fail(NULL, TFREC_E_INVALID, "image decode: unknown crop %d", o->crop);
    return TFREC_OK;
}

/* Python's round(d / 2), half to even, as torchvision's CenterCrop. */
static int center_offset(int d)
{
    int k = d / 2;
    return (d & 1) && (k & 1) ? k + 1 : k;
}

/* Resize(resize): the shorter side becomes resize, the longer one is
 * truncated, int(resize * long / short). */
static void resized_size(int w, int h, int resize, int *rw, int *rh)
{
    if (w <= h) {
        *rw = resize;
        *rh = (int)((int64_t)resize * h / w);
    } else {
        *rh = resize;
        *rw = (int)((int64_t)resize * w / h);
    }
}

/* The smallest scale N/8 whose output covers rw x rh, N a power of two
 * (8/8 when even the full size does not: upscaling is left to the
 * resampler). libjpeg-turbo's 3/8-7/8 IDCTs have no SIMD and cost more
 * than a full-size decode (bench/RESULTS.md, "Decoded image batches"). */
static void choose_scale(j_decompress_ptr c, int rw, int rh)
{
    c->scale_denom = 8;
    for (unsigned n = 1; n <= 8; n *= 2) {
        c->scale_num = n;
        jpeg_calc_output_dimensions(c);
        if ((int)c->output_width >= rw && (int)c->output_height >= rh)
            return;
    }
}

static void choose_window(const tfrec_image_decode_options *o, uint64_t random, int rw, int rh,
                          tfrec_image_decode_result *r)
{
    if (o->crop == TFREC_CROP_CENTER) {
        r->crop_x = center_offset(rw - o->size);
        r->crop_y = center_offset(rh - o->size);
        r->flipped = 0;
        return;
    }
    r->crop_x = (int)((random & 0xFFFFFF) % (uint64_t)(rw - o->size + 1));
    r->crop_y = (int)(((random >> 24) & 0xFFFFFF) % (uint64_t)(rh - o->size + 1));
    r->flipped = o->flip ? (int)((random >> 63) & 1) : 0;
}

int tfrec_image_decode_rgb(const void *data, size_t len, const tfrec_image_decode_options *opts,
                           uint64_t random, uint8_t *out, tfrec_image_decode_result *result)
{
    tfrec_image_decode_options o;
    int rc = TFREC_STRUCT_IN(tfrec_image_decode_options, &o, opts, NULL);
    if (rc == TFREC_OK && result)
        rc = TFREC_STRUCT_CHECK_OUT(tfrec_image_decode_result, result, NULL);
    if (rc < 0)
        return rc;
    if ((!data && len) || !out)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_image_decode_rgb: NULL argument");
    if ((rc = tfrec_img_decode_settle(&o)) < 0)
        return rc;
    /* Bounds every later step (pixels, scans, data per block) from the
     * markers alone. */
    if ((rc = tfrec_img_jpeg_check_structure(data, len, o.max_pixels)) < 0)
        return rc;

    struct jpeg_decompress_struct c;
    img_jerr e;
    img_jprogress prog;
    uint8_t *volatile pixels = NULL, *volatile cmyk = NULL;
    tfrec_image_decode_result r = { sizeof r, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
    c.err = tfrec_img_jerr_init(&e);
    if (setjmp(e.jump)) {
        jpeg_destroy_decompress(&c);
        tfrec_img_scratch_put(IMG_SCRATCH_PIXELS, pixels);
        free(cmyk);
        return tfrec_fail(NULL, TFREC_E_IMAGE, "JPEG decode failed: %s", e.msg);
    }
    tfrec_img_jpeg_read_header_mem(&c, &prog, data, len);
    r.width = (int)c.image_width;
    r.height = (int)c.image_height;
    resized_size(r.width, r.height, o.resize, &r.resized_w, &r.resized_h);
    if (r.resized_w > 30 * MAX_SIDE || r.resized_h > 30 * MAX_SIDE) {
        snprintf(e.msg, sizeof e.msg, "%dx%d is too elongated to resize", r.width, r.height);
        longjmp(e.jump, 1);
    }
    int is_cmyk = c.jpeg_color_space == JCS_CMYK || c.jpeg_color_space == JCS_YCCK;
    /* libjpeg-turbo expands grayscale to RGB itself; CMYK is ours. */
    c.out_color_space = is_cmyk ? JCS_CMYK : JCS_RGB;
    if (o.full_size)
        c.scale_num = c.scale_denom = 8;
    else
        choose_scale(&c, r.resized_w, r.resized_h);
    jpeg_start_decompress(&c);
    r.scale_num = (int)c.scale_num;
    r.scale_denom = (int)c.scale_denom;
    r.decoded_w = (int)c.output_width;
    r.decoded_h = (int)c.output_height;
    size_t stride = (size_t)c.output_width * 3;
    pixels = tfrec_img_scratch_get(IMG_SCRATCH_PIXELS, stride * c.output_height);
    cmyk = is_cmyk ? malloc((size_t)c.output_width * 4) : NULL;
    if (!pixels || (is_cmyk && !cmyk))
        ERREXIT1(&c, JERR_OUT_OF_MEMORY, 13);
    int inverted = c.saw_Adobe_marker;
    while (c.output_scanline < c.output_height) {
        uint8_t *row = pixels + stride * c.output_scanline;
        JSAMPROW rows[1] = { is_cmyk ? cmyk : row };
        jpeg_read_scanlines(&c, rows, 1);
        if (is_cmyk)
            tfrec_img_cmyk_row_to_rgb(cmyk, row, c.output_width, inverted);
    }
    /* Reads on to EOI: a file cut after the last scan's data still fails. */
    jpeg_finish_decompress(&c);
    jpeg_destroy_decompress(&c);
    free(cmyk);
    choose_window(&o, random, r.resized_w, r.resized_h, &r);
    rc = tfrec_img_resample_window(pixels, r.decoded_w, r.decoded_h, r.resized_w, r.resized_h,
                                   r.crop_x, r.crop_y, o.size, o.size, r.flipped, out);
    tfrec_img_scratch_put(IMG_SCRATCH_PIXELS, pixels);
    if (rc == TFREC_OK && result)
        rc = TFREC_STRUCT_OUT(tfrec_image_decode_result, result, &r, NULL);
    return rc;
}

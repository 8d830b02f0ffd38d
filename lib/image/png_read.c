/* PNG decoding with libpng (see docs/imagenet.md for why libpng). */
#include "image/image_internal.h"

#include <png.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "image/jpeg_glue.h"
#include "util/errors.h"

static const uint8_t png_sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n' };

typedef struct png_src {
    const uint8_t *data;
    size_t len, pos;
    char msg[256];
} png_src;

static void on_png_error(png_structp p, png_const_charp msg)
{
    png_src *s = png_get_error_ptr(p);
    snprintf(s->msg, sizeof s->msg, "%s", msg);
    png_longjmp(p, 1);
}

static void on_png_warning(png_structp p, png_const_charp msg)
{
    (void)p;
    (void)msg; /* never print; warnings (bad gamma chunk, ...) are harmless */
}

static void on_png_read(png_structp p, png_bytep out, png_size_t n)
{
    png_src *s = png_get_io_ptr(p);
    if (n > s->len - s->pos)
        png_error(p, "unexpected end of file (truncated PNG)");
    memcpy(out, s->data + s->pos, n);
    s->pos += n;
}

static int open_png(png_structp *pp, png_infop *ip, png_src *s)
{
    *pp = png_create_read_struct(PNG_LIBPNG_VER_STRING, s, on_png_error, on_png_warning);
    if (!*pp)
        return tfrec_fail(NULL, TFREC_E_NOMEM, "out of memory creating PNG reader");
    *ip = png_create_info_struct(*pp);
    if (!*ip) {
        png_destroy_read_struct(pp, NULL, NULL);
        return tfrec_fail(NULL, TFREC_E_NOMEM, "out of memory creating PNG reader");
    }
    png_set_read_fn(*pp, s, on_png_read);
    /* JPEG cannot hold more than 65500 pixels a side. */
    png_set_user_limits(*pp, IMG_JPEG_MAX_SIDE, IMG_JPEG_MAX_SIDE);
    return TFREC_OK;
}

static int colorspace_of(int color_type)
{
    switch (color_type) {
    case PNG_COLOR_TYPE_GRAY: return TFREC_CS_GRAY;
    case PNG_COLOR_TYPE_GRAY_ALPHA: return TFREC_CS_GRAY_ALPHA;
    case PNG_COLOR_TYPE_RGB_ALPHA: return TFREC_CS_RGBA;
    default: return TFREC_CS_RGB; /* RGB and palette */
    }
}

int tfrec_img_png_probe(const uint8_t *d, size_t len, tfrec_image_info *info)
{
    if (len < 8 || memcmp(d, png_sig, 8) != 0)
        return tfrec_fail(NULL, TFREC_E_IMAGE, "not a PNG");
    png_src s = { d, len, 0, "" };
    png_structp p;
    png_infop i;
    int rc = open_png(&p, &i, &s);
    if (rc)
        return rc;
    if (setjmp(png_jmpbuf(p))) {
        png_destroy_read_struct(&p, &i, NULL);
        return tfrec_fail(NULL, TFREC_E_IMAGE, "bad PNG header: %s", s.msg);
    }
    png_read_info(p, i);
    tfrec_image_info_init(info);
    info->format = TFREC_IMAGE_PNG;
    info->width = (int)png_get_image_width(p, i);
    info->height = (int)png_get_image_height(p, i);
    info->components = png_get_channels(p, i);
    info->colorspace = colorspace_of(png_get_color_type(p, i));
    info->progressive = png_get_interlace_type(p, i) != PNG_INTERLACE_NONE;
    png_destroy_read_struct(&p, &i, NULL);
    return TFREC_OK;
}

int tfrec_img_png_decode_rgb(const uint8_t *d, size_t len, uint8_t **pixels, int *w, int *h)
{
    if (len < 8 || memcmp(d, png_sig, 8) != 0)
        return tfrec_fail(NULL, TFREC_E_IMAGE, "not a PNG");
    png_src s = { d, len, 0, "" };
    png_structp p;
    png_infop i;
    uint8_t *volatile buf = NULL;
    png_bytep *volatile rows = NULL;
    int rc = open_png(&p, &i, &s);
    if (rc)
        return rc;
    if (setjmp(png_jmpbuf(p))) {
        png_destroy_read_struct(&p, &i, NULL);
        free(buf);
        free(rows);
        return tfrec_fail(NULL, TFREC_E_IMAGE, "corrupt PNG: %s", s.msg);
    }
    png_read_info(p, i);
    /* Everything becomes 8-bit RGB: palette and low bit depths expanded,
     * 16-bit reduced, gray replicated, alpha dropped. */
    png_set_expand(p);
    png_set_strip_16(p);
    png_set_strip_alpha(p);
    png_set_gray_to_rgb(p);
    png_set_interlace_handling(p);
    png_read_update_info(p, i);
    png_uint_32 width = png_get_image_width(p, i), height = png_get_image_height(p, i);
    size_t stride = png_get_rowbytes(p, i);
    if (stride != (size_t)width * 3)
        png_error(p, "unexpected row layout after conversion to RGB");
    if ((size_t)height > IMG_MAX_DECODED_BYTES / stride)
        png_error(p, "decoded image would exceed the 512 MiB limit");
    buf = malloc(stride * height);
    rows = malloc(sizeof(png_bytep) * height);
    if (!buf || !rows)
        png_error(p, "out of memory");
    for (png_uint_32 y = 0; y < height; y++)
        rows[y] = buf + stride * y;
    png_read_image(p, rows);
    png_read_end(p, NULL);
    png_destroy_read_struct(&p, &i, NULL);
    free(rows);
    *pixels = buf;
    *w = (int)width;
    *h = (int)height;
    return TFREC_OK;
}

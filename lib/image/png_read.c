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
    uint8_t *buf; /* decoded rows, grown as they arrive */
    size_t cap;
} png_src;

/* deflate expands its input at most 1032 times (a 258-byte match coded in
 * about two bits), so IDAT data shorter than the image's raw bytes / 1032
 * cannot hold the image. */
#define PNG_MAX_INFLATE_RATIO 1032

/* Sum of the IDAT chunk lengths, from the chunk headers alone. */
static uint64_t idat_bytes(const uint8_t *d, size_t len)
{
    uint64_t total = 0;
    size_t p = 8;
    while (len - p >= 12) {
        uint32_t n = ((uint32_t)d[p] << 24) | ((uint32_t)d[p + 1] << 16) |
                     ((uint32_t)d[p + 2] << 8) | d[p + 3];
        if (memcmp(d + p + 4, "IDAT", 4) == 0)
            total += n;
        if (n > len - p - 12)
            break; /* truncated: libpng reports it */
        p += 12 + (size_t)n;
    }
    return total;
}

/* Refuse, from IHDR and the chunk headers, an image above the pixel limit
 * or larger than its compressed data could hold: before any allocation. */
static void check_size(png_structp p, png_infop i, const png_src *s, uint64_t max_pixels)
{
    uint64_t w = png_get_image_width(p, i), h = png_get_image_height(p, i);
    if (w * h > max_pixels) {
        char m[160];
        snprintf(m, sizeof m, "PNG of %llux%llu (%llu pixels) is above the pixel limit of %llu",
                 (unsigned long long)w, (unsigned long long)h, (unsigned long long)(w * h),
                 (unsigned long long)max_pixels);
        png_error(p, m);
    }
    uint64_t bits = (uint64_t)png_get_channels(p, i) * png_get_bit_depth(p, i);
    uint64_t raw = (w * bits + 7) / 8 * h; /* filter bytes not counted */
    uint64_t have = idat_bytes(s->data, s->len);
    if (raw > have * PNG_MAX_INFLATE_RATIO + 1024) {
        char m[200];
        snprintf(m, sizeof m,
                 "PNG data too short for its size: %llux%llu needs at least %llu bytes of "
                 "compressed data, the IDAT chunks hold %llu",
                 (unsigned long long)w, (unsigned long long)h,
                 (unsigned long long)(raw / PNG_MAX_INFLATE_RATIO), (unsigned long long)have);
        png_error(p, m);
    }
}

/* Room for `rows` decoded rows of the image's `height`: the buffer doubles
 * (from 16 rows) but never past the whole image. */
static void reserve_rows(png_structp p, png_src *s, size_t stride, size_t rows, size_t height)
{
    if (stride * rows <= s->cap)
        return;
    size_t want = s->cap ? 2 * s->cap : 16 * stride;
    if (want > stride * height)
        want = stride * height;
    if (want < stride * rows)
        want = stride * rows;
    uint8_t *grown = realloc(s->buf, want);
    if (!grown)
        png_error(p, "out of memory");
    s->buf = grown;
    s->cap = want;
    if (s->cap > tfrec_img_work()->png_bytes)
        tfrec_img_work()->png_bytes = s->cap;
}

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

/* libpng calls this after every row it decoded. */
static void on_png_row(png_structp p, png_uint_32 row, int pass)
{
    (void)p;
    (void)row;
    (void)pass;
    tfrec_img_work()->png_rows++;
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
    png_set_read_status_fn(*pp, on_png_row);
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
    png_src s = { d, len, 0, "", NULL, 0 };
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

int tfrec_img_png_decode_rgb(const uint8_t *d, size_t len, uint64_t max_pixels, uint8_t **pixels,
                             int *w, int *h)
{
    if (len < 8 || memcmp(d, png_sig, 8) != 0)
        return tfrec_fail(NULL, TFREC_E_IMAGE, "not a PNG");
    png_src s = { d, len, 0, "", NULL, 0 };
    png_structp p;
    png_infop i;
    png_bytep *volatile rows = NULL;
    int rc = open_png(&p, &i, &s);
    if (rc)
        return rc;
    if (setjmp(png_jmpbuf(p))) {
        png_destroy_read_struct(&p, &i, NULL);
        free(s.buf);
        free(rows);
        return tfrec_fail(NULL, TFREC_E_IMAGE, "corrupt PNG: %s", s.msg);
    }
    png_read_info(p, i);
    check_size(p, i, &s, max_pixels ? max_pixels : TFREC_IMAGE_DEFAULT_MAX_PIXELS);
    /* Everything becomes 8-bit RGB: palette and low bit depths expanded,
     * 16-bit reduced, gray replicated, alpha dropped. */
    png_set_expand(p);
    png_set_strip_16(p);
    png_set_strip_alpha(p);
    png_set_gray_to_rgb(p);
    int passes = png_set_interlace_handling(p);
    png_read_update_info(p, i);
    png_uint_32 width = png_get_image_width(p, i), height = png_get_image_height(p, i);
    size_t stride = png_get_rowbytes(p, i);
    if (stride != (size_t)width * 3)
        png_error(p, "unexpected row layout after conversion to RGB");
    if ((size_t)height > IMG_MAX_DECODED_BYTES / stride)
        png_error(p, "decoded image would exceed the 512 MiB limit");
    if (passes == 1) {
        /* Rows one at a time into a buffer that grows with them: a header
         * promising more rows than the data holds costs only what arrived. */
        for (png_uint_32 y = 0; y < height; y++) {
            reserve_rows(p, &s, stride, (size_t)y + 1, height);
            png_read_row(p, s.buf + stride * y, NULL);
        }
    } else {
        /* Adam7 passes revisit every row: the whole image at once, bounded
         * by check_size by what the compressed data can hold. */
        reserve_rows(p, &s, stride, height, height);
        rows = malloc(sizeof(png_bytep) * height);
        if (!rows)
            png_error(p, "out of memory");
        for (png_uint_32 y = 0; y < height; y++)
            rows[y] = s.buf + stride * y;
        png_read_image(p, rows);
    }
    png_read_end(p, NULL);
    png_destroy_read_struct(&p, &i, NULL);
    free(rows);
    *pixels = s.buf;
    *w = (int)width;
    *h = (int)height;
    return TFREC_OK;
}

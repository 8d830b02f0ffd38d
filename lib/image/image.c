/* Public image API: format sniffing, verification levels, normalisation. */
#include "tfrec/image.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "image/image_internal.h"
#include "util/errors.h"
#include "util/struct_size.h"

TFREC_DEFINE_STRUCT_INIT(tfrec_image_info)
TFREC_DEFINE_STRUCT_INIT(tfrec_image_normalize_options)

static int sniff(const uint8_t *d, size_t len)
{
    if (len >= 3 && d[0] == 0xFF && d[1] == 0xD8 && d[2] == 0xFF)
        return TFREC_IMAGE_JPEG;
    if (len >= 8 && d[0] == 0x89 && memcmp(d + 1, "PNG\r\n\x1a\n", 7) == 0)
        return TFREC_IMAGE_PNG;
    return TFREC_IMAGE_UNKNOWN;
}

static int not_an_image(const uint8_t *d, size_t len)
{
    if (len == 0)
        return tfrec_fail(NULL, TFREC_E_IMAGE, "empty file (0 bytes)");
    char hex[3 * 8 + 1] = "";
    size_t n = len < 8 ? len : 8;
    for (size_t i = 0; i < n; i++)
        snprintf(hex + 3 * i, 4, "%02X%s", d[i], i + 1 < n ? " " : "");
    return tfrec_fail(NULL, TFREC_E_IMAGE, "not a JPEG or PNG image (starts with %s)", hex);
}

/* The functions below work on the library's own tfrec_image_info and copy
 * it into the caller's (which may be shorter or longer) at the end. */
static int check_info(const tfrec_image_info *info)
{
    return info ? TFREC_STRUCT_CHECK_OUT(tfrec_image_info, info, NULL) : TFREC_OK;
}

static void give_info(tfrec_image_info *dst, const tfrec_image_info *src)
{
    if (dst)
        TFREC_STRUCT_OUT(tfrec_image_info, dst, src, NULL);
}

static int probe(const uint8_t *d, size_t len, tfrec_image_info *info)
{
    tfrec_image_info_init(info);
    if (!d && len)
        return tfrec_fail(NULL, TFREC_E_INVALID, "image data is NULL");
    switch (sniff(d, len)) {
    case TFREC_IMAGE_JPEG: return tfrec_img_jpeg_probe(d, len, info);
    case TFREC_IMAGE_PNG: return tfrec_img_png_probe(d, len, info);
    default: return not_an_image(d, len);
    }
}

int tfrec_image_probe(const void *data, size_t len, tfrec_image_info *info)
{
    if (check_info(info))
        return TFREC_E_INVALID;
    tfrec_image_info mine;
    int rc = probe(data, len, &mine);
    give_info(info, &mine);
    return rc;
}

static int verify_jpeg(const uint8_t *d, size_t len, int level, uint64_t max_pixels)
{
    int rc = tfrec_img_jpeg_check_structure(d, len, max_pixels);
    if (rc || level == TFREC_VERIFY_HEADER)
        return rc;
    return tfrec_img_jpeg_decode_check(d, len, level == TFREC_VERIFY_FULL);
}

static int verify(const void *data, size_t len, int level, tfrec_image_info *info)
{
    if (level == TFREC_VERIFY_DEFAULT)
        level = TFREC_VERIFY_HEADER;
    if (level < TFREC_VERIFY_HEADER || level > TFREC_VERIFY_FULL)
        return tfrec_fail(NULL, TFREC_E_INVALID, "unknown verify level %d", level);
    int rc = probe(data, len, info);
    if (rc)
        return rc;
    if (info->format == TFREC_IMAGE_JPEG)
        return verify_jpeg(data, len, level, TFREC_IMAGE_DEFAULT_MAX_PIXELS);
    uint8_t *px = NULL;
    int w, h;
    rc = tfrec_img_png_decode_rgb(data, len, TFREC_IMAGE_DEFAULT_MAX_PIXELS, &px, &w, &h);
    free(px);
    return rc;
}

int tfrec_image_verify(const void *data, size_t len, int level, tfrec_image_info *info)
{
    if (check_info(info))
        return TFREC_E_INVALID;
    tfrec_image_info mine;
    tfrec_image_info_init(&mine);
    int rc = verify(data, len, level, &mine);
    give_info(info, &mine);
    return rc;
}

static int from_png(const uint8_t *d, size_t len, int quality, uint64_t max_pixels, uint8_t **out,
                    size_t *out_len, tfrec_image_info *info)
{
    uint8_t *px = NULL;
    int w, h;
    int rc = tfrec_img_png_decode_rgb(d, len, max_pixels, &px, &w, &h);
    if (rc)
        return rc;
    rc = tfrec_img_encode_jpeg(px, w, h, 3, quality, out, out_len);
    free(px);
    if (rc)
        return rc;
    tfrec_image_info_init(info);
    info->format = TFREC_IMAGE_JPEG;
    info->width = w;
    info->height = h;
    info->components = 3;
    info->colorspace = TFREC_CS_YCBCR;
    return TFREC_OK;
}

static int normalize(const uint8_t *d, size_t len, const tfrec_image_normalize_options *opts,
                     uint8_t **out, size_t *out_len, tfrec_image_info *info, int *action)
{
    int quality = opts->quality ? opts->quality : 100;
    int level = opts->verify ? opts->verify : TFREC_VERIFY_HEADER;
    uint64_t max_pixels = opts->max_pixels ? opts->max_pixels : TFREC_IMAGE_DEFAULT_MAX_PIXELS;
    if (quality < 1 || quality > 100)
        return tfrec_fail(NULL, TFREC_E_INVALID, "JPEG quality %d is not in 1..100", quality);
    if (level < TFREC_VERIFY_HEADER || level > TFREC_VERIFY_FULL)
        return tfrec_fail(NULL, TFREC_E_INVALID, "unknown verify level %d", level);
    int act = TFREC_IMAGE_KEPT;
    int rc = probe(d, len, info);
    if (rc)
        return rc;
    if (info->format == TFREC_IMAGE_PNG) {
        act = TFREC_IMAGE_FROM_PNG;
        rc = from_png(d, len, quality, max_pixels, out, out_len, info);
    } else if (info->colorspace == TFREC_CS_CMYK || info->colorspace == TFREC_CS_YCCK) {
        act = TFREC_IMAGE_FROM_CMYK;
        /* The structure walk first: the decoder alone would accept a file cut
         * after the last scan. */
        rc = tfrec_img_jpeg_check_structure(d, len, max_pixels);
        if (!rc)
            rc = tfrec_img_jpeg_to_rgb_jpeg(d, len, quality, out, out_len, info);
    } else if (info->colorspace == TFREC_CS_GRAY && opts->grayscale_to_rgb) {
        act = TFREC_IMAGE_FROM_GRAY;
        rc = tfrec_img_jpeg_check_structure(d, len, max_pixels);
        if (!rc)
            rc = tfrec_img_jpeg_to_rgb_jpeg(d, len, quality, out, out_len, info);
    } else {
        rc = verify_jpeg(d, len, level, max_pixels);
    }
    if (rc) {
        free(*out);
        *out = NULL;
        *out_len = 0;
        return rc;
    }
    if (action)
        *action = act;
    return TFREC_OK;
}

int tfrec_image_normalize(const void *data, size_t len, const tfrec_image_normalize_options *opts,
                          uint8_t **out, size_t *out_len, tfrec_image_info *info, int *action)
{
    if (!out || !out_len)
        return tfrec_fail(NULL, TFREC_E_INVALID, "out and out_len are required");
    *out = NULL;
    *out_len = 0;
    tfrec_image_normalize_options o;
    int rc = TFREC_STRUCT_IN(tfrec_image_normalize_options, &o, opts, NULL);
    if (!rc && check_info(info))
        rc = TFREC_E_INVALID;
    if (rc)
        return rc;
    tfrec_image_info mine;
    tfrec_image_info_init(&mine);
    rc = normalize(data, len, &o, out, out_len, &mine, action);
    give_info(info, &mine);
    return rc;
}

const char *tfrec_image_format_name(int format)
{
    switch (format) {
    case TFREC_IMAGE_JPEG: return "JPEG";
    case TFREC_IMAGE_PNG: return "PNG";
    default: return "unknown";
    }
}

const char *tfrec_image_colorspace_name(int cs)
{
    switch (cs) {
    case TFREC_CS_GRAY: return "gray";
    case TFREC_CS_YCBCR: return "YCbCr";
    case TFREC_CS_RGB: return "RGB";
    case TFREC_CS_CMYK: return "CMYK";
    case TFREC_CS_YCCK: return "YCCK";
    case TFREC_CS_GRAY_ALPHA: return "gray+alpha";
    case TFREC_CS_RGBA: return "RGBA";
    default: return "unknown";
    }
}

const char *tfrec_verify_level_name(int level)
{
    switch (level) {
    case TFREC_VERIFY_DEFAULT:
    case TFREC_VERIFY_HEADER: return "header";
    case TFREC_VERIFY_FAST: return "fast";
    case TFREC_VERIFY_FULL: return "full";
    default: return "unknown";
    }
}

int tfrec_verify_level_from_name(const char *name)
{
    if (!name || !*name)
        return TFREC_VERIFY_DEFAULT;
    if (!strcasecmp(name, "header"))
        return TFREC_VERIFY_HEADER;
    if (!strcasecmp(name, "fast"))
        return TFREC_VERIFY_FAST;
    if (!strcasecmp(name, "full"))
        return TFREC_VERIFY_FULL;
    return -1;
}

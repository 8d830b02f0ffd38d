/* libtfrec: image probing, verification and normalisation to RGB JPEG.
 *
 * The format is detected from the bytes, never from the file name: a PNG
 * named .JPEG is a PNG. JPEG work is done by libjpeg-turbo, PNG decoding by
 * libpng. Functions are stateless and thread-safe; errors return
 * TFREC_E_IMAGE (corrupt, truncated, unsupported) with a message readable
 * through tfrec_last_errmsg() on the calling thread. Corrupt input never
 * aborts or exits the process.
 */
#ifndef TFREC_IMAGE_H
#define TFREC_IMAGE_H

#include "common.h"

#include <stddef.h>
#include <stdint.h>

#include "error.h"

TFREC_BEGIN_DECLS

enum tfrec_image_format { TFREC_IMAGE_UNKNOWN = 0, TFREC_IMAGE_JPEG = 1, TFREC_IMAGE_PNG = 2 };

enum tfrec_image_colorspace {
    TFREC_CS_UNKNOWN = 0,
    TFREC_CS_GRAY = 1,
    TFREC_CS_YCBCR = 2, /* the usual colour JPEG */
    TFREC_CS_RGB = 3,   /* 3-component JPEG without colour transform, or PNG colour */
    TFREC_CS_CMYK = 4,
    TFREC_CS_YCCK = 5,
    TFREC_CS_GRAY_ALPHA = 6, /* PNG only */
    TFREC_CS_RGBA = 7        /* PNG only */
};

/* Verification levels: how much of a JPEG is checked before it is stored
 * unchanged. Zero means the library default (HEADER, which already rejects
 * truncated files; see docs/imagenet.md for what each level catches and
 * costs). */
enum tfrec_verify_level {
    TFREC_VERIFY_DEFAULT = 0,
    TFREC_VERIFY_HEADER = 1, /* header parse + marker structure walk to EOI */
    TFREC_VERIFY_FAST = 2,   /* + full entropy decode at 1/8 DCT scale */
    TFREC_VERIFY_FULL = 3    /* + full-size decode to RGB, like the reference */
};

/* Filled by the functions below into the caller's struct (struct_size set
 * by the caller with TFREC_IMAGE_INFO_INIT; see common.h). */
typedef struct tfrec_image_info {
    size_t struct_size;
    int format; /* tfrec_image_format */
    int width;
    int height;
    int components;  /* channels in the file: 1, 2, 3 or 4 */
    int colorspace;  /* tfrec_image_colorspace */
    int progressive; /* JPEG: progressive (or multi-scan) coding */
    int adobe;       /* JPEG: an Adobe APP14 marker is present */
} tfrec_image_info;

#define TFREC_IMAGE_INFO_INIT TFREC_STRUCT_INIT(tfrec_image_info)
void tfrec_image_info_init(tfrec_image_info *info);

/* Identify the image and read its dimensions from the header only.
 * TFREC_E_IMAGE for anything that is not a readable JPEG or PNG header
 * (info, which may be NULL, is then zeroed). */
int tfrec_image_probe(const void *data, size_t len, tfrec_image_info *info);

/* Probe and check the image at the given level (PNG: always fully decoded).
 * TFREC_OK if the image passes. Every level first bounds the work from the
 * headers: TFREC_IMAGE_DEFAULT_MAX_PIXELS, enough data for the declared
 * size, a limited number of JPEG scans (docs/imagenet.md, "Limits"); for
 * another pixel limit use tfrec_image_normalize's options. */
int tfrec_image_verify(const void *data, size_t len, int level, tfrec_image_info *info);

/* What tfrec_image_normalize did. */
enum tfrec_image_action {
    TFREC_IMAGE_KEPT = 0,      /* RGB/YCbCr or grayscale JPEG, stored unchanged */
    TFREC_IMAGE_FROM_PNG = 1,  /* PNG decoded and re-encoded */
    TFREC_IMAGE_FROM_CMYK = 2, /* CMYK or YCCK JPEG converted to RGB */
    TFREC_IMAGE_FROM_GRAY = 3  /* grayscale converted (grayscale_to_rgb) */
};

/* TFREC_IMAGE_NORMALIZE_OPTIONS_INIT, then the fields that differ from the
 * defaults in brackets. */
typedef struct tfrec_image_normalize_options {
    size_t struct_size;
    int quality;          /* JPEG quality of re-encoded images, 1..100 [100] */
    int verify;           /* tfrec_verify_level for kept JPEGs [HEADER] */
    int grayscale_to_rgb; /* [0] keep grayscale JPEGs (as the reference does) */
    /* Largest width x height accepted, checked from the header before any
     * decoding [TFREC_IMAGE_DEFAULT_MAX_PIXELS]; UINT64_MAX: no limit. */
    uint64_t max_pixels;
} tfrec_image_normalize_options;

/* PIL's decompression-bomb threshold (Image.MAX_IMAGE_PIXELS, 1 GiB of
 * 24-bit pixels / 4): the default pixel limit of verification and
 * normalisation, and of tfrec_image_verify. */
#define TFREC_IMAGE_DEFAULT_MAX_PIXELS 89478485

#define TFREC_IMAGE_NORMALIZE_OPTIONS_INIT TFREC_STRUCT_INIT(tfrec_image_normalize_options)
void tfrec_image_normalize_options_init(tfrec_image_normalize_options *opts);

/* Make sure the image is a JPEG a TensorFlow pipeline can decode as RGB.
 * Kept images: *out = NULL, *out_len = 0 (use the input bytes). Converted
 * images: *out is a new allocation released with tfrec_free(). info (may be
 * NULL) describes the OUTPUT image (width, height, components 1 or 3);
 * action (may be NULL) gets a tfrec_image_action. opts may be NULL. */
int tfrec_image_normalize(const void *data, size_t len, const tfrec_image_normalize_options *opts,
                          uint8_t **out, size_t *out_len, tfrec_image_info *info, int *action);

/* Names for messages and manifests ("JPEG", "PNG", "CMYK", "header", ...). */
const char *tfrec_image_format_name(int format);
const char *tfrec_image_colorspace_name(int colorspace);
const char *tfrec_verify_level_name(int level);
/* "header"/"fast"/"full" (and "" = default) to the enum; -1 if unknown. */
int tfrec_verify_level_from_name(const char *name);

TFREC_END_DECLS
#endif

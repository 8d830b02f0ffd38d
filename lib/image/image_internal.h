/* Internal interfaces of the image module (see tfrec/image.h). All return
 * TFREC_OK or a negative code with the message in the thread slot. */
#ifndef TFREC_IMAGE_INTERNAL_H
#define TFREC_IMAGE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "tfrec/image.h"

/* Marker walk SOI..EOI (verify level "header"). */
int tfrec_img_jpeg_check_structure(const uint8_t *d, size_t len);

/* Header fields through libjpeg's own header parser. */
int tfrec_img_jpeg_probe(const uint8_t *d, size_t len, tfrec_image_info *info);

/* Decode everything (full = 0: at 1/8 scale, the cheapest path that still
 * entropy-decodes every coefficient; full = 1: full size to RGB). */
int tfrec_img_jpeg_decode_check(const uint8_t *d, size_t len, int full);

/* Decode a CMYK, YCCK or grayscale JPEG and re-encode it as RGB, row by row
 * (no whole-image buffer). out is malloc'ed. */
int tfrec_img_jpeg_to_rgb_jpeg(const uint8_t *d, size_t len, int quality, uint8_t **out,
                               size_t *out_len, tfrec_image_info *info);

/* PNG: header fields, and a full decode to 8-bit RGB (alpha dropped, like
 * TensorFlow's decode_png(channels=3)). pixels is malloc'ed. */
int tfrec_img_png_probe(const uint8_t *d, size_t len, tfrec_image_info *info);
int tfrec_img_png_decode_rgb(const uint8_t *d, size_t len, uint8_t **pixels, int *w, int *h);

/* Encode an 8-bit RGB (components 3) or gray (1) buffer. out is malloc'ed. */
int tfrec_img_encode_jpeg(const uint8_t *pixels, int w, int h, int components, int quality,
                          uint8_t **out, size_t *out_len);

#endif

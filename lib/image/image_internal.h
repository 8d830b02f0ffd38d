/* Internal interfaces of the image module (see tfrec/image.h). All return
 * TFREC_OK or a negative code with the message in the thread slot. */
#ifndef TFREC_IMAGE_INTERNAL_H
#define TFREC_IMAGE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "tfrec/image.h"
#include "tfrec/image_decode.h"

/* Work done by the image module on the calling thread. The tests assert
 * on these (bounded work on hostile input is counted, not timed); they
 * cost one increment per row and stay in every build. */
typedef struct img_work {
    uint64_t jpeg_ticks; /* libjpeg progress calls: an iMCU row read by a scan,
                            an output scanline */
    uint64_t jpeg_scans; /* scans libjpeg started */
    uint64_t png_rows;   /* PNG rows decoded (every interlace pass counted) */
    uint64_t png_bytes;  /* largest PNG pixel buffer allocated */
} img_work;

/* This thread's counters (zero them to start counting). */
img_work *tfrec_img_work(void);

/* Marker walk SOI..EOI (verify level "header"), with the limits that bound
 * any later decode: pixels (0: TFREC_IMAGE_DEFAULT_MAX_PIXELS), data per
 * block, scans and passes (see jpeg_markers.c). Every level runs it. */
int tfrec_img_jpeg_check_structure(const uint8_t *d, size_t len, uint64_t max_pixels);

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
 * TensorFlow's decode_png(channels=3)). pixels is malloc'ed. max_pixels as
 * above; the pixel buffer grows with the rows decoded. */
int tfrec_img_png_probe(const uint8_t *d, size_t len, tfrec_image_info *info);
int tfrec_img_png_decode_rgb(const uint8_t *d, size_t len, uint64_t max_pixels, uint8_t **pixels,
                             int *w, int *h);

/* Encode an 8-bit RGB (components 3) or gray (1) buffer. out is malloc'ed. */
int tfrec_img_encode_jpeg(const uint8_t *pixels, int w, int h, int components, int quality,
                          uint8_t **out, size_t *out_len);

/* The out_w x out_h window at (x0, y0) of the sw x sh RGB image src scaled
 * to rw x rh, into out (mirrored left-right when flip). Triangle filter,
 * antialiased when shrinking (resample.c); shrink factors up to 30. */
int tfrec_img_resample_window(const uint8_t *src, int sw, int sh, int rw, int rh, int x0, int y0,
                              int out_w, int out_h, int flip, uint8_t *out);

/* Per-thread reusable buffers (scratch.c): get one of at least size bytes
 * for slot (NULL when out of memory), put it back when done. */
enum { IMG_SCRATCH_PIXELS, IMG_SCRATCH_ROWS, IMG_SCRATCH_SUMS, IMG_SCRATCH_SLOTS };
void *tfrec_img_scratch_get(int slot, size_t size);
void tfrec_img_scratch_put(int slot, void *p);

/* Fill in the defaults of decode options and check them. */
int tfrec_img_decode_settle(tfrec_image_decode_options *o);

/* One row of CMYK (inverted: Adobe's convention) to RGB. */
void tfrec_img_cmyk_row_to_rgb(const uint8_t *in, uint8_t *out, size_t w, int inverted);

#endif

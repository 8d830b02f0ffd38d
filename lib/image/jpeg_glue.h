/* Internal: libjpeg glue shared by the image module.
 *
 * libjpeg reports fatal errors through error_exit, which must not return; the
 * stock handler calls exit(). We longjmp back to the caller instead, and we
 * also turn the warnings that mean "the data is corrupt" (premature end of
 * file, bad Huffman code, ...) into errors, because libjpeg would otherwise
 * pad a truncated image with grey and report success. */
#ifndef TFREC_IMAGE_JPEG_GLUE_H
#define TFREC_IMAGE_JPEG_GLUE_H

#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jpeglib.h>

typedef struct img_jerr {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
    char msg[JMSG_LENGTH_MAX];
} img_jerr;

/* Install the error manager on a compress or decompress object (call before
 * jpeg_create_*). */
struct jpeg_error_mgr *tfrec_img_jerr_init(img_jerr *e);

/* A progress monitor for decompression: counts work into tfrec_img_work(). */
typedef struct img_jprogress {
    struct jpeg_progress_mgr pub;
    int last_scan;
} img_jprogress;

/* Create a decompressor reading len bytes at d, with the module's memory
 * cap and progress monitor, and read the header. c->err must be set and
 * its jump armed: a bad header longjmps there. */
void tfrec_img_jpeg_read_header_mem(j_decompress_ptr c, img_jprogress *p, const uint8_t *d,
                                    size_t len);

/* A destination manager appending to a malloc'ed buffer that grows by
 * doubling. The buffer belongs to the caller in all cases (free it after an
 * error too). */
typedef struct img_mem_dest {
    struct jpeg_destination_mgr pub;
    uint8_t *buf;
    size_t cap;
    size_t len; /* valid after jpeg_finish_compress */
} img_mem_dest;

void tfrec_img_mem_dest_init(j_compress_ptr c, img_mem_dest *d, size_t initial);

/* Upper bound of libjpeg's working memory per image (coefficient buffers of
 * large progressive images); above it the decode fails instead of growing. */
#define IMG_JPEG_MAX_MEMORY (512L * 1024 * 1024)

/* Largest decoded pixel buffer (PNG) the module will allocate. */
#define IMG_MAX_DECODED_BYTES ((size_t)512 * 1024 * 1024)

/* Largest image re-encoded (CMYK/YCCK/gray conversion): the output buffer
 * grows with the pixel count, so a tiny file declaring 65500x65500 must
 * not make it grow without bound. 2^28 pixels is 16384 x 16384. */
#define IMG_MAX_CONVERT_PIXELS ((uint64_t)1 << 28)

/* Scans a JPEG may have. libjpeg's progressive script has 10 (6 for
 * grayscale), a sequential file at most one per component; 100 leaves ten
 * times the usual and still stops files made of hundreds of empty scans. */
#define IMG_JPEG_MAX_SCANS 100

/* How many times the scans together may decode every 8x8 block: a baseline
 * file does it once, libjpeg's progressive script about 5 times (each
 * spectral band and refinement scan is a pass over its component). */
#define IMG_JPEG_MAX_PASSES 16

/* Largest side a baseline JPEG can have. */
#define IMG_JPEG_MAX_SIDE 65500

#endif

/* libtfrec: JPEG decoding to fixed-size RGB for training, and the stage
 * that runs it on a dataset's reader threads (tfrec-image).
 *
 * The transform is torchvision's Resize(resize) followed by CenterCrop(size)
 * (evaluation) or RandomCrop(size) with an optional RandomHorizontalFlip
 * (training): the shorter side is scaled to `resize` (the longer side
 * truncated as torchvision does), then a size x size window is cut. The
 * JPEG is decoded at the smallest DCT scale 1/8, 2/8 or 4/8 whose output
 * is still at least the resized size (else at full size), then resampled with a triangle (bilinear,
 * antialiased when shrinking) filter, as PIL's Image.resize(BILINEAR) does.
 * Grayscale, CMYK and YCCK JPEGs come out as RGB. Output is uint8 HWC RGB.
 *
 * Errors: TFREC_E_IMAGE for a corrupt or unsupported image (the message in
 * tfrec_last_errmsg() on the calling thread), TFREC_E_INVALID for bad
 * options. Corrupt input never aborts the process.
 */
#ifndef TFREC_IMAGE_DECODE_H
#define TFREC_IMAGE_DECODE_H

#include "common.h"

#include <stddef.h>
#include <stdint.h>

#include "dataset.h"
#include "error.h"

TFREC_BEGIN_DECLS

enum tfrec_image_crop { TFREC_CROP_CENTER = 0, TFREC_CROP_RANDOM = 1 };

/* TFREC_IMAGE_DECODE_OPTIONS_INIT, then the fields that differ from the
 * defaults in brackets. */
typedef struct tfrec_image_decode_options {
    size_t struct_size;
    int size;   /* side of the square output [224] */
    int resize; /* shorter side before the crop, >= size [size * 8 / 7: 256 for 224] */
    int crop;   /* tfrec_image_crop [CENTER] */
    int flip;   /* with CROP_RANDOM: mirror half of the images [0] */
    /* Largest width x height accepted, checked from the header before any
     * decoding [TFREC_IMAGE_DEFAULT_MAX_PIXELS]. */
    uint64_t max_pixels;
    /* 1: decode at full size, no DCT scaling: slower, the same pixels as
     * PIL's decode + resize (torchvision's transforms) [0] */
    int full_size;
} tfrec_image_decode_options;

#define TFREC_IMAGE_DECODE_OPTIONS_INIT TFREC_STRUCT_INIT(tfrec_image_decode_options)
void tfrec_image_decode_options_init(tfrec_image_decode_options *opts);

/* What a decode did (for tests and statistics). */
typedef struct tfrec_image_decode_result {
    size_t struct_size;
    int width, height;           /* of the JPEG */
    int scale_num, scale_denom;  /* the DCT scale used (scale_num/8) */
    int decoded_w, decoded_h;    /* at that scale */
    int resized_w, resized_h;    /* after Resize(resize) */
    int crop_x, crop_y, flipped; /* the window cut from the resized image */
} tfrec_image_decode_result;

#define TFREC_IMAGE_DECODE_RESULT_INIT TFREC_STRUCT_INIT(tfrec_image_decode_result)
void tfrec_image_decode_result_init(tfrec_image_decode_result *r);

/* Decode data (a JPEG) into out, size * size * 3 bytes. random chooses the
 * crop window and the flip of CROP_RANDOM (the same value, the same
 * window); CENTER ignores it. opts and result may be NULL. */
int tfrec_image_decode_rgb(const void *data, size_t len, const tfrec_image_decode_options *opts,
                           uint64_t random, uint8_t *out, tfrec_image_decode_result *result);

/* ------------------------------------------------------------ the stage */

/* Decodes the tf.Examples of a dataset (imagenet2tfrec's features) on its
 * reader threads: each record becomes one item of
 * tfrec_image_stage_item_size() bytes, the label as a native int64, then
 * the size x size x 3 pixels. The random value of each record is a
 * function of (seed, epoch, the record's number in the dataset), so a
 * random crop repeats for the same seed and epoch whatever the threads. */
typedef struct tfrec_image_stage tfrec_image_stage;

typedef struct tfrec_image_stage_options {
    size_t struct_size;
    const tfrec_image_decode_options *decode; /* [NULL: the defaults] copied */
    const char *image_key;                    /* ["image/encoded"] */
    const char *label_key;                    /* an int64 feature ["image/class/label"];
                                                 a record without it gets label -1 */
    uint64_t seed;                            /* of the random crops [0] */
    /* [0] a corrupt image fails the dataset (naming file, record, offset);
     * 1: the record is dropped and counted (tfrec_dataset_dropped). */
    int skip_corrupt;
} tfrec_image_stage_options;

#define TFREC_IMAGE_STAGE_OPTIONS_INIT TFREC_STRUCT_INIT(tfrec_image_stage_options)
void tfrec_image_stage_options_init(tfrec_image_stage_options *opts);

int tfrec_image_stage_new(tfrec_image_stage **out, const tfrec_image_stage_options *opts);
size_t tfrec_image_stage_item_size(const tfrec_image_stage *s);
/* Set dataset options' map, map_ctx and map_size to this stage; it must
 * outlive the datasets opened with them. */
int tfrec_image_stage_attach(tfrec_image_stage *s, tfrec_dataset_options *opts);
void tfrec_image_stage_free(tfrec_image_stage *s);

TFREC_END_DECLS
#endif

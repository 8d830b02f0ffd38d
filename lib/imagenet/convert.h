/* Internal: per-image conversion and the run's shared state. */
#ifndef TFREC_IMAGENET_CONVERT_H
#define TFREC_IMAGENET_CONVERT_H

#include <stddef.h>
#include <stdint.h>

#include "imagenet/plan.h"
#include "tfrec/example.h"

/* Largest image file read (a bound checked before allocating). */
#define IN_MAX_IMAGE_BYTES ((uint64_t)256 * 1024 * 1024)

typedef struct in_result {
    int status;      /* TFREC_OK or a negative code */
    char *reason;    /* malloc'ed message when status != OK */
    uint8_t *record; /* serialized tf.Example (malloc'ed, record_cap bytes) */
    size_t record_len, record_cap;
    int action;    /* tfrec_image_action */
    int source_cs; /* FROM_CMYK: TFREC_CS_CMYK or TFREC_CS_YCCK */
    uint64_t bytes_in;
} in_result;

/* A reusable buffer: image bytes stay in the worker's, record buffers go to
 * the writer and come back (fresh allocations of ~100 KB cost a page fault
 * per 4 KiB, more than the copies they hold). */
typedef struct in_buf {
    uint8_t *data;
    size_t cap;
} in_buf;

/* Read, check and normalise one image and build its tf.Example. b and buf
 * are the calling worker's own; the record is serialized into *rec, whose
 * memory moves into r->record (rec is left empty). Never fails silently:
 * r->status/reason. */
void tfrec_in_convert_item(const in_item *it, const in_opts *o, tfrec_example_builder *b,
                           in_buf *buf, in_buf *rec, in_result *r);
void tfrec_in_result_clear(in_result *r);

/* Short name of what a fixed image was ("PNG", "CMYK", "YCCK", "grayscale"). */
const char *tfrec_in_fixed_from(const in_result *r);

#endif

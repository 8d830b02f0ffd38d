/* Internal: the record reader's state, shared by reader*.c. */
#ifndef TFREC_RECORD_READER_INTERNAL_H
#define TFREC_RECORD_READER_INTERNAL_H

#include "record/inflate_source.h"
#include "record/span_crc.h"
#include "tfrec/record.h"
#include "util/errors.h"

struct tfrec_reader {
    tfrec_io io;
    char *name;
    int compression;
    inflate_source *inflater; /* NULL when the stream is not compressed */

    /* Unread bytes are buf[start, end); buf[start] is at stream offset pos
     * (uncompressed stream offset when compressed). */
    uint8_t *buf;
    size_t cap, start, end;
    uint64_t pos;
    int eof;           /* the source has said end of input */
    int mapped;        /* NONE file mapped: buf is the whole file, not ours */
    size_t prefetched; /* mapped: cache lines requested up to here */
    size_t roomy_cap;  /* buffer size worth having for the records seen */

    uint64_t max_record;
    int skip_corrupt;
    int sticky; /* error the reader is stuck in, 0 if none */
    uint64_t last_offset;
    uint64_t skip_offset, skip_bytes; /* last region skipped (skip_corrupt) */
    int skip_code;                    /* what was wrong at its start */
    tfrec_reader_stats stats;
    tfrec_err err;
    span_crc span; /* data CRCs of candidate records while resynchronising */
    /* Bytes CRC'd, or moved inside the buffer, so far: the work reading
     * costs besides the source's. Tests of hostile input check it stays
     * proportional to the stream (no input can make reading quadratic). */
    uint64_t work;
};

/* Make `need` bytes available at buf[start] unless the stream ends first.
 * Only grows the buffer when it is full of bytes that really arrived (or,
 * up to 16 MiB, to 4x a record that fully arrived), so a lying length field
 * cannot make it allocate more than about twice what the input holds. The
 * bytes moved to the front of the buffer are never more than those consumed
 * since the last move, however the caller steps through it.
 * TFREC_OK (look at end - start), or a negative code with r->err set. */
int tfrec_reader_fill(tfrec_reader *r, size_t need);

/* " offset" or " uncompressed offset", for messages. */
static inline const char *reader_offset_word(const tfrec_reader *r)
{
    return r->inflater ? "uncompressed offset" : "offset";
}

#endif

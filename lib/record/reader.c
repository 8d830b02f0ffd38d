/* Reading records: framing checks, zero-copy delivery, and resynchronising
 * after corruption when asked to. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "record/detect.h"
#include "record/framing.h"
#include "record/reader_internal.h"
#include "util/vec.h"

enum { ROOMY_LIMIT = 16 << 20 };

static int source_error(tfrec_reader *r, int code)
{
    const char *why = r->io.errmsg ? r->io.errmsg(r->io.ctx) : NULL;
    return tfrec_fail(&r->err, code, "%s", why && *why ? why : tfrec_strerror(code));
}

/* Grow a buffer that is full of bytes which really arrived, towards `want`
 * bytes (room for the record being read, counted from buf[0]), one doubling
 * step at most: a length field is not trusted to size the buffer before the
 * data it announces has arrived. When unread bytes sit behind consumed ones
 * (start > 0; see tfrec_reader_fill) it grows by half at least, so that
 * creeping needs cannot make realloc copy the buffer at every step. */
static int grow(tfrec_reader *r, size_t want)
{
    size_t cap = r->cap > SIZE_MAX / 2 ? SIZE_MAX : r->cap * 2;
    size_t least = r->start > 0 ? r->cap + r->cap / 2 : 0;
    if (want < least)
        want = least;
    if (cap > want)
        cap = want;
    if (tfrec_vec_resize(&r->buf, &r->cap, cap))
        return tfrec_fail(&r->err, TFREC_E_NOMEM, "%s: out of memory for a %zu-byte read buffer",
                          r->name, cap);
    return TFREC_OK;
}

int tfrec_reader_fill(tfrec_reader *r, size_t need)
{
    while (r->end - r->start < need && !r->eof) {
        /* Move the partial record to the front when it cannot complete
         * behind its current start, but only when it is no longer than
         * what was consumed since the last move: resynchronising steps one
         * byte at a time, and moving a long partial record at every step
         * would be quadratic. Otherwise read on behind it and grow. */
        size_t live = r->end - r->start;
        if (r->start > 0 && r->start >= live && (r->cap - r->start < need || r->end == r->cap)) {
            memmove(r->buf, r->buf + r->start, live);
            r->work += live;
            r->end = live;
            r->start = 0;
        }
        if (r->end == r->cap) {
            int rc = grow(r, need > SIZE_MAX - r->start ? SIZE_MAX : r->start + need);
            if (rc < 0)
                return rc;
        } else if (r->start == 0 && r->roomy_cap > r->cap) {
            /* Records are large next to the buffer: make room for several,
             * so moving partial records to the front stays rare. */
            (void)tfrec_vec_resize(&r->buf, &r->cap, r->roomy_cap); /* an optimisation only */
        }
        ptrdiff_t got = r->inflater ? tfrec_inflate_source_read(r->inflater, r->buf + r->end,
                                                                r->cap - r->end, &r->err)
                                    : r->io.read(r->io.ctx, r->buf + r->end, r->cap - r->end);
        if (got < 0)
            return r->inflater ? (int)got : source_error(r, (int)got);
        if (got == 0)
            r->eof = 1;
        r->end += (size_t)got;
    }
    return TFREC_OK;
}

/* A mapped file comes from memory, not through a read buffer: ask for the
 * cache lines a little ahead of the record being checked, so the CRC does
 * not wait for them one page at a time. */
static void prefetch_ahead(tfrec_reader *r, size_t total)
{
    /* 8 KiB ahead measured best (bench/RESULTS.md, "Reader prefetch
     * distance: 8 KiB"); a long record's own lines are left to the hardware
     * prefetcher. */
    enum { DIST = 8192 };
    size_t goal = r->start + DIST + (total < DIST ? total : DIST);
    if (goal > r->end)
        goal = r->end;
    if (r->prefetched < r->start)
        r->prefetched = r->start;
#if defined(__GNUC__)
    for (; r->prefetched < goal; r->prefetched += 64)
        __builtin_prefetch(r->buf + r->prefetched);
#else
    (void)goal;
#endif
}

/* Outcome of looking at the bytes at buf[start]. */
enum frame_check {
    FRAME_OK,    /* a whole, valid record */
    FRAME_END,   /* clean end of stream */
    FRAME_STRAY, /* 1..11 bytes left at the end */
    FRAME_BAD_HEADER,
    FRAME_TOO_LARGE,
    FRAME_TRUNCATED,
    FRAME_BAD_DATA
};

typedef struct frame_info {
    uint64_t len;
    size_t avail;            /* bytes present when the check stopped */
    uint32_t stored, actual; /* CRCs for messages */
    const char *other;       /* a bad first header: what the stream looks like */
} frame_info;

/* Check the record at buf[start], reading as much of it as needed. Returns
 * a frame_check value, or a negative code when the source itself failed.
 * While resynchronising, the data CRC comes from span_crc: candidates are
 * tried at every offset and their claimed data overlaps. */
static int check_frame(tfrec_reader *r, frame_info *fi, int resyncing)
{
    int rc = tfrec_reader_fill(r, FRAME_HEADER);
    if (rc < 0)
        return rc;
    fi->avail = r->end - r->start;
    if (fi->avail == 0)
        return FRAME_END;
    if (fi->avail < FRAME_HEADER)
        return FRAME_STRAY;
    const uint8_t *h = r->buf + r->start;
    r->work += 8;
    if (!frame_header_ok(h, &fi->len)) {
        fi->stored = frame_load32(h + 8);
        fi->actual = frame_length_crc(h);
        if (r->pos == 0 && tfrec_reader_fill(r, 512) >= 0) /* enough to see a tar header */
            fi->other = tfrec_detect_other_format(r->buf + r->start, r->end - r->start);
        return FRAME_BAD_HEADER;
    }
    if (fi->len > r->max_record || fi->len > SIZE_MAX - FRAME_OVERHEAD)
        return FRAME_TOO_LARGE;
    size_t total = (size_t)fi->len + FRAME_OVERHEAD;
    rc = tfrec_reader_fill(r, total);
    if (rc < 0)
        return rc;
    fi->avail = r->end - r->start;
    if (fi->avail < total)
        return FRAME_TRUNCATED;
    const uint8_t *data = r->buf + r->start + FRAME_HEADER;
    if (r->mapped)
        prefetch_ahead(r, total);
    /* CRC first: it streams through the data and brings the footer into
     * the cache, where loading it first would wait on memory. */
    uint32_t crc;
    if (resyncing) {
        crc = tfrec_span_crc(&r->span, r->buf + r->start, r->pos, fi->avail, r->pos + FRAME_HEADER,
                             fi->len, &r->work);
    } else {
        crc = tfrec_crc32c(data, (size_t)fi->len);
        r->work += fi->len;
    }
    fi->actual = tfrec_crc32c_mask(crc);
    fi->stored = frame_load32(data + fi->len);
    return fi->stored == fi->actual ? FRAME_OK : FRAME_BAD_DATA;
}

static int report(tfrec_reader *r, int check, const frame_info *fi)
{
    const char *n = r->name, *w = reader_offset_word(r);
    unsigned long long at = (unsigned long long)r->pos, len = (unsigned long long)fi->len;
    switch (check) {
    case FRAME_STRAY:
        return tfrec_fail(&r->err, TFREC_E_TRAILING_GARBAGE,
                          "%s: %zu stray bytes at the end, at %s %llu (a truncated record header "
                          "or trailing garbage)",
                          n, fi->avail, w, at);
    case FRAME_BAD_HEADER:
        if (fi->other) /* e.g. a manifest.json beside the shards a pattern matched */
            return tfrec_fail(&r->err, TFREC_E_BAD_LENGTH_CRC,
                              "%s: not a TFRecord file: it starts like %s (no valid record "
                              "header at %s 0)",
                              n, fi->other, w);
        return tfrec_fail(&r->err, TFREC_E_BAD_LENGTH_CRC,
                          "%s: bad length CRC in record header at %s %llu (expected 0x%08x, got "
                          "0x%08x; length field says %llu)",
                          n, w, at, fi->stored, fi->actual, len);
    case FRAME_TOO_LARGE:
        return tfrec_fail(&r->err, TFREC_E_RECORD_TOO_LARGE,
                          "%s: record at %s %llu claims %llu bytes, above the maximum record size "
                          "%llu",
                          n, w, at, len, (unsigned long long)r->max_record);
    case FRAME_TRUNCATED:
        return tfrec_fail(&r->err, TFREC_E_TRUNCATED,
                          "%s: truncated record at %s %llu: header says %llu data bytes, but only "
                          "%zu of the %llu record bytes are present",
                          n, w, at, len, fi->avail, len + FRAME_OVERHEAD);
    case FRAME_BAD_DATA:
        return tfrec_fail(&r->err, TFREC_E_BAD_DATA_CRC,
                          "%s: bad data CRC in record at %s %llu (expected 0x%08x, got 0x%08x; "
                          "%llu data bytes)",
                          n, w, at, fi->stored, fi->actual, len);
    }
    return tfrec_fail(&r->err, TFREC_E_STATE, "%s: internal error at %s %llu", n, w, at);
}

static void deliver(tfrec_reader *r, const frame_info *fi, const uint8_t **data, size_t *len)
{
    size_t total = (size_t)fi->len + FRAME_OVERHEAD;
    *data = r->buf + r->start + FRAME_HEADER;
    *len = (size_t)fi->len;
    r->last_offset = r->pos;
    r->start += total;
    r->pos += total;
    r->stats.records++;
    r->stats.bytes += fi->len;
    /* Sized from a record that really arrived, so input cannot inflate it. */
    if (!r->mapped && total > r->cap / 4 && total <= ROOMY_LIMIT / 4 && total * 4 > r->roomy_cap)
        r->roomy_cap = total * 4;
}

static void consume(tfrec_reader *r, size_t n)
{
    r->start += n;
    r->pos += n;
}

/* skip_corrupt: the record at buf[start] is bad. Step forward one byte at a
 * time until a header with a valid length CRC starts a record whose data CRC
 * is valid too, and return that record; at the end of the stream the rest
 * is skipped and TFREC_END returned. The whole gap counts as one region. */
static int resync(tfrec_reader *r, const uint8_t **data, size_t *len)
{
    uint64_t skipped = 0;
    for (;;) {
        consume(r, 1);
        skipped++;
        frame_info fi = { 0 };
        int check = check_frame(r, &fi, 1);
        if (check < 0)
            return check;
        if (check == FRAME_OK || check == FRAME_END || check == FRAME_STRAY) {
            if (check == FRAME_STRAY) {
                skipped += fi.avail;
                consume(r, fi.avail);
            }
            r->stats.skipped_regions++;
            r->stats.skipped_bytes += skipped;
            r->skip_bytes = skipped;
            if (check != FRAME_OK)
                return TFREC_END;
            deliver(r, &fi, data, len);
            return TFREC_OK;
        }
    }
}

int tfrec_reader_next(tfrec_reader *r, const uint8_t **data, size_t *len)
{
    if (!r || !data || !len)
        return tfrec_fail(r ? &r->err : NULL, TFREC_E_INVALID, "tfrec_reader_next: NULL argument");
    if (r->sticky)
        return tfrec_fail(NULL, r->sticky, "%s", r->err.msg); /* repeat, for tfrec_last_errmsg() */
    frame_info fi = { 0 };
    int check = check_frame(r, &fi, 0);
    if (check < 0)
        return r->sticky = check;
    if (check == FRAME_OK) {
        deliver(r, &fi, data, len);
        return TFREC_OK;
    }
    if (check == FRAME_END)
        return TFREC_END;
    if (r->skip_corrupt) {
        /* Keep what was wrong at the start of the region for the caller. */
        r->skip_offset = r->pos;
        r->skip_code = report(r, check, &fi);
        if (check == FRAME_STRAY) {
            consume(r, fi.avail);
            r->stats.skipped_regions++;
            r->stats.skipped_bytes += fi.avail;
            r->skip_bytes = fi.avail;
            return TFREC_END;
        }
        int rc = resync(r, data, len);
        if (rc < 0)
            r->sticky = rc;
        return rc;
    }
    return r->sticky = report(r, check, &fi);
}

int tfrec_reader_last_skip(const tfrec_reader *r, uint64_t *offset, uint64_t *bytes)
{
    if (!r)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_reader_last_skip: NULL reader");
    if (offset)
        *offset = r->skip_offset;
    if (bytes)
        *bytes = r->skip_bytes;
    return r->skip_code;
}

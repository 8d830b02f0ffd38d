/* Repositioning a reader at a record offset it reported earlier. */
#include "record/reader_internal.h"

/* Drop buffered bytes and read forward until pos == offset. */
static int skip_forward(tfrec_reader *r, uint64_t offset)
{
    while (r->pos < offset) {
        if (r->start == r->end) {
            r->start = r->end = 0;
            int rc = tfrec_reader_fill(r, 1);
            if (rc < 0)
                return rc;
            if (r->start == r->end)
                return tfrec_fail(&r->err, TFREC_E_INVALID,
                                  "%s: cannot seek to %s %llu: the stream ends at %llu", r->name,
                                  reader_offset_word(r), (unsigned long long)offset,
                                  (unsigned long long)r->pos);
        }
        uint64_t step = r->end - r->start;
        if (step > offset - r->pos)
            step = offset - r->pos;
        r->start += (size_t)step;
        r->pos += step;
    }
    return TFREC_OK;
}

static int do_seek(tfrec_reader *r, uint64_t offset)
{
    if (r->mapped) {
        if (offset > r->cap)
            return tfrec_fail(&r->err, TFREC_E_INVALID,
                              "%s: cannot seek to offset %llu: the file "
                              "ends at %zu",
                              r->name, (unsigned long long)offset, r->cap);
        r->start = (size_t)offset;
        r->pos = offset;
        return TFREC_OK;
    }
    /* Already buffered: just move. */
    if (offset >= r->pos && offset - r->pos <= r->end - r->start) {
        r->start += (size_t)(offset - r->pos);
        r->pos = offset;
        return TFREC_OK;
    }
    if (!r->inflater && r->io.seek) {
        int rc = r->io.seek(r->io.ctx, offset);
        if (rc < 0) {
            const char *why = r->io.errmsg ? r->io.errmsg(r->io.ctx) : NULL;
            return tfrec_fail(&r->err, rc, "%s", why && *why ? why : tfrec_strerror(rc));
        }
        r->start = r->end = 0;
        r->pos = offset;
        r->eof = 0;
        return TFREC_OK;
    }
    if (offset < r->pos) {
        if (!r->io.seek)
            return tfrec_fail(&r->err, TFREC_E_UNSUPPORTED,
                              "%s: cannot seek backwards to %s %llu on a stream that cannot seek "
                              "(a pipe)",
                              r->name, reader_offset_word(r), (unsigned long long)offset);
        int rc = tfrec_inflate_source_rewind(r->inflater, &r->err);
        if (rc < 0)
            return rc;
        r->start = r->end = 0;
        r->pos = 0;
        r->eof = 0;
    }
    return skip_forward(r, offset);
}

int tfrec_reader_seek(tfrec_reader *r, uint64_t offset)
{
    if (!r)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_reader_seek: NULL reader");
    r->sticky = 0;                  /* a seek is a fresh start */
    tfrec_span_crc_reset(&r->span); /* the bytes are read again: trust no old CRC of them */
    int rc = do_seek(r, offset);
    if (rc < 0 && rc != TFREC_E_UNSUPPORTED) /* unsupported: nothing moved */
        r->sticky = rc;
    else if (rc == TFREC_OK)
        r->last_offset = offset;
    return rc;
}

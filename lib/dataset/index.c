/* Record indexes: the DALI / `tfrecord` text format, built by reading a
 * file, parsed with every entry checked, written through any sink. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataset/index_internal.h"
#include "record/index_out.h"
#include "util/struct_size.h"
#include "util/vec.h"

tfrec_index *tfrec_index_new_empty(void)
{
    tfrec_index *ix = calloc(1, sizeof *ix);
    if (ix && tfrec_vec_reserve(&ix->start, &ix->cap, 1, 1024) < 0) {
        free(ix);
        return NULL;
    }
    if (ix)
        ix->start[0] = 0;
    return ix;
}

void tfrec_index_free(tfrec_index *ix)
{
    if (!ix)
        return;
    free(ix->start);
    free(ix);
}

int tfrec_index_push(tfrec_index *ix, uint64_t offset, uint64_t length, const char *name,
                     uint64_t line, tfrec_err *err)
{
    uint64_t end = ix->start[ix->n];
    if (length < 16)
        return tfrec_fail(err, TFREC_E_PARSE,
                          "%s: line %llu: length %llu is shorter than a record's 16 bytes of "
                          "framing",
                          name, (unsigned long long)line, (unsigned long long)length);
    if (offset != end)
        return tfrec_fail(err, TFREC_E_PARSE,
                          "%s: line %llu: record at offset %llu %s the previous record, which "
                          "ends at %llu",
                          name, (unsigned long long)line, (unsigned long long)offset,
                          offset < end ? "overlaps" : "leaves a gap after",
                          (unsigned long long)end);
    if (length > UINT64_MAX - offset)
        return tfrec_fail(err, TFREC_E_PARSE, "%s: line %llu: offset + length overflows", name,
                          (unsigned long long)line);
    if (tfrec_vec_reserve(&ix->start, &ix->cap, ix->n + 2, 1024) < 0)
        return tfrec_fail(err, TFREC_E_NOMEM, "%s: out of memory at line %llu", name,
                          (unsigned long long)line);
    ix->start[++ix->n] = offset + length;
    return TFREC_OK;
}

uint64_t tfrec_index_records(const tfrec_index *ix)
{
    return ix ? ix->n : 0;
}

uint64_t tfrec_index_data_size(const tfrec_index *ix)
{
    return ix ? ix->start[ix->n] : 0;
}

int tfrec_index_entry(const tfrec_index *ix, uint64_t k, uint64_t *offset, uint64_t *length)
{
    if (!ix || !offset || !length)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_index_entry: NULL argument");
    if (k >= ix->n)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_index_entry: record %llu of %zu",
                          (unsigned long long)k, ix->n);
    *offset = ix->start[k];
    *length = ix->start[k + 1] - ix->start[k];
    return TFREC_OK;
}

int tfrec_index_build(tfrec_index **out, tfrec_reader *r)
{
    if (!out || !r)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_index_build: NULL argument");
    *out = NULL;
    if (tfrec_reader_compression(r) != TFREC_COMPRESSION_NONE)
        return tfrec_fail(NULL, TFREC_E_UNSUPPORTED,
                          "cannot index a %s-compressed file: an index holds byte offsets into "
                          "the file, which a compressed stream cannot seek to (tfrec convert -C "
                          "NONE makes an uncompressed copy)",
                          tfrec_compression_name(tfrec_reader_compression(r)));
    tfrec_index *ix = tfrec_index_new_empty();
    if (!ix)
        return tfrec_fail(NULL, TFREC_E_NOMEM, "tfrec_index_build: out of memory");
    const uint8_t *data;
    size_t len;
    int rc;
    tfrec_err err = { 0 };
    while ((rc = tfrec_reader_next(r, &data, &len)) == TFREC_OK) {
        rc = tfrec_index_push(ix, tfrec_reader_offset(r), (uint64_t)len + 16, "index", ix->n + 1,
                              &err);
        if (rc < 0) {
            tfrec_index_free(ix);
            return tfrec_fail(NULL, TFREC_E_INVALID,
                              "cannot index: records do not tile the stream (%s); index a file "
                              "from its start and without skip_corrupt",
                              err.msg);
        }
    }
    if (rc != TFREC_END) {
        tfrec_index_free(ix);
        return tfrec_fail(NULL, rc, "%s", tfrec_reader_errmsg(r));
    }
    *out = ix;
    return TFREC_OK;
}

/* ------------------------------------------------------------- parsing */

/* The longest valid line: two 20-digit numbers, separators, a CR. */
enum { MAX_LINE = 64, CHUNK = 64 * 1024 };

static int parse_u64(const char **p, const char *end, uint64_t *v)
{
    const char *s = *p;
    uint64_t x = 0;
    if (s == end || *s < '0' || *s > '9')
        return -1;
    for (; s < end && *s >= '0' && *s <= '9'; s++) {
        unsigned d = (unsigned)(*s - '0');
        if (x > (UINT64_MAX - d) / 10)
            return -1;
        x = x * 10 + d;
    }
    *p = s;
    *v = x;
    return 0;
}

static int parse_line(tfrec_index *ix, const char *s, size_t n, const char *name, uint64_t line,
                      int64_t data_size, tfrec_err *err)
{
    if (n > MAX_LINE)
        return tfrec_fail(err, TFREC_E_PARSE, "%s: line %llu is longer than %d bytes", name,
                          (unsigned long long)line, MAX_LINE);
    const char *end = s + n;
    if (n && end[-1] == '\r')
        end--;
    while (s < end && (*s == ' ' || *s == '\t'))
        s++;
    if (s == end)
        return TFREC_OK; /* blank lines are harmless */
    uint64_t off, len;
    if (parse_u64(&s, end, &off) < 0 || s == end || (*s != ' ' && *s != '\t'))
        goto bad;
    while (s < end && (*s == ' ' || *s == '\t'))
        s++;
    if (parse_u64(&s, end, &len) < 0)
        goto bad;
    while (s < end && (*s == ' ' || *s == '\t'))
        s++;
    if (s != end)
        goto bad;
    int rc = tfrec_index_push(ix, off, len, name, line, err);
    if (rc < 0)
        return rc;
    if (data_size >= 0 && ix->start[ix->n] > (uint64_t)data_size)
        return tfrec_fail(err, TFREC_E_PARSE,
                          "%s: line %llu: record [%llu, %llu) lies beyond the end of the data "
                          "file (%lld bytes)",
                          name, (unsigned long long)line, (unsigned long long)off,
                          (unsigned long long)(off + len), (long long)data_size);
    return TFREC_OK;
bad:
    return tfrec_fail(err, TFREC_E_PARSE,
                      "%s: line %llu: expected 'OFFSET LENGTH' (two decimal numbers)", name,
                      (unsigned long long)line);
}

int tfrec_index_load_io(tfrec_index **out, const tfrec_io *src_in, const char *name,
                        int64_t data_size)
{
    if (!src_in)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_index_load_io: NULL argument");
    tfrec_io src;
    int rc = TFREC_STRUCT_IN(tfrec_io, &src, src_in, NULL);
    if (rc)
        return rc;
    if (!out || !src.read) {
        if (src.close)
            src.close(src.ctx, 0);
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_index_load_io: NULL argument");
    }
    *out = NULL;
    if (!name)
        name = "<index>";
    tfrec_err err = { 0 };
    tfrec_index *ix = tfrec_index_new_empty();
    char *buf = malloc(CHUNK + MAX_LINE);
    rc = ix && buf ? TFREC_OK : tfrec_fail(&err, TFREC_E_NOMEM, "%s: out of memory", name);
    size_t have = 0; /* bytes of an unfinished line at buf[0] */
    uint64_t line = 0;
    while (rc == TFREC_OK) {
        ptrdiff_t got = src.read(src.ctx, buf + have, CHUNK);
        if (got < 0) {
            const char *why = src.errmsg ? src.errmsg(src.ctx) : NULL;
            rc = tfrec_fail(&err, (int)got, "%s: %s", name,
                            why && *why ? why : tfrec_strerror((int)got));
            break;
        }
        size_t n = have + (size_t)got, pos = 0;
        if (got == 0 && have) { /* a last line without its newline */
            buf[n++] = '\n';
        }
        for (;;) {
            char *nl = memchr(buf + pos, '\n', n - pos);
            if (!nl)
                break;
            line++;
            rc = parse_line(ix, buf + pos, (size_t)(nl - (buf + pos)), name, line, data_size, &err);
            if (rc < 0)
                break;
            pos = (size_t)(nl - buf) + 1;
        }
        if (rc < 0 || got == 0)
            break;
        have = n - pos;
        if (have > MAX_LINE) {
            rc = tfrec_fail(&err, TFREC_E_PARSE, "%s: line %llu is longer than %d bytes", name,
                            (unsigned long long)line + 1, MAX_LINE);
            break;
        }
        memmove(buf, buf + pos, have);
    }
    free(buf);
    if (src.close)
        src.close(src.ctx, 0);
    if (rc < 0) {
        tfrec_index_free(ix);
        return tfrec_fail_copy(NULL, &err);
    }
    *out = ix;
    return TFREC_OK;
}

/* ------------------------------------------------------------- writing */

int tfrec_index_write_io(const tfrec_index *ix, const tfrec_io *sink_in, const char *name)
{
    if (!sink_in)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_index_write_io: NULL argument");
    tfrec_io sink;
    int rc = TFREC_STRUCT_IN(tfrec_io, &sink, sink_in, NULL);
    if (rc)
        return rc;
    if (!ix || !sink.write || !sink.close) {
        if (sink.close)
            sink.close(sink.ctx, 0);
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_index_write_io: NULL argument");
    }
    if (!name)
        name = "<index>";
    char *buf = malloc(CHUNK + MAX_LINE);
    if (!buf) {
        sink.close(sink.ctx, 0);
        return tfrec_fail(NULL, TFREC_E_NOMEM, "%s: out of memory", name);
    }
    size_t used = 0;
    for (size_t k = 0; k <= ix->n && rc == TFREC_OK; k++) {
        if (k < ix->n)
            used += tfrec_index_line(buf + used, ix->start[k], ix->start[k + 1] - ix->start[k]);
        if (used && (used >= CHUNK || k == ix->n)) {
            rc = sink.write(sink.ctx, buf, used);
            used = 0;
        }
    }
    free(buf);
    if (rc < 0) {
        const char *why = sink.errmsg ? sink.errmsg(sink.ctx) : NULL;
        tfrec_err err = { 0 };
        tfrec_fail(&err, rc, "%s: %s", name, why && *why ? why : tfrec_strerror(rc));
        sink.close(sink.ctx, 0);
        return tfrec_fail_copy(NULL, &err);
    }
    return sink.close(sink.ctx, 1);
}

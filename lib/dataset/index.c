/* Record indexes in memory: built by reading a file, loaded from the
 * `.idx` text (record/index_format.h) with every entry checked, written
 * through any sink. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataset/index_internal.h"
#include "record/index_format.h"
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

typedef struct load_ctx {
    tfrec_index *ix;
    const char *name;
    int64_t data_size; /* -1: unknown */
} load_ctx;

/* The format module parses; what the entries must mean (tiling, within
 * the data) is checked here, line by line, so the message names the line. */
static int load_entry(void *ctx, uint64_t off, uint64_t len, uint64_t line, tfrec_err *err)
{
    load_ctx *c = ctx;
    int rc = tfrec_index_push(c->ix, off, len, c->name, line, err);
    if (rc < 0)
        return rc;
    if (c->data_size >= 0 && c->ix->start[c->ix->n] > (uint64_t)c->data_size)
        return tfrec_fail(err, TFREC_E_PARSE,
                          "%s: line %llu: record [%llu, %llu) lies beyond the end of the data "
                          "file (%lld bytes)",
                          c->name, (unsigned long long)line, (unsigned long long)off,
                          (unsigned long long)(off + len), (long long)c->data_size);
    return TFREC_OK;
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
    load_ctx c = { tfrec_index_new_empty(), name, data_size };
    rc = c.ix ? tfrec_idx_parse(&src, name, load_entry, &c, &err)
              : tfrec_fail(&err, TFREC_E_NOMEM, "%s: out of memory", name);
    if (src.close)
        src.close(src.ctx, 0);
    if (rc < 0) {
        tfrec_index_free(c.ix);
        return tfrec_fail_copy(NULL, &err);
    }
    *out = c.ix;
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
    /* Records tile from offset 0, so their lengths alone give the lines. */
    tfrec_err err = { 0 };
    index_out *x;
    rc = tfrec_index_out_open(&x, &sink, name, &err);
    for (size_t k = 0; k < ix->n && rc == TFREC_OK; k++)
        rc = tfrec_index_out_add(x, ix->start[k + 1] - ix->start[k], &err);
    int crc = tfrec_index_out_close(x, rc == TFREC_OK, &err); /* x NULL: nothing */
    if (rc == TFREC_OK)
        rc = crc;
    return rc < 0 ? tfrec_fail_copy(NULL, &err) : TFREC_OK;
}

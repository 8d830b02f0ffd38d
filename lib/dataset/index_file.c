/* Index files next to local data files: freshness, building FILE.idx,
 * counting through an index, and finding a file's index through any
 * source opener. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataset/index_internal.h"
#include "record/framing.h"
#include "record/index_format.h"
#include "util/big_buffer.h"
#include "util/ioerr.h"
#include "util/struct_size.h"

/* Fresh as index_format.h defines it: not older than the data (where the
 * file system keeps times), records ending at the data's size. The index
 * is opened first: without one, the data is not examined at all (on
 * gs:// that saves a metadata request per file, which the server may
 * answer by hashing the object). */
int tfrec_index_fresh_fs(const tfrec_fs *fs, tfrec_index **out, const char *path)
{
    *out = NULL;
    char *iname = tfrec_idx_name(path);
    if (!iname)
        return tfrec_fail(NULL, TFREC_E_NOMEM, "%s: out of memory", path);
    tfrec_io io = TFREC_IO_INIT;
    int rc = tfrec_fs_open_source(fs, iname, &io);
    /* An index that cannot be opened, whatever the reason (a name the
     * file system refuses, a denied object), is no usable index: reading
     * the data then reports the data's own error, or reads it unindexed. */
    if (rc < 0)
        rc = TFREC_E_NOT_FOUND;
    tfrec_fs_info ds = TFREC_FS_INFO_INIT, is = TFREC_FS_INFO_INIT;
    /* Data that cannot be examined has no usable index: reading it says
     * why (a bad name, a missing file) in the caller's terms. */
    if (rc == TFREC_OK && tfrec_fs_stat(fs, path, &ds) < 0)
        rc = TFREC_E_NOT_FOUND;
    /* The index's own time matters only where the data has one. */
    if (rc == TFREC_OK && ds.mtime_ns && (rc = tfrec_fs_stat(fs, iname, &is)) == TFREC_OK)
        rc = tfrec_idx_fresh_by_time(iname, path, is.mtime_ns, ds.mtime_ns);
    if (rc == TFREC_OK) {
        tfrec_index *ix = NULL;
        rc = tfrec_index_load_io(&ix, &io, iname, (int64_t)ds.size);
        io.close = NULL; /* load_io closed it */
        if (rc == TFREC_OK &&
            (rc = tfrec_idx_fresh_by_end(iname, path, tfrec_index_data_size(ix), ds.size)) < 0) {
            tfrec_index_free(ix);
            ix = NULL;
        }
        *out = ix;
    }
    if (io.close)
        io.close(io.ctx, 0);
    free(iname);
    return rc;
}

int tfrec_fs_index_load_fresh(const tfrec_fs *fs, tfrec_index **out, const char *path)
{
    if (!out || !path)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_index_load_fresh: NULL argument");
    return tfrec_index_fresh_fs(fs, out, path);
}

int tfrec_index_load_fresh(tfrec_index **out, const char *path)
{
    return tfrec_fs_index_load_fresh(NULL, out, path);
}

/* Streamed: lines go out as records are read, so memory stays constant
 * whatever the file holds. */
int tfrec_index_file(const char *path, uint64_t *records)
{
    if (!path)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_index_file: NULL argument");
    if (!strcmp(path, "-"))
        return tfrec_fail(NULL, TFREC_E_UNSUPPORTED,
                          "cannot index standard input: an index belongs next to a file");
    tfrec_reader *r;
    int rc = tfrec_fs_reader_open(NULL, &r, path, NULL);
    if (rc < 0)
        return rc;
    if (tfrec_reader_compression(r) != TFREC_COMPRESSION_NONE) {
        rc = tfrec_fail(NULL, TFREC_E_UNSUPPORTED,
                        "%s: cannot index a %s-compressed file: an index holds byte offsets "
                        "into the file, which a compressed stream cannot seek to (tfrec convert "
                        "-C NONE makes an uncompressed copy)",
                        path, tfrec_compression_name(tfrec_reader_compression(r)));
        tfrec_reader_free(r);
        return rc;
    }
    char *iname = tfrec_idx_name(path);
    tfrec_io sink = TFREC_IO_INIT;
    tfrec_err err = { 0 };
    index_out *out = NULL;
    rc = iname ? tfrec_fs_open_sink(NULL, iname, &sink)
               : tfrec_fail(NULL, TFREC_E_NOMEM, "%s: out of memory", path);
    if (rc == TFREC_OK)
        rc = tfrec_index_out_open(&out, &sink, iname, &err);
    const uint8_t *data;
    size_t len;
    uint64_t n = 0, end = 0;
    while (rc == TFREC_OK && (rc = tfrec_reader_next(r, &data, &len)) == TFREC_OK) {
        if (tfrec_reader_offset(r) != end) /* cannot happen without skip_corrupt */
            rc = tfrec_fail(&err, TFREC_E_INVALID, "%s: records do not tile the file", path);
        else
            rc = tfrec_index_out_add(out, (uint64_t)len + 16, &err);
        end += (uint64_t)len + 16;
        n++;
    }
    if (rc == TFREC_END)
        rc = TFREC_OK;
    else if (rc < 0 && !err.code)
        tfrec_fail(&err, rc, "%s", tfrec_reader_errmsg(r));
    tfrec_reader_free(r);
    if (out) {
        int crc = tfrec_index_out_close(out, rc == TFREC_OK, &err);
        if (rc == TFREC_OK)
            rc = crc;
    }
    free(iname);
    if (rc < 0)
        return err.code ? tfrec_fail_copy(NULL, &err) : rc;
    if (records)
        *records = n;
    return TFREC_OK;
}

int tfrec_reader_count(const char *path, const tfrec_reader_options *opts, uint64_t *count,
                       int *used_index)
{
    if (!path || !count)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_reader_count: NULL argument");
    if (used_index)
        *used_index = 0;
    tfrec_index *ix = NULL;
    tfrec_reader_options o;
    int rc = TFREC_STRUCT_IN(tfrec_reader_options, &o, opts, NULL);
    if (rc)
        return rc;
    int forced = o.compression > TFREC_COMPRESSION_NONE;
    rc = strcmp(path, "-") && !forced ? tfrec_index_fresh_fs(o.fs, &ix, path) : TFREC_E_NOT_FOUND;
    if (rc == TFREC_OK) {
        *count = ix->n;
        tfrec_index_free(ix);
        if (used_index)
            *used_index = 1;
        return TFREC_OK;
    }
    /* No index or a stale one: read the file. A garbled index is an
     * error of its own (the message names its line), not ignored. */
    if (rc != TFREC_E_NOT_FOUND && rc != TFREC_E_STATE)
        return rc;
    tfrec_reader *r;
    rc = tfrec_fs_reader_open(o.fs, &r, path, opts);
    if (rc < 0)
        return rc;
    const uint8_t *data;
    size_t len;
    uint64_t n = 0;
    while ((rc = tfrec_reader_next(r, &data, &len)) == TFREC_OK)
        n++;
    if (rc == TFREC_END) {
        *count = n;
        rc = TFREC_OK;
    } else {
        rc = tfrec_fail(NULL, rc, "%s", tfrec_reader_errmsg(r));
    }
    tfrec_reader_free(r);
    return rc;
}

/* ------------------------------------------------------ through a source */

int tfrec_io_pread_exact(const tfrec_io *src, uint64_t offset, void *buf, size_t n,
                         const char *name, tfrec_err *err)
{
    if (!src->seek)
        return tfrec_fail(err, TFREC_E_UNSUPPORTED, "%s: random access needs a seekable source",
                          name);
    int rc = src->seek(src->ctx, offset);
    size_t got = 0;
    while (rc == TFREC_OK && got < n) {
        ptrdiff_t k = src->read(src->ctx, (uint8_t *)buf + got, n - got);
        if (k < 0)
            rc = (int)k;
        else if (k == 0)
            return tfrec_fail(err, TFREC_E_TRUNCATED,
                              "%s: record at offset %llu is cut short: the file ends after %zu "
                              "of its %zu bytes (is the index stale?)",
                              name, (unsigned long long)offset, got, n);
        else
            got += (size_t)k;
    }
    if (rc < 0) {
        const char *why = src->errmsg ? src->errmsg(src->ctx) : NULL;
        return tfrec_fail(err, rc, "%s", why && *why ? why : tfrec_strerror(rc));
    }
    return TFREC_OK;
}

int tfrec_frame_check(const uint8_t *p, uint64_t n, uint64_t offset, const char *name,
                      tfrec_err *err)
{
    uint64_t len;
    if (!frame_header_ok(p, &len))
        return tfrec_fail(err, TFREC_E_BAD_LENGTH_CRC,
                          "%s: bad length CRC in record at offset %llu", name,
                          (unsigned long long)offset);
    if (len != n - FRAME_OVERHEAD)
        return tfrec_fail(err, TFREC_E_INVALID,
                          "%s: record at offset %llu holds %llu bytes but the index says %llu "
                          "(the index is stale or wrong)",
                          name, (unsigned long long)offset, (unsigned long long)len,
                          (unsigned long long)(n - FRAME_OVERHEAD));
    uint32_t want = frame_load32(p + FRAME_HEADER + len);
    if (tfrec_crc32c_mask(tfrec_crc32c(p + FRAME_HEADER, (size_t)len)) != want)
        return tfrec_fail(err, TFREC_E_BAD_DATA_CRC, "%s: bad data CRC in record at offset %llu",
                          name, (unsigned long long)offset);
    return TFREC_OK;
}

/* A source that copies what it reads into one buffer (tfrec_scan_keep)
 * while the budget grants room; a seek elsewhere or a refused grant ends
 * the copy, and the scan goes on without it. */
typedef struct keep_tee {
    tfrec_io in;
    tfrec_scan_keep *keep;
    uint8_t *p;
    uint64_t len, cap; /* cap: granted */
    int64_t hint;      /* the source's size, or -1 */
    int off;
} keep_tee;

static void tee_stop(keep_tee *t)
{
    tfrec_big_free(t->p, (size_t)t->cap);
    if (t->cap)
        t->keep->release(t->keep->ctx, t->cap);
    t->p = NULL;
    t->len = t->cap = 0;
    t->off = 1;
}

static ptrdiff_t tee_read(void *ctx, void *buf, size_t n)
{
    keep_tee *t = ctx;
    ptrdiff_t k = t->in.read(t->in.ctx, buf, n);
    if (k <= 0 || t->off)
        return k;
    uint64_t need = t->len + (uint64_t)k;
    if (need > t->cap) {
        uint64_t cap = t->hint >= 0 && (uint64_t)t->hint >= need ? (uint64_t)t->hint
                       : t->cap * 2 > need                       ? t->cap * 2
                                                                 : need;
        if (cap > SIZE_MAX || t->keep->grant(t->keep->ctx, cap - t->cap)) {
            tee_stop(t);
            return k;
        }
        uint8_t *p = tfrec_big_grow(t->p, (size_t)t->cap, (size_t)cap);
        if (!p) {
            t->keep->release(t->keep->ctx, cap - t->cap);
            tee_stop(t);
            return k;
        }
        t->p = p;
        t->cap = cap;
    }
    memcpy(t->p + t->len, buf, (size_t)k);
    t->len = need;
    return k;
}

static int tee_seek(void *ctx, uint64_t offset)
{
    keep_tee *t = ctx;
    if (!t->off && offset != t->len)
        tee_stop(t);
    return t->in.seek(t->in.ctx, offset);
}

static int64_t tee_size(void *ctx)
{
    keep_tee *t = ctx;
    return t->in.size(t->in.ctx);
}

static int tee_close(void *ctx, int commit)
{
    keep_tee *t = ctx;
    return t->in.close ? t->in.close(t->in.ctx, commit) : TFREC_OK;
}

static const char *tee_errmsg(void *ctx)
{
    keep_tee *t = ctx;
    return t->in.errmsg ? t->in.errmsg(t->in.ctx) : NULL;
}

static int scan(tfrec_index **out, const tfrec_io *io_in, const char *name, uint64_t max_record,
                tfrec_scan_keep *keep, tfrec_err *err)
{
    tfrec_reader_options ro = TFREC_READER_OPTIONS_INIT;
    ro.max_record_size = max_record;
    ro.use_mmap = -1;
    keep_tee t = { .in = *io_in, .keep = keep, .hint = -1, .off = !keep };
    tfrec_io io = *io_in;
    if (keep) {
        keep->bytes = NULL;
        keep->size = 0;
        t.hint = io_in->size ? io_in->size(io_in->ctx) : -1;
        io.ctx = &t;
        io.read = tee_read;
        io.seek = io_in->seek ? tee_seek : NULL;
        io.size = io_in->size ? tee_size : NULL;
        io.close = tee_close;
        io.errmsg = tee_errmsg;
    }
    tfrec_reader *r;
    int rc = tfrec_reader_open_io(&r, &io, name, &ro);
    if (rc < 0) {
        if (keep)
            tee_stop(&t);
        return tfrec_fail(err, rc, "%s", tfrec_last_errmsg());
    }
    rc = tfrec_index_build(out, r);
    if (rc < 0)
        tfrec_fail(err, rc, "%s%s%s", rc == TFREC_E_UNSUPPORTED ? name : "",
                   rc == TFREC_E_UNSUPPORTED ? ": " : "", tfrec_last_errmsg());
    tfrec_reader_free(r);
    if (!keep)
        return rc;
    uint64_t size = rc == TFREC_OK ? tfrec_index_data_size(*out) : 0;
    if (rc < 0 || t.off || t.len < size || !size) {
        tee_stop(&t);
        return rc;
    }
    keep->bytes = t.p;
    keep->size = size;
    keep->cap = t.cap;
    return rc;
}

int tfrec_index_for_source(tfrec_index **out, const char *name, int policy, const tfrec_fs *fs,
                           uint64_t max_record, tfrec_scan_keep *keep, tfrec_err *err)
{
    *out = NULL;
    if (keep)
        keep->bytes = NULL;
    int rc;
    if (policy != TFREC_INDEX_SCAN) {
        rc = tfrec_index_fresh_fs(fs, out, name);
        if (rc == TFREC_OK)
            return rc;
        if (policy == TFREC_INDEX_REQUIRE || (rc != TFREC_E_NOT_FOUND && rc != TFREC_E_STATE))
            return tfrec_fail(err, rc, "%s", tfrec_last_errmsg());
    }
    tfrec_io io = TFREC_IO_INIT;
    rc = tfrec_fs_open_source(fs, name, &io);
    if (rc < 0)
        return tfrec_fail(err, rc, "%s", tfrec_last_errmsg());
    return scan(out, &io, name, max_record, keep, err);
}

/* Record k of a file through its index: one positioned read of exactly the
 * record's framed bytes (or, for a local file on a local disk, a pointer
 * into a read-only mapping: no system call at all), then the same checks
 * the sequential reader makes. */
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dataset/index_internal.h"
#include "dataset/random_internal.h"
#include "fs/fs_internal.h"
#include "io/io_util.h"
#include "util/ioerr.h"
#include "util/struct_size.h"
#include "util/vec.h"

struct tfrec_random_reader {
    tfrec_io io;
    const tfrec_index *ix;
    tfrec_index *owned; /* ix, when the reader owns it */
    char *name;
    const uint8_t *map; /* whole file, when mapped */
    uint64_t map_len;
    uint8_t *populated; /* bitmap of PREFETCH_CHUNKs mapped in advance */
    int populate_off;   /* the kernel refused: no more attempts */
    int fd;             /* a local file's descriptor for pread(), else -1 */
    /* Ranged: no open source; each read is one open_range of this file
     * system (gs://, mem://: one request of exactly the bytes wanted). */
    int ranged;
    tfrec_fs fs;
    /* Streamed (tfrec_random_reader_stream): one source from an offset to
     * the end of the file (one open-ended request), kept while reads go
     * on where the last one ended. */
    int streamed;
    tfrec_io stream;
    uint64_t stream_pos;
    uint8_t *buf;
    size_t cap;
    tfrec_err err;
};

/* Small records of a local file are read through a mapping unless
 * TFREC_MMAP=0 or use_mmap = -1: a record is then a pointer, no system
 * call, where pread() costs one per run of records (several times a 1 KiB
 * record's own work). Large records are read with pread() unless
 * TFREC_MMAP=1 or use_mmap = 1: the kernel copies them through its own
 * mapping, where first touches of ours fault page by page (110 KiB
 * records: pread() several times faster; bench/RESULTS.md, "Local
 * shuffled reads"). A file truncated while mapped raises SIGBUS. Where
 * the mapping fails (pipes, file systems that cannot map) a local file is
 * read with pread(); any other source with its seek and read. */
#define MAP_MEAN_RECORD_MAX (16u << 10)

static int want_map(const tfrec_index *ix)
{
    if (tfrec_io_mmap_default())
        return 1;
    uint64_t n = tfrec_index_records(ix);
    return tfrec_io_mmap_random_default() && n &&
           tfrec_index_data_size(ix) / n <= MAP_MEAN_RECORD_MAX;
}

/* The file ended inside a record the index places there. */
static int cut_short(tfrec_random_reader *r, uint64_t offset, size_t got, size_t n)
{
    return tfrec_fail(&r->err, TFREC_E_TRUNCATED,
                      "%s: record at offset %llu is cut short: the file ends after %zu of its "
                      "%zu bytes (is the index stale?)",
                      r->name, (unsigned long long)offset, got, n);
}
static int pread_exact(tfrec_random_reader *r, uint64_t offset, uint8_t *dst, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t k = pread(r->fd, dst + got, n - got, (off_t)(offset + got));
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return tfrec_fail_errno(&r->err, TFREC_E_IO, errno, r->name,
                                    "read failed at offset %llu",
                                    (unsigned long long)(offset + got));
        if (k == 0)
            return cut_short(r, offset, got, n);
        got += (size_t)k;
    }
    return TFREC_OK;
}

static int read_full(tfrec_random_reader *r, tfrec_io *io, uint64_t offset, uint8_t *dst, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ptrdiff_t k = io->read(io->ctx, dst + got, n - got);
        if (k < 0) {
            const char *why = io->errmsg ? io->errmsg(io->ctx) : NULL;
            return tfrec_fail(&r->err, (int)k, "%s", why && *why ? why : tfrec_strerror((int)k));
        }
        if (k == 0)
            return cut_short(r, offset, got, n);
        got += (size_t)k;
    }
    return TFREC_OK;
}

/* A range of the file that the index says exists but the file system
 * refuses (past its end) means the index is stale. */
static int open_failed(tfrec_random_reader *r, int rc)
{
    if (rc == TFREC_E_INVALID)
        return tfrec_fail(&r->err, TFREC_E_STATE,
                          "%s: the index describes %llu bytes but the file is shorter (stale "
                          "index): %s",
                          r->name, (unsigned long long)tfrec_index_data_size(r->ix),
                          tfrec_last_errmsg());
    return tfrec_fail(&r->err, rc, "%s", tfrec_last_errmsg());
}

static void stream_close(tfrec_random_reader *r)
{
    if (r->stream.close)
        r->stream.close(r->stream.ctx, 0);
    r->stream = (tfrec_io)TFREC_IO_INIT;
}

/* Streamed: continue the open source when offset is where it stands, else
 * open one from offset to the end of the file. */
static int streamed_read(tfrec_random_reader *r, uint64_t offset, uint8_t *dst, size_t n)
{
    if (!r->stream.close || r->stream_pos != offset) {
        stream_close(r);
        int rc = tfrec_fs_open_range(&r->fs, r->name, offset, UINT64_MAX, &r->stream);
        if (rc < 0) {
            r->stream = (tfrec_io)TFREC_IO_INIT;
            return open_failed(r, rc);
        }
        r->stream_pos = offset;
    }
    int rc = read_full(r, &r->stream, offset, dst, n);
    if (rc < 0) {
        stream_close(r);
        return rc;
    }
    r->stream_pos += n;
    return TFREC_OK;
}

static int ranged_read(tfrec_random_reader *r, uint64_t offset, uint8_t *dst, size_t n)
{
    if (r->streamed)
        return streamed_read(r, offset, dst, n);
    tfrec_io io = TFREC_IO_INIT;
    int rc = tfrec_fs_open_range(&r->fs, r->name, offset, n, &io);
    if (rc < 0)
        return open_failed(r, rc);
    rc = read_full(r, &io, offset, dst, n);
    io.close(io.ctx, 0);
    return rc;
}

void tfrec_random_reader_stream(tfrec_random_reader *r, int on)
{
    if (!on)
        stream_close(r);
    r->streamed = on && r->ranged;
}

int tfrec_random_reader_open_fs_shared(tfrec_random_reader **out, const tfrec_fs *fs,
                                       const char *name, const tfrec_index *ix, tfrec_index *owned,
                                       int use_mmap)
{
    *out = NULL;
    tfrec_fs t;
    int rc = tfrec_fs_resolve(fs, name, "random reader", &t);
    if (rc < 0) {
        tfrec_index_free(owned);
        return rc;
    }
    if (!t.open_range || t.open_source == tfrec_fs_local()->open_source) {
        /* Local files (pread, mapping), and sources that only seek. */
        tfrec_io io = TFREC_IO_INIT;
        rc = tfrec_fs_open_source(&t, name, &io);
        if (rc < 0) {
            tfrec_index_free(owned);
            return rc;
        }
        return tfrec_random_reader_open_shared(out, &io, ix, owned, name, use_mmap);
    }
    /* No metadata request: a range the index describes beyond the end of
     * the file fails at its read, saying the index is stale. */
    tfrec_random_reader *r = calloc(1, sizeof *r);
    char *copy = strdup(name);
    if (!r || !copy) {
        free(r);
        free(copy);
        tfrec_index_free(owned);
        return tfrec_fail(NULL, TFREC_E_NOMEM, "%s: out of memory", name);
    }
    r->ix = ix;
    r->owned = owned;
    r->name = copy;
    r->fd = -1;
    r->ranged = 1;
    r->fs = t;
    *out = r;
    return TFREC_OK;
}

int tfrec_random_reader_open_shared(tfrec_random_reader **out, const tfrec_io *src,
                                    const tfrec_index *ix, tfrec_index *owned, const char *name,
                                    int use_mmap)
{
    *out = NULL;
    tfrec_random_reader *r = calloc(1, sizeof *r);
    char *copy = strdup(name ? name : "<io>");
    if (!r || !copy) {
        free(r);
        free(copy);
        src->close(src->ctx, 0);
        tfrec_index_free(owned);
        return tfrec_fail(NULL, TFREC_E_NOMEM, "%s: out of memory", name);
    }
    r->io = *src;
    r->ix = ix;
    r->owned = owned;
    r->name = copy;
    const uint8_t *p;
    uint64_t n;
    r->fd = tfrec_io_source_fd(&r->io);
    if ((use_mmap > 0 || (use_mmap == 0 && want_map(ix))) &&
        tfrec_io_source_map(&r->io, &p, &n) == 0) {
        r->map = p;
        r->map_len = n;
        /* No read-ahead around each fault (the sequential reader's advice). */
    } else if (r->fd < 0 && !r->io.seek) {
        tfrec_random_reader_free(r);
        return tfrec_fail(NULL, TFREC_E_UNSUPPORTED,
                          "%s: random access needs a source that can seek", name);
    }
    /* An index describing more bytes than the file has is stale: say so
     * now rather than at the first record past the end. */
    int64_t size = r->map ? (int64_t)r->map_len : r->io.size ? r->io.size(r->io.ctx) : -1;
    if (size >= 0 && tfrec_index_data_size(ix) > (uint64_t)size) {
        int rc = tfrec_fail(NULL, TFREC_E_STATE,
                            "%s: the index describes %llu bytes but the file has %lld (stale "
                            "index)",
                            name, (unsigned long long)tfrec_index_data_size(ix), (long long)size);
        tfrec_random_reader_free(r);
        return rc;
    }
    *out = r;
    return TFREC_OK;
}

int tfrec_random_reader_open_io(tfrec_random_reader **out, const tfrec_io *src_in, tfrec_index *ix,
                                const char *name)
{
    if (out)
        *out = NULL;
    if (!src_in) {
        tfrec_index_free(ix);
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_random_reader_open_io: NULL argument");
    }
    tfrec_io src;
    int rc = TFREC_STRUCT_IN(tfrec_io, &src, src_in, NULL);
    if (rc) {
        tfrec_index_free(ix);
        return rc;
    }
    if (!out || !ix || !src.read || !src.close) {
        if (src.close)
            src.close(src.ctx, 0);
        tfrec_index_free(ix);
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_random_reader_open_io: NULL argument");
    }
    return tfrec_random_reader_open_shared(out, &src, ix, ix, name, 0);
}

int tfrec_fs_random_reader_open(const tfrec_fs *fs, tfrec_random_reader **out, const char *path)
{
    if (!out || !path)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_random_reader_open: NULL argument");
    *out = NULL;
    tfrec_index *ix;
    tfrec_err err = { 0 };
    int rc = tfrec_index_for_source(&ix, path, TFREC_INDEX_AUTO, fs, 0, NULL, &err);
    if (rc < 0)
        return tfrec_fail_copy(NULL, &err);
    return tfrec_random_reader_open_fs_shared(out, fs, path, ix, ix, 0);
}

int tfrec_random_reader_open(tfrec_random_reader **out, const char *path)
{
    return tfrec_fs_random_reader_open(NULL, out, path);
}

uint64_t tfrec_random_reader_records(const tfrec_random_reader *r)
{
    return r ? tfrec_index_records(r->ix) : 0;
}

/* Populated chunks of a mapping (tfrec_random_reader_prefetch): a page
 * fault costs microseconds on some virtual machines, one madvise() per
 * chunk maps all its pages at once. */
#define PREFETCH_CHUNK (256u << 10)
#define PREFETCH_BYTES_MAX 4096u

void tfrec_random_reader_prefetch(tfrec_random_reader *r, uint64_t k)
{
    if (!r->map || k >= tfrec_index_records(r->ix) || r->ix->start[k + 1] > r->map_len)
        return;
    uint64_t at = r->ix->start[k], n = r->ix->start[k + 1] - at;
    if (n > PREFETCH_BYTES_MAX)
        n = PREFETCH_BYTES_MAX;
#ifdef MADV_POPULATE_READ
    if (!r->populate_off && !r->populated) {
        uint64_t chunks = (r->map_len + PREFETCH_CHUNK - 1) / PREFETCH_CHUNK;
        r->populated = calloc((size_t)(chunks + 7) / 8, 1);
        r->populate_off = !r->populated;
    }
    for (uint64_t c = at / PREFETCH_CHUNK; !r->populate_off && c <= (at + n - 1) / PREFETCH_CHUNK;
         c++) {
        if (r->populated[c / 8] & (1u << (c % 8)))
            continue;
        r->populated[c / 8] |= (uint8_t)(1u << (c % 8));
        uint64_t len = r->map_len - c * PREFETCH_CHUNK;
        /* Only a hint: where the kernel refuses (before Linux 5.14), pages
         * fault in as they are read. */
        if (madvise((void *)(r->map + c * PREFETCH_CHUNK),
                    (size_t)(len < PREFETCH_CHUNK ? len : PREFETCH_CHUNK), MADV_POPULATE_READ))
            r->populate_off = 1;
    }
#endif
    for (uint64_t i = 0; i < n; i += 64)
        __builtin_prefetch(r->map + at + i);
}

int tfrec_random_reader_span(tfrec_random_reader *r, uint64_t k, uint64_t count, uint8_t *dst,
                             const uint8_t **where)
{
    uint64_t n = tfrec_index_records(r->ix);
    if (k >= n || count > n - k || count == 0)
        return tfrec_fail(&r->err, TFREC_E_INVALID, "%s: records %llu..%llu of %llu", r->name,
                          (unsigned long long)k, (unsigned long long)(k + count),
                          (unsigned long long)n);
    uint64_t off = r->ix->start[k], bytes = r->ix->start[k + count] - off;
    if (bytes > SIZE_MAX)
        return tfrec_fail(&r->err, TFREC_E_RECORD_TOO_LARGE, "%s: span too large", r->name);
    const uint8_t *p;
    if (r->map) {
        if (bytes > r->map_len || off > r->map_len - bytes)
            return tfrec_fail(&r->err, TFREC_E_TRUNCATED,
                              "%s: record at offset %llu lies beyond the end of the file "
                              "(%llu bytes; is the index stale?)",
                              r->name, (unsigned long long)off, (unsigned long long)r->map_len);
        p = r->map + off;
        if (dst) {
            memcpy(dst, p, (size_t)bytes);
            p = dst;
        }
    } else {
        if (!dst) {
            if (tfrec_vec_fit(&r->buf, &r->cap, (size_t)bytes) < 0)
                return tfrec_fail(&r->err, TFREC_E_NOMEM, "%s: out of memory", r->name);
            dst = r->buf;
        }
        int rc = r->fd >= 0 ? pread_exact(r, off, dst, (size_t)bytes)
                 : r->ranged
                     ? ranged_read(r, off, dst, (size_t)bytes)
                     : tfrec_io_pread_exact(&r->io, off, dst, (size_t)bytes, r->name, &r->err);
        if (rc < 0)
            return rc;
        p = dst;
    }
    for (uint64_t i = 0; i < count; i++) {
        uint64_t o = r->ix->start[k + i];
        int rc = tfrec_frame_check(p + (o - off), r->ix->start[k + i + 1] - o, o, r->name, &r->err);
        if (rc < 0)
            return rc;
    }
    *where = p;
    return TFREC_OK;
}

int tfrec_random_reader_read(tfrec_random_reader *r, uint64_t k, const uint8_t **data, size_t *len)
{
    if (!r || !data || !len)
        return tfrec_fail(r ? &r->err : NULL, TFREC_E_INVALID,
                          "tfrec_random_reader_read: NULL argument");
    const uint8_t *p;
    int rc = tfrec_random_reader_span(r, k, 1, NULL, &p);
    if (rc < 0)
        return rc;
    *data = p + 12;
    *len = (size_t)(r->ix->start[k + 1] - r->ix->start[k] - 16);
    return TFREC_OK;
}

const char *tfrec_random_reader_errmsg(const tfrec_random_reader *r)
{
    return r ? r->err.msg : tfrec_last_errmsg();
}

void tfrec_random_reader_free(tfrec_random_reader *r)
{
    if (!r)
        return;
    if (r->io.close)
        r->io.close(r->io.ctx, 0);
    stream_close(r);
    tfrec_index_free(r->owned);
    free(r->populated);
    free(r->buf);
    free(r->name);
    free(r);
}

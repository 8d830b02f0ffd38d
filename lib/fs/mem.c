/* mem://: a process-wide in-memory object store.
 *
 * Objects are immutable blobs shared by reference count: a source keeps
 * reading the version it opened even when the name is overwritten or
 * removed (like gs://'s pinned generation). A sink collects its bytes in a
 * buffer of its own and publishes them on a committing close only. One
 * mutex guards the name table, a sorted array (listing hands names out in
 * order without sorting); object data is read outside it. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "fs/fs_internal.h"
#include "io/io_util.h"
#include "tfrec/crc32c.h"
#include "util/errors.h"
#include "util/struct_size.h"
#include "util/vec.h"

typedef struct mem_blob {
    atomic_uint refs;
    size_t len;
    uint32_t crc;
    int64_t generation, mtime_ns;
    unsigned char data[];
} mem_blob;

typedef struct mem_obj {
    char *key; /* the name after "mem://" */
    mem_blob *blob;
} mem_obj;

static pthread_mutex_t mem_lock = PTHREAD_MUTEX_INITIALIZER;
static mem_obj *objs;
static size_t n_objs, cap_objs;
static int64_t last_generation;

static void blob_unref(mem_blob *b)
{
    if (b && atomic_fetch_sub(&b->refs, 1) == 1)
        free(b);
}

/* The key of a mem:// name, or NULL (message set) for anything else. */
static const char *mem_key(const char *name, int *rc)
{
    size_t n = tfrec_fs_scheme_length(name);
    if (n != 3 || strncasecmp(name, "mem", 3) != 0) {
        *rc = tfrec_fail(NULL, TFREC_E_INVALID, "%s: not a mem:// name", name ? name : "(null)");
        return NULL;
    }
    if (!name[6]) {
        *rc = tfrec_fail(NULL, TFREC_E_INVALID, "%s: no object name after mem://", name);
        return NULL;
    }
    return name + 6;
}

/* Position of key in objs (lock held): *found set when present. */
static size_t find(const char *key, int *found)
{
    size_t lo = 0, hi = n_objs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(objs[mid].key, key);
        if (c == 0) {
            *found = 1;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = 0;
    return lo;
}

/* The blob of key with a reference taken, or NULL. */
static mem_blob *lookup(const char *key)
{
    int found;
    mem_blob *b = NULL;
    pthread_mutex_lock(&mem_lock);
    size_t i = find(key, &found);
    if (found) {
        b = objs[i].blob;
        atomic_fetch_add(&b->refs, 1);
    }
    pthread_mutex_unlock(&mem_lock);
    return b;
}

/* ------------------------------------------------------------ sources */

/* Sources are lib/io's memory source over the blob, holding a reference
 * until closed (the blob stays as it was opened whatever is published). */
static void release_blob(void *blob)
{
    blob_unref(blob);
}

static int mem_open_range(void *ctx, const char *name, uint64_t offset, uint64_t length,
                          tfrec_io *io)
{
    (void)ctx;
    int rc = TFREC_STRUCT_CHECK_OUT(tfrec_io, io, NULL);
    const char *key = rc ? NULL : mem_key(name, &rc);
    if (!key)
        return rc;
    mem_blob *b = lookup(key);
    if (!b)
        return tfrec_fail(NULL, TFREC_E_NOT_FOUND, "%s: no such object", name);
    if (offset > b->len || (length != UINT64_MAX && length > b->len - offset)) {
        size_t len = b->len;
        blob_unref(b);
        return tfrec_fail(NULL, TFREC_E_INVALID,
                          "%s: range of %llu bytes at %llu is past the end (%zu bytes)", name,
                          (unsigned long long)(length == UINT64_MAX ? 0 : length),
                          (unsigned long long)offset, len);
    }
    size_t off = (size_t)offset;
    size_t len = length == UINT64_MAX ? b->len - off : (size_t)length;
    rc = tfrec_io_open_memory_held(io, b->data + off, len, name, release_blob, b);
    if (rc)
        blob_unref(b);
    return rc;
}

static int mem_open_source(void *ctx, const char *name, tfrec_io *io)
{
    return mem_open_range(ctx, name, 0, UINT64_MAX, io);
}

/* ------------------------------------------------------------ sinks */

typedef struct mem_sink {
    unsigned char *buf;
    size_t len, cap;
    tfrec_err err;
    char key[];
} mem_sink;

static int sink_write(void *ctx, const void *data, size_t n)
{
    mem_sink *s = ctx;
    if (n == 0) /* buf may still be NULL: no memcpy to it */
        return TFREC_OK;
    if (n > SIZE_MAX - s->len)
        return tfrec_fail(&s->err, TFREC_E_NOMEM, "mem://%s: too large", s->key);
    if (tfrec_vec_reserve(&s->buf, &s->cap, s->len + n, 4096))
        return tfrec_fail(&s->err, TFREC_E_NOMEM, "mem://%s: out of memory at %zu bytes", s->key,
                          s->len);
    memcpy(s->buf + s->len, data, n);
    s->len += n;
    return TFREC_OK;
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Put blob b under key (a copy is made), replacing what was there. */
static int publish(const char *key, mem_blob *b)
{
    char *k = strdup(key);
    if (!k)
        return TFREC_E_NOMEM;
    int found, rc = TFREC_OK;
    mem_blob *old = NULL;
    pthread_mutex_lock(&mem_lock);
    b->generation = ++last_generation;
    size_t i = find(key, &found);
    if (found) {
        old = objs[i].blob;
        objs[i].blob = b;
        free(k);
    } else if (tfrec_vec_reserve(&objs, &cap_objs, n_objs + 1, 16)) {
        free(k);
        rc = TFREC_E_NOMEM;
    } else {
        memmove(objs + i + 1, objs + i, (n_objs - i) * sizeof *objs);
        objs[i].key = k;
        objs[i].blob = b;
        n_objs++;
    }
    pthread_mutex_unlock(&mem_lock);
    blob_unref(old);
    return rc;
}

static int sink_close(void *ctx, int commit)
{
    mem_sink *s = ctx;
    int rc = TFREC_OK;
    if (commit) {
        mem_blob *b = malloc(sizeof *b + s->len);
        if (!b) {
            rc = tfrec_fail(&s->err, TFREC_E_NOMEM, "mem://%s: out of memory", s->key);
        } else {
            atomic_init(&b->refs, 1);
            b->len = s->len;
            if (s->len)
                memcpy(b->data, s->buf, s->len);
            b->crc = tfrec_crc32c(b->data, b->len);
            b->mtime_ns = now_ns();
            if (publish(s->key, b) < 0) {
                free(b);
                rc = tfrec_fail(&s->err, TFREC_E_NOMEM, "mem://%s: out of memory", s->key);
            }
        }
    }
    free(s->buf);
    free(s);
    return rc;
}

static const char *sink_errmsg(void *ctx)
{
    return ((mem_sink *)ctx)->err.msg;
}

static int mem_open_sink(void *ctx, const char *name, tfrec_io *io)
{
    (void)ctx;
    int rc = TFREC_STRUCT_CHECK_OUT(tfrec_io, io, NULL);
    const char *key = rc ? NULL : mem_key(name, &rc);
    if (!key)
        return rc;
    mem_sink *s = calloc(1, sizeof *s + strlen(key) + 1);
    if (!s)
        return tfrec_fail(NULL, TFREC_E_NOMEM, "%s: out of memory", name);
    strcpy(s->key, key);
    const tfrec_io made = {
        .struct_size = sizeof made,
        .ctx = s,
        .read = io_read_unsupported,
        .write = sink_write,
        .close = sink_close,
        .errmsg = sink_errmsg,
    };
    return TFREC_STRUCT_OUT(tfrec_io, io, &made, NULL);
}

/* ------------------------------------------------------------ the rest */

static void blob_info(const mem_blob *b, tfrec_fs_info *o)
{
    o->size = b->len;
    o->generation = b->generation;
    o->mtime_ns = b->mtime_ns;
    o->has_crc32c = 1;
    o->crc32c = b->crc;
}

static int mem_stat(void *ctx, const char *name, tfrec_fs_info *info)
{
    (void)ctx;
    int rc = TFREC_OK;
    const char *key = mem_key(name, &rc);
    if (!key)
        return rc;
    mem_blob *b = lookup(key);
    if (!b)
        return tfrec_fail(NULL, TFREC_E_NOT_FOUND, "%s: no such object", name);
    tfrec_fs_info o = TFREC_FS_INFO_INIT;
    blob_info(b, &o);
    blob_unref(b);
    return TFREC_STRUCT_OUT(tfrec_fs_info, info, &o, NULL);
}

static int mem_remove(void *ctx, const char *name)
{
    (void)ctx;
    int rc = TFREC_OK, found;
    const char *key = mem_key(name, &rc);
    if (!key)
        return rc;
    mem_obj gone = { 0 };
    pthread_mutex_lock(&mem_lock);
    size_t i = find(key, &found);
    if (found) {
        gone = objs[i];
        memmove(objs + i, objs + i + 1, (n_objs - i - 1) * sizeof *objs);
        n_objs--;
    }
    pthread_mutex_unlock(&mem_lock);
    if (!found)
        return tfrec_fail(NULL, TFREC_E_NOT_FOUND, "%s: no such object", name);
    free(gone.key);
    blob_unref(gone.blob);
    return TFREC_OK;
}

/* Matches are collected under the lock and handed out after it, so fn may
 * call back into mem://. */
static int mem_list(void *ctx, const char *pattern, tfrec_fs_list_fn fn, void *fn_ctx)
{
    (void)ctx;
    int rc = TFREC_OK;
    const char *key = mem_key(pattern, &rc);
    if (!key)
        return rc;
    size_t plen = strcspn(key, "*?[\\");
    int wild = tfrec_fs_has_wildcard(key);
    fs_list_buf b = { 0 };
    char *full = NULL;
    size_t full_cap = 0;
    pthread_mutex_lock(&mem_lock);
    int found;
    size_t i = find(key, &found);
    if (wild) /* names sharing the literal prefix are contiguous */
        for (i = 0; i < n_objs && strncmp(objs[i].key, key, plen) < 0; i++)
            ;
    for (; i < n_objs && rc == 0; i++) {
        const char *k = objs[i].key;
        if (wild ? strncmp(k, key, plen) != 0 : !found)
            break;
        if (wild && !tfrec_fs_glob_match(key, k))
            continue;
        size_t len = strlen(k) + 6;
        if (tfrec_vec_reserve(&full, &full_cap, len + 1, 64)) {
            rc = tfrec_fail(NULL, TFREC_E_NOMEM, "out of memory");
            break;
        }
        memcpy(full, "mem://", 6);
        memcpy(full + 6, k, len - 5);
        tfrec_fs_info info = TFREC_FS_INFO_INIT;
        blob_info(objs[i].blob, &info);
        rc = tfrec_fs_list_buf_add(&b, full, len, &info);
        if (!wild)
            break;
    }
    pthread_mutex_unlock(&mem_lock);
    free(full);
    if (rc == 0 && b.n == 0)
        rc = tfrec_fail(NULL, TFREC_E_NOT_FOUND, "%s: no object matches", pattern);
    if (rc) {
        tfrec_fs_list_buf_free(&b);
        return rc;
    }
    return tfrec_fs_list_buf_emit(&b, fn, fn_ctx);
}

static const tfrec_fs mem_fs = {
    .struct_size = sizeof mem_fs,
    .scheme = "mem",
    .ctx = NULL,
    .open_source = mem_open_source,
    .open_range = mem_open_range,
    .open_sink = mem_open_sink,
    .stat = mem_stat,
    .list = mem_list,
    .remove = mem_remove,
};

const tfrec_fs *tfrec_fs_mem(void)
{
    return &mem_fs;
}

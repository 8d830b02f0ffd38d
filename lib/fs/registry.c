/* The scheme registry, tfrec_fs_default() and the tfrec_fs_* calls.
 *
 * Registered entries are copies of the caller's table. An entry replaced
 * or unregistered is not freed but kept on a list of retired entries, so a
 * call that looked it up just before can still run through it; there are
 * only as many as registrations, a handful per process. */
#include <ctype.h>
#include <fnmatch.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fs/fs_internal.h"
#include "util/errors.h"
#include "util/struct_size.h"
#include "util/vec.h"

TFREC_DEFINE_STRUCT_INIT(tfrec_fs)
TFREC_DEFINE_STRUCT_INIT(tfrec_fs_info)

enum { MAX_SCHEME = 32, MAX_ENTRIES = 32 };

typedef struct fs_entry {
    tfrec_fs fs;
    char scheme[MAX_SCHEME + 1];
    struct fs_entry *retired_next;
} fs_entry;

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static fs_entry *entries[MAX_ENTRIES];
static size_t n_entries;
static fs_entry *retired;

size_t tfrec_fs_scheme_length(const char *name)
{
    if (!name || !isalpha((unsigned char)name[0]))
        return 0;
    size_t i = 1;
    while (isalnum((unsigned char)name[i]) || name[i] == '+' || name[i] == '-' || name[i] == '.')
        i++;
    return strncmp(name + i, "://", 3) == 0 ? i : 0;
}

static int valid_scheme(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > MAX_SCHEME || !isalpha((unsigned char)s[0]))
        return 0;
    for (size_t i = 1; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '+' && s[i] != '-' && s[i] != '.')
            return 0;
    return 1;
}

/* Index of the entry of scheme s[0..n) in entries[], or -1. Lock held. */
static int find_locked(const char *s, size_t n)
{
    for (size_t i = 0; i < n_entries; i++)
        if (strlen(entries[i]->scheme) == n && strncasecmp(entries[i]->scheme, s, n) == 0)
            return (int)i;
    return -1;
}

int tfrec_fs_register(const tfrec_fs *fs)
{
    if (!fs)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_fs_register: NULL file system");
    fs_entry *e = calloc(1, sizeof *e);
    if (!e)
        return tfrec_fail(NULL, TFREC_E_NOMEM, "tfrec_fs_register: out of memory");
    int rc = TFREC_STRUCT_IN(tfrec_fs, &e->fs, fs, NULL);
    if (rc == TFREC_OK && !valid_scheme(e->fs.scheme))
        rc = tfrec_fail(NULL, TFREC_E_INVALID,
                        "tfrec_fs_register: scheme \"%s\" is not a URL scheme (a letter, then "
                        "letters, digits, + - or ., at most %d)",
                        e->fs.scheme ? e->fs.scheme : "(null)", MAX_SCHEME);
    if (rc == TFREC_OK && strcasecmp(e->fs.scheme, "file") == 0)
        rc = tfrec_fail(NULL, TFREC_E_INVALID,
                        "tfrec_fs_register: file:// names are the local file system's");
    if (rc == TFREC_OK && (!e->fs.open_source || !e->fs.stat))
        rc = tfrec_fail(NULL, TFREC_E_INVALID,
                        "tfrec_fs_register: %s:// has no open_source or no stat", e->fs.scheme);
    if (rc) {
        free(e);
        return rc;
    }
    strcpy(e->scheme, e->fs.scheme);
    for (char *p = e->scheme; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    e->fs.scheme = e->scheme;
    pthread_mutex_lock(&reg_lock);
    int i = find_locked(e->scheme, strlen(e->scheme));
    if (i >= 0) {
        entries[i]->retired_next = retired;
        retired = entries[i];
        entries[i] = e;
    } else if (n_entries < MAX_ENTRIES) {
        entries[n_entries++] = e;
    } else {
        rc =
            tfrec_fail(NULL, TFREC_E_NOMEM, "tfrec_fs_register: more than %d schemes", MAX_ENTRIES);
        free(e);
    }
    pthread_mutex_unlock(&reg_lock);
    return rc;
}

int tfrec_fs_unregister(const char *scheme)
{
    if (!scheme)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_fs_unregister: NULL scheme");
    pthread_mutex_lock(&reg_lock);
    int i = find_locked(scheme, strlen(scheme));
    if (i >= 0) {
        entries[i]->retired_next = retired;
        retired = entries[i];
        entries[i] = entries[--n_entries];
        entries[n_entries] = NULL;
    }
    pthread_mutex_unlock(&reg_lock);
    return i >= 0 ? TFREC_OK
                  : tfrec_fail(NULL, TFREC_E_NOT_FOUND, "tfrec_fs_unregister: no %s:// registered",
                               scheme);
}

const tfrec_fs *tfrec_fs_for(const char *name)
{
    if (!name)
        return tfrec_fail(NULL, TFREC_E_INVALID, "NULL name"), NULL;
    size_t n = tfrec_fs_scheme_length(name);
    if (n == 0 || (n == 4 && strncasecmp(name, "file", 4) == 0))
        return tfrec_fs_local();
    const tfrec_fs *fs = NULL;
    pthread_mutex_lock(&reg_lock);
    int i = find_locked(name, n);
    if (i >= 0)
        fs = &entries[i]->fs;
    pthread_mutex_unlock(&reg_lock);
    if (fs)
        return fs;
    if (n == 3 && strncasecmp(name, "mem", 3) == 0)
        return tfrec_fs_mem();
    if (n == 2 && strncasecmp(name, "gs", 2) == 0)
        tfrec_fail(NULL, TFREC_E_UNSUPPORTED,
                   "%s: gs:// names need libtfrec-storage, which is not linked (a static "
                   "program calls tfrec_storage_register())",
                   name);
    else
        tfrec_fail(NULL, TFREC_E_UNSUPPORTED, "%s: no file system is registered for %.*s:// names",
                   name, (int)n, name);
    return NULL;
}

/* ------------------------------------------------------------ the calls */

/* The table a call goes through: fs itself (copied, so an older caller's
 * shorter struct reads as zeros past its end), or for the default (and
 * NULL) the one the name routes to. */
int tfrec_fs_resolve(const tfrec_fs *fs, const char *name, const char *what, tfrec_fs *out)
{
    if (!name)
        return tfrec_fail(NULL, TFREC_E_INVALID, "%s: NULL name", what);
    if (!fs || fs == tfrec_fs_default()) {
        fs = tfrec_fs_for(name);
        if (!fs)
            return TFREC_E_UNSUPPORTED;
    }
    return TFREC_STRUCT_IN(tfrec_fs, out, fs, NULL);
}

static int unsupported(const tfrec_fs *t, const char *name, const char *op)
{
    return tfrec_fail(NULL, TFREC_E_UNSUPPORTED, "%s: %s:// cannot %s", name,
                      t->scheme ? t->scheme : "file", op);
}

int tfrec_fs_open_source(const tfrec_fs *fs, const char *name, tfrec_io *io)
{
    tfrec_fs t;
    int rc = TFREC_STRUCT_CHECK_OUT(tfrec_io, io, NULL);
    if (rc || (rc = tfrec_fs_resolve(fs, name, "tfrec_fs_open_source", &t)))
        return rc;
    if (!t.open_source)
        return unsupported(&t, name, "open a source");
    return t.open_source(t.ctx, name, io);
}

int tfrec_fs_open_range(const tfrec_fs *fs, const char *name, uint64_t offset, uint64_t length,
                        tfrec_io *io)
{
    tfrec_fs t;
    int rc = TFREC_STRUCT_CHECK_OUT(tfrec_io, io, NULL);
    if (rc || (rc = tfrec_fs_resolve(fs, name, "tfrec_fs_open_range", &t)))
        return rc;
    if (t.open_range)
        return t.open_range(t.ctx, name, offset, length, io);
    if (!t.open_source)
        return unsupported(&t, name, "open a source");
    tfrec_io whole = TFREC_IO_INIT;
    if ((rc = t.open_source(t.ctx, name, &whole)) < 0)
        return rc;
    return tfrec_fs_range_wrap(&whole, name, offset, length, io);
}

int tfrec_fs_open_sink(const tfrec_fs *fs, const char *name, tfrec_io *io)
{
    tfrec_fs t;
    int rc = TFREC_STRUCT_CHECK_OUT(tfrec_io, io, NULL);
    if (rc || (rc = tfrec_fs_resolve(fs, name, "tfrec_fs_open_sink", &t)))
        return rc;
    if (!t.open_sink)
        return unsupported(&t, name, "write");
    return t.open_sink(t.ctx, name, io);
}

int tfrec_fs_stat(const tfrec_fs *fs, const char *name, tfrec_fs_info *info)
{
    tfrec_fs t;
    int rc = TFREC_STRUCT_CHECK_OUT(tfrec_fs_info, info, NULL);
    if (rc || (rc = tfrec_fs_resolve(fs, name, "tfrec_fs_stat", &t)))
        return rc;
    if (!t.stat)
        return unsupported(&t, name, "stat");
    return t.stat(t.ctx, name, info);
}

int tfrec_fs_list(const tfrec_fs *fs, const char *pattern, tfrec_fs_list_fn fn, void *fn_ctx)
{
    tfrec_fs t;
    if (!fn)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_fs_list: NULL function");
    int rc = tfrec_fs_resolve(fs, pattern, "tfrec_fs_list", &t);
    if (rc)
        return rc;
    if (!t.list)
        return unsupported(&t, pattern, "list");
    rc = t.list(t.ctx, pattern, fn, fn_ctx);
    return rc > 0 ? TFREC_OK : rc;
}

int tfrec_fs_remove(const tfrec_fs *fs, const char *name)
{
    tfrec_fs t;
    int rc = tfrec_fs_resolve(fs, name, "tfrec_fs_remove", &t);
    if (rc)
        return rc;
    if (!t.remove)
        return unsupported(&t, name, "remove");
    return t.remove(t.ctx, name);
}

/* ------------------------------------------------------------ the default */

static int def_open_source(void *ctx, const char *name, tfrec_io *io)
{
    (void)ctx;
    return tfrec_fs_open_source(NULL, name, io);
}

static int def_open_range(void *ctx, const char *name, uint64_t offset, uint64_t length,
                          tfrec_io *io)
{
    (void)ctx;
    return tfrec_fs_open_range(NULL, name, offset, length, io);
}

static int def_open_sink(void *ctx, const char *name, tfrec_io *io)
{
    (void)ctx;
    return tfrec_fs_open_sink(NULL, name, io);
}

static int def_stat(void *ctx, const char *name, tfrec_fs_info *info)
{
    (void)ctx;
    return tfrec_fs_stat(NULL, name, info);
}

static int def_list(void *ctx, const char *pattern, tfrec_fs_list_fn fn, void *fn_ctx)
{
    (void)ctx;
    return tfrec_fs_list(NULL, pattern, fn, fn_ctx);
}

static int def_remove(void *ctx, const char *name)
{
    (void)ctx;
    return tfrec_fs_remove(NULL, name);
}

static const tfrec_fs default_fs = {
    .struct_size = sizeof default_fs,
    .scheme = NULL,
    .ctx = NULL,
    .open_source = def_open_source,
    .open_range = def_open_range,
    .open_sink = def_open_sink,
    .stat = def_stat,
    .list = def_list,
    .remove = def_remove,
};

const tfrec_fs *tfrec_fs_default(void)
{
    return &default_fs;
}

/* ------------------------------------------------------------ helpers */

int tfrec_fs_glob_match(const char *pattern, const char *name)
{
    /* glob(3) matches each path component with fnmatch(3) under these very
     * flags; one call over the whole name is the same thing, since neither
     * side can let a wildcard cross '/'. */
    return fnmatch(pattern, name, FNM_PATHNAME | FNM_PERIOD) == 0;
}

int tfrec_fs_has_wildcard(const char *s)
{
    return strpbrk(s, "*?[") != NULL;
}

struct fs_list_item {
    char *name;
    tfrec_fs_info info;
};

int tfrec_fs_list_buf_add(fs_list_buf *b, const char *name, size_t name_len,
                          const tfrec_fs_info *info)
{
    if (tfrec_vec_reserve(&b->v, &b->cap, b->n + 1, 16))
        return tfrec_fail(NULL, TFREC_E_NOMEM, "out of memory");
    char *copy = malloc(name_len + 1);
    if (!copy)
        return tfrec_fail(NULL, TFREC_E_NOMEM, "out of memory");
    memcpy(copy, name, name_len);
    copy[name_len] = 0;
    b->v[b->n].name = copy;
    b->v[b->n].info = *info;
    b->v[b->n].info.struct_size = sizeof(tfrec_fs_info);
    b->n++;
    return TFREC_OK;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct fs_list_item *)a)->name, ((const struct fs_list_item *)b)->name);
}

void tfrec_fs_list_buf_free(fs_list_buf *b)
{
    for (size_t i = 0; i < b->n; i++)
        free(b->v[i].name);
    free(b->v);
    b->v = NULL;
    b->n = b->cap = 0;
}

int tfrec_fs_list_buf_emit(fs_list_buf *b, tfrec_fs_list_fn fn, void *fn_ctx)
{
    if (b->n > 1)
        qsort(b->v, b->n, sizeof *b->v, by_name);
    int rc = TFREC_OK;
    for (size_t i = 0; i < b->n; i++) {
        int r = fn(fn_ctx, b->v[i].name, &b->v[i].info);
        if (r) {
            rc = r < 0 ? r : TFREC_OK;
            break;
        }
    }
    tfrec_fs_list_buf_free(b);
    return rc;
}

/* tfrec_fs_local(): local paths, "-" and file:///path, over lib/io's file
 * source and sink (temp-then-rename sinks), stat(2) and glob(3). */
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "fs/fs_internal.h"
#include "util/errors.h"
#include "util/ioerr.h"
#include "util/struct_size.h"

/* The path a local name stands for: the name itself, or what follows
 * file:// (an absolute path, optionally after "localhost"). Another scheme
 * is not a local name. Returns NULL with the message set. */
static int local_path(const char *name, const char **path)
{
    if (!name || !*name)
        return tfrec_fail(NULL, TFREC_E_INVALID, "no path given");
    size_t n = tfrec_fs_scheme_length(name);
    *path = name;
    if (n == 0)
        return TFREC_OK;
    if (n == 4 && strncasecmp(name, "file", 4) == 0) {
        const char *p = name + 7;
        if (strncasecmp(p, "localhost/", 10) == 0)
            p += 9;
        *path = p;
        if (*p == '/')
            return TFREC_OK;
        return tfrec_fail(NULL, TFREC_E_INVALID, "%s: a file:// name must be file:///absolute/path",
                          name);
    }
    return tfrec_fail(NULL, TFREC_E_UNSUPPORTED, "%s: not a local path (a %.*s:// name)", name,
                      (int)n, name);
}

static int local_open_source(void *ctx, const char *name, tfrec_io *io)
{
    (void)ctx;
    const char *p;
    int rc = local_path(name, &p);
    return rc ? rc : tfrec_io_open_source(io, p);
}

static int local_open_range(void *ctx, const char *name, uint64_t offset, uint64_t length,
                            tfrec_io *io)
{
    (void)ctx;
    const char *p;
    int rc = local_path(name, &p);
    if (rc)
        return rc;
    tfrec_io whole = TFREC_IO_INIT;
    rc = tfrec_io_open_source(&whole, p);
    return rc < 0 ? rc : tfrec_fs_range_wrap(&whole, name, offset, length, io);
}

static int local_open_sink(void *ctx, const char *name, tfrec_io *io)
{
    (void)ctx;
    const char *p;
    int rc = local_path(name, &p);
    return rc ? rc : tfrec_io_open_sink(io, p);
}

static void fill_info(const struct stat *sb, tfrec_fs_info *o)
{
    o->size = (uint64_t)sb->st_size;
    o->mtime_ns = (int64_t)sb->st_mtim.tv_sec * 1000000000 + sb->st_mtim.tv_nsec;
}

static int local_stat(void *ctx, const char *name, tfrec_fs_info *info)
{
    (void)ctx;
    const char *p;
    int rc = local_path(name, &p);
    if (rc)
        return rc;
    if (strcmp(p, "-") == 0)
        return tfrec_fail(NULL, TFREC_E_UNSUPPORTED, "-: standard input cannot be examined");
    struct stat sb;
    if (stat(p, &sb) != 0)
        return tfrec_fail_errno(NULL, tfrec_errno_code(errno), errno, name, "cannot stat");
    tfrec_fs_info o = TFREC_FS_INFO_INIT;
    fill_info(&sb, &o);
    return TFREC_STRUCT_OUT(tfrec_fs_info, info, &o, NULL);
}

static int local_remove(void *ctx, const char *name)
{
    (void)ctx;
    const char *p;
    int rc = local_path(name, &p);
    if (rc)
        return rc;
    if (remove(p) == 0)
        return TFREC_OK;
    return tfrec_fail_errno(NULL, tfrec_errno_code(errno), errno, name, "cannot remove");
}

/* A pattern without wildcards, or naming an existing file, is that file;
 * else glob(3), sorted bytewise (not by the locale). Names are handed out
 * as the pattern spells them (file:// kept). */
static int local_list(void *ctx, const char *pattern, tfrec_fs_list_fn fn, void *fn_ctx)
{
    (void)ctx;
    const char *p;
    int rc = local_path(pattern, &p);
    if (rc)
        return rc;
    size_t prefix = (size_t)(p - pattern);
    tfrec_fs_info info = TFREC_FS_INFO_INIT;
    struct stat sb;
    if (!tfrec_fs_has_wildcard(p) || stat(p, &sb) == 0) {
        if (stat(p, &sb) != 0)
            return tfrec_fail(NULL, TFREC_E_NOT_FOUND, "%s: no such file", pattern);
        fill_info(&sb, &info);
        int r = fn(fn_ctx, pattern, &info);
        return r < 0 ? r : TFREC_OK;
    }
    glob_t g;
    rc = glob(p, GLOB_NOSORT, NULL, &g);
    if (rc == GLOB_NOMATCH)
        return tfrec_fail(NULL, TFREC_E_NOT_FOUND, "%s: no file matches", pattern);
    if (rc != 0)
        return tfrec_fail(NULL, rc == GLOB_NOSPACE ? TFREC_E_NOMEM : TFREC_E_IO,
                          "%s: cannot expand the pattern (a directory could not be read)", pattern);
    fs_list_buf b = { 0 };
    char *full = NULL;
    for (size_t i = 0; i < g.gl_pathc && rc == 0; i++) {
        tfrec_fs_info one = TFREC_FS_INFO_INIT;
        if (stat(g.gl_pathv[i], &sb) == 0)
            fill_info(&sb, &one);
        size_t len = strlen(g.gl_pathv[i]);
        char *f = realloc(full, prefix + len + 1);
        if (!f) {
            rc = tfrec_fail(NULL, TFREC_E_NOMEM, "out of memory");
            break;
        }
        full = f;
        memcpy(full, pattern, prefix);
        memcpy(full + prefix, g.gl_pathv[i], len + 1);
        rc = tfrec_fs_list_buf_add(&b, full, prefix + len, &one);
    }
    free(full);
    globfree(&g);
    if (rc) {
        tfrec_fs_list_buf_free(&b);
        return rc;
    }
    return tfrec_fs_list_buf_emit(&b, fn, fn_ctx);
}

static const tfrec_fs local_fs = {
    .struct_size = sizeof local_fs,
    .scheme = NULL,
    .ctx = NULL,
    .open_source = local_open_source,
    .open_range = local_open_range,
    .open_sink = local_open_sink,
    .stat = local_stat,
    .list = local_list,
    .remove = local_remove,
};

const tfrec_fs *tfrec_fs_local(void)
{
    return &local_fs;
}

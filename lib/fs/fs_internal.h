/* Internal: the file systems of the core (lib/fs).
 *
 * registry.c  scheme parsing, the registry, tfrec_fs_default() and the
 *             tfrec_fs_* calls (with their fallbacks)
 * local.c     tfrec_fs_local(): lib/io's file source and sink, stat, glob
 * mem.c       mem://, the process-wide in-memory object store
 * range.c     a range of any source: open_range's fallback
 */
#ifndef TFREC_FS_INTERNAL_H
#define TFREC_FS_INTERNAL_H

#include "tfrec/fs.h"
#include "util/private_api.h"

/* The built-in mem:// file system (registry.c finds it without a
 * registration). */
const tfrec_fs *tfrec_fs_mem(void);

/* The table a call on name goes through: fs itself (copied into *out, an
 * older caller's shorter struct zero-filled), or for the default (and
 * NULL) the one the name routes to. what names the caller in messages. */
int tfrec_fs_resolve(const tfrec_fs *fs, const char *name, const char *what, tfrec_fs *out);

/* The deprecated opener callbacks of 1.0's option structs as a file
 * system (opener.c), the one shim every module uses:
 *   the dataset's open_source (ctx, name, io): tfrec_fs_opener_init();
 *   the imagenet callbacks (ctx, io, name): zero the struct, set ctx and
 *   the callbacks the caller set (any may be NULL), tfrec_fs_opener_make().
 * stat opens the name and asks its size (no modification time); a missing
 * range comes from the layer's fallback, a missing sink, list or remove is
 * TFREC_E_UNSUPPORTED; list_add's names (any order, OK on no match) are
 * handed out sorted, no match being TFREC_E_NOT_FOUND. op must outlive the
 * table (and not move). */
typedef struct tfrec_fs_opener {
    int (*open)(void *ctx, const char *name, tfrec_io *io);
    void *ctx;
    tfrec_fs fs;
    int (*open_io)(void *ctx, tfrec_io *io, const char *name);
    int (*open_range_io)(void *ctx, tfrec_io *io, const char *name, uint64_t offset,
                         uint64_t length);
    int (*open_sink_io)(void *ctx, tfrec_io *io, const char *name);
    int (*list_add)(void *ctx, const char *pattern,
                    int (*add)(void *add_ctx, const char *name, uint64_t size), void *add_ctx);
    int (*remove)(void *ctx, const char *name);
} tfrec_fs_opener;
const tfrec_fs *tfrec_fs_opener_init(tfrec_fs_opener *op,
                                     int (*open)(void *ctx, const char *name, tfrec_io *io),
                                     void *ctx);
TFREC_PRIVATE_API const tfrec_fs *tfrec_fs_opener_make(tfrec_fs_opener *op);

/* Bytes [offset, offset + length) of src (owned from now on, closed on
 * failure too) as a source of its own: seeks and size relative to offset.
 * length UINT64_MAX: to the end. A range past the end of a source of known
 * size is TFREC_E_INVALID. */
int tfrec_fs_range_wrap(const tfrec_io *src, const char *name, uint64_t offset, uint64_t length,
                        tfrec_io *io);

/* glob(3)'s matching rules on one whole name: * ? [...] never match '/',
 * nor a leading '.' of a path component; backslash quotes. */
int tfrec_fs_glob_match(const char *pattern, const char *name);
/* Nonzero when s holds a wildcard (* ? [). */
int tfrec_fs_has_wildcard(const char *s);

/* Collects (name, info) pairs and hands them out sorted: what a list
 * implementation that cannot produce them in order uses. */
typedef struct fs_list_buf {
    struct fs_list_item *v;
    size_t n, cap;
} fs_list_buf;
int tfrec_fs_list_buf_add(fs_list_buf *b, const char *name, size_t name_len,
                          const tfrec_fs_info *info);
/* Sort, call fn for each until it returns nonzero, free. Returns TFREC_OK,
 * or fn's negative return. */
int tfrec_fs_list_buf_emit(fs_list_buf *b, tfrec_fs_list_fn fn, void *fn_ctx);
void tfrec_fs_list_buf_free(fs_list_buf *b);

#endif

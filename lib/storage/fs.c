/* gs:// as a tfrec_fs (include/tfrec/fs.h) over a client, and its
 * registration in the core's scheme registry: at load time for the shared
 * library, by tfrec_storage_register() for static programs. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "storage/storage_internal.h"
#include "tfrec/fs.h"
#include "util/struct_size.h"

/* Every call of the gs:// file system gets a gs:// name; a local one is
 * refused (the registry never routes one here; a caller of the table
 * itself must not get a local file by accident). */
static int remote_only(const char *name)
{
    if (tfrec_storage_is_remote(name))
        return TFREC_OK;
    return tfrec_fail(NULL, TFREC_E_INVALID, "%s: not a gs:// name", name ? name : "(null)");
}

static int gs_open_source(void *ctx, const char *name, tfrec_io *io)
{
    int rc = remote_only(name);
    return rc ? rc : tfrec_storage_open_source(ctx, io, name);
}

static int gs_open_range(void *ctx, const char *name, uint64_t offset, uint64_t length,
                         tfrec_io *io)
{
    int rc = remote_only(name);
    return rc ? rc : tfrec_storage_open_source_range(ctx, io, name, offset, length);
}

static int gs_open_sink(void *ctx, const char *name, tfrec_io *io)
{
    int rc = remote_only(name);
    return rc ? rc : tfrec_storage_open_sink(ctx, io, name);
}

static void to_info(const tfrec_storage_object *o, tfrec_fs_info *info)
{
    info->size = o->size;
    info->generation = o->generation;
    info->mtime_ns = 0;
    info->has_crc32c = o->has_crc32c;
    info->crc32c = o->crc32c;
}

static int gs_stat(void *ctx, const char *name, tfrec_fs_info *info)
{
    int rc = remote_only(name);
    if (rc || (rc = TFREC_STRUCT_CHECK_OUT(tfrec_fs_info, info, NULL)))
        return rc;
    tfrec_storage_object o = TFREC_STORAGE_OBJECT_INIT;
    if ((rc = tfrec_storage_stat(ctx, name, &o)) < 0)
        return rc;
    tfrec_fs_info out = TFREC_FS_INFO_INIT;
    to_info(&o, &out);
    return TFREC_STRUCT_OUT(tfrec_fs_info, info, &out, NULL);
}

static int gs_list(void *ctx, const char *pattern, tfrec_fs_list_fn fn, void *fn_ctx)
{
    int rc = remote_only(pattern);
    tfrec_storage_list *l = NULL;
    if (rc || (rc = tfrec_storage_glob(ctx, pattern, &l)) < 0)
        return rc;
    size_t n = tfrec_storage_list_count(l);
    for (size_t i = 0; i < n && rc == 0; i++) {
        const tfrec_storage_object *o = tfrec_storage_list_get(l, i);
        tfrec_fs_info info = TFREC_FS_INFO_INIT;
        to_info(o, &info);
        int r = fn(fn_ctx, o->name, &info);
        if (r)
            rc = r < 0 ? r : 1;
    }
    tfrec_storage_list_free(l);
    return rc > 0 ? TFREC_OK : rc;
}

static int gs_remove(void *ctx, const char *name)
{
    int rc = remote_only(name);
    return rc ? rc : tfrec_storage_remove(ctx, name);
}

int tfrec_storage_fs_init(tfrec_storage *st, tfrec_fs *fs)
{
    const tfrec_fs made = {
        .struct_size = sizeof made,
        .scheme = "gs",
        .ctx = st,
        .open_source = gs_open_source,
        .open_range = gs_open_range,
        .open_sink = gs_open_sink,
        .stat = gs_stat,
        .list = gs_list,
        .remove = gs_remove,
    };
    return TFREC_STRUCT_OUT(tfrec_fs, fs, &made, NULL);
}

static tfrec_fs default_gs;
static pthread_once_t default_gs_once = PTHREAD_ONCE_INIT;

static void make_default_gs(void)
{
    default_gs.struct_size = sizeof default_gs;
    tfrec_storage_fs_init(NULL, &default_gs);
}

const tfrec_fs *tfrec_storage_fs(void)
{
    pthread_once(&default_gs_once, make_default_gs);
    return &default_gs;
}

int tfrec_storage_register(void)
{
    return tfrec_fs_register(tfrec_storage_fs());
}

/* Loading libtfrec-storage.so (a program linked with it, or Python's
 * ctypes) makes gs:// names work everywhere in libtfrec.so. */
__attribute__((constructor)) static void register_at_load(void)
{
    (void)tfrec_storage_register();
}

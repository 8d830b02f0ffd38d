/* Opening the tools' inputs and outputs by name: every call goes through
 * the core's file system layer (include/tfrec/fs.h) with the default file
 * system, so a name is local, "-", or of any registered scheme. With the
 * storage part built (TFREC_CLI_HAVE_STORAGE) gs:// is registered before
 * the first call: the tools link libtfrec-storage.a, whose load-time
 * registration only the shared library gets. */
#include "files.h"

#include <pthread.h>

#include "tfrec/error.h"
#include "tfrec/fs.h"
#ifdef TFREC_CLI_HAVE_STORAGE
#include "tfrec/storage.h"
#endif

static pthread_once_t fs_once = PTHREAD_ONCE_INIT;

static void register_schemes(void)
{
#ifdef TFREC_CLI_HAVE_STORAGE
    (void)tfrec_storage_register();
#endif
}

void cli_fs_setup(void)
{
    pthread_once(&fs_once, register_schemes);
}

/* Before main: a tool that opens names only through the library (a
 * dataset, an imagenet conversion) finds gs:// registered too. */
__attribute__((constructor)) static void setup_at_start(void)
{
    cli_fs_setup();
}

int cli_reader_open(tfrec_reader **out, const char *name, const tfrec_reader_options *o)
{
    cli_fs_setup();
    return tfrec_fs_reader_open(NULL, out, name, o);
}

int cli_writer_open(tfrec_writer **out, const char *name, const tfrec_writer_options *o)
{
    cli_fs_setup();
    return tfrec_fs_writer_open(NULL, out, name, o);
}

int cli_open_source(void *ctx, tfrec_io *io, const char *name)
{
    (void)ctx;
    cli_fs_setup();
    return tfrec_fs_open_source(NULL, name, io);
}

int cli_open_sink(void *ctx, tfrec_io *io, const char *name)
{
    (void)ctx;
    cli_fs_setup();
    return tfrec_fs_open_sink(NULL, name, io);
}

int cli_remove(void *ctx, const char *name)
{
    (void)ctx;
    cli_fs_setup();
    int rc = tfrec_fs_remove(NULL, name);
    return rc == TFREC_E_NOT_FOUND ? TFREC_OK : rc;
}

typedef struct list_add {
    int (*add)(void *add_ctx, const char *name, uint64_t size);
    void *add_ctx;
} list_add;

static int list_one(void *ctx, const char *name, const tfrec_fs_info *info)
{
    list_add *a = ctx;
    return a->add(a->add_ctx, name, info->size);
}

int cli_list_input(void *ctx, const char *pattern,
                   int (*add)(void *add_ctx, const char *name, uint64_t size), void *add_ctx)
{
    (void)ctx;
    cli_fs_setup();
    list_add a = { add, add_ctx };
    int rc = tfrec_fs_list(NULL, pattern, list_one, &a);
    return rc == TFREC_E_NOT_FOUND ? TFREC_OK : rc; /* no match: an empty directory */
}

int cli_open_source_range(void *ctx, tfrec_io *io, const char *name, uint64_t offset,
                          uint64_t length)
{
    (void)ctx;
    cli_fs_setup();
    return tfrec_fs_open_range(NULL, name, offset, length, io);
}

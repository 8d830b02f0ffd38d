/* Opening the tools' inputs and outputs by name: every call goes through
 * the core's file system layer (include/tfrec/fs.h) with the default file
 * system, so a name is local, "-", or of any registered scheme. This is
 * the one place that knows the optional parts: with the storage part
 * built (TFREC_CLI_HAVE_STORAGE) gs:// is registered before the first
 * call (the tools link libtfrec-storage.a, whose load-time registration
 * only the shared library gets). */
#include "files.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

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

int cli_have_storage(void)
{
#ifdef TFREC_CLI_HAVE_STORAGE
    return 1;
#else
    return 0;
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

/* A stdio stream over a source of the layer (fopencookie): reads go to the
 * source, fclose closes it. */
static ssize_t cookie_read(void *c, char *buf, size_t n)
{
    tfrec_io *io = c;
    ptrdiff_t k = io->read(io->ctx, buf, n);
    if (k < 0) {
        errno = EIO;
        return -1;
    }
    return (ssize_t)k;
}

static int cookie_close(void *c)
{
    tfrec_io *io = c;
    int rc = io->close(io->ctx, 0);
    free(io);
    return rc < 0 ? EOF : 0;
}

FILE *cli_fopen_read(const char *name)
{
    cli_fs_setup();
    tfrec_io *io = malloc(sizeof *io);
    if (!io) {
        errno = ENOMEM;
        return NULL;
    }
    *io = (tfrec_io)TFREC_IO_INIT;
    int rc = tfrec_fs_open_source(NULL, name, io);
    if (rc < 0) {
        free(io);
        errno = rc == TFREC_E_NOT_FOUND ? ENOENT : rc == TFREC_E_NOMEM ? ENOMEM : EIO;
        return NULL;
    }
    cookie_io_functions_t f = { .read = cookie_read, .close = cookie_close };
    FILE *fp = fopencookie(io, "r", f);
    if (!fp) {
        io->close(io->ctx, 0);
        free(io);
    }
    return fp;
}

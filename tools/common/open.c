/* Opening the tools' inputs and outputs by name: through the storage part
 * when it is built (local paths, "-" and gs://), else through the core's
 * built-in transports (local paths and "-"; gs:// was refused when the
 * flags and arguments were checked). */
#include "files.h"

#include <errno.h>
#include <stdio.h>

#include "tfrec/error.h"
#ifdef TFREC_CLI_HAVE_STORAGE
#include "tfrec/storage.h"
#endif

int cli_reader_open(tfrec_reader **out, const char *name, const tfrec_reader_options *o)
{
#ifdef TFREC_CLI_HAVE_STORAGE
    return tfrec_storage_reader_open(NULL, out, name, o);
#else
    return tfrec_reader_open(out, name, o);
#endif
}

int cli_writer_open(tfrec_writer **out, const char *name, const tfrec_writer_options *o)
{
#ifdef TFREC_CLI_HAVE_STORAGE
    return tfrec_storage_writer_open(NULL, out, name, o);
#else
    return tfrec_writer_open(out, name, o);
#endif
}

int cli_open_source(void *ctx, tfrec_io *io, const char *name)
{
    (void)ctx;
#ifdef TFREC_CLI_HAVE_STORAGE
    return tfrec_storage_open_source(NULL, io, name);
#else
    return tfrec_io_open_source(io, name);
#endif
}

int cli_open_sink(void *ctx, tfrec_io *io, const char *name)
{
    (void)ctx;
#ifdef TFREC_CLI_HAVE_STORAGE
    return tfrec_storage_open_sink(NULL, io, name);
#else
    return tfrec_io_open_sink(io, name);
#endif
}

int cli_remove(void *ctx, const char *name)
{
    (void)ctx;
#ifdef TFREC_CLI_HAVE_STORAGE
    int rc = tfrec_storage_remove(NULL, name);
    return rc == TFREC_E_NOT_FOUND ? TFREC_OK : rc;
#else
    return remove(name) == 0 || errno == ENOENT ? TFREC_OK : TFREC_E_IO;
#endif
}

int cli_list_input(void *ctx, const char *pattern,
                   int (*add)(void *add_ctx, const char *name, uint64_t size), void *add_ctx)
{
    (void)ctx;
#ifdef TFREC_CLI_HAVE_STORAGE
    int rc = tfrec_storage_glob_each(NULL, pattern, add, add_ctx);
    return rc == TFREC_E_NOT_FOUND ? TFREC_OK : rc; /* no match: an empty directory */
#else
    (void)pattern;
    (void)add;
    (void)add_ctx;
    return TFREC_E_UNSUPPORTED;
#endif
}

int cli_open_source_range(void *ctx, tfrec_io *io, const char *name, uint64_t offset,
                          uint64_t length)
{
    (void)ctx;
#ifdef TFREC_CLI_HAVE_STORAGE
    return tfrec_storage_open_source_range(NULL, io, name, offset, length);
#else
    (void)io;
    (void)name;
    (void)offset;
    (void)length;
    return TFREC_E_UNSUPPORTED;
#endif
}

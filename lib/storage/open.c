/* The public openers: a local name goes to the core's files, a gs:// name
 * to an object source or sink over the client (the default one when st is
 * NULL). Above source.c and sink.c, which never call back up. */
#include <stddef.h>

#include "storage/storage_internal.h"
#include "storage/transfer.h"
#include "tfrec/fs.h"

int tfrec_storage_open_source(tfrec_storage *st, tfrec_io *io, const char *name)
{
    if (!tfrec_storage_is_remote(name))
        return tfrec_io_open_source(io, name);
    if (!(st = tfrec_gcs_client(st, NULL)))
        return TFREC_E_IO;
    return tfrec_gcs_open_source(st, io, name);
}

int tfrec_storage_open_sink(tfrec_storage *st, tfrec_io *io, const char *name)
{
    if (!tfrec_storage_is_remote(name))
        return tfrec_io_open_sink(io, name);
    if (!(st = tfrec_gcs_client(st, NULL)))
        return TFREC_E_IO;
    return tfrec_gcs_open_sink(st, io, name);
}

int tfrec_storage_reader_open(tfrec_storage *st, tfrec_reader **out, const char *name,
                              const tfrec_reader_options *opts)
{
    tfrec_io io = TFREC_IO_INIT;
    int rc = tfrec_storage_open_source(st, &io, name);
    return rc < 0 ? rc : tfrec_reader_open_io(out, &io, name, opts);
}

int tfrec_storage_writer_open(tfrec_storage *st, tfrec_writer **out, const char *name,
                              const tfrec_writer_options *opts)
{
    tfrec_io io = TFREC_IO_INIT;
    int rc = tfrec_storage_open_sink(st, &io, name);
    return rc < 0 ? rc : tfrec_writer_open_io(out, &io, name, opts);
}

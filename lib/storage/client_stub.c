/* Placeholder for the Cloud Storage client: local paths work through the
 * built-in transports, gs:// names are refused. Replaced by the JSON API
 * client; kept only so the part builds while that lands. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "tfrec/storage.h"
#include "util/errors.h"
#include "util/struct_size.h"

TFREC_DEFINE_STRUCT_INIT(tfrec_storage_options)
TFREC_DEFINE_STRUCT_INIT(tfrec_storage_object)

struct tfrec_storage {
    tfrec_storage_options opts;
};

int tfrec_storage_is_remote(const char *name)
{
    return name && strncasecmp(name, "gs://", 5) == 0;
}

int tfrec_storage_new(tfrec_storage **out, const tfrec_storage_options *opts)
{
    tfrec_storage *st = calloc(1, sizeof *st);
    if (!st)
        return tfrec_fail(NULL, TFREC_E_NOMEM, "out of memory");
    int rc = TFREC_STRUCT_IN(tfrec_storage_options, &st->opts, opts, NULL);
    if (rc < 0) {
        free(st);
        return rc;
    }
    *out = st;
    return TFREC_OK;
}

void tfrec_storage_free(tfrec_storage *st)
{
    free(st);
}

tfrec_storage *tfrec_storage_default(void)
{
    static tfrec_storage st;
    return &st;
}

static int refuse_remote(const char *name)
{
    return tfrec_fail(NULL, TFREC_E_UNSUPPORTED, "%s: gs:// is not supported yet", name);
}

int tfrec_storage_open_source(tfrec_storage *st, tfrec_io *io, const char *name)
{
    (void)st;
    return tfrec_storage_is_remote(name) ? refuse_remote(name) : tfrec_io_open_source(io, name);
}

int tfrec_storage_open_sink(tfrec_storage *st, tfrec_io *io, const char *name)
{
    (void)st;
    return tfrec_storage_is_remote(name) ? refuse_remote(name) : tfrec_io_open_sink(io, name);
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

int tfrec_storage_stat(tfrec_storage *st, const char *name, tfrec_storage_object *info)
{
    (void)st;
    if (tfrec_storage_is_remote(name))
        return refuse_remote(name);
    struct stat sb;
    if (stat(name, &sb) != 0)
        return tfrec_fail(NULL, TFREC_E_NOT_FOUND, "%s: no such file", name);
    info->name = name;
    info->size = (uint64_t)sb.st_size;
    return TFREC_OK;
}

int tfrec_storage_remove(tfrec_storage *st, const char *name)
{
    (void)st;
    if (tfrec_storage_is_remote(name))
        return refuse_remote(name);
    return remove(name) == 0 ? TFREC_OK : tfrec_fail(NULL, TFREC_E_IO, "%s: cannot remove", name);
}

int tfrec_storage_glob(tfrec_storage *st, const char *pattern, tfrec_storage_list **out)
{
    (void)st;
    (void)out;
    return refuse_remote(pattern);
}

size_t tfrec_storage_list_count(const tfrec_storage_list *list)
{
    (void)list;
    return 0;
}

const tfrec_storage_object *tfrec_storage_list_get(const tfrec_storage_list *list, size_t i)
{
    (void)list;
    (void)i;
    return NULL;
}

void tfrec_storage_list_free(tfrec_storage_list *list)
{
    (void)list;
}

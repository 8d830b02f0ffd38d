/* A source over memory someone else keeps alive (the caller's, or a
 * mem:// object's reference): reads copy out of it, seeks are free. */
#include <stdlib.h>
#include <string.h>

#include "io/io_util.h"
#include "tfrec/io.h"
#include "util/errors.h"
#include "util/struct_size.h"

typedef struct memory_source {
    const unsigned char *data;
    size_t len;
    size_t pos;
    void (*release)(void *release_ctx);
    void *release_ctx;
    tfrec_err err;
    char name[]; /* for messages */
} memory_source;

static ptrdiff_t ms_read(void *ctx, void *buf, size_t n)
{
    memory_source *m = ctx;
    size_t left = m->len - m->pos;
    if (n > left)
        n = left;
    if (n > (size_t)PTRDIFF_MAX)
        n = (size_t)PTRDIFF_MAX;
    memcpy(buf, m->data + m->pos, n);
    m->pos += n;
    return (ptrdiff_t)n;
}

static int ms_seek(void *ctx, uint64_t offset)
{
    memory_source *m = ctx;
    if (offset > m->len)
        return tfrec_fail(&m->err, TFREC_E_INVALID, "%s: seek to %llu beyond the end (%zu bytes)",
                          m->name, (unsigned long long)offset, m->len);
    m->pos = (size_t)offset;
    return TFREC_OK;
}

static int64_t ms_size(void *ctx)
{
    return (int64_t)((memory_source *)ctx)->len;
}

static int ms_close(void *ctx, int commit)
{
    (void)commit;
    memory_source *m = ctx;
    if (m->release)
        m->release(m->release_ctx);
    free(m);
    return TFREC_OK;
}

static const char *ms_errmsg(void *ctx)
{
    return ((memory_source *)ctx)->err.msg;
}

int tfrec_io_open_memory_held(tfrec_io *io, const void *data, size_t len, const char *name,
                              void (*release)(void *release_ctx), void *release_ctx)
{
    int rc = TFREC_STRUCT_CHECK_OUT(tfrec_io, io, NULL);
    if (rc)
        return rc;
    memory_source *m = calloc(1, sizeof *m + strlen(name) + 1);
    if (!m)
        return tfrec_fail(NULL, TFREC_E_NOMEM, "%s: out of memory", name);
    strcpy(m->name, name);
    m->data = data;
    m->len = len;
    m->release = release;
    m->release_ctx = release_ctx;
    const tfrec_io made = {
        .struct_size = sizeof made,
        .ctx = m,
        .read = ms_read,
        .write = io_write_unsupported,
        .seek = ms_seek,
        .size = ms_size,
        .close = ms_close,
        .errmsg = ms_errmsg,
    };
    rc = TFREC_STRUCT_OUT(tfrec_io, io, &made, NULL);
    if (rc) /* io was checked above: not reached, but own nothing on failure */
        free(m);
    return rc;
}

int tfrec_io_open_memory(tfrec_io *io, const void *data, size_t len)
{
    int rc = TFREC_STRUCT_CHECK_OUT(tfrec_io, io, NULL);
    if (rc)
        return rc;
    if (!data && len)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_io_open_memory: no data given");
    return tfrec_io_open_memory_held(io, data, len, "<memory>", NULL, NULL);
}

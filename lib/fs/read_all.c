/* A whole small object read into memory through the file system layer:
 * the one bounded loop that plans, listings, manifest parts and part files
 * share (each caller states its bound, so a hostile or mistaken name
 * cannot make it allocate without limit). */
#include <stdlib.h>

#include "tfrec/error.h"
#include "tfrec/fs.h"
#include "util/errors.h"
#include "util/vec.h"

enum { READ_STEP = 65536 };

int tfrec_fs_read_all(const tfrec_fs *fs, const char *name, size_t max_bytes, char **data,
                      size_t *len)
{
    if (!name || !data || !len)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_fs_read_all: NULL argument");
    *data = NULL;
    *len = 0;
    tfrec_io io = TFREC_IO_INIT;
    int rc = tfrec_fs_open_source(fs, name, &io);
    if (rc)
        return rc; /* the layer's message names the object */
    size_t n = 0, cap = 0;
    char *buf = NULL;
    /* A source that knows its size smaller than a step gets a buffer of
     * about its size (parts and plans are often a few hundred bytes). */
    size_t step = READ_STEP;
    int64_t size = io.size ? io.size(io.ctx) : -1;
    if (size >= 0 && (uint64_t)size < READ_STEP)
        step = (size_t)size + 1;
    for (;;) {
        /* one byte more than a step: room for the NUL, and to see an
         * object that passes max_bytes without reading much past it */
        if (tfrec_vec_reserve(&buf, &cap, n + step + 1, step)) {
            rc = tfrec_fail(NULL, TFREC_E_NOMEM, "%s: out of memory at %zu bytes", name, n);
            break;
        }
        ptrdiff_t got = io.read(io.ctx, buf + n, step);
        if (got < 0) {
            const char *why = io.errmsg ? io.errmsg(io.ctx) : NULL;
            rc = tfrec_fail(NULL, (int)got, "%s: %s", name, why ? why : "read failed");
            break;
        }
        if (got == 0)
            break;
        n += (size_t)got;
        if (n > max_bytes) {
            rc = tfrec_fail(NULL, TFREC_E_PARSE, "%s: larger than %zu bytes", name, max_bytes);
            break;
        }
    }
    io.close(io.ctx, 0);
    if (rc) {
        free(buf);
        return rc;
    }
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return TFREC_OK;
}

/* Files the bigtable part reads and writes by name. */
#include "bigtable/bt_files.h"

#include <stdlib.h>

#include "util/errors.h"
#include "util/vec.h"

int tfrec_bt_read_file(const tfrec_fs *fs, const char *name, size_t max, char **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    tfrec_io io = TFREC_IO_INIT;
    int rc = tfrec_fs_open_source(fs, name, &io);
    if (rc)
        return rc;
    size_t cap = 0, n = 0;
    char *buf = NULL;
    for (;;) {
        if (n == cap && (n > max || tfrec_vec_resize(&buf, &cap, cap ? 2 * cap : 4096))) {
            rc = n > max ? tfrec_fail(NULL, TFREC_E_PARSE, "%s: more than %zu bytes", name, max)
                         : tfrec_fail(NULL, TFREC_E_NOMEM, "out of memory reading %s", name);
            break;
        }
        ptrdiff_t got = io.read(io.ctx, buf + n, cap - n);
        if (got < 0) {
            rc = tfrec_fail(NULL, (int)got, "%s: %s", name,
                            io.errmsg ? io.errmsg(io.ctx) : "read failed");
            break;
        }
        if (!got)
            break;
        n += (size_t)got;
    }
    if (!rc && n > max)
        rc = tfrec_fail(NULL, TFREC_E_PARSE, "%s: more than %zu bytes", name, max);
    io.close(io.ctx, 0);
    if (rc) {
        free(buf);
        return rc;
    }
    *out = buf;
    *len = n;
    return TFREC_OK;
}

int tfrec_bt_write_file(const tfrec_fs *fs, const char *name, const void *p, size_t len)
{
    tfrec_io io = TFREC_IO_INIT;
    int rc = tfrec_fs_open_sink(fs, name, &io);
    if (rc)
        return rc;
    rc = io.write(io.ctx, p, len);
    if (rc)
        tfrec_fail(NULL, rc, "%s: %s", name, io.errmsg ? io.errmsg(io.ctx) : "write failed");
    int crc = io.close(io.ctx, rc == TFREC_OK);
    return rc ? rc : crc;
}

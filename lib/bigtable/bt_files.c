/* Files the bigtable part reads and writes by name. */
#include "bigtable/bt_files.h"

#include <stdlib.h>

#include "util/errors.h"
#include "util/vec.h"

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

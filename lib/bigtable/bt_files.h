/* Internal: how the bigtable part opens the files it writes and reads by
 * name (export outputs, part files, plan files): through the file-system
 * layer (include/tfrec/fs.h; fs NULL: tfrec_fs_default(), local paths,
 * "-", gs:// when the storage part is loaded, mem://). Failures leave the
 * message in tfrec_last_errmsg(). */
#ifndef TFREC_BT_FILES_H
#define TFREC_BT_FILES_H

#include <stddef.h>

#include "tfrec/fs.h"
#include "tfrec/io.h"

/* Reading a whole (small) file: tfrec_fs_read_all() of fs.h. */
/* Write len bytes as the whole file name (committed only when complete). */
int tfrec_bt_write_file(const tfrec_fs *fs, const char *name, const void *p, size_t len);

#endif

/* Local file and stdin sources. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "io/io_util.h"
#include "tfrec/io.h"
#include "util/errors.h"
#include "util/ioerr.h"
#include "util/struct_size.h"
#include "util/config.h"

/* tfrec_io belongs to every transport; its _init lives with the first one. */
TFREC_DEFINE_STRUCT_INIT(tfrec_io)

typedef struct file_source {
    int fd;
    int owns_fd;   /* stdin is not ours to close */
    uint64_t base; /* where stdin stood when opened: offset 0 for us */
    uint64_t pos;  /* for messages only */
    void *map;     /* tfrec_io_source_map(): the whole file, read-only */
    size_t map_len;
    tfrec_err err;
    char name[]; /* path, or "<stdin>" */
} file_source;

static ptrdiff_t fs_read(void *ctx, void *buf, size_t n)
{
    file_source *s = ctx;
    if (n > (size_t)SSIZE_MAX)
        n = (size_t)SSIZE_MAX;
    for (;;) {
        ssize_t got = read(s->fd, buf, n);
        if (got >= 0) {
            s->pos += (uint64_t)got;
            return got;
        }
        if (errno != EINTR)
            return tfrec_fail_errno(&s->err, TFREC_E_IO, errno, s->name,
                                    "read failed at offset %llu", (unsigned long long)s->pos);
    }
}

static int fs_seek(void *ctx, uint64_t offset)
{
    file_source *s = ctx;
    if (offset > (uint64_t)INT64_MAX - s->base ||
        lseek(s->fd, (off_t)(s->base + offset), SEEK_SET) < 0)
        return tfrec_fail_errno(&s->err, TFREC_E_IO, errno ? errno : EINVAL, s->name,
                                "cannot seek to offset %llu", (unsigned long long)offset);
    s->pos = offset;
    return TFREC_OK;
}

static int64_t fs_size(void *ctx)
{
    file_source *s = ctx;
    struct stat st;
    if (fstat(s->fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size < s->base)
        return -1;
    return (int64_t)(st.st_size - (off_t)s->base);
}

static int fs_close(void *ctx, int commit)
{
    (void)commit;
    file_source *s = ctx;
    if (s->map)
        munmap(s->map, s->map_len);
    if (s->owns_fd)
        close(s->fd); /* read-only: a close error loses nothing */
    free(s);
    return TFREC_OK;
}

static const char *fs_errmsg(void *ctx)
{
    return ((file_source *)ctx)->err.msg;
}

int tfrec_io_open_source(tfrec_io *io, const char *name)
{
    int rc = TFREC_STRUCT_CHECK_OUT(tfrec_io, io, NULL);
    if (rc)
        return rc;
    if (!name || !*name)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_io_open_source: no path given");
    int is_stdin = strcmp(name, "-") == 0;
    const char *shown = is_stdin ? "<stdin>" : name;
    int fd = is_stdin ? STDIN_FILENO : open(name, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return tfrec_fail_errno(NULL, tfrec_errno_code(errno), errno, name, "cannot open");
    struct stat st;
    if (fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
        int e = errno;
        if (!is_stdin)
            close(fd);
        return tfrec_fail_errno(NULL, TFREC_E_IO, S_ISDIR(st.st_mode) ? EISDIR : e, shown,
                                "cannot read");
    }
    file_source *s = calloc(1, sizeof *s + strlen(shown) + 1);
    if (!s) {
        if (!is_stdin)
            close(fd);
        return tfrec_fail(NULL, TFREC_E_NOMEM, "%s: out of memory", shown);
    }
    s->fd = fd;
    s->owns_fd = !is_stdin;
    strcpy(s->name, shown);
    /* Only regular files can seek reliably; a pipe or terminal cannot. */
    int regular = S_ISREG(st.st_mode);
    if (regular && !is_stdin)
        (void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    if (regular && is_stdin) {
        off_t here = lseek(fd, 0, SEEK_CUR);
        s->base = here > 0 ? (uint64_t)here : 0;
    }
    const tfrec_io made = {
        .struct_size = sizeof made,
        .ctx = s,
        .read = fs_read,
        .write = io_write_unsupported,
        .seek = regular ? fs_seek : NULL,
        .size = regular ? fs_size : NULL,
        .close = fs_close,
        .errmsg = fs_errmsg,
    };
    return TFREC_STRUCT_OUT(tfrec_io, io, &made, NULL);
}

/* Local disk file systems only: on network and FUSE file systems an I/O
 * error in a mapping arrives as SIGBUS instead of an error code. */
static int mappable_fs(int fd)
{
    struct statfs fs;
    if (fstatfs(fd, &fs) != 0)
        return 0;
    switch ((unsigned long)fs.f_type) {
    case 0xEF53:     /* ext2/3/4 */
    case 0x58465342: /* xfs */
    case 0x9123683E: /* btrfs */
    case 0x01021994: /* tmpfs */
    case 0x794C7630: /* overlayfs */
    case 0xF2F52010: /* f2fs */ return 1;
    }
    return 0;
}

int tfrec_io_source_map(const tfrec_io *io, const uint8_t **data, uint64_t *len)
{
    if (io->read != fs_read)
        return -1;
    file_source *s = io->ctx;
    if (!s->owns_fd || !mappable_fs(s->fd))
        return -1;
    struct stat st;
    if (fstat(s->fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
        (uint64_t)st.st_size > SIZE_MAX / 2)
        return -1;
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, s->fd, 0);
    if (p == MAP_FAILED)
        return -1;
    (void)madvise(p, (size_t)st.st_size, MADV_SEQUENTIAL);
    s->map = p;
    s->map_len = (size_t)st.st_size;
    *data = p;
    *len = (uint64_t)st.st_size;
    return 0;
}

int tfrec_io_source_fd(const tfrec_io *io)
{
    if (io->read != fs_read)
        return -1;
    file_source *s = io->ctx;
    struct stat st;
    if (!s->owns_fd || fstat(s->fd, &st) != 0 || !S_ISREG(st.st_mode))
        return -1;
    return s->fd;
}

static int mmap_setting = -1;
static pthread_once_t mmap_once = PTHREAD_ONCE_INIT;

static void read_mmap_env(void)
{
    char on[8];
    if (tfrec_cfg(TFREC_CFG_MMAP, on, sizeof on) > 0)
        mmap_setting = strcmp(on, "1") == 0;
}

int tfrec_io_mmap_default(void)
{
    pthread_once(&mmap_once, read_mmap_env);
    return mmap_setting > 0;
}

int tfrec_io_mmap_random_default(void)
{
    pthread_once(&mmap_once, read_mmap_env);
    return mmap_setting != 0;
}

/* Local file and stdout sinks.
 *
 * A local sink writes to "<path>.tmp-<pid>-<n>" in the destination's own
 * directory (so the final rename stays on one file system and is atomic)
 * and renames it into place only on a committing close; a crash or an
 * abort never leaves a plausible-looking partial file under the real name.
 * Writes are checked but not fsync'ed: durability against power loss is
 * the caller's business, a torn file under the final name is ours. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/io_util.h"
#include "tfrec/io.h"
#include "util/errors.h"
#include "util/ioerr.h"
#include "util/struct_size.h"

typedef struct file_sink {
    int fd;
    int is_stdout;
    uint64_t written; /* for messages */
    char *tmp_path;   /* NULL for stdout */
    tfrec_err err;
    char path[];
} file_sink;

static atomic_uint tmp_counter;

static int sink_write(void *ctx, const void *buf, size_t n)
{
    file_sink *s = ctx;
    const char *p = buf;
    while (n > 0) {
        size_t chunk = n > (size_t)SSIZE_MAX ? (size_t)SSIZE_MAX : n;
        ssize_t put = write(s->fd, p, chunk);
        if (put < 0) {
            if (errno == EINTR)
                continue;
            return tfrec_fail_errno(&s->err, TFREC_E_IO, errno, s->path,
                                    "write failed at offset %llu", (unsigned long long)s->written);
        }
        p += put;
        n -= (size_t)put;
        s->written += (uint64_t)put;
    }
    return TFREC_OK;
}

/* Failures here are also left in the thread's message slot
 * (tfrec_last_errmsg()), because the ctx is gone when close returns. */
static int sink_close(void *ctx, int commit)
{
    file_sink *s = ctx;
    int rc = TFREC_OK;
    if (s->is_stdout) {
        /* stdout cannot be taken back; nothing to discard or rename. */
    } else {
        if (close(s->fd) != 0 && commit)
            rc = tfrec_fail_errno(&s->err, TFREC_E_IO, errno, s->path, "close failed");
        if (commit && rc == TFREC_OK && rename(s->tmp_path, s->path) != 0)
            rc = tfrec_fail_errno(&s->err, TFREC_E_IO, errno, s->path,
                                  "cannot rename %s into place", s->tmp_path);
        if (!commit || rc != TFREC_OK)
            unlink(s->tmp_path);
    }
    free(s->tmp_path);
    free(s);
    return rc;
}

static const char *sink_errmsg(void *ctx)
{
    return ((file_sink *)ctx)->err.msg;
}

int tfrec_io_open_sink(tfrec_io *io, const char *name)
{
    int rc = TFREC_STRUCT_CHECK_OUT(tfrec_io, io, NULL);
    if (rc)
        return rc;
    if (!name || !*name)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_io_open_sink: no path given");
    int is_stdout = strcmp(name, "-") == 0;
    const char *shown = is_stdout ? "<stdout>" : name;
    file_sink *s = calloc(1, sizeof *s + strlen(shown) + 1);
    if (!s)
        return tfrec_fail(NULL, TFREC_E_NOMEM, "%s: out of memory", shown);
    strcpy(s->path, shown);
    s->is_stdout = is_stdout;
    if (is_stdout) {
        s->fd = STDOUT_FILENO;
    } else {
        size_t cap = strlen(name) + 64;
        s->tmp_path = malloc(cap);
        if (!s->tmp_path) {
            free(s);
            return tfrec_fail(NULL, TFREC_E_NOMEM, "%s: out of memory", name);
        }
        snprintf(s->tmp_path, cap, "%s.tmp-%ld-%u", name, (long)getpid(),
                 atomic_fetch_add(&tmp_counter, 1));
        s->fd = open(s->tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (s->fd < 0) {
            int e = errno;
            rc = tfrec_fail_errno(NULL, tfrec_errno_code(e), e, name, "cannot create %s",
                                  s->tmp_path);
            free(s->tmp_path);
            free(s);
            return rc;
        }
    }
    const tfrec_io made = {
        .struct_size = sizeof made,
        .ctx = s,
        .read = io_read_unsupported,
        .write = sink_write,
        .seek = NULL,
        .size = NULL,
        .close = sink_close,
        .errmsg = sink_errmsg,
    };
    return TFREC_STRUCT_OUT(tfrec_io, io, &made, NULL);
}

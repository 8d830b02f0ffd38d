/* Who owns a staging directory: the run that holds an flock on the lock
 * file inside it, for as long as it runs. A process id says nothing across
 * PID namespaces or hosts (two pods on one volume are both PID 1), a lock
 * does: the kernel (or the NFS server) releases it when its holder dies,
 * however it dies, so a directory whose lock can be taken is stale. */
#include "imagenet/run.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/ioerr.h"

/* The lock file of the directory open as dfd, created when missing (a
 * directory of an older version, or one whose creator has not got that
 * far), locked exclusively; blocking or not. Returns the descriptor
 * holding the lock, or -1 with errno (EWOULDBLOCK: a running converter
 * holds it). */
static int take_lock(int dfd, int block)
{
    int fd = openat(dfd, IN_STAGING_LOCK, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        errno = EINVAL;
        return -1;
    }
    while (flock(fd, LOCK_EX | (block ? 0 : LOCK_NB)) != 0) {
        if (errno == EINTR)
            continue;
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

char *tfrec_in_staging_create(const char *out, long task, int *lock_fd, tfrec_err *err)
{
    *lock_fd = -1;
    char name[128];
    tfrec_in_staging_prefix(name, sizeof name, task);
    /* The pid is for people reading the directory; the random suffix makes
     * the name unique across PID namespaces and hosts. */
    snprintf(name + strlen(name), sizeof name - strlen(name), "%ld-XXXXXX", (long)getpid());
    for (int attempt = 0; attempt < 16; attempt++) {
        char *path = tfrec_in_join(out, name);
        if (!path) {
            tfrec_fail(err, TFREC_E_NOMEM, "out of memory");
            return NULL;
        }
        if (!mkdtemp(path)) {
            tfrec_fail_errno(err, TFREC_E_IO, errno, path, "cannot create directory");
            free(path);
            return NULL;
        }
        int dfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int e = errno;
        int fd = dfd < 0 ? -1 : take_lock(dfd, 1);
        e = dfd < 0 ? e : errno;
        if (dfd >= 0)
            close(dfd);
        /* Another run's cleanup may have taken the lock of the directory
         * before this run did, and removed it: the lock file is then
         * unlinked, and a new directory is made. */
        struct stat st;
        if (fd >= 0 && fstat(fd, &st) == 0 && st.st_nlink > 0) {
            *lock_fd = fd;
            return path;
        }
        if (fd >= 0)
            close(fd);
        else if (e != ENOENT) {
            tfrec_fail_errno(err, TFREC_E_IO, e, path, "cannot lock the staging directory");
            rmdir(path);
            free(path);
            return NULL;
        }
        free(path);
    }
    tfrec_fail(err, TFREC_E_STATE, "%s: staging directories keep vanishing as they are created",
               out);
    return NULL;
}

int tfrec_in_staging_claim(int at, const char *name)
{
    int dfd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
        return -1;
    int fd = take_lock(dfd, 0);
    int e = errno;
    close(dfd);
    errno = e;
    return fd;
}

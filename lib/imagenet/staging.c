/* Output files: the output directory, the staging directory the shards are
 * written into, the final renames, and the manifest file. */
#include "imagenet/run.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/ioerr.h"

int tfrec_in_mkdir_p(const char *path, tfrec_err *err)
{
    char *p = strdup(path);
    if (!p)
        return tfrec_fail(err, TFREC_E_NOMEM, "out of memory");
    for (char *s = p + 1;; s++) {
        if (*s == '/' || *s == '\0') {
            char c = *s;
            *s = '\0';
            if (mkdir(p, 0777) != 0 && errno != EEXIST) {
                int e = errno;
                free(p);
                return tfrec_fail_errno(err, TFREC_E_IO, e, path, "cannot create directory");
            }
            *s = c;
            if (!c)
                break;
        }
    }
    free(p);
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return tfrec_fail(err, TFREC_E_IO, "output %s is not a directory", path);
    return TFREC_OK;
}

/* Remove the entries of directory `name` in the directory open as at (a
 * staging directory is flat: shards and the writer's temporary files),
 * then the directory itself. Nothing here follows a symbolic link: a link
 * named like a staging directory is not opened (O_NOFOLLOW), and a link
 * inside one is removed, not what it points to (unlinkat on the
 * directory's descriptor), so cleanup never reaches outside the output. */
static int remove_flat_dir_at(int at, const char *name)
{
    int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    DIR *d = fdopendir(fd);
    if (!d) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            unlinkat(fd, e->d_name, 0);
    closedir(d);
    return unlinkat(at, name, AT_REMOVEDIR);
}

void tfrec_in_discard_staging(const char *staging)
{
    remove_flat_dir_at(AT_FDCWD, staging);
}

/* A staging directory's name of that kind: the prefix, then the pid
 * (then, since the lock, "-" and a random suffix). ".tfrec-staging-task-"
 * is not of the kind ".tfrec-staging-": a digit follows the prefix. */
static int is_staging_name(const char *name, const char *prefix)
{
    size_t n = strlen(prefix);
    return strncmp(name, prefix, n) == 0 && name[n] >= '0' && name[n] <= '9';
}

int tfrec_in_remove_stale(const char *out, long task, in_notes *removed, tfrec_err *err)
{
    DIR *d = opendir(out);
    if (!d)
        return TFREC_OK; /* not created yet: nothing stale */
    char prefix[64];
    tfrec_in_staging_prefix(prefix, sizeof prefix, task);
    struct dirent *e;
    int rc = TFREC_OK;
    while (!rc && (e = readdir(d)) != NULL) {
        if (!is_staging_name(e->d_name, prefix))
            continue;
        /* Only a real directory: a link (or file) with that name is not a
         * staging directory this library made, and is left alone. */
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode))
            continue;
        /* Only directories whose run is over, wherever it ran (another PID
         * namespace, another host): a run going on holds the lock. */
        int lock = tfrec_in_staging_claim(dirfd(d), e->d_name);
        if (lock < 0)
            continue;
        char *dir = tfrec_in_join(out, e->d_name);
        if (!dir)
            rc = tfrec_fail(err, TFREC_E_NOMEM, "out of memory");
        else if (remove_flat_dir_at(dirfd(d), e->d_name) != 0)
            rc = tfrec_fail_errno(err, TFREC_E_IO, errno, dir,
                                  "cannot remove this stale staging directory");
        else if (tfrec_in_notes_add(removed, dir, NULL))
            rc = tfrec_fail(err, TFREC_E_NOMEM, "out of memory");
        close(lock);
        free(dir);
    }
    closedir(d);
    return rc;
}

/* "<prefix>-NNNNN-of-NNNNN" (five digits or more each): a shard's name. */
static int is_shard_name(const char *s)
{
    const char *of = NULL;
    for (const char *p = strstr(s, "-of-"); p; p = strstr(p + 1, "-of-"))
        of = p;
    if (!of)
        return 0;
    size_t digits = strspn(of + 4, "0123456789");
    if (digits < 5 || of[4 + digits])
        return 0;
    const char *q = of;
    size_t k = 0;
    while (q > s && q[-1] >= '0' && q[-1] <= '9')
        q--, k++;
    return k >= 5 && q - s >= 2 && q[-1] == '-';
}

static int planned(const in_plan *p, const char *rel)
{
    for (size_t i = 0; i < p->nshards; i++)
        if (!strcmp(p->shards[i].file, rel))
            return 1;
    return 0;
}

/* Shards in dir (rel: its path inside the output, "" for the top) that
 * this run will not write; descends one level from the top. */
static int scan_conflicts(const char *out, const char *rel, const in_plan *p, in_notes *found,
                          tfrec_err *err)
{
    char *dir = *rel ? tfrec_in_join(out, rel) : strdup(out);
    if (!dir)
        return tfrec_fail(err, TFREC_E_NOMEM, "out of memory");
    DIR *d = opendir(dir);
    if (!d) {
        free(dir);
        return TFREC_OK;
    }
    struct dirent *e;
    int rc = TFREC_OK;
    while (!rc && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char *r = *rel ? tfrec_in_join(rel, e->d_name) : strdup(e->d_name);
        char *full = r ? tfrec_in_join(out, r) : NULL;
        struct stat st;
        if (!r || !full)
            rc = tfrec_fail(err, TFREC_E_NOMEM, "out of memory");
        else if (stat(full, &st) != 0)
            ; /* vanished meanwhile */
        else if (S_ISDIR(st.st_mode) && !*rel)
            rc = scan_conflicts(out, r, p, found, err);
        else if (S_ISREG(st.st_mode) && is_shard_name(e->d_name) && !planned(p, r) &&
                 tfrec_in_notes_add(found, r, NULL))
            rc = tfrec_fail(err, TFREC_E_NOMEM, "out of memory");
        free(r);
        free(full);
    }
    closedir(d);
    free(dir);
    return rc;
}

static int cmp_note(const void *a, const void *b)
{
    return strcmp(((const in_note *)a)->path, ((const in_note *)b)->path);
}

int tfrec_in_check_conflicts(const char *out, const in_plan *p, in_notes *found, tfrec_err *err)
{
    int rc = scan_conflicts(out, "", p, found, err);
    if (rc || found->n == 0 || p->nshards == 0)
        return rc;
    qsort(found->v, found->n, sizeof *found->v, cmp_note);
    char list[1024];
    size_t o = 0;
    list[0] = '\0';
    for (size_t i = 0; i < found->n && i < 4 && o < sizeof list; i++)
        o += (size_t)snprintf(list + o, sizeof list - o, "%s%s", i ? ", " : "", found->v[i].path);
    return tfrec_fail(err, TFREC_E_STATE,
                      "%s already holds %zu shard file%s of another set (%s%s), which this run "
                      "(%s, ...) would not replace: mixing sets would corrupt the dataset; "
                      "choose another output directory, or pass --overwrite to remove them",
                      out, found->n, found->n == 1 ? "" : "s", list, found->n > 4 ? ", ..." : "",
                      p->shards[0].file);
}

int tfrec_in_commit_staging(const char *staging, const char *out, const in_plan *p,
                            const in_notes *replace, tfrec_err *err)
{
    /* The old set goes only now that the new one is complete. */
    for (size_t i = 0; replace && i < replace->n; i++) {
        char *f = tfrec_in_join(out, replace->v[i].path);
        int bad = !f || (unlink(f) != 0 && errno != ENOENT);
        int e = errno;
        free(f);
        if (bad)
            return tfrec_fail_errno(err, TFREC_E_IO, e, out, "cannot remove old shard %s from it",
                                    replace->v[i].path);
    }
    for (size_t i = p->share_begin; i < p->share_end; i++) {
        const in_shard *sh = &p->shards[i];
        if (strcmp(sh->file, sh->name) != 0) { /* OUT/<split>/ */
            char *sub = tfrec_in_join(out, p->splits[sh->split].name);
            int ok = sub && (mkdir(sub, 0777) == 0 || errno == EEXIST);
            int e = errno;
            free(sub);
            if (!ok)
                return tfrec_fail_errno(err, TFREC_E_IO, e, out, "cannot create directory %s in it",
                                        p->splits[sh->split].name);
        }
        char *from = tfrec_in_join(staging, sh->name), *to = tfrec_in_join(out, sh->file);
        int ok = from && to && rename(from, to) == 0;
        int e = errno;
        free(from);
        free(to);
        if (!ok)
            return tfrec_fail_errno(err, TFREC_E_IO, e, out, "cannot move shard %s into it",
                                    sh->file);
    }
    /* The lock file goes with the directory; the lock itself is released
     * by the caller. */
    int dfd = open(staging, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd >= 0) {
        unlinkat(dfd, IN_STAGING_LOCK, 0);
        close(dfd);
    }
    rmdir(staging);
    return TFREC_OK;
}

int tfrec_in_write_manifest_file(const char *path, const char *json, tfrec_err *err)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp-%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f)
        return tfrec_fail_errno(err, TFREC_E_IO, errno, tmp, "cannot write manifest");
    int ok = fputs(json, f) >= 0;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return tfrec_fail_errno(err, TFREC_E_IO, e, path, "cannot write manifest");
    }
    return TFREC_OK;
}

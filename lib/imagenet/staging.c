/* Output files: the output directory, the staging directory the shards are
 * written into, the final renames, and the manifest file. */
#include "imagenet/run.h"

#include <errno.h>
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

char *tfrec_in_path2(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s/%s", dir, name);
    return s;
}

/* Remove our staged shards and the staging directory. */
void tfrec_in_discard_staging(const char *staging, const in_plan *p)
{
    for (size_t i = 0; i < p->nshards; i++) {
        char *f = tfrec_in_path2(staging, p->shards[i].file);
        if (f)
            unlink(f);
        free(f);
    }
    rmdir(staging);
}

int tfrec_in_commit_staging(const char *staging, const char *out, const in_plan *p, tfrec_err *err)
{
    for (size_t i = 0; i < p->nshards; i++) {
        char *from = tfrec_in_path2(staging, p->shards[i].file),
             *to = tfrec_in_path2(out, p->shards[i].file);
        int ok = from && to && rename(from, to) == 0;
        int e = errno;
        free(from);
        free(to);
        if (!ok)
            return tfrec_fail_errno(err, TFREC_E_IO, e, out, "cannot move shard %s into it",
                                    p->shards[i].file);
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

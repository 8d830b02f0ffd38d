/* Text files of names: synset_labels.txt, --labels_file and the CSV
 * layout's list. Shared by the scanners and the label mapping, which do not
 * call each other. */
#include "imagenet/plan.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/ioerr.h"

#define IN_MAX_TEXT_FILE ((long)256 * 1024 * 1024)

/* The whole file, NUL-terminated, in *buf (its length in *len). */
static int slurp(const char *path, char **buf, size_t *len, tfrec_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return tfrec_fail_errno(err, tfrec_errno_code(errno), errno, path, "cannot open");
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || st.st_size > IN_MAX_TEXT_FILE) {
        fclose(f);
        return tfrec_fail(err, TFREC_E_INVALID, "%s: not a readable text file under 256 MiB", path);
    }
    char *b = malloc((size_t)st.st_size + 1);
    size_t n = b ? fread(b, 1, (size_t)st.st_size, f) : 0;
    int e = ferror(f) ? errno : 0;
    fclose(f);
    if (!b)
        return tfrec_fail(err, TFREC_E_NOMEM, "%s: out of memory", path);
    if (e) {
        free(b);
        return tfrec_fail_errno(err, TFREC_E_IO, e, path, "read failed");
    }
    b[n] = '\0';
    *buf = b;
    *len = n;
    return TFREC_OK;
}

/* The same through the input's file system (e.g. an object in a bucket). */
static int slurp_input(const in_opts *o, const char *path, char **buf, size_t *len, tfrec_err *err)
{
    tfrec_io io = TFREC_IO_INIT;
    int rc = tfrec_fs_open_source(o->in_fs, path, &io);
    if (rc < 0)
        return tfrec_fail(err, rc, "%s", tfrec_last_errmsg());
    char *b = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n + 65536 + 1 > cap) {
            if (cap >= (size_t)IN_MAX_TEXT_FILE) {
                rc = tfrec_fail(err, TFREC_E_INVALID, "%s: not a text file under 256 MiB", path);
                break;
            }
            cap = cap ? 2 * cap : 65536 * 2;
            char *nb = realloc(b, cap);
            if (!nb) {
                rc = tfrec_fail(err, TFREC_E_NOMEM, "%s: out of memory", path);
                break;
            }
            b = nb;
        }
        ptrdiff_t k = io.read(io.ctx, b + n, cap - n - 1);
        if (k < 0) {
            rc = tfrec_fail(err, (int)k, "%s", io.errmsg ? io.errmsg(io.ctx) : "read failed");
            break;
        }
        if (k == 0)
            break;
        n += (size_t)k;
    }
    io.close(io.ctx, 0);
    if (rc < 0) {
        free(b);
        return rc;
    }
    b[n] = '\0';
    *buf = b;
    *len = n;
    return TFREC_OK;
}

int tfrec_in_read_lines(const in_opts *o, const char *path, int first_token, tfrec_strlist *lines,
                        tfrec_err *err)
{
    char *buf = NULL;
    size_t len = 0;
    int rc = o && o->in_read ? slurp_input(o, path, &buf, &len, err) : slurp(path, &buf, &len, err);
    if (rc)
        return rc;
    size_t blank_run = 0, lineno = 0;
    for (char *s = buf; s < buf + len && !rc;) {
        char *nl = memchr(s, '\n', (size_t)(buf + len - s));
        char *end = nl ? nl : buf + len;
        char *next = nl ? nl + 1 : buf + len;
        lineno++;
        /* Names are C strings: a NUL would cut one short, or leave it
         * empty, without a word. Text files have none. */
        if (memchr(s, '\0', (size_t)(end - s))) {
            rc = tfrec_fail(err, TFREC_E_INVALID, "%s: line %zu holds a NUL byte (not a text file)",
                            path, lineno);
            break;
        }
        while (s < end && isspace((unsigned char)*s))
            s++;
        while (end > s && isspace((unsigned char)end[-1]))
            end--;
        if (first_token) {
            char *sp = s;
            while (sp < end && !isspace((unsigned char)*sp))
                sp++;
            end = sp;
        }
        if (s == end) {
            blank_run++;
        } else if (blank_run && lines->n) {
            rc =
                tfrec_fail(err, TFREC_E_INVALID, "%s: line %zu is empty", path, lineno - blank_run);
        } else {
            blank_run = 0;
            if (tfrec_strlist_add_n(lines, s, (size_t)(end - s)))
                rc = tfrec_fail(err, TFREC_E_NOMEM, "out of memory reading %s", path);
        }
        s = next;
    }
    free(buf);
    if (rc)
        tfrec_strlist_free(lines);
    return rc;
}

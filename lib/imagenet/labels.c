/* Text files of names (synset_labels.txt, --labels_file) and the label
 * mapping: 1..K over the sorted union of synsets, exactly like
 * imagenet_to_gcs.py, or the line numbers of a labels file. */
#include "imagenet/plan.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define IN_MAX_TEXT_FILE ((long)256 * 1024 * 1024)

int tfrec_in_read_lines(const char *path, int first_token, char ***lines, size_t *n, tfrec_err *err)
{
    *lines = NULL;
    *n = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return tfrec_fail(err, errno == ENOENT ? TFREC_E_NOT_FOUND : TFREC_E_IO, "cannot open %s: %s",
                          path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || st.st_size > IN_MAX_TEXT_FILE) {
        fclose(f);
        return tfrec_fail(err, TFREC_E_INVALID, "%s: not a readable text file under 256 MiB", path);
    }
    char *buf = malloc((size_t)st.st_size + 1);
    size_t len = buf ? fread(buf, 1, (size_t)st.st_size, f) : 0;
    int bad = !buf || ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return tfrec_fail(err, TFREC_E_IO, "cannot read %s", path);
    }
    buf[len] = '\0';
    char **v = NULL;
    size_t cnt = 0, cap = 0, blank_run = 0, lineno = 0;
    int rc = TFREC_OK;
    for (char *s = buf; s < buf + len && !rc;) {
        char *nl = memchr(s, '\n', (size_t)(buf + len - s));
        char *end = nl ? nl : buf + len;
        char *next = nl ? nl + 1 : buf + len;
        lineno++;
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
        } else if (blank_run && cnt) {
            rc = tfrec_fail(err, TFREC_E_INVALID, "%s: line %zu is empty", path, lineno - blank_run);
        } else {
            blank_run = 0;
            if (cnt == cap) {
                size_t ncap = cap ? cap * 2 : 1024;
                char **nv = realloc(v, ncap * sizeof *nv);
                if (!nv) {
                    rc = tfrec_fail(err, TFREC_E_NOMEM, "out of memory reading %s", path);
                    break;
                }
                v = nv;
                cap = ncap;
            }
            v[cnt] = strndup(s, (size_t)(end - s));
            if (!v[cnt]) {
                rc = tfrec_fail(err, TFREC_E_NOMEM, "out of memory reading %s", path);
                break;
            }
            cnt++;
        }
        s = next;
    }
    free(buf);
    if (rc) {
        tfrec_in_free_names(v, cnt);
        return rc;
    }
    *lines = v;
    *n = cnt;
    return TFREC_OK;
}

typedef struct label_ix {
    const char *name;
    int64_t label;
} label_ix;

static int cmp_ix(const void *a, const void *b)
{
    return strcmp(((const label_ix *)a)->name, ((const label_ix *)b)->name);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Classes from the data: sorted, duplicates removed. */
static int classes_from_items(in_plan *p, tfrec_err *err)
{
    size_t total = 0;
    for (int s = 0; s < p->nsplits; s++)
        total += p->splits[s].items.n;
    char **v = malloc((total ? total : 1) * sizeof *v);
    if (!v)
        return tfrec_fail(err, TFREC_E_NOMEM, "out of memory");
    size_t n = 0;
    for (int s = 0; s < p->nsplits; s++)
        for (size_t i = 0; i < p->splits[s].items.n; i++)
            v[n++] = (char *)p->splits[s].items.v[i].synset;
    qsort(v, n, sizeof *v, cmp_str);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (k == 0 || strcmp(v[k - 1], v[i]) != 0)
            v[k++] = v[i];
    p->classes = v; /* strings belong to the pool */
    p->nclasses = k;
    return TFREC_OK;
}

static int classes_from_file(in_plan *p, const char *path, tfrec_err *err)
{
    char **lines;
    size_t n;
    int rc = tfrec_in_read_lines(path, 1, &lines, &n, err);
    if (rc)
        return rc;
    if (n == 0) {
        free(lines);
        return tfrec_fail(err, TFREC_E_INVALID, "labels file %s is empty", path);
    }
    for (size_t i = 0; i < n; i++)
        tfrec_in_plan_own(p, lines[i]);
    p->classes = lines;
    p->nclasses = n;
    return TFREC_OK;
}

int tfrec_in_assign_labels(in_plan *p, const in_opts *o, tfrec_err *err)
{
    const char *file = o->o.labels_file;
    int rc = file ? classes_from_file(p, file, err) : classes_from_items(p, err);
    if (rc)
        return rc;
    label_ix *ix = malloc((p->nclasses ? p->nclasses : 1) * sizeof *ix);
    if (!ix)
        return tfrec_fail(err, TFREC_E_NOMEM, "out of memory");
    for (size_t i = 0; i < p->nclasses; i++) {
        ix[i].name = p->classes[i];
        ix[i].label = (int64_t)i + 1;
    }
    qsort(ix, p->nclasses, sizeof *ix, cmp_ix);
    for (size_t i = 1; i < p->nclasses && !rc; i++)
        if (!strcmp(ix[i - 1].name, ix[i].name))
            rc = tfrec_fail(err, TFREC_E_INVALID, "labels file %s lists %s twice (lines %lld and %lld)",
                            file, ix[i].name, (long long)ix[i - 1].label, (long long)ix[i].label);
    for (int s = 0; s < p->nsplits && !rc; s++) {
        in_list *l = &p->splits[s].items;
        for (size_t i = 0; i < l->n; i++) {
            label_ix key = { l->v[i].synset, 0 };
            label_ix *hit = bsearch(&key, ix, p->nclasses, sizeof *ix, cmp_ix);
            if (!hit) {
                rc = tfrec_fail(err, TFREC_E_INVALID, "class %s of %s is not in labels file %s",
                                l->v[i].synset, l->v[i].path, file);
                break;
            }
            l->v[i].label = hit->label;
        }
    }
    free(ix);
    return rc;
}

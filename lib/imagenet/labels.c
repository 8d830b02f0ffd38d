/* The label mapping: 1..K over the sorted union of synsets, exactly like
 * imagenet_to_gcs.py, or the line numbers of a labels file. */
#include "imagenet/plan.h"

#include <stdlib.h>
#include <string.h>

typedef struct label_ix {
    const char *name;
    int64_t label;
} label_ix;

static int cmp_ix(const void *a, const void *b)
{
    return strcmp(((const label_ix *)a)->name, ((const label_ix *)b)->name);
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
    tfrec_strv_sort(v, n);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (k == 0 || strcmp(v[k - 1], v[i]) != 0)
            v[k++] = v[i];
    p->classes = v; /* strings belong to the pool */
    p->nclasses = k;
    return TFREC_OK;
}

static int classes_from_file(in_plan *p, const in_opts *o, const char *path, tfrec_err *err)
{
    tfrec_strlist lines = { 0 };
    int rc = tfrec_in_read_lines(o, path, 1, &lines, err);
    if (rc)
        return rc;
    if (lines.n == 0)
        return tfrec_fail(err, TFREC_E_INVALID, "labels file %s is empty", path);
    char **v = malloc(lines.n * sizeof *v);
    if (v)
        memcpy(v, lines.v, lines.n * sizeof *v);
    size_t n = lines.n;
    /* The names move to the plan's pool; classes only points at them. */
    if (!v || tfrec_strlist_move_all(&p->pool, &lines)) {
        free(v);
        tfrec_strlist_free(&lines);
        return tfrec_fail(err, TFREC_E_NOMEM, "out of memory");
    }
    p->classes = v;
    p->nclasses = n;
    return TFREC_OK;
}

int tfrec_in_assign_labels(in_plan *p, const in_opts *o, tfrec_err *err)
{
    const char *file = o->o.labels_file;
    int rc = file ? classes_from_file(p, o, file, err) : classes_from_items(p, err);
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
            rc = tfrec_fail(err, TFREC_E_INVALID,
                            "labels file %s lists %s twice (lines %lld and %lld)", file, ix[i].name,
                            (long long)ix[i - 1].label, (long long)ix[i].label);
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

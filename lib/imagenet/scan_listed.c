/* Finding the input images by listing the input file system (e.g. objects in
 * a bucket) instead of directory listings. The plan is the one a scan of
 * the same tree on local disk gives: classes in byte order, files in byte
 * order within each class, names starting with '.' skipped, files below a
 * class folder's own files ignored. */
#include "imagenet/plan.h"

#include <stdlib.h>
#include <string.h>

typedef struct listed {
    char *rel; /* below the listed directory: "class/file" or "file" */
    uint64_t size;
} listed;

typedef struct listing {
    const in_opts *o;
    char *prefix; /* "DIR/" */
    size_t plen;
    int depth; /* path components below DIR */
    listed *v;
    size_t n, cap;
    int nomem;
} listing;

static void listing_free(listing *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i].rel);
    free(l->v);
    free(l->prefix);
    memset(l, 0, sizeof *l);
}

/* One name from list_input: kept when it has depth components below the
 * directory, none empty or hidden, and an accepted extension. */
typedef struct list_adapter {
    int (*add)(void *ctx, const char *name, uint64_t size);
    void *ctx;
} list_adapter;

static int list_one(void *ctx, const char *name, const tfrec_fs_info *info)
{
    list_adapter *a = ctx;
    return a->add(a->ctx, name, info->size);
}

int tfrec_in_list_input(const in_opts *o, const char *pattern,
                        int (*add)(void *ctx, const char *name, uint64_t size), void *ctx)
{
    list_adapter a = { add, ctx };
    int rc = tfrec_fs_list(o->in_fs, pattern, list_one, &a);
    return rc == TFREC_E_NOT_FOUND ? TFREC_OK : rc; /* no match: an empty directory */
}

static int on_entry(void *ctx, const char *name, uint64_t size)
{
    listing *l = ctx;
    if (strncmp(name, l->prefix, l->plen) != 0)
        return 0;
    const char *rel = name + l->plen, *c = rel;
    for (int k = 0; k < l->depth; k++) {
        if (*c == '\0' || *c == '/' || *c == '.')
            return 0;
        const char *slash = strchr(c, '/');
        if ((k + 1 < l->depth) != (slash != NULL))
            return 0;
        if (slash)
            c = slash + 1;
    }
    if (!tfrec_in_ext_ok(c, l->o))
        return 0;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 256;
        listed *v = realloc(l->v, cap * sizeof *v);
        if (!v) {
            l->nomem = 1;
            return 1;
        }
        l->v = v;
        l->cap = cap;
    }
    if (!(l->v[l->n].rel = strdup(rel))) {
        l->nomem = 1;
        return 1;
    }
    l->v[l->n++].size = size;
    return 0;
}

/* Class folder first, then file: "a/x" before "a-b/y" as directory
 * listings give them, though '-' sorts before '/'. */
static int by_class_then_file(const void *pa, const void *pb)
{
    const char *a = ((const listed *)pa)->rel, *b = ((const listed *)pb)->rel;
    const char *sa = strchr(a, '/'), *sb = strchr(b, '/');
    size_t la = sa ? (size_t)(sa - a) : strlen(a), lb = sb ? (size_t)(sb - b) : strlen(b);
    int c = memcmp(a, b, la < lb ? la : lb);
    if (c || la != lb)
        return c ? c : (la < lb ? -1 : 1);
    return strcmp(a + la, b + lb);
}

/* Everything depth (1 or 2) components below dir, sorted. */
static int list_under(const in_opts *o, const char *dir, int depth, listing *l, tfrec_err *err)
{
    memset(l, 0, sizeof *l);
    l->o = o;
    l->depth = depth;
    size_t dl = strlen(dir);
    while (dl > 1 && dir[dl - 1] == '/')
        dl--;
    char *pat = tfrec_in_pattern_under(dir, depth == 2 ? "*/*" : "*");
    l->prefix = malloc(dl + 2);
    if (!pat || !l->prefix) {
        free(pat);
        return tfrec_fail(err, TFREC_E_NOMEM, "out of memory");
    }
    memcpy(l->prefix, dir, dl);
    l->prefix[dl] = '/';
    l->prefix[dl + 1] = '\0';
    l->plen = dl + 1;
    int rc = tfrec_in_list_input(o, pat, on_entry, l);
    free(pat);
    if (l->nomem)
        return tfrec_fail(err, TFREC_E_NOMEM, "out of memory listing %s", dir);
    if (rc == TFREC_E_NOT_FOUND) /* no match: an empty directory */
        rc = TFREC_OK;
    if (rc < 0)
        return tfrec_fail(err, rc, "%s", tfrec_last_errmsg());
    if (l->n > 1)
        qsort(l->v, l->n, sizeof *l->v, by_class_then_file);
    return TFREC_OK;
}

/* dir/rel into split sp; the class is rel's first component (depth 2) or
 * synset. */
static int add_listed(in_plan *p, in_split *sp, const char *dir, const listed *e,
                      const char *synset, tfrec_err *err)
{
    in_item it = { 0 };
    it.path = tfrec_in_plan_own(p, tfrec_in_join(dir, e->rel));
    if (!it.path)
        return tfrec_fail(err, TFREC_E_NOMEM, "out of memory");
    it.name = tfrec_in_basename(it.path);
    if (!synset) {
        const char *cut = strchr(e->rel, '/');
        char *cls = cut ? strndup(e->rel, (size_t)(cut - e->rel)) : NULL;
        synset = cls ? tfrec_in_plan_own(p, cls) : NULL;
        if (!synset)
            return tfrec_fail(err, TFREC_E_NOMEM, "out of memory");
    }
    it.synset = synset;
    it.size = e->size;
    return tfrec_in_list_push(&sp->items, &it);
}

/* ROOT/<class>/<image> into one split. */
static int listed_class_tree(in_plan *p, in_split *sp, const char *root, const in_opts *o,
                             tfrec_err *err)
{
    listing l;
    int rc = list_under(o, root, 2, &l, err);
    /* One string per class, shared by its items, as the local scan does. */
    const char *cls = NULL;
    size_t clen = 0;
    for (size_t i = 0; i < l.n && !rc; i++) {
        const char *rel = l.v[i].rel;
        size_t len = (size_t)(strchr(rel, '/') - rel);
        if (!cls || len != clen || memcmp(cls, rel, len) != 0) {
            char *c = strndup(rel, len);
            cls = c ? tfrec_in_plan_own(p, c) : NULL;
            clen = len;
            if (!cls) {
                rc = tfrec_fail(err, TFREC_E_NOMEM, "out of memory");
                break;
            }
        }
        rc = add_listed(p, sp, root, &l.v[i], cls, err);
    }
    listing_free(&l);
    return rc;
}

int tfrec_in_scan_imagenet_listed(in_plan *p, const in_opts *o, tfrec_err *err)
{
    const char *raw = o->o.raw_data_dir;
    char *train = tfrec_in_join(raw, "train"), *val = tfrec_in_join(raw, "validation");
    char *labels = o->o.validation_labels_file ? strdup(o->o.validation_labels_file)
                                               : tfrec_in_join(raw, "synset_labels.txt");
    tfrec_strlist vlabels = { 0 };
    listing vl = { 0 };
    in_split *tr = NULL, *va = NULL;
    int rc = TFREC_OK;
    if (!train || !val || !labels) {
        rc = tfrec_fail(err, TFREC_E_NOMEM, "out of memory");
        goto out;
    }
    /* What can be missing is checked before the (long) train listing. */
    if ((rc = list_under(o, val, 1, &vl, err)) ||
        (rc = tfrec_in_read_lines(o, labels, 1, &vlabels, err)))
        goto out;
    if (vl.n == 0) {
        rc = tfrec_fail(err, TFREC_E_NOT_FOUND, "no images in %s (extensions: %s)", val,
                        o->o.extensions);
        goto out;
    }
    if (vlabels.n != vl.n) {
        rc = tfrec_fail(err, TFREC_E_INVALID,
                        "%s has %zu labels but %s has %zu images: they must match one to one "
                        "(sorted file-name order)",
                        labels, vlabels.n, val, vl.n);
        goto out;
    }
    if (!(tr = tfrec_in_plan_split(p, "train", err)) ||
        !(va = tfrec_in_plan_split(p, "validation", err))) {
        rc = err->code;
        goto out;
    }
    if ((rc = listed_class_tree(p, tr, train, o, err)))
        goto out;
    if (tr->items.n == 0) {
        rc = tfrec_fail(err, TFREC_E_NOT_FOUND, "no images in %s/<synset>/ (extensions: %s)", train,
                        o->o.extensions);
        goto out;
    }
    for (size_t i = 0; i < vl.n && !rc; i++) {
        const char *syn = tfrec_in_plan_strdup(p, vlabels.v[i]);
        rc = syn ? add_listed(p, va, val, &vl.v[i], syn, err)
                 : tfrec_fail(err, TFREC_E_NOMEM, "out of memory");
    }
out:
    listing_free(&vl);
    tfrec_strlist_free(&vlabels);
    free(train);
    free(val);
    free(labels);
    return rc;
}

int tfrec_in_scan_folders_listed(in_plan *p, const in_opts *o, tfrec_err *err)
{
    in_split *sp = tfrec_in_plan_split(p, "train", err);
    if (!sp)
        return err->code;
    int rc = listed_class_tree(p, sp, o->o.raw_data_dir, o, err);
    if (rc)
        return rc;
    if (sp->items.n == 0)
        return tfrec_fail(err, TFREC_E_NOT_FOUND, "no images in %s/<class>/ (extensions: %s)",
                          o->o.raw_data_dir, o->o.extensions);
    return TFREC_OK;
}

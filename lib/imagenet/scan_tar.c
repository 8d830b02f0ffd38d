/* The ImageNet layout straight from the official tarballs: the listing the
 * tree scan builds (same synsets, names, sort order and sizes), found by a
 * pass over the tar headers alone. Each image becomes an item holding the
 * archive's descriptor and the image's offset, so the workers read it with
 * pread like a file and the rest of the run (labels, shuffle, shards,
 * writer) is the tree's, which is why the shards come out byte-identical.
 *
 * The pass reads one 512-byte header per member and seeks over the data,
 * so the tarballs must be files: a pipe is refused, not spooled (spooling
 * 138 GB to disk is what converting from the tarball avoids). */
#include "imagenet/plan.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tar/tar.h"
#include "util/ioerr.h"
#include "util/vec.h"

#define TRAIN_TAR_NAME "ILSVRC2012_img_train.tar"
#define VAL_TAR_NAME "ILSVRC2012_img_val.tar"

typedef struct member {
    char *name; /* malloc'ed */
    uint64_t offset, size;
} member;

typedef struct members {
    member *v;
    size_t n, cap;
} members;

static void members_free(members *m)
{
    for (size_t i = 0; i < m->n; i++)
        free(m->v[i].name);
    free(m->v);
    memset(m, 0, sizeof *m);
}

static int members_add(members *m, const char *name, size_t len, uint64_t off, uint64_t size)
{
    if (tfrec_vec_reserve(&m->v, &m->cap, m->n + 1, 64))
        return TFREC_E_NOMEM;
    char *s = strndup(name, len);
    if (!s)
        return TFREC_E_NOMEM;
    m->v[m->n++] = (member){ s, off, size };
    return TFREC_OK;
}

static int cmp_member(const void *a, const void *b)
{
    return strcmp(((const member *)a)->name, ((const member *)b)->name);
}

/* Sorted byte-wise like a directory listing; a name twice is an error
 * (a tree cannot hold it, and which copy wins would be arbitrary). */
static const char *sort_unique(members *m)
{
    qsort(m->v, m->n, sizeof *m->v, cmp_member);
    for (size_t i = 1; i < m->n; i++)
        if (!strcmp(m->v[i - 1].name, m->v[i].name))
            return m->v[i].name;
    return NULL;
}

static char *join3(const char *a, const char *b, const char *c)
{
    size_t n = strlen(a) + strlen(b) + (c ? strlen(c) + 1 : 0) + 2;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, c ? "%s:%s:%s" : "%s:%s", a, b, c);
    return s;
}

/* Set by a listing callback at the first name: one is enough. */
static int found_one(void *ctx, const char *name, uint64_t size)
{
    (void)name;
    (void)size;
    *(int *)ctx = 1;
    return 1; /* stop the listing */
}

/* Whether anything matches dir/suffix, where dir is quoted (no pattern)
 * and suffix is a pattern: through list_input for a listed tree (gs://),
 * else a stat of the one name (suffix then holds no wildcard). */
static int input_has(const in_opts *o, const char *dir, const char *suffix)
{
    if (!o->in_listed) {
        struct stat st;
        char *path = tfrec_in_join(dir, suffix);
        int found = path && stat(path, &st) == 0;
        free(path);
        return found;
    }
    char *pat = tfrec_in_pattern_under(dir, suffix);
    int found = 0;
    if (pat)
        (void)tfrec_in_list_input(o, pat, found_one, &found);
    free(pat);
    return found;
}

int tfrec_in_wants_tars(const in_opts *o)
{
    const tfrec_imagenet_options *x = &o->o;
    if (x->layout != TFREC_LAYOUT_IMAGENET)
        return 0;
    if (x->train_tar || x->validation_tar)
        return 1;
    /* raw_data_dir with a tarball (or both) and no extracted train tree,
     * on local disk or listed by the caller (gs://). */
    if (o->in_listed ? input_has(o, x->raw_data_dir, "train/*/*")
                     : input_has(o, x->raw_data_dir, "train"))
        return 0;
    return input_has(o, x->raw_data_dir, TRAIN_TAR_NAME) ||
           input_has(o, x->raw_data_dir, VAL_TAR_NAME);
}

/* An open tarball: a descriptor (pread), or a source through the caller's
 * open_input (seek and read, this thread only) whose images the workers
 * read with open_input_range. */
typedef struct archive {
    int fd;
    tfrec_io *io;
    const char *name; /* owned by the plan */
} archive;

static void tar_open(tfrec_tar *t, const archive *a, uint64_t base, uint64_t len)
{
    if (a->io)
        tfrec_tar_open_io(t, a->io, base, len);
    else
        tfrec_tar_open_fd(t, a->fd, base, len);
}

static int open_input_archive(in_plan *p, const in_opts *o, const char *path, archive *a,
                              uint64_t *size, tfrec_err *err)
{
    if (p->nios == IN_MAX_ARCHIVES)
        return tfrec_fail(err, TFREC_E_INVALID, "too many archives");
    tfrec_io *io = &p->ios[p->nios];
    *io = (tfrec_io)TFREC_IO_INIT;
    int rc = tfrec_fs_open_source(o->in_fs, path, io);
    if (rc < 0)
        return tfrec_fail(err, rc, "%s", tfrec_last_errmsg());
    int64_t n = io->size ? io->size(io->ctx) : -1;
    if (n < 0 || !io->seek) {
        io->close(io->ctx, 0);
        return tfrec_fail(err, TFREC_E_UNSUPPORTED,
                          "%s: not a seekable source of known size: the tarball is listed by a "
                          "first pass that seeks over the image data",
                          path);
    }
    p->nios++;
    a->fd = -1;
    a->io = io;
    a->name = tfrec_in_plan_strdup(p, path);
    if (!a->name)
        return tfrec_fail(err, TFREC_E_NOMEM, "out of memory");
    *size = (uint64_t)n;
    return TFREC_OK;
}

static int open_archive(in_plan *p, const in_opts *o, const char *path, archive *a, uint64_t *size,
                        tfrec_err *err)
{
    if (o->in_read)
        return open_input_archive(p, o, path, a, size, err);
    a->io = NULL;
    a->name = NULL;
    int *fd = &a->fd;
    if (p->nfds == IN_MAX_ARCHIVES)
        return tfrec_fail(err, TFREC_E_INVALID, "too many archives");
    /* O_NONBLOCK: opening a FIFO must not wait for a writer before the
     * check below refuses it. */
    int f = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (f < 0)
        return tfrec_fail_errno(err, tfrec_errno_code(errno), errno, path, "cannot open tarball");
    struct stat st;
    if (fstat(f, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(f);
        return tfrec_fail(err, TFREC_E_UNSUPPORTED,
                          "%s: not a regular file (a pipe or device?): the tarball is listed by a "
                          "first pass that seeks over the image data, so it must be a file; save "
                          "the stream to a file first",
                          path);
    }
    p->fds[p->nfds++] = f;
    *fd = f;
    *size = (uint64_t)st.st_size;
    return TFREC_OK;
}

/* Images of a flat tar region, sorted, into out; any damage fails with
 * the message in err (the caller decides whether --on_error=skip applies). */
static int list_images(const archive *a, uint64_t base, uint64_t len, const in_opts *o,
                       const char *label, members *out, tfrec_err *err)
{
    tfrec_tar t;
    tar_open(&t, a, base, len);
    tfrec_tar_entry e;
    int rc;
    tfrec_err terr = { 0 };
    while ((rc = tfrec_tar_next(&t, &e, &terr)) == 1) {
        if (e.type == TFREC_TAR_DIR)
            continue; /* "./" or a directory entry: names are checked below */
        const char *why = NULL, *name = tfrec_tar_flat_name(e.name, &why);
        if (!name) {
            rc = tfrec_fail(err, TFREC_E_PARSE, "%s: member '%.300s' at offset %llu: %s", label,
                            e.name, (unsigned long long)e.header, why);
            break;
        }
        if (name[0] == '.' || !tfrec_in_ext_ok(name, o))
            continue; /* as the tree scan skips dot files and other extensions */
        if (e.type != TFREC_TAR_FILE) {
            rc = tfrec_fail(err, TFREC_E_PARSE,
                            "%s: member '%.300s' at offset %llu is a link or special file, not "
                            "an image",
                            label, name, (unsigned long long)e.header);
            break;
        }
        if (members_add(out, name, strlen(name), e.offset, e.size)) {
            rc = tfrec_fail(err, TFREC_E_NOMEM, "out of memory listing %s", label);
            break;
        }
    }
    if (rc < 0 && terr.code) /* the reader failed: say in which archive */
        rc = tfrec_fail(err, rc, "%s: %s", label, terr.msg);
    tfrec_tar_close(&t);
    if (rc < 0)
        return rc;
    const char *dup = sort_unique(out);
    if (dup)
        return tfrec_fail(err, TFREC_E_PARSE, "%s: member '%.300s' appears twice", label, dup);
    return TFREC_OK;
}

static int add_items(in_plan *p, in_split *sp, const members *m, const archive *a,
                     const char *archive_path, const char *inner, const char *synset,
                     tfrec_err *err)
{
    for (size_t i = 0; i < m->n; i++) {
        in_item it = { 0 };
        it.path = tfrec_in_plan_own(
            p, join3(archive_path, inner ? inner : m->v[i].name, inner ? m->v[i].name : NULL));
        if (!it.path)
            return tfrec_fail(err, TFREC_E_NOMEM, "out of memory");
        it.name = it.path + strlen(it.path) - strlen(m->v[i].name);
        it.synset = synset;
        it.size = m->v[i].size;
        it.from_archive = 1;
        it.fd = a->fd;
        it.archive = a->name;
        it.offset = m->v[i].offset;
        if (tfrec_in_list_push(&sp->items, &it))
            return tfrec_fail(err, TFREC_E_NOMEM, "out of memory");
    }
    return TFREC_OK;
}

static int skip_note(in_plan *p, const char *path, const char *why, tfrec_err *err)
{
    if (tfrec_strlist_add(&p->skipped, path) || tfrec_strlist_add(&p->skipped_why, why))
        return tfrec_fail(err, TFREC_E_NOMEM, "out of memory");
    return TFREC_OK;
}

/* The outer train tar: its members nXXXXXXXX.tar, sorted, then each one's
 * images. A broken inner tar fails the scan, or with --on_error=skip is
 * left out and noted; damage to the outer tar always fails it. */
static int scan_train(in_plan *p, in_split *sp, const char *path, const in_opts *o, tfrec_err *err)
{
    archive a;
    uint64_t size;
    int rc = open_archive(p, o, path, &a, &size, err);
    if (rc)
        return rc;
    members syn = { 0 };
    tfrec_tar t;
    tar_open(&t, &a, 0, size);
    tfrec_tar_entry e;
    tfrec_err terr = { 0 };
    while ((rc = tfrec_tar_next(&t, &e, &terr)) == 1) {
        if (e.type == TFREC_TAR_DIR)
            continue;
        const char *why = NULL, *name = tfrec_tar_flat_name(e.name, &why);
        if (!name) {
            rc = tfrec_fail(err, TFREC_E_PARSE, "%s: member '%.300s' at offset %llu: %s", path,
                            e.name, (unsigned long long)e.header, why);
            break;
        }
        size_t n = strlen(name);
        /* Other files next to the synset tars are skipped, as files next
         * to the synset directories are. */
        if (name[0] == '.' || n <= 4 || strcmp(name + n - 4, ".tar") != 0)
            continue;
        if (e.type != TFREC_TAR_FILE) {
            rc = tfrec_fail(err, TFREC_E_PARSE,
                            "%s: member '%.300s' at offset %llu is a link or special file, not "
                            "a tar",
                            path, name, (unsigned long long)e.header);
            break;
        }
        if (members_add(&syn, name, n - 4, e.offset, e.size)) {
            rc = tfrec_fail(err, TFREC_E_NOMEM, "out of memory listing %s", path);
            break;
        }
    }
    if (rc < 0 && terr.code) /* the reader failed: say in which archive */
        rc = tfrec_fail(err, rc, "%s: %s", path, terr.msg);
    tfrec_tar_close(&t);
    const char *dup = rc < 0 ? NULL : sort_unique(&syn);
    if (dup)
        rc = tfrec_fail(err, TFREC_E_PARSE, "%s: member '%.300s.tar' appears twice", path, dup);
    for (size_t s = 0; rc >= 0 && s < syn.n; s++) {
        if (tfrec_in_cancelled(o)) {
            rc = tfrec_fail(err, TFREC_E_STATE, IN_CANCELLED_MSG);
            break;
        }
        char inner[4096];
        snprintf(inner, sizeof inner, "%s.tar", syn.v[s].name);
        char *label = join3(path, inner, NULL);
        const char *synset = tfrec_in_plan_strdup(p, syn.v[s].name);
        members img = { 0 };
        tfrec_err ierr = { 0 };
        if (!label || !synset)
            rc = tfrec_fail(err, TFREC_E_NOMEM, "out of memory");
        else if ((rc = list_images(&a, syn.v[s].offset, syn.v[s].size, o, label, &img, &ierr))) {
            if (o->o.on_error == TFREC_ON_ERROR_SKIP && rc != TFREC_E_NOMEM)
                rc = skip_note(p, label, ierr.msg, err);
            else
                rc = tfrec_fail_copy(err, &ierr);
        } else {
            rc = add_items(p, sp, &img, &a, path, inner, synset, err);
        }
        members_free(&img);
        free(label);
    }
    members_free(&syn);
    return rc < 0 ? rc : TFREC_OK;
}

/* given, else dir/name when dir holds it (options.c made sure one of
 * them is set), else NULL: that split is skipped. *nomem on failure. */
static char *tar_path(const in_opts *o, const char *given, const char *name, int *nomem)
{
    const char *dir = o->o.raw_data_dir;
    char *s = NULL;
    if (given)
        s = strdup(given);
    else if (dir && *dir && input_has(o, dir, name))
        s = tfrec_in_join(dir, name);
    else
        return NULL;
    if (!s)
        *nomem = 1;
    return s;
}

/* given, else dir/name. */
static char *path_or(const char *given, const char *dir, const char *name)
{
    if (given)
        return strdup(given);
    return tfrec_in_join(dir, name);
}

int tfrec_in_scan_tars(in_plan *p, const in_opts *o, tfrec_err *err)
{
    const tfrec_imagenet_options *x = &o->o;
    int nomem = 0;
    /* Either tarball alone converts its split; the tool says which split
     * it skipped. */
    char *train = tar_path(o, x->train_tar, TRAIN_TAR_NAME, &nomem);
    char *val = tar_path(o, x->validation_tar, VAL_TAR_NAME, &nomem);
    char *labels =
        val ? path_or(x->validation_labels_file, x->raw_data_dir, "synset_labels.txt") : NULL;
    tfrec_strlist vlabels = { 0 };
    members vimg = { 0 };
    int rc = TFREC_OK;
    archive va_arch;
    uint64_t vsize;
    in_split *tr = NULL, *va = NULL;
    if (nomem || (val && !labels)) {
        rc = tfrec_fail(err, TFREC_E_NOMEM, "out of memory");
        goto out;
    }
    if (!train && !val) {
        rc = tfrec_fail(err, TFREC_E_NOT_FOUND, "no %s or %s in %s", TRAIN_TAR_NAME, VAL_TAR_NAME,
                        x->raw_data_dir ? x->raw_data_dir : "(no --raw_data_dir)");
        goto out;
    }
    /* The quick checks (files there, labels fit the validation tar)
     * before the long train pass. */
    struct stat st;
    if (train && !o->in_read && stat(train, &st) != 0) {
        rc = tfrec_fail_errno(err, TFREC_E_NOT_FOUND, errno, train, "training tarball");
        goto out;
    }
    if (val && ((rc = tfrec_in_read_lines(o, labels, 1, &vlabels, err)) ||
                (rc = open_archive(p, o, val, &va_arch, &vsize, err)) ||
                (rc = list_images(&va_arch, 0, vsize, o, val, &vimg, err))))
        goto out;
    if (val && vimg.n == 0) {
        rc = tfrec_fail(err, TFREC_E_NOT_FOUND, "no images in %s (extensions: %s)", val,
                        x->extensions);
        goto out;
    }
    if (val && vlabels.n != vimg.n) {
        rc = tfrec_fail(err, TFREC_E_INVALID,
                        "%s has %zu labels but %s has %zu images: they must match one to one "
                        "(sorted file-name order)",
                        labels, vlabels.n, val, vimg.n);
        goto out;
    }
    if ((train && !(tr = tfrec_in_plan_split(p, "train", err))) ||
        (val && !(va = tfrec_in_plan_split(p, "validation", err)))) {
        rc = err->code;
        goto out;
    }
    if (train && (rc = scan_train(p, tr, train, o, err)))
        goto out;
    if (train && tr->items.n == 0) {
        rc =
            tfrec_fail(err, TFREC_E_NOT_FOUND,
                       "no images in the synset tars of %s (extensions: %s)", train, x->extensions);
        goto out;
    }
    for (size_t i = 0; val && i < vimg.n && !rc; i++) {
        const char *syn = tfrec_in_plan_strdup(p, vlabels.v[i]);
        members one = { &vimg.v[i], 1, 1 };
        rc = syn ? add_items(p, va, &one, &va_arch, val, NULL, syn, err)
                 : tfrec_fail(err, TFREC_E_NOMEM, "out of memory");
    }
out:
    members_free(&vimg);
    tfrec_strlist_free(&vlabels);
    free(train);
    free(val);
    free(labels);
    return rc;
}

/* Finding the input images. Every directory listing is sorted byte-wise, so
 * the plan does not depend on the file system's readdir order. */
#include "imagenet/plan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/ioerr.h"

int tfrec_in_list_dir(const char *dir, const in_opts *o, int want_dirs, tfrec_strlist *names,
                      tfrec_err *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return tfrec_fail_errno(err, tfrec_errno_code(errno), errno, dir, "cannot open directory");
    int fd = dirfd(d);
    struct dirent *e;
    int rc = TFREC_OK;
    while ((e = readdir(d)) != NULL) {
        /* Dot files are skipped: ".", "..", and junk like macOS "._x.JPEG". */
        if (e->d_name[0] == '.')
            continue;
        int is_dir;
        if (e->d_type == DT_DIR || e->d_type == DT_REG) {
            is_dir = e->d_type == DT_DIR;
        } else {
            struct stat st; /* symlinks and file systems without d_type */
            if (fstatat(fd, e->d_name, &st, 0) != 0)
                continue; /* dangling link */
            if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
                continue;
            is_dir = S_ISDIR(st.st_mode);
        }
        if (is_dir != want_dirs || (!want_dirs && !tfrec_in_ext_ok(e->d_name, o)))
            continue;
        if (tfrec_strlist_add(names, e->d_name)) {
            rc = tfrec_fail(err, TFREC_E_NOMEM, "out of memory listing %s", dir);
            break;
        }
    }
    closedir(d);
    if (rc) {
        tfrec_strlist_free(names);
        return rc;
    }
    tfrec_strlist_sort(names);
    return TFREC_OK;
}

static int add_item(in_plan *p, in_split *sp, const char *dir, const char *file, const char *synset,
                    tfrec_err *err)
{
    in_item it = { 0 };
    it.path = tfrec_in_plan_own(p, tfrec_in_join(dir, file));
    if (!it.path)
        return tfrec_fail(err, TFREC_E_NOMEM, "out of memory");
    it.name = tfrec_in_basename(it.path);
    it.synset = synset;
    struct stat st;
    if (stat(it.path, &st) != 0)
        return tfrec_fail_errno(err, TFREC_E_IO, errno, it.path, "cannot stat");
    it.size = (uint64_t)st.st_size;
    return tfrec_in_list_push(&sp->items, &it);
}

static int need_dir(const char *path, const char *what, tfrec_err *err)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return tfrec_fail(err, TFREC_E_NOT_FOUND, "%s %s does not exist", what, path);
    if (!S_ISDIR(st.st_mode))
        return tfrec_fail(err, TFREC_E_INVALID, "%s %s is not a directory", what, path);
    return TFREC_OK;
}

/* ROOT/<class>/<image> into one split. */
static int scan_class_tree(in_plan *p, in_split *sp, const char *root, const in_opts *o,
                           tfrec_err *err)
{
    tfrec_strlist classes = { 0 };
    int rc = tfrec_in_list_dir(root, o, 1, &classes, err);
    if (rc)
        return rc;
    for (size_t c = 0; c < classes.n && !rc; c++) {
        if (tfrec_in_cancelled(o)) { /* a scan of a large tree takes a while */
            rc = tfrec_fail(err, TFREC_E_STATE, IN_CANCELLED_MSG);
            break;
        }
        char *dir = tfrec_in_join(root, classes.v[c]);
        const char *synset = tfrec_in_plan_strdup(p, classes.v[c]);
        tfrec_strlist files = { 0 };
        if (!dir || !synset)
            rc = tfrec_fail(err, TFREC_E_NOMEM, "out of memory");
        else
            rc = tfrec_in_list_dir(dir, o, 0, &files, err);
        for (size_t f = 0; f < files.n && !rc; f++)
            rc = add_item(p, sp, dir, files.v[f], synset, err);
        tfrec_strlist_free(&files);
        free(dir);
    }
    tfrec_strlist_free(&classes);
    return rc;
}

int tfrec_in_scan_imagenet(in_plan *p, const in_opts *o, tfrec_err *err)
{
    if (o->in_listed)
        return tfrec_in_scan_imagenet_listed(p, o, err);
    const char *raw = o->o.raw_data_dir;
    int rc = need_dir(raw, "--raw_data_dir", err);
    if (rc)
        return rc;
    char *train = tfrec_in_join(raw, "train"), *val = tfrec_in_join(raw, "validation");
    char *labels = o->o.validation_labels_file ? strdup(o->o.validation_labels_file)
                                               : tfrec_in_join(raw, "synset_labels.txt");
    tfrec_strlist vnames = { 0 }, vlabels = { 0 };
    in_split *tr = NULL, *va = NULL;
    if (!train || !val || !labels) {
        rc = tfrec_fail(err, TFREC_E_NOMEM, "out of memory");
        goto out;
    }
    /* Check everything that can be missing before the (long) train scan. */
    if ((rc = need_dir(train, "training directory", err)) ||
        (rc = need_dir(val, "validation directory", err)))
        goto out;
    if (!o->in_read && access(labels, R_OK) != 0) { /* else the file system tells */
        rc = tfrec_fail_errno(err, TFREC_E_NOT_FOUND, errno, labels,
                              "validation labels file not readable");
        goto out;
    }
    if ((rc = tfrec_in_list_dir(val, o, 0, &vnames, err)) ||
        (rc = tfrec_in_read_lines(o, labels, 1, &vlabels, err)))
        goto out;
    if (vnames.n == 0) {
        rc = tfrec_fail(err, TFREC_E_NOT_FOUND, "no images in %s (extensions: %s)", val,
                        o->o.extensions);
        goto out;
    }
    if (vlabels.n != vnames.n) {
        rc = tfrec_fail(err, TFREC_E_INVALID,
                        "%s has %zu labels but %s has %zu images: they must match one to one "
                        "(sorted file-name order)",
                        labels, vlabels.n, val, vnames.n);
        goto out;
    }
    if (!(tr = tfrec_in_plan_split(p, "train", err)) ||
        !(va = tfrec_in_plan_split(p, "validation", err))) {
        rc = err->code;
        goto out;
    }
    if ((rc = scan_class_tree(p, tr, train, o, err)))
        goto out;
    if (tr->items.n == 0) {
        rc = tfrec_fail(err, TFREC_E_NOT_FOUND, "no images in %s/<synset>/ (extensions: %s)", train,
                        o->o.extensions);
        goto out;
    }
    for (size_t i = 0; i < vnames.n && !rc; i++) {
        const char *syn = tfrec_in_plan_strdup(p, vlabels.v[i]);
        rc = syn ? add_item(p, va, val, vnames.v[i], syn, err)
                 : tfrec_fail(err, TFREC_E_NOMEM, "out of memory");
    }
out:
    tfrec_strlist_free(&vnames);
    tfrec_strlist_free(&vlabels);
    free(train);
    free(val);
    free(labels);
    return rc;
}

int tfrec_in_scan_folders(in_plan *p, const in_opts *o, tfrec_err *err)
{
    if (o->in_listed)
        return tfrec_in_scan_folders_listed(p, o, err);
    int rc = need_dir(o->o.raw_data_dir, "--raw_data_dir", err);
    if (rc)
        return rc;
    in_split *sp = tfrec_in_plan_split(p, "train", err);
    if (!sp)
        return err->code;
    if ((rc = scan_class_tree(p, sp, o->o.raw_data_dir, o, err)))
        return rc;
    if (sp->items.n == 0)
        return tfrec_fail(err, TFREC_E_NOT_FOUND, "no images in %s/<class>/ (extensions: %s)",
                          o->o.raw_data_dir, o->o.extensions);
    return TFREC_OK;
}

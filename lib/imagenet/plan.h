/* Internal: the conversion plan, built completely (and checked) before any
 * image is read. Items appear in output order: split by split, shard by
 * shard. */
#ifndef TFREC_IMAGENET_PLAN_H
#define TFREC_IMAGENET_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "fs/fs_internal.h"
#include "imagenet/paths.h"
#include "tfrec/imagenet.h"
#include "util/errors.h"
#include "util/strlist.h"

typedef struct in_item {
    char *path;         /* path to open */
    const char *name;   /* base name, inside path */
    const char *synset; /* class name, owned by the plan's string pool */
    int64_t label;
    uint64_t size; /* file size at scan time */
    /* Set for an image inside a tarball: its size bytes are at offset of
     * the open archive fd (path then only names it, for messages). */
    int from_archive;
    int fd;
    uint64_t offset;
    /* Tarballs read through open_input_range: the archive's name (fd is
     * then -1). */
    const char *archive;
} in_item;

typedef struct in_list {
    in_item *v;
    size_t n, cap;
} in_list;

#define IN_MAX_SPLITS 16
#define IN_SPLIT_NAME_MAX 64
#define IN_MAX_ARCHIVES 2

typedef struct in_split {
    char name[IN_SPLIT_NAME_MAX];
    in_list items;
    int shards;
} in_split;

typedef struct in_shard {
    int split;
    char name[IN_SPLIT_NAME_MAX + 32];     /* "train-00000-of-01024" */
    char file[2 * IN_SPLIT_NAME_MAX + 32]; /* in the output: "train/train-..." or name */
    size_t first, count;                   /* range in plan order */
    uint64_t records, bytes;               /* filled by the writer */
    uint32_t crc32c;                       /* of the file's bytes (task runs) */
} in_shard;

typedef struct in_plan {
    in_split splits[IN_MAX_SPLITS];
    int nsplits;
    char **classes; /* label k is classes[k - 1]; the strings are in the pool */
    size_t nclasses;
    tfrec_strlist pool; /* every string the plan owns, freed together */
    in_item **order;    /* all items in output order */
    size_t nitems;
    in_shard *shards;
    size_t nshards;
    int fds[IN_MAX_ARCHIVES]; /* tarballs the items are read from */
    int nfds;
    /* Tarballs opened through open_input for the listing pass (closed with
     * the plan). */
    tfrec_io ios[IN_MAX_ARCHIVES];
    int nios;
    /* Members the tarball scan left out (--on_error=skip), with why. */
    tfrec_strlist skipped, skipped_why;
    /* The shards this run writes: all, or a task's share (tasks.c). */
    size_t share_begin, share_end;
    /* The fingerprint of the listing file planned from ("" when scanned). */
    char listing_fp[17];
} in_plan;

/* Resolved options (defaults applied). */
typedef struct in_opts {
    tfrec_imagenet_options o;
    char **exts; /* accepted extensions, without dots */
    size_t nexts;
    char *ext_buf; /* storage of exts */
    /* Where the names go (options.c): the input's file system (the tree
     * listed through it when in_listed, else scanned on local disk; images,
     * labels files and tarballs read through it when in_read, else with
     * local calls) and the output's (shards and a task's part through its
     * sinks when out_direct, else local files, staged); the manifest and
     * the listing file through fs. The deprecated callbacks become the
     * shims' tables. in_opts must not move once resolved. */
    const tfrec_fs *in_fs, *out_fs, *fs;
    int in_listed, in_read, out_direct;
    tfrec_fs_opener in_shim, out_shim;
} in_opts;

/* Whether name is a path of the local file system for fs (NULL, the
 * default or the local one, and no scheme): scanned, read and written
 * with local calls, as 1.0 did. */
int tfrec_in_is_local(const tfrec_fs *fs, const char *name);
/* Every name matching pattern through o->in_fs, as add(ctx, name, size);
 * no match is TFREC_OK (an empty directory). */
int tfrec_in_list_input(const in_opts *o, const char *pattern,
                        int (*add)(void *ctx, const char *name, uint64_t size), void *ctx);
/* json, whole, to name through fs's sink (appears only when complete). */
int tfrec_in_write_fs(const tfrec_fs *fs, const char *name, const char *json, const char *what,
                      tfrec_err *err);

/* The caller asked the run to stop (tfrec_imagenet_options.cancel). */
static inline int tfrec_in_cancelled(const in_opts *o)
{
    return o->o.cancel && *o->o.cancel;
}
#define IN_CANCELLED_MSG "cancelled"

void tfrec_in_plan_free(in_plan *p);
/* Keep s (malloc'ed) until the plan is freed; returns s or NULL. */
char *tfrec_in_plan_own(in_plan *p, char *s);
char *tfrec_in_plan_strdup(in_plan *p, const char *s);
int tfrec_in_list_push(in_list *l, const in_item *it);
in_split *tfrec_in_plan_split(in_plan *p, const char *name, tfrec_err *err);

/* scan.c: fill the plan's splits with items (synset set, label 0). */
int tfrec_in_scan_imagenet(in_plan *p, const in_opts *o, tfrec_err *err);
int tfrec_in_scan_folders(in_plan *p, const in_opts *o, tfrec_err *err);
int tfrec_in_scan_csv(in_plan *p, const in_opts *o, tfrec_err *err);
/* scan_listed.c: the same two trees through o->in_fs's list. */
int tfrec_in_scan_imagenet_listed(in_plan *p, const in_opts *o, tfrec_err *err);
int tfrec_in_scan_folders_listed(in_plan *p, const in_opts *o, tfrec_err *err);
/* scan_tar.c: the ImageNet layout from the official tarballs (train: a
 * tar of per-synset tars; validation: a flat tar), by a pass over their
 * headers. Non-zero when the options or raw_data_dir ask for it. */
int tfrec_in_wants_tars(const in_opts *o);
int tfrec_in_scan_tars(in_plan *p, const in_opts *o, tfrec_err *err);
/* Byte-wise sorted names in dir: its subdirectories (want_dirs) or its
 * regular files whose extension is accepted. names starts empty. */
int tfrec_in_list_dir(const char *dir, const in_opts *o, int want_dirs, tfrec_strlist *names,
                      tfrec_err *err);

/* listing.c: the scan's splits (before labels) as a listing file at path
 * (through the fs layer), and back into an empty plan; fp receives the
 * listing's fingerprint (16 hex digits). */
int tfrec_in_listing_write(const in_plan *p, const in_opts *o, const char *path, char fp[17],
                           tfrec_err *err);
int tfrec_in_listing_read(in_plan *p, const in_opts *o, const char *path, char fp[17],
                          tfrec_err *err);

/* lines.c: a text file of names (synset_labels.txt, --labels_file, CSV)
 * as trimmed, non-empty lines (only the first field when first_token),
 * read through o->in_fs when o->in_read. lines starts empty. */
int tfrec_in_read_lines(const in_opts *o, const char *path, int first_token, tfrec_strlist *lines,
                        tfrec_err *err);

/* labels.c: assign labels to every item. */
int tfrec_in_assign_labels(in_plan *p, const in_opts *o, tfrec_err *err);

/* shuffle.c: the documented deterministic shuffle. */
void tfrec_in_shuffle(in_item *v, size_t n, uint64_t seed);

/* plan.c: shards and output order. */
int tfrec_in_plan_finish(in_plan *p, const in_opts *o, tfrec_err *err);

#endif

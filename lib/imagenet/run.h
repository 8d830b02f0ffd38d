/* Internal: state of one conversion run, shared by convert.c (threads and
 * shard writing) and manifest.c (the JSON report). */
#ifndef TFREC_IMAGENET_RUN_H
#define TFREC_IMAGENET_RUN_H

#include "imagenet/convert.h"
#include "imagenet/plan.h"
#include "tfrec/imagenet.h"

typedef struct in_note {
    char *path; /* malloc'ed */
    char *what; /* reason (rejected) or source format (fixed), malloc'ed */
} in_note;

typedef struct in_notes {
    in_note *v;
    size_t n, cap;
} in_notes;

struct tfrec_imagenet_result {
    int status;
    tfrec_err err;
    tfrec_imagenet_counts counts;
    char *json;
    in_notes rejected;
    in_notes stale; /* stale staging directories removed */
};

int tfrec_in_notes_add(in_notes *l, const char *path, const char *what);
void tfrec_in_notes_free(in_notes *l);

/* options.c: defaults applied, everything validated. */
int tfrec_in_resolve_options(const tfrec_imagenet_options *in, in_opts *o, tfrec_err *err);
void tfrec_in_free_options(in_opts *o);

/* staging.c */
int tfrec_in_mkdir_p(const char *path, tfrec_err *err);
char *tfrec_in_path2(const char *dir, const char *name); /* "dir/name", malloc'ed */
char *tfrec_in_staging_path(const char *out);            /* OUT/.tfrec-staging-<pid>, malloc'ed */
/* Remove the staging directory and everything in it. */
void tfrec_in_discard_staging(const char *staging);
/* Remove OUT/.tfrec-staging-<pid> directories whose process is gone,
 * adding each to removed. */
int tfrec_in_remove_stale(const char *out, in_notes *removed, tfrec_err *err);
/* Shard files in OUT and OUT/<dir>/ (names "*-NNNNN-of-NNNNN") that the
 * plan does not write, added to found; with any, TFREC_E_STATE naming them. */
int tfrec_in_check_conflicts(const char *out, const in_plan *p, in_notes *found, tfrec_err *err);
/* Remove the replace files (paths relative to out), then move the staged
 * shards into place, creating OUT/<split>/ as needed. */
int tfrec_in_commit_staging(const char *staging, const char *out, const in_plan *p,
                            const in_notes *replace, tfrec_err *err);
int tfrec_in_write_manifest_file(const char *path, const char *json, tfrec_err *err);

/* Build the manifest JSON into r->json. */
void tfrec_in_manifest_build(tfrec_imagenet_result *r, const in_opts *o, const in_plan *p,
                             const in_notes *fixed, const in_notes *rejected);

#endif

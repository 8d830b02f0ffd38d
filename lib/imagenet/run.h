/* Internal: state of one conversion run, shared by convert.c (the run's
 * modes), pool.c (threads and shard writing), manifest.c (the JSON report)
 * and result.c (what the caller reads). */
#ifndef TFREC_IMAGENET_RUN_H
#define TFREC_IMAGENET_RUN_H

#include "imagenet/convert.h"
#include "imagenet/plan.h"
#include "tfrec/imagenet.h"
#include "util/json_read.h"

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

/* pool.c: convert the plan's share, writing its shards into staging (a
 * local directory) or, when staging is NULL, to their destination through
 * o->out_fs. rejected (what the scan left out) moves into the run and
 * comes back with its rejections; fixed receives the images normalised. */
int tfrec_in_run_pool(const in_opts *o, in_plan *p, const char *staging, tfrec_imagenet_result *res,
                      in_notes *fixed, in_notes *rejected);
/* Seconds on the monotonic clock. */
double tfrec_in_now_s(void);

/* options.c: defaults applied, everything validated. */
int tfrec_in_resolve_options(const tfrec_imagenet_options *in, in_opts *o, tfrec_err *err);
void tfrec_in_free_options(in_opts *o);

/* staging.c */
int tfrec_in_mkdir_p(const char *path, tfrec_err *err);
/* Remove the staging directory and everything in it. */
void tfrec_in_discard_staging(const char *staging);
/* Remove the staging directories of the same kind (task < 0: runs without
 * tasks; else that task's) whose run is over, wherever it ran: those whose
 * lock (staging_lock.c) can be taken. Each is added to removed. */
int tfrec_in_remove_stale(const char *out, long task, in_notes *removed, tfrec_err *err);
/* staging_lock.c. The lock file inside a staging directory. */
#define IN_STAGING_LOCK ".lock"
/* A new staging directory OUT/<prefix><pid>-<random> (malloc'ed), its lock
 * held through *lock_fd until the caller closes it (after the commit or
 * the discard). NULL on failure. */
char *tfrec_in_staging_create(const char *out, long task, int *lock_fd, tfrec_err *err);
/* The lock of directory name in the directory open as at, if no running
 * converter holds it: a descriptor to close once the directory is gone;
 * else -1 (errno EWOULDBLOCK: it is in use). Follows no link. */
int tfrec_in_staging_claim(int at, const char *name);
/* Shard files in OUT and OUT/<dir>/ (names "*-NNNNN-of-NNNNN") that the
 * plan does not write, added to found; with any, TFREC_E_STATE naming them. */
int tfrec_in_check_conflicts(const char *out, const in_plan *p, in_notes *found, tfrec_err *err);
/* Remove the replace files (paths relative to out), then move the staged
 * shards into place, creating OUT/<split>/ as needed. */
int tfrec_in_commit_staging(const char *staging, const char *out, const in_plan *p,
                            const in_notes *replace, tfrec_err *err);
int tfrec_in_write_manifest_file(const char *path, const char *json, tfrec_err *err);

/* tasks.c: a task's share of the shards (all of them without tasks) into
 * p->share_begin/end, and the plan positions of their images. */
int tfrec_in_plan_share(in_plan *p, const in_opts *o, tfrec_err *err);
void tfrec_in_share_items(const in_plan *p, size_t *begin, size_t *end);
/* 16 hex digits over the listing, the shard layout and the options that
 * change the bytes. */
void tfrec_in_plan_fingerprint(const in_plan *p, const in_opts *o, char out[17]);
/* How manifest parts are read back (merge.c). */
extern const tfrec_json_limits tfrec_in_part_limits;
/* The task's part, a local file or through open_sink; removed with
 * remove_output (or unlink) before a task rewrites its shards. */
int tfrec_in_write_part(const in_opts *o, const char *json, tfrec_err *err);
void tfrec_in_remove_part(const in_opts *o);
/* Wrap a sink so that *crc is the CRC32C of every byte written through it
 * (on failure the sink is closed without commit). */
int tfrec_in_crc_sink(tfrec_io *io, uint32_t *crc);

/* The manifest's "counts" member (a task's part and the merged manifest). */
void tfrec_in_manifest_counts(tfrec_json *j, const tfrec_imagenet_counts *c);
/* Build the manifest JSON into r->json. */
void tfrec_in_manifest_build(tfrec_imagenet_result *r, const in_opts *o, const in_plan *p,
                             const in_notes *fixed, const in_notes *rejected);

#endif

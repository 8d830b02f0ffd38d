/* tfrec_imagenet_convert: plan the run, convert in one of its two modes,
 * then report.
 *
 * Direct: the shards go straight to the output's file system (a bucket, a
 * caller's sinks); a failed run removes those it had completed. Staged:
 * the shards go to a staging directory inside the local output directory
 * and are renamed into place only when the whole run succeeded, so a
 * failed run leaves the previous set untouched. */
#include "imagenet/run.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------ plan */

static int plan_run(const in_opts *o, in_plan *p, tfrec_err *err)
{
    int rc;
    if (o->o.listing)
        rc = tfrec_in_listing_read(p, o, o->o.listing, p->listing_fp, err);
    else
        switch (o->o.layout) {
        case TFREC_LAYOUT_FOLDERS: rc = tfrec_in_scan_folders(p, o, err); break;
        case TFREC_LAYOUT_CSV: rc = tfrec_in_scan_csv(p, o, err); break;
        default:
            rc = tfrec_in_wants_tars(o) ? tfrec_in_scan_tars(p, o, err)
                                        : tfrec_in_scan_imagenet(p, o, err);
            break;
        }
    if (!rc)
        rc = tfrec_in_assign_labels(p, o, err);
    if (!rc)
        rc = tfrec_in_plan_finish(p, o, err);
    if (!rc)
        rc = tfrec_in_plan_share(p, o, err);
    return rc;
}

/* Options resolved and the plan made, with the counts known before any
 * image is read. */
static int prepare(const tfrec_imagenet_options *opts, in_opts *o, in_plan *p, in_notes *rejected,
                   tfrec_imagenet_result *res)
{
    int rc = tfrec_in_resolve_options(opts, o, &res->err);
    if (!rc)
        rc = plan_run(o, p, &res->err);
    /* Tarball members the scan left out (--on_error=skip) come first among
     * the rejected, and count as rejected images (of task 0 only, so that
     * merged parts count them once). */
    for (size_t i = 0; o->o.task_index == 0 && i < p->skipped.n; i++)
        if (tfrec_in_notes_add(rejected, p->skipped.v[i], p->skipped_why.v[i]) == TFREC_OK)
            res->counts.images_rejected++;
    res->counts.images_total = p->nitems + p->skipped.n;
    res->counts.shards_planned = (uint32_t)p->nshards;
    res->counts.shards_begin = (uint32_t)p->share_begin;
    res->counts.shards_end = (uint32_t)p->share_end;
    res->counts.classes = (uint32_t)p->nclasses;
    /* A task re-run first drops its old part: a run that fails then leaves
     * none, and the merge names the task to run again. */
    if (!rc && o->o.num_tasks)
        tfrec_in_remove_part(o);
    return rc;
}

/* ------------------------------------------------------------ direct */

/* The shards a failed direct run had completed (the first counts.shards,
 * written in order) are removed, so that it leaves no partial set. */
static void remove_direct(const in_opts *o, const in_plan *p, uint32_t done)
{
    for (size_t k = p->share_begin; k < p->share_begin + done && k < p->share_end; k++) {
        char *f = tfrec_in_join(o->o.output_dir, p->shards[k].file);
        if (f)
            (void)tfrec_fs_remove(o->out_fs, f); /* no remove (a 1.0 sink alone): left */
        free(f);
    }
}

static int convert_direct(const in_opts *o, in_plan *p, tfrec_imagenet_result *res, in_notes *fixed,
                          in_notes *rejected)
{
    int rc = tfrec_in_run_pool(o, p, NULL, res, fixed, rejected);
    if (rc)
        remove_direct(o, p, res->counts.shards);
    return rc;
}

/* ------------------------------------------------------------ staged */

/* Convert into a new staging directory, then move its shards into place
 * (replacing the conflicts); discarded on failure. */
static int stage_and_commit(const in_opts *o, in_plan *p, long task, const in_notes *conflicts,
                            tfrec_imagenet_result *res, in_notes *fixed, in_notes *rejected)
{
    int lock = -1;
    char *staging = tfrec_in_staging_create(o->o.output_dir, task, &lock, &res->err);
    if (!staging)
        return res->err.code;
    int rc = tfrec_in_run_pool(o, p, staging, res, fixed, rejected);
    if (!rc)
        rc = tfrec_in_commit_staging(staging, o->o.output_dir, p, conflicts, &res->err);
    if (rc)
        tfrec_in_discard_staging(staging);
    close(lock);
    free(staging);
    return rc;
}

static int convert_staged(const in_opts *o, in_plan *p, tfrec_imagenet_result *res, in_notes *fixed,
                          in_notes *rejected)
{
    const char *out = o->o.output_dir;
    long task = o->o.num_tasks ? (long)o->o.task_index : -1;
    in_notes conflicts = { 0 };
    int rc = tfrec_in_remove_stale(out, task, &res->stale, &res->err);
    res->counts.stale_removed = (uint32_t)res->stale.n;
    if (!rc) {
        rc = tfrec_in_check_conflicts(out, p, &conflicts, &res->err);
        if (rc == TFREC_E_STATE && o->o.overwrite)
            rc = TFREC_OK; /* removed at the commit, once the new set is complete */
    }
    if (!rc)
        rc = tfrec_in_mkdir_p(out, &res->err);
    if (!rc)
        rc = stage_and_commit(o, p, task, &conflicts, res, fixed, rejected);
    tfrec_in_notes_free(&conflicts);
    return rc;
}

/* ------------------------------------------------------------ report */

/* A failed run's manifest never replaces an existing one: that one
 * describes the shards still in place (a refused rerun, a run that failed
 * on one image). Elsewhere than on local disk (a bucket) only a complete
 * set gets one. */
static int write_manifest(tfrec_imagenet_result *res, const in_opts *o, int rc)
{
    const char *path = o->o.manifest_path;
    if (!path || !res->json)
        return rc;
    struct stat st;
    int local = tfrec_in_is_local(o->fs, path);
    if (rc && !(local && stat(path, &st) != 0))
        return rc;
    int mrc = local ? tfrec_in_write_manifest_file(path, res->json, rc ? NULL : &res->err)
                    : tfrec_in_write_fs(o->fs, path, res->json, "the manifest", &res->err);
    if (!rc && mrc)
        res->status = rc = mrc;
    return rc;
}

/* The result's status, counts and manifest (a task's part too). */
static int report(tfrec_imagenet_result *res, const in_opts *o, const in_plan *p,
                  const in_notes *fixed, const in_notes *rejected, int rc, double t0)
{
    res->status = rc;
    if (rc) {
        /* Nothing was committed: the counts must not suggest otherwise. */
        res->counts.images_written = 0;
        res->counts.bytes_out = 0;
        res->counts.shards = 0;
    }
    res->counts.seconds = tfrec_in_now_s() - t0;
    tfrec_in_manifest_build(res, o, p, fixed, rejected);
    if (!rc && o->o.num_tasks) {
        rc = res->json ? tfrec_in_write_part(o, res->json, &res->err)
                       : tfrec_fail(&res->err, TFREC_E_NOMEM, "out of memory");
        res->status = rc;
    }
    rc = write_manifest(res, o, rc);
    if (rc)
        tfrec_fail(NULL, rc, "%s", res->err.msg); /* the thread slot too */
    return rc;
}

/* ------------------------------------------------------------ entry */

int tfrec_imagenet_convert(const tfrec_imagenet_options *opts, tfrec_imagenet_result **out)
{
    if (out)
        *out = NULL;
    tfrec_imagenet_result *res = calloc(1, sizeof *res);
    if (!res)
        return tfrec_fail(NULL, TFREC_E_NOMEM, "out of memory");
    double t0 = tfrec_in_now_s();
    in_opts o;
    in_plan plan;
    memset(&plan, 0, sizeof plan);
    in_notes fixed = { 0 }, rejected = { 0 };
    int rc = prepare(opts, &o, &plan, &rejected, res);
    if (!rc)
        rc = o.out_direct ? convert_direct(&o, &plan, res, &fixed, &rejected)
                          : convert_staged(&o, &plan, res, &fixed, &rejected);
    rc = report(res, &o, &plan, &fixed, &rejected, rc, t0);
    tfrec_in_notes_free(&fixed);
    res->rejected = rejected; /* kept for tfrec_imagenet_result_rejected() */
    tfrec_in_plan_free(&plan);
    tfrec_in_free_options(&o);
    if (out)
        *out = res;
    else
        tfrec_imagenet_result_free(res);
    return rc;
}

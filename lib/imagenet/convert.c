/* The conversion run: plan, then a pool of worker threads converting images
 * while the calling thread writes their records strictly in plan order.
 *
 * Workers claim plan positions in increasing order but only inside a window
 * ahead of the writer and within the in-flight byte budget (the position
 * the writer waits for is always allowed, so the run cannot stall). One
 * writer and one shard open at a time means shards never interleave and the
 * output bytes are the same for any thread count. Shards go to a staging
 * directory inside the output directory and are renamed into place only
 * when the whole run succeeded. */
#include "imagenet/run.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tfrec/image.h"
#include "tfrec/record.h"
#include "util/ioerr.h"
#include "util/struct_size.h"

TFREC_DEFINE_STRUCT_INIT(tfrec_imagenet_counts)

typedef struct slot {
    int ready;
    in_result r;
} slot;

typedef struct conv {
    const in_opts *o;
    const in_plan *plan;
    pthread_mutex_t mu;
    pthread_cond_t work_cv, done_cv;
    size_t next_claim, next_write, window;
    size_t item_begin, item_end; /* the plan positions this run converts */
    uint64_t inflight, budget;
    int stop;
    /* Who sleeps, so wake-ups (context switches, the main cost per image
     * after the copies) are only sent when someone waits for them. */
    int writer_waiting, workers_waiting;
    slot *ring;
    in_buf *pool; /* record buffers the writer is done with */
    size_t npool, pool_cap;
} conv;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------ workers */

static uint64_t cost(const conv *c, size_t i)
{
    uint64_t s = c->plan->order[i]->size;
    return s ? s : 1;
}

static void *worker_main(void *arg)
{
    conv *c = arg;
    tfrec_example_builder *b = NULL;
    in_buf buf = { 0 }, rec = { 0 };
    if (tfrec_example_builder_new(&b) != TFREC_OK)
        b = NULL; /* every image then fails with "out of memory" */
    size_t n = c->item_end;
    for (;;) {
        pthread_mutex_lock(&c->mu);
        size_t i;
        for (;;) {
            if (c->stop || c->next_claim >= n || tfrec_in_cancelled(c->o)) {
                pthread_mutex_unlock(&c->mu);
                tfrec_example_builder_free(b);
                free(buf.data);
                free(rec.data);
                return NULL;
            }
            i = c->next_claim;
            if (i < c->next_write + c->window &&
                (i == c->next_write || c->inflight + cost(c, i) <= c->budget))
                break;
            c->workers_waiting++;
            pthread_cond_wait(&c->work_cv, &c->mu);
            c->workers_waiting--;
        }
        c->next_claim++;
        c->inflight += cost(c, i);
        pthread_mutex_unlock(&c->mu);

        in_result r;
        tfrec_in_convert_item(c->plan->order[i], c->o, b, &buf, &rec, &r);

        pthread_mutex_lock(&c->mu);
        c->ring[i % c->window].r = r;
        c->ring[i % c->window].ready = 1;
        if (!rec.data && c->npool)
            rec = c->pool[--c->npool];
        if (c->writer_waiting && i == c->next_write)
            pthread_cond_signal(&c->done_cv);
        pthread_mutex_unlock(&c->mu);
    }
}

/* ------------------------------------------------------------ writer */

typedef struct wstate {
    conv *c;
    tfrec_imagenet_result *res;
    in_notes fixed, rejected;
    const char *staging; /* NULL: shards go straight to the caller's sinks */
    double last_progress;
} wstate;

static int report_progress(wstate *w, size_t done, int force)
{
    const tfrec_imagenet_options *x = &w->c->o->o;
    if (!x->progress)
        return 0;
    double t = now_s();
    if (!force && t - w->last_progress < 0.2)
        return 0;
    w->last_progress = t;
    /* A task counts its own images: done is a plan position. */
    return x->progress(x->progress_ctx, done - w->c->item_begin, w->c->item_end - w->c->item_begin,
                       w->res->counts.bytes_in, w->res->counts.bytes_out);
}

/* Wait for plan position i; the result moves out of the ring. */
static int take(wstate *w, size_t i, in_result *r)
{
    conv *c = w->c;
    pthread_mutex_lock(&c->mu);
    while (!c->ring[i % c->window].ready) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 200 * 1000 * 1000;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        c->writer_waiting = 1;
        pthread_cond_timedwait(&c->done_cv, &c->mu, &ts);
        c->writer_waiting = 0;
        if (!c->ring[i % c->window].ready) {
            pthread_mutex_unlock(&c->mu);
            if (tfrec_in_cancelled(c->o))
                return tfrec_fail(&w->res->err, TFREC_E_STATE, IN_CANCELLED_MSG);
            if (report_progress(w, i, 0))
                return tfrec_fail(&w->res->err, TFREC_E_STATE,
                                  "cancelled by the progress callback");
            pthread_mutex_lock(&c->mu);
        }
    }
    *r = c->ring[i % c->window].r;
    c->ring[i % c->window].ready = 0;
    c->next_write = i + 1;
    c->inflight -= cost(c, i);
    /* Wake waiting workers once a quarter of the window is free rather than
     * at every slot, so a full window does not cost two context switches
     * per image. A worker held back by the byte budget with the window
     * mostly empty is still woken at once. */
    if (c->workers_waiting && c->next_claim - c->next_write <= c->window - c->window / 4)
        pthread_cond_broadcast(&c->work_cv);
    pthread_mutex_unlock(&c->mu);
    return TFREC_OK;
}

/* The record buffer goes back to the workers; the rest is released. */
static void recycle(conv *c, in_result *r)
{
    if (r->record) {
        pthread_mutex_lock(&c->mu);
        if (c->npool < c->pool_cap) {
            c->pool[c->npool].data = r->record;
            c->pool[c->npool].cap = r->record_cap;
            c->npool++;
            r->record = NULL;
        }
        pthread_mutex_unlock(&c->mu);
    }
    tfrec_in_result_clear(r);
}

/* One image's result into the open shard (or the notes). */
static int place(wstate *w, tfrec_writer *tw, const in_item *it, in_result *r)
{
    tfrec_imagenet_result *res = w->res;
    res->counts.bytes_in += r->bytes_in;
    if (r->status != TFREC_OK) {
        res->counts.images_rejected++;
        if (tfrec_in_notes_add(&w->rejected, it->path, r->reason))
            return tfrec_fail(&res->err, TFREC_E_NOMEM, "out of memory");
        if (w->c->o->o.on_error == TFREC_ON_ERROR_SKIP)
            return TFREC_OK;
        return tfrec_fail(&res->err, r->status,
                          "%s: %s (use --on_error=skip to leave such images out)", it->path,
                          r->reason ? r->reason : "failed");
    }
    if (r->action != TFREC_IMAGE_KEPT) {
        res->counts.images_fixed++;
        if (tfrec_in_notes_add(&w->fixed, it->path, tfrec_in_fixed_from(r)))
            return tfrec_fail(&res->err, TFREC_E_NOMEM, "out of memory");
    }
    int rc = tfrec_writer_write(tw, r->record, r->record_len);
    if (rc)
        return tfrec_fail(&res->err, rc, "%s", tfrec_writer_errmsg(tw));
    res->counts.images_written++;
    return TFREC_OK;
}

static int write_shard(wstate *w, in_shard *sh)
{
    conv *c = w->c;
    tfrec_imagenet_result *res = w->res;
    const tfrec_imagenet_options *x = &c->o->o;
    char *path =
        w->staging ? tfrec_in_join(w->staging, sh->name) : tfrec_in_join(x->output_dir, sh->file);
    if (!path)
        return tfrec_fail(&res->err, TFREC_E_NOMEM, "out of memory");
    tfrec_writer_options wo = TFREC_WRITER_OPTIONS_INIT;
    wo.compression = x->compression;
    tfrec_writer *tw = NULL;
    int rc;
    if (w->staging && !x->num_tasks) {
        rc = tfrec_writer_open(&tw, path, &wo);
    } else {
        /* A task's part records each shard's CRC32C for the merge. */
        tfrec_io io = TFREC_IO_INIT;
        rc = w->staging ? tfrec_io_open_sink(&io, path)
                        : tfrec_fs_open_sink(c->o->out_fs, path, &io);
        if (!rc && x->num_tasks)
            rc = tfrec_in_crc_sink(&io, &sh->crc32c);
        if (!rc)
            rc = tfrec_writer_open_io(&tw, &io, path, &wo);
    }
    free(path);
    if (rc)
        return tfrec_fail(&res->err, rc, "%s", tfrec_last_errmsg());
    for (size_t i = sh->first; i < sh->first + sh->count && !rc; i++) {
        in_result r;
        rc = take(w, i, &r);
        if (rc) /* cancelled while waiting: r was never filled */
            break;
        rc = place(w, tw, c->plan->order[i], &r);
        recycle(c, &r);
        if (!rc && tfrec_in_cancelled(c->o))
            rc = tfrec_fail(&res->err, TFREC_E_STATE, IN_CANCELLED_MSG);
        if (!rc && report_progress(w, i + 1, 0))
            rc = tfrec_fail(&res->err, TFREC_E_STATE, "cancelled by the progress callback");
    }
    if (!rc) {
        rc = tfrec_writer_close(tw);
        if (rc)
            tfrec_fail(&res->err, rc, "%s", tfrec_writer_errmsg(tw));
    } else {
        tfrec_writer_abort(tw);
    }
    sh->records = tfrec_writer_records(tw);
    sh->bytes = tfrec_writer_bytes_out(tw);
    tfrec_writer_free(tw);
    if (!rc) {
        res->counts.bytes_out += sh->bytes;
        res->counts.shards++;
    }
    return rc;
}

static int run_pool(const in_opts *o, in_plan *p, const char *staging, tfrec_imagenet_result *res,
                    in_notes *fixed, in_notes *rejected)
{
    conv c;
    memset(&c, 0, sizeof c);
    c.o = o;
    c.plan = p;
    c.budget = o->o.max_inflight_bytes;
    tfrec_in_share_items(p, &c.item_begin, &c.item_end);
    c.next_claim = c.next_write = c.item_begin;
    /* Enough look-ahead to keep every worker busy behind a slow image. */
    c.window = (size_t)o->o.num_threads * 16 + 16;
    c.ring = calloc(c.window, sizeof *c.ring);
    c.pool_cap = c.window;
    c.pool = calloc(c.pool_cap, sizeof *c.pool);
    if (!c.ring || !c.pool) {
        free(c.ring);
        free(c.pool);
        return tfrec_fail(&res->err, TFREC_E_NOMEM, "out of memory");
    }
    pthread_mutex_init(&c.mu, NULL);
    pthread_cond_init(&c.work_cv, NULL);
    pthread_cond_init(&c.done_cv, NULL);
    int nthreads = o->o.num_threads, started = 0, rc = TFREC_OK;
    pthread_t *th = calloc((size_t)nthreads, sizeof *th);
    if (!th)
        rc = tfrec_fail(&res->err, TFREC_E_NOMEM, "out of memory");
    for (; !rc && started < nthreads; started++)
        if (pthread_create(&th[started], NULL, worker_main, &c) != 0)
            break;
    if (!rc && started == 0)
        rc = tfrec_fail(&res->err, TFREC_E_NOMEM, "cannot start worker threads");

    /* last_progress 0: the first record is reported at once. The rejected
     * list starts with what the scan left out. */
    wstate w = { &c, res, { 0 }, *rejected, staging, 0.0 };
    memset(rejected, 0, sizeof *rejected);
    for (size_t k = p->share_begin; !rc && k < p->share_end; k++)
        rc = write_shard(&w, &p->shards[k]);
    if (!rc)
        report_progress(&w, c.item_end, 1);

    pthread_mutex_lock(&c.mu);
    c.stop = 1;
    pthread_cond_broadcast(&c.work_cv);
    pthread_mutex_unlock(&c.mu);
    for (int t = 0; t < started; t++)
        pthread_join(th[t], NULL);
    for (size_t i = 0; i < c.window; i++)
        if (c.ring[i].ready)
            tfrec_in_result_clear(&c.ring[i].r);
    free(th);
    free(c.ring);
    for (size_t i = 0; i < c.npool; i++)
        free(c.pool[i].data);
    free(c.pool);
    pthread_mutex_destroy(&c.mu);
    pthread_cond_destroy(&c.work_cv);
    pthread_cond_destroy(&c.done_cv);
    *fixed = w.fixed;
    *rejected = w.rejected;
    return rc;
}

/* ------------------------------------------------------------ entry */

/* The shards a failed direct run had completed (the first counts.shards,
 * written in order) are removed, so that it leaves no partial set. */
static void remove_direct(const in_opts *o, const in_plan *p, uint32_t done)
{
    const tfrec_imagenet_options *x = &o->o;
    for (size_t k = p->share_begin; k < p->share_begin + done && k < p->share_end; k++) {
        char *f = tfrec_in_join(x->output_dir, p->shards[k].file);
        if (f)
            (void)tfrec_fs_remove(o->out_fs, f); /* no remove (a 1.0 sink alone): left */
        free(f);
    }
}

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

int tfrec_imagenet_convert(const tfrec_imagenet_options *opts, tfrec_imagenet_result **out)
{
    if (out)
        *out = NULL;
    tfrec_imagenet_result *res = calloc(1, sizeof *res);
    if (!res)
        return tfrec_fail(NULL, TFREC_E_NOMEM, "out of memory");
    double t0 = now_s();
    in_opts o;
    in_plan plan;
    memset(&plan, 0, sizeof plan);
    in_notes fixed = { 0 }, rejected = { 0 }, conflicts = { 0 };
    char *staging = NULL;
    int staging_lock = -1;
    int rc = tfrec_in_resolve_options(opts, &o, &res->err);
    if (!rc)
        rc = plan_run(&o, &plan, &res->err);
    /* Tarball members the scan left out (--on_error=skip) come first among
     * the rejected, and count as rejected images (of task 0 only, so that
     * merged parts count them once). */
    for (size_t i = 0; o.o.task_index == 0 && i < plan.skipped.n; i++)
        if (tfrec_in_notes_add(&rejected, plan.skipped.v[i], plan.skipped_why.v[i]) == TFREC_OK)
            res->counts.images_rejected++;
    res->counts.images_total = plan.nitems + plan.skipped.n;
    res->counts.shards_planned = (uint32_t)plan.nshards;
    res->counts.shards_begin = (uint32_t)plan.share_begin;
    res->counts.shards_end = (uint32_t)plan.share_end;
    res->counts.classes = (uint32_t)plan.nclasses;
    int direct = !rc && o.out_direct;
    /* A task re-run first drops its old part: a run that fails then leaves
     * none, and the merge names the task to run again. */
    if (!rc && o.o.num_tasks)
        tfrec_in_remove_part(&o);
    long task = o.o.num_tasks ? (long)o.o.task_index : -1;
    if (direct) {
        rc = run_pool(&o, &plan, NULL, res, &fixed, &rejected);
        if (rc)
            remove_direct(&o, &plan, res->counts.shards);
    }
    if (!rc && !direct)
        rc = tfrec_in_remove_stale(o.o.output_dir, task, &res->stale, &res->err);
    res->counts.stale_removed = (uint32_t)res->stale.n;
    if (!rc && !direct) {
        rc = tfrec_in_check_conflicts(o.o.output_dir, &plan, &conflicts, &res->err);
        if (rc == TFREC_E_STATE && o.o.overwrite)
            rc = TFREC_OK; /* removed at the commit, once the new set is complete */
    }
    if (!rc && !direct)
        rc = tfrec_in_mkdir_p(o.o.output_dir, &res->err);
    if (!rc && !direct) {
        staging = tfrec_in_staging_create(o.o.output_dir, task, &staging_lock, &res->err);
        if (!staging)
            rc = res->err.code;
        if (!rc) {
            rc = run_pool(&o, &plan, staging, res, &fixed, &rejected);
            if (!rc)
                rc = tfrec_in_commit_staging(staging, o.o.output_dir, &plan, &conflicts, &res->err);
            if (rc)
                tfrec_in_discard_staging(staging);
            close(staging_lock);
        }
    }
    tfrec_in_notes_free(&conflicts);
    res->status = rc;
    if (rc) {
        /* Nothing was committed: the counts must not suggest otherwise. */
        res->counts.images_written = 0;
        res->counts.bytes_out = 0;
        res->counts.shards = 0;
    }
    res->counts.seconds = now_s() - t0;
    tfrec_in_manifest_build(res, &o, &plan, &fixed, &rejected);
    if (!rc && o.o.num_tasks) {
        rc = res->json ? tfrec_in_write_part(&o, res->json, &res->err)
                       : tfrec_fail(&res->err, TFREC_E_NOMEM, "out of memory");
        res->status = rc;
    }
    /* A failed run's manifest never replaces an existing one: that one
     * describes the shards still in place (a refused rerun, a run that
     * failed on one image). */
    struct stat mst;
    int mlocal = tfrec_in_is_local(o.fs, o.o.manifest_path);
    if (o.o.manifest_path && res->json && (!rc || (mlocal && stat(o.o.manifest_path, &mst) != 0))) {
        /* Elsewhere (a bucket) only a complete set gets one. */
        int mrc =
            mlocal
                ? tfrec_in_write_manifest_file(o.o.manifest_path, res->json, rc ? NULL : &res->err)
                : tfrec_in_write_fs(o.fs, o.o.manifest_path, res->json, "the manifest", &res->err);
        if (!rc && mrc)
            res->status = rc = mrc;
    }
    if (rc)
        tfrec_fail(NULL, rc, "%s", res->err.msg); /* the thread slot too */
    tfrec_in_notes_free(&fixed);
    res->rejected = rejected; /* kept for tfrec_imagenet_result_rejected() */
    tfrec_in_plan_free(&plan);
    tfrec_in_free_options(&o);
    free(staging);
    if (out)
        *out = res;
    else
        tfrec_imagenet_result_free(res);
    return rc;
}

int tfrec_imagenet_result_status(const tfrec_imagenet_result *r)
{
    return r ? r->status : TFREC_E_INVALID;
}

const char *tfrec_imagenet_result_errmsg(const tfrec_imagenet_result *r)
{
    return r ? r->err.msg : tfrec_last_errmsg();
}

int tfrec_imagenet_result_counts(const tfrec_imagenet_result *r, tfrec_imagenet_counts *c)
{
    if (!r)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_imagenet_result_counts: NULL result");
    return TFREC_STRUCT_OUT(tfrec_imagenet_counts, c, &r->counts, NULL);
}

int tfrec_imagenet_result_rejected(const tfrec_imagenet_result *r, size_t i, const char **path,
                                   const char **reason)
{
    if (!r || i >= r->rejected.n)
        return TFREC_E_INVALID;
    if (path)
        *path = r->rejected.v[i].path;
    if (reason)
        *reason = r->rejected.v[i].what;
    return TFREC_OK;
}

int tfrec_imagenet_result_stale(const tfrec_imagenet_result *r, size_t i, const char **path)
{
    if (!r || i >= r->stale.n)
        return TFREC_E_INVALID;
    if (path)
        *path = r->stale.v[i].path;
    return TFREC_OK;
}

const char *tfrec_imagenet_result_json(const tfrec_imagenet_result *r)
{
    return r && r->json ? r->json : "";
}

void tfrec_imagenet_result_free(tfrec_imagenet_result *r)
{
    if (!r)
        return;
    free(r->json);
    tfrec_in_notes_free(&r->rejected);
    tfrec_in_notes_free(&r->stale);
    free(r);
}

/* The conversion pool: worker threads converting images while the
 * calling thread writes their records strictly in plan order.
 *
 * Workers claim plan positions in increasing order but only inside a window
 * ahead of the writer and within the in-flight byte budget (the position
 * the writer waits for is always allowed, so the run cannot stall). One
 * writer and one shard open at a time means shards never interleave and the
 * output bytes are the same for any thread count. Shards go to a staging
 * directory inside the output directory and are renamed into place only
 * when the whole run succeeded (convert.c); direct runs write them to their
 * destination at once. */
#include "imagenet/run.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tfrec/image.h"
#include "tfrec/record.h"

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

double tfrec_in_now_s(void)
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
    double t = tfrec_in_now_s();
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

/* The shard's writer: a local file in the staging directory, or the
 * destination's sink (direct). A task's part records each shard's CRC32C
 * for the merge, so a task's shard goes through a sink that sums it. */
static int open_shard(const wstate *w, in_shard *sh, tfrec_writer **tw)
{
    const in_opts *o = w->c->o;
    const tfrec_imagenet_options *x = &o->o;
    char *path =
        w->staging ? tfrec_in_join(w->staging, sh->name) : tfrec_in_join(x->output_dir, sh->file);
    if (!path)
        return tfrec_fail(&w->res->err, TFREC_E_NOMEM, "out of memory");
    tfrec_writer_options wo = TFREC_WRITER_OPTIONS_INIT;
    wo.compression = x->compression;
    int rc;
    if (w->staging && !x->num_tasks) {
        rc = tfrec_writer_open(tw, path, &wo);
    } else {
        tfrec_io io = TFREC_IO_INIT;
        rc = w->staging ? tfrec_io_open_sink(&io, path) : tfrec_fs_open_sink(o->out_fs, path, &io);
        if (!rc && x->num_tasks)
            rc = tfrec_in_crc_sink(&io, &sh->crc32c);
        if (!rc)
            rc = tfrec_writer_open_io(tw, &io, path, &wo);
    }
    free(path);
    return rc ? tfrec_fail(&w->res->err, rc, "%s", tfrec_last_errmsg()) : TFREC_OK;
}

static int write_shard(wstate *w, in_shard *sh)
{
    conv *c = w->c;
    tfrec_imagenet_result *res = w->res;
    tfrec_writer *tw = NULL;
    int rc = open_shard(w, sh, &tw);
    if (rc)
        return rc;
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

/* The shared state of the run over p's share, before any thread starts. */
static int conv_init(conv *c, const in_opts *o, const in_plan *p)
{
    memset(c, 0, sizeof *c);
    c->o = o;
    c->plan = p;
    c->budget = o->o.max_inflight_bytes;
    tfrec_in_share_items(p, &c->item_begin, &c->item_end);
    c->next_claim = c->next_write = c->item_begin;
    /* Enough look-ahead to keep every worker busy behind a slow image. */
    c->window = (size_t)o->o.num_threads * 16 + 16;
    c->ring = calloc(c->window, sizeof *c->ring);
    c->pool_cap = c->window;
    c->pool = calloc(c->pool_cap, sizeof *c->pool);
    if (!c->ring || !c->pool) {
        free(c->ring);
        free(c->pool);
        return TFREC_E_NOMEM;
    }
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->work_cv, NULL);
    pthread_cond_init(&c->done_cv, NULL);
    return TFREC_OK;
}

/* Stop the *started workers, then release everything. */
static void conv_stop_free(conv *c, pthread_t *th, int started)
{
    pthread_mutex_lock(&c->mu);
    c->stop = 1;
    pthread_cond_broadcast(&c->work_cv);
    pthread_mutex_unlock(&c->mu);
    for (int t = 0; t < started; t++)
        pthread_join(th[t], NULL);
    for (size_t i = 0; i < c->window; i++)
        if (c->ring[i].ready)
            tfrec_in_result_clear(&c->ring[i].r);
    free(th);
    free(c->ring);
    for (size_t i = 0; i < c->npool; i++)
        free(c->pool[i].data);
    free(c->pool);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->work_cv);
    pthread_cond_destroy(&c->done_cv);
}

int tfrec_in_run_pool(const in_opts *o, in_plan *p, const char *staging, tfrec_imagenet_result *res,
                      in_notes *fixed, in_notes *rejected)
{
    conv c;
    if (conv_init(&c, o, p))
        return tfrec_fail(&res->err, TFREC_E_NOMEM, "out of memory");
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

    conv_stop_free(&c, th, started);
    *fixed = w.fixed;
    *rejected = w.rejected;
    return rc;
}

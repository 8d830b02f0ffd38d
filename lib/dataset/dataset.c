/* Datasets over many files: indexes loaded or built at open, an epoch plan
 * (dataset/plan.c), and reader threads that fill blocks of records ahead
 * of the consumer within a byte budget.
 *
 * The plan is cut into blocks of block_records records. Threads claim
 * blocks in order and read them (a run of consecutive records of one file
 * in one read), the consumer takes them in order, so the records come out
 * in plan order whatever the number of threads. A thread may claim a block
 * only while the bytes claimed and not yet consumed stay within
 * prefetch_bytes, except the block the consumer waits for, which is always
 * allowed: a single record above the budget still gets through. A map
 * stage (an image decoder, say) runs on the threads right after a block
 * is read, so the consumer takes finished results.
 *
 * This file opens datasets, starts epochs and runs the consumer; the
 * threads are in dataset_threads.c, the thread-less DS_MAPPED reads in
 * dataset_mapped.c, the handle in dataset_internal.h. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfrec/task.h"

#include "dataset/dataset_internal.h"
#include "dataset/plan.h"
#include "io/io_util.h"
#include "util/big_buffer.h"
#include "util/struct_size.h"

TFREC_DEFINE_STRUCT_INIT(tfrec_dataset_options)

/* Indexes of every file at open, num_threads files at a time: scanning a
 * file without a fresh index reads it whole, and on gs:// each file also
 * waits for its server's first bytes. The lowest failing file's error is
 * the one reported, whatever the threads' timing. */
typedef struct index_job {
    tfrec_dataset *ds;
    const char *const *files;
    pthread_mutex_t mu;
    size_t next, failed; /* failed: lowest failing file, or nfiles */
    tfrec_err err;
} index_job;

/* The budget of kept bytes (ds_kept): prefetch_bytes in all. */
static int kept_grant(void *ctx, uint64_t n)
{
    tfrec_dataset *ds = ctx;
    pthread_mutex_lock(&ds->mu);
    int ok = n <= ds->o.prefetch_bytes - ds->kept_total;
    if (ok)
        ds->kept_total += n;
    pthread_mutex_unlock(&ds->mu);
    return ok ? 0 : -1;
}

static void kept_release(void *ctx, uint64_t n)
{
    tfrec_dataset *ds = ctx;
    pthread_mutex_lock(&ds->mu);
    ds->kept_total -= n;
    pthread_mutex_unlock(&ds->mu);
}

static void *index_main(void *arg)
{
    index_job *job = arg;
    tfrec_dataset *ds = job->ds;
    for (;;) {
        pthread_mutex_lock(&job->mu);
        size_t f = job->next < job->failed ? job->next++ : ds->nfiles;
        pthread_mutex_unlock(&job->mu);
        if (f >= ds->nfiles)
            return NULL;
        tfrec_err err = { 0 };
        tfrec_scan_keep keep = { kept_grant, kept_release, ds, NULL, 0, 0 };
        int rc = tfrec_index_for_source(&ds->ix[f], job->files[f], ds->o.index_policy, ds->fs,
                                        ds->o.max_record_size, ds->kept ? &keep : NULL, &err);
        if (keep.bytes) {
            ds->kept[f].p = keep.bytes;
            ds->kept[f].cap = keep.cap;
            ds->kept[f].left = keep.size;
        }
        if (rc < 0) {
            pthread_mutex_lock(&job->mu);
            if (f < job->failed) {
                job->failed = f;
                job->err = err;
            }
            pthread_mutex_unlock(&job->mu);
        }
    }
}

static int load_indexes(tfrec_dataset *ds, const char *const *files)
{
    index_job job = { .ds = ds, .files = files, .failed = ds->nfiles };
    pthread_mutex_init(&job.mu, NULL);
    size_t nt = ds->o.num_threads < ds->nfiles ? ds->o.num_threads : ds->nfiles, started = 0;
    pthread_t tid[MAX_THREADS];
    while (started + 1 < nt && pthread_create(&tid[started], NULL, index_main, &job) == 0)
        started++;
    index_main(&job); /* this thread is one of them */
    for (size_t t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
    pthread_mutex_destroy(&job.mu);
    if (job.failed < ds->nfiles)
        return tfrec_fail_copy(NULL, &job.err);
    for (size_t f = 0; f < ds->nfiles; f++)
        ds->cum[f + 1] = ds->cum[f] + ds->ix[f]->n;
    return TFREC_OK;
}

int tfrec_dataset_open(tfrec_dataset **out, const char *const *files, size_t n,
                       const tfrec_dataset_options *opts)
{
    if (out)
        *out = NULL;
    if (!out || (!files && n))
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_dataset_open: NULL argument");
    tfrec_dataset_options o;
    int rc = TFREC_STRUCT_IN(tfrec_dataset_options, &o, opts, NULL);
    if (rc)
        return rc;
    if (o.shard_auto) {
        if (o.shard_index || o.num_shards > 1)
            return tfrec_fail(NULL, TFREC_E_INVALID,
                              "dataset: shard_auto and shard_index/num_shards are exclusive");
        tfrec_task_identity id = TFREC_TASK_IDENTITY_INIT;
        if ((rc = tfrec_task_resolve(NULL, &id)) != TFREC_OK)
            return rc;
        o.shard_index = id.index;
        o.num_shards = id.count;
    }
    if (!o.num_shards)
        o.num_shards = 1;
    if (o.shard_index >= o.num_shards)
        return tfrec_fail(NULL, TFREC_E_INVALID,
                          "dataset: shard_index %u is not below num_shards %u", o.shard_index,
                          o.num_shards);
    if (o.index_policy < TFREC_INDEX_AUTO || o.index_policy > TFREC_INDEX_SCAN)
        return tfrec_fail(NULL, TFREC_E_INVALID, "dataset: unknown index_policy %d",
                          o.index_policy);
    if (o.use_mmap < -1 || o.use_mmap > 1)
        return tfrec_fail(NULL, TFREC_E_INVALID, "dataset: use_mmap must be -1, 0 or 1, not %d",
                          o.use_mmap);
    if (o.map && !o.map_size)
        return tfrec_fail(NULL, TFREC_E_INVALID, "dataset: a map stage needs a map_size");
    if ((o.shuffle_block || o.shuffle_buffer) && !o.shuffle)
        return tfrec_fail(NULL, TFREC_E_INVALID,
                          "dataset: shuffle_block and shuffle_buffer need shuffle");
    if (o.shuffle_buffer && o.shuffle_block < 2)
        return tfrec_fail(NULL, TFREC_E_INVALID,
                          "dataset: shuffle_buffer needs a shuffle_block of 2 or more");
    if (!o.num_threads)
        o.num_threads = DEFAULT_THREADS;
    if (o.num_threads > MAX_THREADS)
        return tfrec_fail(NULL, TFREC_E_INVALID, "dataset: num_threads %u is above %d",
                          o.num_threads, MAX_THREADS);
    if (!o.block_records)
        o.block_records = DEFAULT_BLOCK;
    if (!o.prefetch_bytes)
        o.prefetch_bytes = DEFAULT_PREFETCH;
    tfrec_dataset *ds = calloc(1, sizeof *ds);
    if (!ds)
        return tfrec_fail(NULL, TFREC_E_NOMEM, "dataset: out of memory");
    ds->o = o;
    ds->fs = o.open_source ? tfrec_fs_opener_init(&ds->shim, o.open_source, o.open_ctx) : o.fs;
    pthread_mutex_init(&ds->mu, NULL);
    pthread_cond_init(&ds->work, NULL);
    pthread_cond_init(&ds->ready, NULL);
    ds->nfiles = n;
    ds->names = calloc(n ? n : 1, sizeof *ds->names);
    ds->ix = calloc(n ? n : 1, sizeof *ds->ix);
    ds->cum = calloc(n + 1, sizeof *ds->cum);
    ds->ring_len = 2 * (size_t)o.num_threads + 2;
    ds->slots = calloc(ds->ring_len, sizeof *ds->slots);
    ds->workers = calloc(o.num_threads, sizeof *ds->workers);
    if (!ds->names || !ds->ix || !ds->cum || !ds->slots || !ds->workers) {
        tfrec_dataset_free(ds);
        return tfrec_fail(NULL, TFREC_E_NOMEM, "dataset: out of memory");
    }
    for (size_t f = 0; f < n; f++) {
        if (!files[f] || !(ds->names[f] = strdup(files[f]))) {
            tfrec_dataset_free(ds);
            return tfrec_fail(NULL, files[f] ? TFREC_E_NOMEM : TFREC_E_INVALID,
                              "dataset: file %zu: %s", f, files[f] ? "out of memory" : "NULL name");
        }
    }
    ds->block_bytes_max = BLOCK_BYTES;
    tfrec_fs t;
    if (n && tfrec_fs_resolve(ds->fs, files[0], "dataset", &t) == TFREC_OK && t.open_range &&
        t.open_source != tfrec_fs_local()->open_source)
        ds->block_bytes_max = REMOTE_BLOCK_BYTES, ds->remote = 1;
    /* Remote files the open scans are read whole: their bytes are kept
     * (within prefetch_bytes) for the first epoch, which would otherwise
     * fetch them again (bench/RESULTS.md, "gs:// datasets"). */
    if (ds->remote && !(ds->kept = calloc(n ? n : 1, sizeof *ds->kept))) {
        tfrec_dataset_free(ds);
        return tfrec_fail(NULL, TFREC_E_NOMEM, "dataset: out of memory");
    }
    if ((rc = load_indexes(ds, files)) < 0) {
        tfrec_dataset_free(ds);
        return rc;
    }
    uint64_t records = ds->cum[n], bytes = 0;
    for (size_t f = 0; f < n; f++)
        bytes += tfrec_index_data_size(ds->ix[f]);
    uint64_t mean = records && bytes / records ? bytes / records : 1;
    int small = mean <= LOCAL_SHUFFLE_MEAN_MAX;
    if (o.shuffle && !o.shuffle_block) {
        uint64_t target = ds->remote ? REMOTE_SHUFFLE_BLOCK_BYTES
                          : small    ? LOCAL_SHUFFLE_BLOCK_BYTES
                                     : 0;
        uint64_t bs = target / mean;
        if (target)
            ds->o.shuffle_block = bs < 2 ? 2 : bs > (1u << 20) ? 1u << 20 : (uint32_t)bs;
    }
    int mapped = o.use_mmap > 0 || (o.use_mmap == 0 && tfrec_io_mmap_random_default());
    ds->nworkers = o.num_threads;
    ds->nrunning = o.num_threads;
    /* A map stage runs on the threads, so it needs a mode that has them. */
    if (ds->o.shuffle_block > 1)
        ds->mode = !ds->remote && small && mapped && !o.map ? DS_MAPPED : DS_RUNS;
    else
        ds->mode = ds->remote && !o.shuffle ? DS_STREAMED : DS_BLOCKS;
    if (ds->mode == DS_MAPPED &&
        (!(ds->mapped_r = calloc(n ? n : 1, sizeof *ds->mapped_r)) ||
         !(ds->mapped_used = calloc(n ? n : 1, sizeof *ds->mapped_used)))) {
        tfrec_dataset_free(ds);
        return tfrec_fail(NULL, TFREC_E_NOMEM, "dataset: out of memory");
    }
    *out = ds;
    return TFREC_OK;
}

uint64_t tfrec_dataset_total_records(const tfrec_dataset *ds)
{
    return ds ? ds->cum[ds->nfiles] : 0;
}

uint64_t tfrec_dataset_shard_records(const tfrec_dataset *ds)
{
    if (!ds)
        return 0;
    uint64_t lo, hi;
    tfrec_ds_shard_range(ds->cum[ds->nfiles], ds->o.shard_index, ds->o.num_shards, &lo, &hi);
    return hi - lo;
}

int tfrec_dataset_start_epoch(tfrec_dataset *ds, uint64_t epoch)
{
    if (!ds)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_dataset_start_epoch: NULL dataset");
    ds_plan_in in = { ds->cum,
                      ds->nfiles,
                      ds->o.shuffle,
                      ds->o.seed,
                      epoch,
                      ds->o.shard_index,
                      ds->o.num_shards,
                      ds->o.block_records,
                      ds->o.shuffle_block,
                      ds->o.shuffle_buffer };
    uint64_t *items, nitems, *starts = NULL, nblocks = 0;
    ds_buffer sbuf;
    /* Block-shuffled (DS_RUNS), the threads read whole shuffle blocks in
     * the plan's order, each one read of consecutive records, and the
     * consumer runs the buffer. */
    if (tfrec_ds_plan(&in, &items, &nitems, &sbuf) < 0 ||
        (ds->mode == DS_MAPPED && tfrec_ds_buffer_apply(&items, nitems, &sbuf) < 0) ||
        !(starts = malloc((ds->mode == DS_MAPPED ? 1 : nitems + 1) * sizeof *starts)) ||
        tfrec_ds_shuffle_reserve(&ds->sbuf, &sbuf, nitems) < 0) {
        free(starts);
        free(items);
        return tfrec_fail(&ds->err, TFREC_E_NOMEM, "dataset: out of memory planning %llu records",
                          (unsigned long long)ds->cum[ds->nfiles]);
    }
    /* Cut the plan into blocks as ds->mode says (ds_mode). */
    int streamed = ds->mode == DS_STREAMED, runs = ds->mode == DS_RUNS;
    uint8_t *claimed = streamed ? calloc(nitems ? nitems : 1, 1) : NULL;
    if (streamed && !claimed) {
        free(items);
        free(starts);
        return tfrec_fail(&ds->err, TFREC_E_NOMEM, "dataset: out of memory planning %llu records",
                          (unsigned long long)ds->cum[ds->nfiles]);
    }
    size_t last_file = 0;
    /* DS_MAPPED has no blocks: the consumer reads items itself. */
    for (uint64_t i = 0, n = 0, bytes = 0; i < nitems && ds->mode != DS_MAPPED; i++) {
        size_t f = streamed || runs ? tfrec_ds_file_of(ds->cum, ds->nfiles, items[i]) : 0;
        if (n && (f != last_file || (runs && items[i] != items[i - 1] + 1)))
            n = 0, bytes = 0;
        last_file = f;
        if (n == 0)
            starts[nblocks++] = i;
        bytes += tfrec_ds_block_bytes(ds, &items[i], 1);
        if ((++n == ds->o.block_records && !streamed && !runs) || bytes >= ds->block_bytes_max)
            n = 0, bytes = 0;
    }
    starts[nblocks] = nitems;
    tfrec_ds_block_free(ds->cur);
    ds->cur = NULL;
    ds->cur_pos = 0;
    ds->sticky = 0;
    tfrec_ds_shuffle_start(&ds->sbuf, &sbuf, nitems);
    pthread_mutex_lock(&ds->mu);
    ds->generation++;
    ds->epoch = epoch;
    for (size_t i = 0; i < ds->ring_len; i++) {
        tfrec_ds_block_free(ds->slots[i]);
        ds->slots[i] = NULL;
    }
    free(ds->items);
    free(ds->block_start);
    free(ds->claimed);
    ds->claimed = claimed;
    ds->items = items;
    ds->nitems = nitems;
    ds->block_start = starts;
    ds->nblocks = nblocks;
    ds->next_claim = ds->next_out = 0;
    ds->buffered = 0;
    ds->fatal = 0;
    pthread_cond_broadcast(&ds->work);
    pthread_mutex_unlock(&ds->mu);
    ds->started_epoch = 1;
    ds->mapped_pos = 0;
    if (ds->mode == DS_MAPPED) /* the consumer reads: no threads */
        return TFREC_OK;
    for (size_t t = 0; t < ds->nworkers; t++) {
        ds_worker *w = &ds->workers[t];
        if (w->started)
            continue;
        w->ds = ds;
        if (pthread_create(&w->tid, NULL, tfrec_ds_worker_main, w) != 0) {
            if (t == 0)
                return tfrec_fail(&ds->err, TFREC_E_NOMEM, "dataset: cannot start a thread");
            pthread_mutex_lock(&ds->mu); /* fewer threads still work */
            ds->nrunning = t;
            pthread_cond_broadcast(&ds->work);
            pthread_mutex_unlock(&ds->mu);
            break;
        }
        w->started = 1;
    }
    return TFREC_OK;
}

/* Done with the current block: its buffers go back to the pool. */
static void release_block(tfrec_dataset *ds)
{
    pthread_mutex_lock(&ds->mu);
    ds->buffered -= ds->cur->size;
    ds->next_out++;
    if (ds->cur->bytes && ds->npool < ds->ring_len + ds->nworkers + 1) {
        ds->pool[ds->npool].p = ds->cur->bytes;
        ds->pool[ds->npool].cap = ds->cur->cap;
        ds->npool++;
        ds->cur->bytes = NULL;
    }
    pthread_cond_broadcast(&ds->work);
    pthread_mutex_unlock(&ds->mu);
    tfrec_ds_block_free(ds->cur);
    ds->cur = NULL;
}

/* Wait for the next block in read order (NULL at the end of the epoch). */
static int take_block(tfrec_dataset *ds)
{
    pthread_mutex_lock(&ds->mu);
    if (ds->next_out >= ds->nblocks) {
        tfrec_ds_kept_drop_all(ds);
        pthread_mutex_unlock(&ds->mu);
        return TFREC_END;
    }
    ds_block **slot = &ds->slots[ds->next_out % ds->ring_len];
    while (!*slot && !ds->fatal)
        pthread_cond_wait(&ds->ready, &ds->mu);
    if (!*slot) {
        pthread_mutex_unlock(&ds->mu);
        return ds->sticky = tfrec_fail(&ds->err, ds->fatal, "dataset: out of memory");
    }
    ds->cur = *slot;
    *slot = NULL;
    pthread_mutex_unlock(&ds->mu);
    ds->cur_pos = 0;
    ds->cur_at = 0;
    ds->dropped += ds->cur->dropped;
    return TFREC_OK;
}

/* The next record (or map result) in read order, from the blocks the
 * threads filled. A block's failure comes after the records it holds. */
static int next_input(void *ctx, const uint8_t **data, size_t *len, uint64_t *global)
{
    tfrec_dataset *ds = ctx;
    int rc;
    while (!ds->cur || ds->cur_pos == ds->cur->n) {
        if (ds->cur && ds->cur->code)
            return ds->sticky = tfrec_fail(&ds->err, ds->cur->code, "%s", ds->cur->msg);
        if (ds->cur)
            release_block(ds);
        if ((rc = take_block(ds)) != TFREC_OK)
            return rc;
    }
    ds_block *b = ds->cur;
    size_t pos = ds->cur_pos++;
    uint64_t g = b->items[pos];
    *global = g;
    if (ds->o.map) {
        *data = b->out + pos * ds->o.map_size;
        *len = ds->o.map_size;
        return TFREC_OK;
    }
    size_t f = tfrec_ds_file_of(ds->cum, ds->nfiles, g);
    uint64_t k = g - ds->cum[f];
    uint64_t framed = ds->ix[f]->start[k + 1] - ds->ix[f]->start[k];
    *data = b->bytes + ds->cur_at + 12;
    *len = (size_t)(framed - 16);
    ds->cur_at += framed;
    return TFREC_OK;
}

int tfrec_dataset_next(tfrec_dataset *ds, const uint8_t **data, size_t *len)
{
    if (!ds || !data || !len)
        return tfrec_fail(ds ? &ds->err : NULL, TFREC_E_INVALID,
                          "tfrec_dataset_next: NULL argument");
    if (ds->sticky)
        return tfrec_fail(NULL, ds->sticky, "%s", ds->err.msg);
    if (!ds->started_epoch) {
        int rc = tfrec_dataset_start_epoch(ds, 0);
        if (rc < 0)
            return rc;
    }
    uint64_t g;
    int rc;
    if (ds->sbuf.b.size) {
        ds_slot *x;
        if ((rc = tfrec_ds_shuffle_next(&ds->sbuf, next_input, ds, &x, &ds->err)) != TFREC_OK)
            return rc < 0 ? (ds->sticky = rc) : rc;
        *data = x->p;
        *len = x->len;
        g = x->g;
    } else if ((rc = ds->mode == DS_MAPPED ? tfrec_ds_next_mapped(ds, data, len, &g)
                                           : next_input(ds, data, len, &g)) != TFREC_OK) {
        return rc;
    }
    ds->last_file = tfrec_ds_file_of(ds->cum, ds->nfiles, g);
    ds->last_record = g - ds->cum[ds->last_file];
    return TFREC_OK;
}

int tfrec_dataset_position(const tfrec_dataset *ds, size_t *file, uint64_t *record)
{
    if (!ds || !file || !record)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_dataset_position: NULL argument");
    *file = ds->last_file;
    *record = ds->last_record;
    return TFREC_OK;
}

uint64_t tfrec_dataset_dropped(const tfrec_dataset *ds)
{
    return ds ? ds->dropped : 0;
}

const char *tfrec_dataset_errmsg(const tfrec_dataset *ds)
{
    return ds ? ds->err.msg : tfrec_last_errmsg();
}

void tfrec_dataset_free(tfrec_dataset *ds)
{
    if (!ds)
        return;
    pthread_mutex_lock(&ds->mu);
    ds->stop = 1;
    pthread_cond_broadcast(&ds->work);
    pthread_mutex_unlock(&ds->mu);
    for (size_t t = 0; t < ds->nworkers; t++)
        if (ds->workers[t].started)
            pthread_join(ds->workers[t].tid, NULL);
    tfrec_ds_kept_drop_all(ds);
    free(ds->kept);
    for (size_t f = 0; ds->mapped_r && f < ds->nfiles; f++)
        tfrec_random_reader_free(ds->mapped_r[f]);
    free(ds->mapped_r);
    free(ds->mapped_used);
    tfrec_ds_block_free(ds->cur);
    if (ds->slots)
        for (size_t i = 0; i < ds->ring_len; i++)
            tfrec_ds_block_free(ds->slots[i]);
    for (size_t f = 0; f < ds->nfiles; f++) {
        if (ds->names)
            free(ds->names[f]);
        if (ds->ix)
            tfrec_index_free(ds->ix[f]);
    }
    for (size_t i = 0; i < ds->npool; i++)
        free(ds->pool[i].p);
    tfrec_ds_shuffle_free(&ds->sbuf);
    pthread_mutex_destroy(&ds->mu);
    pthread_cond_destroy(&ds->work);
    pthread_cond_destroy(&ds->ready);
    free(ds->names);
    free(ds->ix);
    free(ds->cum);
    free(ds->slots);
    free(ds->workers);
    free(ds->items);
    free(ds->block_start);
    free(ds->claimed);
    free(ds);
}

/* The dataset's reader threads: each claims the next block it may (within
 * the byte budget), reads its records in one run per file (or copies them
 * from the bytes the open's scan kept), runs the map stage over them, and
 * hands the block to the consumer in plan order (dataset.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataset/dataset_internal.h"
#include "dataset/plan.h"
#include "util/big_buffer.h"

void tfrec_ds_block_free(ds_block *b)
{
    if (b) {
        free(b->bytes);
        free(b->out);
        free(b->items);
        free(b);
    }
}

uint64_t tfrec_ds_block_bytes(const tfrec_dataset *ds, const uint64_t *items, size_t n)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        size_t f = tfrec_ds_file_of(ds->cum, ds->nfiles, items[i]);
        uint64_t k = items[i] - ds->cum[f];
        sum += ds->ix[f]->start[k + 1] - ds->ix[f]->start[k];
    }
    return sum;
}

static int worker_reader(ds_worker *w, size_t f, tfrec_random_reader **out, tfrec_err *err)
{
    tfrec_dataset *ds = w->ds;
    ds_open_file *slot = &w->open[0];
    for (size_t i = 0; i < OPEN_PER_THREAD; i++) {
        if (w->open[i].r && w->open[i].file == f) {
            w->open[i].used = ++w->clock;
            tfrec_random_reader_stream(w->open[i].r, ds->mode == DS_STREAMED);
            *out = w->open[i].r;
            return TFREC_OK;
        }
        if (!w->open[i].r || w->open[i].used < slot->used)
            slot = &w->open[i];
        if (!w->open[i].r)
            break;
    }
    tfrec_random_reader_free(slot->r);
    slot->r = NULL;
    int rc = tfrec_random_reader_open_fs_shared(&slot->r, ds->fs, ds->names[f], ds->ix[f], NULL,
                                                ds->o.use_mmap);
    if (rc < 0)
        return tfrec_fail(err, rc, "%s", tfrec_last_errmsg());
    tfrec_random_reader_stream(slot->r, ds->mode == DS_STREAMED);
    slot->file = f;
    slot->used = ++w->clock;
    *out = slot->r;
    return TFREC_OK;
}

/* Free the kept bytes of file f if no thread copies from them. */
static void kept_free(tfrec_dataset *ds, size_t f)
{
    ds_kept *x = &ds->kept[f];
    if (x->p && !x->users) {
        tfrec_big_free(x->p, (size_t)x->cap);
        ds->kept_total -= x->cap;
        x->p = NULL;
    }
}

/* The first epoch is over (or the dataset is freed): what no thread is
 * copying goes now, the rest when its copy ends. */
void tfrec_ds_kept_drop_all(tfrec_dataset *ds)
{
    for (size_t f = 0; ds->kept && f < ds->nfiles; f++) {
        ds->kept[f].left = 0;
        kept_free(ds, f);
    }
}

/* Records k..k+count-1 of file f from the bytes its scan kept, checked as
 * a read is; 1 if they were not kept (or no longer are).
 * A file's bytes go once all of them were read. */
static int read_kept(tfrec_dataset *ds, size_t f, uint64_t k, uint64_t count, uint8_t *dst,
                     tfrec_err *err)
{
    if (!ds->kept)
        return 1;
    pthread_mutex_lock(&ds->mu);
    ds_kept *x = &ds->kept[f];
    const uint8_t *p = x->p;
    if (p)
        x->users++;
    pthread_mutex_unlock(&ds->mu);
    if (!p)
        return 1;
    const uint64_t *start = ds->ix[f]->start;
    uint64_t n = start[k + count] - start[k];
    memcpy(dst, p + start[k], (size_t)n);
    int rc = TFREC_OK;
    for (uint64_t i = k; i < k + count && rc == TFREC_OK; i++)
        rc = tfrec_frame_check(dst + (start[i] - start[k]), start[i + 1] - start[i], start[i],
                               ds->names[f], err);
    pthread_mutex_lock(&ds->mu);
    x->users--;
    x->left = x->left > n ? x->left - n : 0;
    if (!x->left)
        kept_free(ds, f);
    pthread_mutex_unlock(&ds->mu);
    return rc;
}

/* Read the block's records: each run of consecutive records of one file
 * is one read (or a copy from the bytes the open's scan kept). */
static void read_block(ds_worker *w, ds_block *b)
{
    tfrec_dataset *ds = w->ds;
    if (b->cap < b->size) {
        free(b->bytes);
        b->cap = (size_t)b->size;
        b->bytes = malloc(b->cap ? b->cap : 1);
    }
    if (!b->bytes) {
        b->code = TFREC_E_NOMEM;
        snprintf(b->msg, sizeof b->msg, "dataset: out of memory for a block of %llu bytes",
                 (unsigned long long)b->size);
        return;
    }
    uint64_t at = 0;
    for (size_t i = 0; i < b->n;) {
        size_t f = tfrec_ds_file_of(ds->cum, ds->nfiles, b->items[i]);
        size_t j = i + 1;
        while (j < b->n && b->items[j] == b->items[j - 1] + 1 && b->items[j] < ds->cum[f + 1])
            j++;
        uint64_t k = b->items[i] - ds->cum[f];
        tfrec_random_reader *r = NULL;
        tfrec_err err = { 0 };
        const uint8_t *where;
        int rc = read_kept(ds, f, k, j - i, b->bytes + at, &err);
        if (rc == 1 && (rc = worker_reader(w, f, &r, &err)) == TFREC_OK) {
            rc = tfrec_random_reader_span(r, k, j - i, b->bytes + at, &where);
            if (rc < 0)
                snprintf(err.msg, sizeof err.msg, "%s", tfrec_random_reader_errmsg(r));
        }
        if (rc < 0) {
            b->code = rc;
            b->n = 0;
            snprintf(b->msg, sizeof b->msg, "%s", err.msg);
            return;
        }
        at += ds->ix[f]->start[k + (j - i)] - ds->ix[f]->start[k];
        i = j;
    }
}

/* Run the map stage over a block that was read: results replace the
 * records, dropped records leave the block, and a failure ends the block
 * at the record that failed (those before it are still handed out). */
static void map_block(tfrec_dataset *ds, ds_block *b, uint64_t epoch)
{
    size_t m = ds->o.map_size;
    b->out = malloc(b->n ? b->n * m : 1);
    if (!b->out) {
        b->code = TFREC_E_NOMEM;
        snprintf(b->msg, sizeof b->msg, "dataset: out of memory for %zu mapped records", b->n);
        b->n = 0;
        return;
    }
    uint64_t at = 0;
    size_t kept = 0;
    for (size_t i = 0; i < b->n; i++) {
        uint64_t g = b->items[i];
        size_t f = tfrec_ds_file_of(ds->cum, ds->nfiles, g);
        uint64_t k = g - ds->cum[f], off = ds->ix[f]->start[k];
        uint64_t framed = ds->ix[f]->start[k + 1] - off;
        tfrec_dataset_record_ref ref = { f, k, off, g, epoch };
        int rc = ds->o.map(ds->o.map_ctx, b->bytes + at + 12, (size_t)(framed - 16), &ref,
                           b->out + kept * m);
        at += framed;
        if (rc == TFREC_DATASET_MAP_DROP) {
            b->dropped++;
            continue;
        }
        if (rc < 0) {
            b->code = rc;
            snprintf(b->msg, sizeof b->msg, "%s: record %llu at offset %llu: %s", ds->names[f],
                     (unsigned long long)k, (unsigned long long)off, tfrec_last_errmsg());
            break;
        }
        b->items[kept++] = g;
    }
    b->n = kept;
}

/* The next block this thread may read, or nblocks. In order, blocks are
 * taken in order by whichever thread is free. Streamed, a file's blocks
 * all go to one thread (file % threads), which then continues one request
 * over the whole file instead of one per block: the consumer takes blocks
 * in order, so the owners of the files in the window read in parallel. */
static uint64_t claim_block(const tfrec_dataset *ds, size_t self)
{
    uint64_t end =
        ds->next_out + ds->ring_len < ds->nblocks ? ds->next_out + ds->ring_len : ds->nblocks;
    if (ds->mode != DS_STREAMED)
        return ds->next_claim < end ? ds->next_claim : ds->nblocks;
    for (uint64_t j = ds->next_out; j < end; j++) {
        if (ds->claimed[j])
            continue;
        size_t f = tfrec_ds_file_of(ds->cum, ds->nfiles, ds->items[ds->block_start[j]]);
        if (f % ds->nrunning == self % ds->nrunning)
            return j;
    }
    return ds->nblocks;
}

void *tfrec_ds_worker_main(void *arg)
{
    ds_worker *w = arg;
    tfrec_dataset *ds = w->ds;
    size_t self = (size_t)(w - ds->workers);
    pthread_mutex_lock(&ds->mu);
    for (;;) {
        if (ds->stop)
            break;
        uint64_t j = claim_block(ds, self);
        if (j >= ds->nblocks) {
            pthread_cond_wait(&ds->work, &ds->mu);
            continue;
        }
        uint64_t first = ds->block_start[j];
        size_t n = (size_t)(ds->block_start[j + 1] - first);
        ds_block *b = calloc(1, sizeof *b);
        uint64_t *items = b ? malloc(n * sizeof *items) : NULL;
        if (!b || !items) { /* the consumer reports it */
            free(b);
            free(items);
            ds->fatal = TFREC_E_NOMEM;
            pthread_cond_broadcast(&ds->ready);
            pthread_cond_wait(&ds->work, &ds->mu);
            continue;
        }
        memcpy(items, ds->items + first, n * sizeof *items);
        b->items = items;
        b->n = n;
        b->size = tfrec_ds_block_bytes(ds, items, n) + (uint64_t)n * ds->o.map_size;
        if (j != ds->next_out && ds->buffered + b->size > ds->o.prefetch_bytes) {
            free(items);
            free(b);
            pthread_cond_wait(&ds->work, &ds->mu);
            continue;
        }
        if (ds->mode == DS_STREAMED)
            ds->claimed[j] = 1;
        else
            ds->next_claim++;
        ds->buffered += b->size;
        if (ds->npool) {
            ds->npool--;
            b->bytes = ds->pool[ds->npool].p;
            b->cap = ds->pool[ds->npool].cap;
        }
        uint64_t gen = ds->generation, epoch = ds->epoch;
        pthread_mutex_unlock(&ds->mu);
        read_block(w, b);
        if (ds->o.map && !b->code)
            map_block(ds, b, epoch);
        pthread_mutex_lock(&ds->mu);
        if (gen != ds->generation) { /* the epoch was restarted meanwhile */
            tfrec_ds_block_free(b);
            continue;
        }
        ds->slots[j % ds->ring_len] = b;
        pthread_cond_broadcast(&ds->ready);
    }
    pthread_mutex_unlock(&ds->mu);
    for (size_t i = 0; i < OPEN_PER_THREAD; i++)
        tfrec_random_reader_free(w->open[i].r);
    return NULL;
}

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
 * is read, so the consumer takes finished results. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfrec/task.h"

#include "dataset/index_internal.h"
#include "dataset/plan.h"
#include "dataset/random_internal.h"
#include "dataset/shuffle_buffer.h"
#include "fs/fs_internal.h"
#include "io/io_util.h"
#include "util/big_buffer.h"
#include "util/struct_size.h"

enum { DEFAULT_THREADS = 2, DEFAULT_BLOCK = 64, OPEN_PER_THREAD = 8, MAX_THREADS = 256 };
#define DEFAULT_PREFETCH (64u << 20)
/* A block also ends once it holds this many bytes: large records in
 * blocks of block_records would make each block a fresh multi-megabyte
 * allocation, and read-ahead coarse. */
#define BLOCK_BYTES (1u << 20)
/* The same for files of other file systems (gs://). In order, each file
 * there is read as one stream per epoch whatever the block size (see
 * claim_block); shuffled, each run of a block is one ranged read, and
 * every request pays the server's first-byte latency, so larger blocks
 * make fewer requests (bench/RESULTS.md, "gs:// datasets"). */
#define REMOTE_BLOCK_BYTES (8u << 20)
/* Shuffled on another file system without a shuffle_block: a block
 * shuffle of blocks of about this many bytes, each one ranged request of
 * the gs:// client's default size, instead of one request per record
 * (bench/RESULTS.md, "gs:// datasets"; quality in
 * docs/datasets.md). */
#define REMOTE_SHUFFLE_BLOCK_BYTES (2u << 20)
/* Shuffled local files of small records (LOCAL_SHUFFLE_MEAN_MAX or less
 * on average) without a shuffle_block: a block shuffle of blocks of about
 * this many bytes. Each block is one read of consecutive records, where a
 * global shuffle touches every record at a random place: from the page
 * cache that is several times slower per record (bench/RESULTS.md, "Local
 * shuffled reads"; quality in docs/datasets.md). Larger records cost about
 * the same either way, and keep the global shuffle. */
#define LOCAL_SHUFFLE_BLOCK_BYTES (64u << 10)
#define LOCAL_SHUFFLE_MEAN_MAX (16u << 10)

typedef struct ds_block {
    uint8_t *bytes;  /* framed records, back to back */
    size_t cap;      /* of bytes */
    uint64_t *items; /* global record numbers */
    size_t n;        /* records */
    uint64_t size;   /* bytes reserved against the budget */
    uint8_t *out;    /* with a map stage: n results of map_size bytes */
    size_t dropped;  /* records the map stage left out */
    int code;        /* nonzero: reading (or mapping) failed after the n records */
    char msg[TFREC_ERRMSG_MAX];
} ds_block;

/* How blocks are cut and claimed, fixed at open. */
typedef enum ds_mode {
    /* Blocks of block_records (or BLOCK_BYTES) in plan order, claimed in
     * order by any thread: local files in order or globally shuffled, and
     * a global shuffle elsewhere. */
    DS_BLOCKS,
    /* In order on another file system: blocks cut by bytes and where the
     * file changes, each belonging to the thread streaming its file
     * (claim_block). */
    DS_STREAMED,
    /* Block-shuffled (any file system): a block is one run of consecutive
     * records (a shuffle block, cut at block_bytes_max), one read (one
     * ranged request on gs://); the consumer runs the shuffle buffer. */
    DS_RUNS,
    /* Block-shuffled local files of small records, mapped: no threads and
     * no blocks; the consumer takes each record in place from the mapping,
     * in the delivery order (the buffer applied ahead). A thread hand-off
     * and a copy would cost more than the record itself from the page
     * cache (bench/RESULTS.md, "Local shuffled reads"). */
    DS_MAPPED,
} ds_mode;

/* A remote file's bytes kept from the open's scan (load_indexes), which
 * the first epoch reads instead of fetching the file again. cap: the
 * buffer's size (util/big_buffer.h); left: bytes not yet read; users:
 * threads copying from it. */
typedef struct ds_kept {
    uint8_t *p;
    uint64_t cap, left;
    int users;
} ds_kept;

typedef struct ds_open_file {
    size_t file;
    tfrec_random_reader *r;
    uint64_t used; /* LRU clock */
} ds_open_file;

typedef struct ds_worker {
    struct tfrec_dataset *ds;
    pthread_t tid;
    int started;
    ds_open_file open[OPEN_PER_THREAD];
    uint64_t clock;
} ds_worker;

struct tfrec_dataset {
    tfrec_dataset_options o;
    /* Where names are opened: o.fs, or the deprecated o.open_source as a
     * file system (shim), which takes precedence. */
    const tfrec_fs *fs;
    tfrec_fs_opener shim;
    char **names;
    tfrec_index **ix;
    size_t nfiles;
    uint64_t *cum;
    uint64_t block_bytes_max; /* BLOCK_BYTES, or REMOTE_BLOCK_BYTES */
    int remote;               /* files of another file system than the local one */
    ds_mode mode;
    /* Remote files' bytes kept by the open's scan, all within
     * prefetch_bytes (kept_total), until the first epoch read them or
     * ended; under mu. */
    ds_kept *kept;
    uint64_t kept_total;

    pthread_mutex_t mu;
    pthread_cond_t work, ready;
    int stop;
    int fatal;           /* a thread could not allocate a block: TFREC_E_NOMEM */
    uint64_t generation; /* bumped by every epoch start: older work is dropped */
    uint64_t epoch;      /* the epoch being read, for the map stage */
    uint64_t *items;     /* the epoch's plan */
    uint64_t nitems, nblocks, next_claim, next_out;
    uint64_t *block_start; /* block j is items [block_start[j], block_start[j + 1]) */
    /* DS_STREAMED: block j belongs to the thread streaming its file, and
     * threads claim out of order. */
    uint8_t *claimed; /* per block, when DS_STREAMED */
    size_t nrunning;  /* threads started (owners are file % nrunning) */
    ds_block **slots; /* ring of ring_len, block j at j % ring_len */
    size_t ring_len;
    uint64_t buffered;
    ds_worker *workers;
    size_t nworkers;
    /* Buffers of consumed blocks, kept for the next ones (as many as can
     * circulate: the ring, one per thread, the consumer's): fresh memory
     * costs a page fault per page, which on some virtual machines is
     * dearer than reading the records. */
    struct {
        uint8_t *p;
        size_t cap;
    } pool[3 * MAX_THREADS + 3];
    size_t npool;

    /* Consumer side (not shared). */
    int started_epoch;
    ds_block *cur;
    size_t cur_pos;  /* next record of cur */
    uint64_t cur_at; /* its byte offset in cur->bytes */
    size_t last_file;
    uint64_t last_record;
    uint64_t dropped; /* by the map stage, in blocks taken */
    int sticky;
    tfrec_err err;
    /* DS_MAPPED: the consumer's readers, per file (NULL: not open), at
     * most MAPPED_OPEN at once; and its place in items. */
    tfrec_random_reader **mapped_r;
    uint64_t *mapped_used, mapped_clock;
    size_t mapped_open;
    uint64_t mapped_pos;
    /* The epoch's shuffle buffer (DS_RUNS), consumer side. */
    ds_shuffle_buffer sbuf;
};

TFREC_DEFINE_STRUCT_INIT(tfrec_dataset_options)

static void block_free(ds_block *b)
{
    if (b) {
        free(b->bytes);
        free(b->out);
        free(b->items);
        free(b);
    }
}

static uint64_t block_bytes(const tfrec_dataset *ds, const uint64_t *items, size_t n)
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
static void kept_drop_all(tfrec_dataset *ds)
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

static void *worker_main(void *arg)
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
        b->size = block_bytes(ds, items, n) + (uint64_t)n * ds->o.map_size;
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
            block_free(b);
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
        bytes += block_bytes(ds, &items[i], 1);
        if ((++n == ds->o.block_records && !streamed && !runs) || bytes >= ds->block_bytes_max)
            n = 0, bytes = 0;
    }
    starts[nblocks] = nitems;
    block_free(ds->cur);
    ds->cur = NULL;
    ds->cur_pos = 0;
    ds->sticky = 0;
    tfrec_ds_shuffle_start(&ds->sbuf, &sbuf, nitems);
    pthread_mutex_lock(&ds->mu);
    ds->generation++;
    ds->epoch = epoch;
    for (size_t i = 0; i < ds->ring_len; i++) {
        block_free(ds->slots[i]);
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
        if (pthread_create(&w->tid, NULL, worker_main, w) != 0) {
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
    block_free(ds->cur);
    ds->cur = NULL;
}

/* Wait for the next block in read order (NULL at the end of the epoch). */
static int take_block(tfrec_dataset *ds)
{
    pthread_mutex_lock(&ds->mu);
    if (ds->next_out >= ds->nblocks) {
        kept_drop_all(ds);
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

/* DS_MAPPED: records this far ahead in the delivery order are fetched
 * into the cache while the consumer works on the current one. Each record
 * lies at an unpredictable place, and without this its first bytes wait
 * for memory, most of a small record's time (bench/RESULTS.md, "Local
 * shuffled reads"). */
/* The consumer keeps up to MAPPED_OPEN files open (a descriptor and a
 * mapping each): the records of the buffer's window come from the many
 * files its blocks were drawn from, and reopening one per record would
 * cost far more than the record. */
enum { MAPPED_AHEAD = 8, MAPPED_OPEN = 256 };

static void prefetch_mapped(const tfrec_dataset *ds, uint64_t g)
{
    size_t f = tfrec_ds_file_of(ds->cum, ds->nfiles, g);
    if (ds->mapped_r[f])
        tfrec_random_reader_prefetch(ds->mapped_r[f], g - ds->cum[f]);
}

static int mapped_reader(tfrec_dataset *ds, size_t f, tfrec_random_reader **out)
{
    ds->mapped_used[f] = ++ds->mapped_clock;
    if ((*out = ds->mapped_r[f]))
        return TFREC_OK;
    if (ds->mapped_open >= MAPPED_OPEN) { /* close the least recently used */
        size_t old = ds->nfiles;
        for (size_t i = 0; i < ds->nfiles; i++)
            if (ds->mapped_r[i] && (old == ds->nfiles || ds->mapped_used[i] < ds->mapped_used[old]))
                old = i;
        tfrec_random_reader_free(ds->mapped_r[old]);
        ds->mapped_r[old] = NULL;
        ds->mapped_open--;
    }
    int rc = tfrec_random_reader_open_fs_shared(&ds->mapped_r[f], ds->fs, ds->names[f], ds->ix[f],
                                                NULL, ds->o.use_mmap);
    if (rc < 0)
        return ds->sticky = tfrec_fail(&ds->err, rc, "%s", tfrec_last_errmsg());
    ds->mapped_open++;
    *out = ds->mapped_r[f];
    return TFREC_OK;
}

/* DS_MAPPED: the next record of the delivery order, in place. */
static int next_mapped(tfrec_dataset *ds, const uint8_t **data, size_t *len, uint64_t *global)
{
    if (ds->mapped_pos >= ds->nitems)
        return TFREC_END;
    uint64_t g = ds->items[ds->mapped_pos];
    size_t f = tfrec_ds_file_of(ds->cum, ds->nfiles, g);
    uint64_t k = g - ds->cum[f];
    if (ds->mapped_pos + MAPPED_AHEAD < ds->nitems)
        prefetch_mapped(ds, ds->items[ds->mapped_pos + MAPPED_AHEAD]);
    tfrec_random_reader *r;
    const uint8_t *where;
    int rc = mapped_reader(ds, f, &r);
    if (rc < 0)
        return rc;
    if ((rc = tfrec_random_reader_span(r, k, 1, NULL, &where)) < 0)
        return ds->sticky = tfrec_fail(&ds->err, rc, "%s", tfrec_random_reader_errmsg(r));
    ds->mapped_pos++;
    *data = where + 12;
    *len = (size_t)(ds->ix[f]->start[k + 1] - ds->ix[f]->start[k] - 16);
    *global = g;
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
    } else if ((rc = ds->mode == DS_MAPPED ? next_mapped(ds, data, len, &g)
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
    kept_drop_all(ds);
    free(ds->kept);
    for (size_t f = 0; ds->mapped_r && f < ds->nfiles; f++)
        tfrec_random_reader_free(ds->mapped_r[f]);
    free(ds->mapped_r);
    free(ds->mapped_used);
    block_free(ds->cur);
    if (ds->slots)
        for (size_t i = 0; i < ds->ring_len; i++)
            block_free(ds->slots[i]);
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

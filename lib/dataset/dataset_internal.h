/* Internal: the dataset's handle and blocks, shared by dataset.c (open,
 * epochs, the consumer), dataset_threads.c (the reader threads) and
 * dataset_mapped.c (the consumer's in-place reads of DS_MAPPED). */
#ifndef TFREC_DATASET_INTERNAL_H
#define TFREC_DATASET_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

#include "tfrec/dataset.h"

#include "dataset/index_internal.h"
#include "dataset/random_internal.h"
#include "dataset/shuffle_buffer.h"
#include "fs/fs_internal.h"
#include "util/errors.h"

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

/* dataset_threads.c */
void tfrec_ds_block_free(ds_block *b);
/* Bytes of the framed records items[0..n) (their runs' spans). */
uint64_t tfrec_ds_block_bytes(const tfrec_dataset *ds, const uint64_t *items, size_t n);
/* Frees every kept scan buffer; with mu held or no thread running. */
void tfrec_ds_kept_drop_all(tfrec_dataset *ds);
/* A reader thread's loop (pthread_create's start routine; arg: its ds_worker). */
void *tfrec_ds_worker_main(void *arg);

/* dataset_mapped.c: DS_MAPPED's next record of the delivery order, in place. */
int tfrec_ds_next_mapped(tfrec_dataset *ds, const uint8_t **data, size_t *len, uint64_t *global);

#endif

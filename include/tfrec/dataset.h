/* libtfrec: record indexes, random access and datasets over many files.
 *
 * An index lists where each record of an uncompressed TFRecord file lies:
 * the text format of NVIDIA DALI's tfrecord2idx and the Python `tfrecord`
 * package, one "OFFSET LENGTH\n" line per record (decimal; the offset of
 * the record's 12-byte header, the length of the whole framed record, 16
 * bytes more than its data). It lives next to the file as FILE.idx.
 *
 * An index is *fresh* for a file when its records tile the file exactly
 * (the first starts at 0, each starts where the previous ends, the last
 * ends at the file's size) and, for local files, FILE.idx was modified no
 * earlier than FILE. Anything else is stale and is never used for
 * counting; reading through an index still checks both CRCs of every
 * record and that its length field matches the index, so even an index
 * that passes these checks cannot make a read return the wrong bytes.
 *
 * Compressed (ZLIB, GZIP) files have no index: building one is
 * TFREC_E_UNSUPPORTED with a message saying so, and datasets refuse them.
 *
 * Thread safety: a tfrec_index is immutable once built and may be read by
 * any number of threads; the other handles belong to one thread at a time.
 */
#ifndef TFREC_DATASET_H
#define TFREC_DATASET_H

#include "common.h"

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "io.h"
#include "record.h"

TFREC_BEGIN_DECLS

/* ---------------------------------------------------------------- index */

typedef struct tfrec_index tfrec_index;

/* Read the rest of r (an uncompressed reader, CRCs checked) and index
 * every record. r is left at its end; the caller still frees it. */
int tfrec_index_build(tfrec_index **out, tfrec_reader *r);

/* Parse index text from src (owned from now on, closed before returning).
 * data_size is the size of the data file (negative: unknown); every entry
 * must lie inside it. Errors name the index and the line: a malformed line,
 * a record shorter than 16 bytes, one that overlaps or leaves a gap after
 * the previous one, one beyond the end of the data. Memory grows only with
 * the lines really read. */
int tfrec_index_load_io(tfrec_index **out, const tfrec_io *src, const char *name,
                        int64_t data_size);

/* The index of path (path.idx; any name of tfrec_fs_default()) if present and fresh:
 * TFREC_OK; TFREC_E_NOT_FOUND when there is no path.idx or it cannot be
 * opened (nor path examined); TFREC_E_STATE when it is stale (the message
 * says why); another code when it opens but cannot be read. */
int tfrec_index_load_fresh(tfrec_index **out, const char *path);
/* (since 1.1) The same through file system fs (NULL: the default). A file
 * system without modification times (gs://) is checked by tiling alone. */
int tfrec_fs_index_load_fresh(const struct tfrec_fs *fs, tfrec_index **out, const char *path);

/* (since 1.1) Nonzero when name, one of the matches of a glob pattern, is
 * the index beside another match: "X.idx" with X in matches[0..n), which
 * are sorted bytewise (as tfrec_fs_list hands them out). A pattern such as
 * "train-*" matches both the data and its indexes; the tools read only the
 * data of a pattern's matches (and of the names the shell expanded such a
 * pattern into), and read an X.idx named without its X. */
int tfrec_index_beside_match(const char *name, const char *const *matches, size_t n);

/* Write the index text to sink (owned from now on; committed on success,
 * discarded on failure). */
int tfrec_index_write_io(const tfrec_index *ix, const tfrec_io *sink, const char *name);

/* Build path.idx for path (any name of tfrec_fs_default(), e.g. gs://) at
 * CRC-checked read speed (written to a temporary name, renamed into place;
 * gs://: uploaded, appearing when complete). *records (may be
 * NULL) gets the count. */
int tfrec_index_file(const char *path, uint64_t *records);

uint64_t tfrec_index_records(const tfrec_index *ix);
/* Entry k: the header's offset and the framed length (data + 16). */
int tfrec_index_entry(const tfrec_index *ix, uint64_t k, uint64_t *offset, uint64_t *length);
/* The size of the data file the index describes (end of the last record). */
uint64_t tfrec_index_data_size(const tfrec_index *ix);
void tfrec_index_free(tfrec_index *ix);

/* Records in a file: from its index when present and fresh (*used_index = 1,
 * no data read), otherwise by reading it with its CRCs checked
 * (*used_index = 0). opts may be NULL; used_index may be NULL. */
int tfrec_reader_count(const char *path, const tfrec_reader_options *opts, uint64_t *count,
                       int *used_index);

/* --------------------------------------------------------- random access */

typedef struct tfrec_random_reader tfrec_random_reader;

/* Random access to the records of one uncompressed file through an index:
 * src must be able to seek (or be a local file, which is memory-mapped when
 * possible); ix becomes the reader's (also when this fails). */
int tfrec_random_reader_open_io(tfrec_random_reader **out, const tfrec_io *src, tfrec_index *ix,
                                const char *name);
/* A file with its fresh index, or an index built by scanning the file
 * when path.idx is absent or stale. path is any name of
 * tfrec_fs_default(); local files are read with pread() (or mapped), other
 * file systems (gs://, mem://) with one ranged read per record. */
int tfrec_random_reader_open(tfrec_random_reader **out, const char *path);
/* (since 1.1) The same through file system fs (NULL: the default). */
int tfrec_fs_random_reader_open(const struct tfrec_fs *fs, tfrec_random_reader **out,
                                const char *path);
uint64_t tfrec_random_reader_records(const tfrec_random_reader *r);
/* Record k: one positioned read of exactly its framed bytes, both CRCs and
 * the length field checked against the index. *data is valid until the
 * next call. k out of range is TFREC_E_INVALID. */
int tfrec_random_reader_read(tfrec_random_reader *r, uint64_t k, const uint8_t **data, size_t *len);
const char *tfrec_random_reader_errmsg(const tfrec_random_reader *r);
void tfrec_random_reader_free(tfrec_random_reader *r);

/* ---------------------------------------------------------------- dataset */

typedef struct tfrec_dataset tfrec_dataset;

enum tfrec_index_policy {
    TFREC_INDEX_AUTO = 0,    /* a fresh FILE.idx if there is one, else scan the file once */
    TFREC_INDEX_REQUIRE = 1, /* a missing or stale FILE.idx is an error */
    TFREC_INDEX_SCAN = 2     /* ignore index files: scan every file */
};

/* Opens a source by name (the data files, and their NAME.idx). Return
 * TFREC_OK with *io filled, TFREC_E_NOT_FOUND when the name does not exist,
 * or another negative code with tfrec_last_errmsg() set. Called from the
 * dataset's threads, up to num_threads at once: it must be thread-safe. */
typedef int (*tfrec_open_source_fn)(void *ctx, const char *name, tfrec_io *io);

/* (since 1.1) Where a record handed to a map stage lies: file index (into
 * files[]), record number in that file, offset of its header in the file,
 * its number in the dataset (files in order), and the epoch being read. */
typedef struct tfrec_dataset_record_ref {
    size_t file;
    uint64_t record;
    uint64_t offset;
    uint64_t global;
    uint64_t epoch;
} tfrec_dataset_record_ref;

/* (since 1.1) A map stage: turns one record into exactly map_size bytes at
 * out, on the dataset's reader threads (up to num_threads calls at once:
 * it must be thread-safe). Returns TFREC_OK, TFREC_DATASET_MAP_DROP to
 * leave the record out (counted, tfrec_dataset_dropped), or a negative
 * code with tfrec_last_errmsg() set, which the dataset reports naming the
 * file, record and offset. */
typedef int (*tfrec_dataset_map_fn)(void *ctx, const uint8_t *data, size_t len,
                                    const tfrec_dataset_record_ref *ref, uint8_t *out);
#define TFREC_DATASET_MAP_DROP 2

typedef struct tfrec_dataset_options {
    size_t struct_size;
    int shuffle;              /* [0] files interleaved in order; 1: shuffled (see
                                shuffle_block) */
    uint64_t seed;            /* shuffle seed [0]; each epoch's order is a function of
                                (seed, epoch) alone */
    uint32_t shard_index;     /* this worker [0] ... */
    uint32_t num_shards;      /* ... of this many [0 = 1] */
    uint32_t num_threads;     /* reader threads [0 = 2] */
    uint64_t prefetch_bytes;  /* record bytes read ahead at most [0 = 64 MiB] (a block
                                is always allowed, so progress never stops) */
    uint32_t block_records;   /* records per unit of work, and the interleave block
                                of each file when not shuffled [0 = 64] */
    int index_policy;         /* enum tfrec_index_policy [AUTO] */
    uint64_t max_record_size; /* [1 GiB] */
    /* Deprecated since 1.1, use fs. When set, takes precedence over fs:
     * files and their NAME.idx are opened through it (and, since it cannot
     * report modification times, indexes are checked by the tiling rule
     * alone). */
    tfrec_open_source_fn open_source;
    void *open_ctx;
    /* Local files: [0] a mapping for files of small records (16 KiB or
     * less on average) and pread() for others, unless TFREC_MMAP was set
     * at the first open of the process (1: always map, 0: never); 1: map
     * (saves a system call per record; see docs/datasets.md); -1: pread()
     * whatever the environment. */
    int use_mmap;
    /* (since 1.1) The file system the files and their NAME.idx are opened
     * through [NULL: tfrec_fs_default(): local paths and every registered
     * scheme, e.g. gs:// when libtfrec-storage is loaded]. Local files are
     * read with pread() (or a mapping); names of any other file system
     * with open_range: in order, each file as one stream per epoch (one
     * request), shuffled, one ranged read per block (see shuffle_block),
     * num_threads of them in flight. An index is fresh when it tiles the
     * data and, where the file system reports modification times (local,
     * mem://), is not older than the data. */
    const struct tfrec_fs *fs;
    /* (since 1.1) 1: this worker's shard_index and num_shards are the task
     * identity of the training job (tfrec_task_resolve: TF_CONFIG,
     * CLUSTER_SPEC, RANK/WORLD_SIZE, the Indexed Job; docs/training.md);
     * shard_index and num_shards must then be 0. */
    int shard_auto;
    /* (since 1.1) With shuffle: [0] a block shuffle of blocks of about
     * 64 KiB for local files whose records average 16 KiB or less, of
     * about 2 MiB for files of other file systems (below), else a global
     * shuffle; 1: a global shuffle; N > 1: a block
     * shuffle: the records of each file cut into blocks of N consecutive
     * records, the blocks permuted, the shard's part of that sequence read
     * block by block and passed through a shuffle buffer of
     * shuffle_buffer records [0 = 16 N]. Reads stay near each other
     * (faster from the page cache, one request per block on gs://); the
     * order is still a permutation that depends on (seed, epoch) alone.
     * Files of a file system other than the local one, shuffled with
     * shuffle_block 0, get N = about 2 MiB of records. Mapped local files
     * are then read in place by the consumer, without reader threads. Its
     * quality is measured in docs/datasets.md. */
    uint32_t shuffle_block;
    uint32_t shuffle_buffer;
    /* (since 1.1) A map stage run on the reader threads (NULL: none):
     * tfrec_dataset_next then hands out its map_size-byte results in the
     * records' order, and prefetch_bytes counts them too. */
    tfrec_dataset_map_fn map;
    void *map_ctx;
    size_t map_size;
} tfrec_dataset_options;

#define TFREC_DATASET_OPTIONS_INIT TFREC_STRUCT_INIT(tfrec_dataset_options)
void tfrec_dataset_options_init(tfrec_dataset_options *opts);

/* Open a dataset over files[0..n) (uncompressed TFRecord files): loads or
 * builds every index, then plans epochs. Sharding splits each epoch's
 * sequence of records into num_shards contiguous parts whose sizes differ by
 * at most one; the shards of one epoch are disjoint and cover every record.
 * With shuffle, the sequence is a permutation of every (file, record) pair
 * (SplitMix64 seeded from seed and epoch, Fisher-Yates), so every worker
 * given the same seed sees the same permutation and takes its part of it;
 * without, the records of the shard's files are interleaved block_records at
 * a time, file after file. */
int tfrec_dataset_open(tfrec_dataset **out, const char *const *files, size_t n,
                       const tfrec_dataset_options *opts);

/* Records in all files, and in this shard per epoch. */
uint64_t tfrec_dataset_total_records(const tfrec_dataset *ds);
uint64_t tfrec_dataset_shard_records(const tfrec_dataset *ds);

/* Start (or restart) an epoch; the first tfrec_dataset_next() starts
 * epoch 0 by itself. */
int tfrec_dataset_start_epoch(tfrec_dataset *ds, uint64_t epoch);

/* Next record of the epoch: TFREC_OK with *data and *len valid until the
 * next call, TFREC_END at the end of the epoch, or a negative code (a
 * record that fails its checks names its file and offset). */
int tfrec_dataset_next(tfrec_dataset *ds, const uint8_t **data, size_t *len);

/* Where the record last returned came from: file index (into files[]) and
 * record number in that file. */
int tfrec_dataset_position(const tfrec_dataset *ds, size_t *file, uint64_t *record);

/* (since 1.1) Records the map stage dropped among those read through so
 * far (all epochs). */
uint64_t tfrec_dataset_dropped(const tfrec_dataset *ds);

const char *tfrec_dataset_errmsg(const tfrec_dataset *ds);
/* Stops the reader threads and releases everything. NULL is a no-op. */
void tfrec_dataset_free(tfrec_dataset *ds);

TFREC_END_DECLS
#endif

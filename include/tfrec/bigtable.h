/* libtfrec: Cloud Bigtable client over the gRPC core C API.
 *
 * Three handles:
 *   tfrec_bt_client  one channel (plus an admin channel on demand) to
 *                    Bigtable or to the emulator named by BIGTABLE_EMULATOR_HOST
 *   tfrec_bt_writer  bulk loader: batches rows into MutateRows requests, keeps
 *                    several in flight, retries failed entries, reports the
 *                    rows that could not be written
 *   tfrec_bt_reader  row iterator over ReadRows (prefix, key ranges, key
 *                    list), split into parallel scans and worker shards
 *
 * Threads: a client may be shared by writers and readers on different
 * threads; each writer and reader must be used by one thread at a time.
 * The writer does its network work inside put/flush/close on the calling
 * thread (no background thread), so a slow caller only delays acknowledgements.
 *
 * Every options struct is valid with only struct_size set (its INIT macro;
 * defaults in brackets; see common.h). Every function taking a handle
 * returns TFREC_E_INVALID (or 0 / "" for getters) when it is NULL, and every
 * _free accepts NULL.
 */
#ifndef TFREC_BIGTABLE_H
#define TFREC_BIGTABLE_H

#include "common.h"

#include <stddef.h>
#include <stdint.h>

#include "batch.h"
#include "error.h"

TFREC_BEGIN_DECLS

/* ---------------------------------------------------------------- client */

typedef struct tfrec_bt_client tfrec_bt_client;

typedef struct tfrec_bt_client_options {
    size_t struct_size;
    const char *project;        /* [NULL: ask the GCE metadata server] */
    const char *instance;       /* required */
    const char *app_profile_id; /* [NULL: the instance's default profile] */
    /* "host:port" of the data API. [NULL: $BIGTABLE_EMULATOR_HOST (insecure)
     * if set, else bigtable.googleapis.com:443 with TLS and Google default
     * credentials]. An explicit endpoint is insecure when it is a loopback
     * address, TLS otherwise. */
    const char *endpoint;
    const char *admin_endpoint; /* [emulator host, else bigtableadmin.googleapis.com:443] */
    int64_t rpc_timeout_ms;     /* deadline of each RPC attempt [120000] */
    int64_t max_message_bytes;  /* channel send/receive limit [256 MiB] */
    /* Since 1.1. Google credentials file, a service-account key or
     * authorized_user [NULL: $GOOGLE_APPLICATION_CREDENTIALS, gcloud's
     * application-default file, the GCE metadata server]. Tokens come from
     * the process-wide source shared with the storage part
     * (docs/storage-auth.md). Unused on plain-text endpoints. */
    const char *credentials_file;
    /* Since 1.1. PEM file of the CAs to trust for TLS (private CAs,
     * TLS-inspecting proxies) [NULL: $TFREC_CA_BUNDLE, else gRPC's roots]. */
    const char *ca_bundle_file;
    /* Since 1.1. 1: TLS and tokens even to a loopback endpoint (a TLS
     * front or private endpoint on this machine) [0: TLS except to a
     * loopback endpoint or BIGTABLE_EMULATOR_HOST]. */
    int tls;
    /* Since 1.1. Quota and billing project of every call, sent as
     * x-goog-user-project with the token (so over TLS only)
     * [NULL: $TFREC_USER_PROJECT, else the credentials' own project]. */
    const char *user_project;
} tfrec_bt_client_options;

#define TFREC_BT_CLIENT_OPTIONS_INIT TFREC_STRUCT_INIT(tfrec_bt_client_options)
void tfrec_bt_client_options_init(tfrec_bt_client_options *opts);

int tfrec_bt_client_open(tfrec_bt_client **out, const tfrec_bt_client_options *opts);
/* Release the client; writers and readers opened on it must be freed first. */
void tfrec_bt_client_free(tfrec_bt_client *c);
const char *tfrec_bt_client_errmsg(const tfrec_bt_client *c);
/* The project in use (from options or the metadata server). */
const char *tfrec_bt_client_project(const tfrec_bt_client *c);
/* "host:port" of the data endpoint and whether it is the emulator. */
const char *tfrec_bt_client_endpoint(const tfrec_bt_client *c);
int tfrec_bt_client_is_emulator(const tfrec_bt_client *c);

/* Make sure `table` exists and has column family `family` (NULL: only the
 * table). With create != 0 whatever is missing is created; otherwise a
 * missing table or family is TFREC_E_NOT_FOUND with a message naming it and
 * the `cbt` command that creates it (the library's messages name no tool's
 * flags: a front end adds its own option, as tfrec2bt does --create_table).
 * An admin API refusal (PERMISSION_DENIED) is TFREC_E_NETWORK. */
int tfrec_bt_ensure_table(tfrec_bt_client *c, const char *table, const char *family, int create);

/* ---------------------------------------------------------------- writer */

typedef struct tfrec_bt_writer tfrec_bt_writer;

typedef struct tfrec_bt_writer_options {
    size_t struct_size;
    size_t batch_rows;         /* rows per MutateRows request [5000] */
    size_t batch_mutations;    /* cells per request, at most 99999 [99999] */
    size_t batch_bytes;        /* encoded request size [8 MiB]; a request the server
                                   refuses as too large is split and re-sent */
    int max_inflight;          /* concurrent MutateRows calls [2] */
    size_t max_buffered_bytes; /* put() blocks above this many unacknowledged bytes
                                   [(max_inflight + 1) * batch_bytes] */
    /* Cell timestamp in microseconds. [0: the time the writer was opened,
     * truncated to milliseconds, used for every cell, so a retried write
     * replaces the cell instead of adding a version]. -1: server time
     * (not idempotent: then failed entries are not retried). */
    int64_t timestamp_micros;
    int64_t retry_initial_ms; /* first backoff [100] */
    int64_t retry_max_ms;     /* backoff ceiling [5000] */
    double retry_multiplier;  /* [1.5] */
    int64_t retry_timeout_ms; /* give up on an entry this long after its first
                                   failure [600000]; < 0: never retry */
    /* After tfrec_bt_writer_stop: how long flush/close wait for the calls
     * in flight before cancelling them [10000]; < 0: cancel at once. */
    int64_t stop_timeout_ms;
    /* gRPC connections (TCP) the calls are spread over, each call on the
     * least busy one [max_inflight, at most 16; $TFREC_BT_CONNECTIONS
     * overrides the default]. One HTTP/2 connection makes the server read
     * every request through one connection reader; the Go client keeps a
     * pool of 4 for the same reason. */
    int connections;
} tfrec_bt_writer_options;

#define TFREC_BT_WRITER_OPTIONS_INIT TFREC_STRUCT_INIT(tfrec_bt_writer_options)
void tfrec_bt_writer_options_init(tfrec_bt_writer_options *opts);

typedef struct tfrec_bt_writer_stats {
    size_t struct_size;
    uint64_t rows_put;        /* rows accepted by put */
    uint64_t rows_acked;      /* rows the server acknowledged */
    uint64_t rows_failed;     /* rows given up on */
    uint64_t bytes_acked;     /* key + value bytes acknowledged */
    uint64_t requests;        /* MutateRows calls started */
    uint64_t retried_entries; /* entry re-sends after a retryable failure */
    uint64_t stream_failures; /* calls that failed as a whole */
    uint64_t splits;          /* requests split after a too-large refusal */
    uint64_t acked_prefix;    /* rows 0..acked_prefix-1 (put order) are all acknowledged */
} tfrec_bt_writer_stats;

#define TFREC_BT_WRITER_STATS_INIT TFREC_STRUCT_INIT(tfrec_bt_writer_stats)
void tfrec_bt_writer_stats_init(tfrec_bt_writer_stats *stats);

/* One cell to write: a plain value tuple, frozen (it never grows, so it has
 * no struct_size and arrays of it keep their stride). */
typedef struct tfrec_bt_cell_in {
    const void *qualifier;
    size_t qualifier_len;
    const void *value;
    size_t value_len;
} tfrec_bt_cell_in;

/* Write cells of `family` into `table` through client c (which must outlive
 * the writer). On failure *out is NULL and tfrec_last_errmsg() says why. */
int tfrec_bt_writer_open(tfrec_bt_writer **out, tfrec_bt_client *c, const char *table,
                         const char *family, const tfrec_bt_writer_options *opts);

/* Queue one row with one cell family:qualifier = value. `index` is the
 * caller's number for the row (e.g. record index), used in failure reports.
 * Data is copied. May block to send and to wait for acknowledgements.
 * Returns an error only for invalid input or when the writer is already
 * failed hard (unreachable server past the retry deadline ...). */
int tfrec_bt_writer_put(tfrec_bt_writer *w, const void *key, size_t key_len, const void *qualifier,
                        size_t qualifier_len, const void *value, size_t value_len, uint64_t index);
/* Queue one row with several cells. */
int tfrec_bt_writer_put_cells(tfrec_bt_writer *w, const void *key, size_t key_len,
                              const tfrec_bt_cell_in *cells, size_t ncells, uint64_t index);

/* Send everything queued and wait until every row is acknowledged or failed.
 * Returns TFREC_OK only if no row has failed so far. */
int tfrec_bt_writer_flush(tfrec_bt_writer *w);

/* Ask the writer to stop, from a signal handler or another thread
 * (async-signal-safe: it only sets a flag). A put waiting for room returns
 * soon, and put then refuses rows (TFREC_E_STATE); the next flush or close
 * starts no new call, fails the rows not yet sent, waits at most
 * stop_timeout_ms for the calls in flight, then cancels them and fails
 * their unacknowledged rows. So an interrupted load ends in bounded time
 * and the acknowledged prefix (tfrec_bt_writer_stats.acked_prefix) is exact. */
void tfrec_bt_writer_stop(tfrec_bt_writer *w);

/* Flush; afterwards the handle only answers stats / failed-row queries.
 * Returns TFREC_OK only if every row put was acknowledged. Does not release
 * the handle: tfrec_bt_writer_free() does. */
int tfrec_bt_writer_close(tfrec_bt_writer *w);
/* Release the writer; one not closed first fails what is still queued.
 * NULL is a no-op. */
void tfrec_bt_writer_free(tfrec_bt_writer *w);

/* Copy the counters into *stats (struct_size set by the caller). */
int tfrec_bt_writer_stats_get(const tfrec_bt_writer *w, tfrec_bt_writer_stats *stats);
const char *tfrec_bt_writer_errmsg(const tfrec_bt_writer *w);
/* The timestamp (micros) cells are written with, -1 for server time. */
int64_t tfrec_bt_writer_timestamp(const tfrec_bt_writer *w);

/* Rows given up on, in put order (once flush or close has returned).
 * For i < count: key (valid until free),
 * caller index, last gRPC status code and message. */
size_t tfrec_bt_writer_failed_count(const tfrec_bt_writer *w);
int tfrec_bt_writer_failed_row(const tfrec_bt_writer *w, size_t i, const uint8_t **key,
                               size_t *key_len, uint64_t *index, int *grpc_code,
                               const char **message);

/* ---------------------------------------------------------------- reader */

typedef struct tfrec_bt_reader tfrec_bt_reader;
/* A split plan shared by the workers of a sharded read (bigtable_plan.h). */
typedef struct tfrec_bt_plan tfrec_bt_plan;

/* A key range to read: a plain tuple, frozen (no struct_size, arrays of it
 * keep their stride). start NULL/empty: from the first row; end NULL/empty:
 * to the end of the table (then end_closed does not matter). */
typedef struct tfrec_bt_range {
    const void *start;
    size_t start_len;
    const void *end;
    size_t end_len;
    int start_open; /* 1: rows after start; 0: start itself included */
    int end_closed; /* 1: end itself included; 0: rows before end */
} tfrec_bt_range;

typedef struct tfrec_bt_read_options {
    size_t struct_size;
    const void *prefix;    /* rows whose key starts with prefix [all rows] */
    size_t prefix_len;     /* 0 with prefix != NULL: strlen(prefix) */
    const void *start_key; /* or a range: [start_key, end_key) ... */
    size_t start_key_len;
    const void *end_key; /* ... end_key NULL/empty: to the end of the table */
    size_t end_key_len;
    int64_t rows_limit; /* [0: no limit] */
    int all_versions;   /* [0: latest cell of each column only] */
    const char *family; /* only cells of this family [all] */
    /* Largest row accepted, counted as the memory it takes merged: key,
     * column names, labels, values and about 150 bytes per cell [256 MiB,
     * Bigtable's own row limit]. A larger row, or a cell whose announced
     * value_size alone would pass it, fails the scan with
     * TFREC_E_RECORD_TOO_LARGE naming the row; memory follows the bytes
     * received, never an announced size. */
    size_t max_row_bytes;
    /* Several ranges, read as their union (overlaps merged); intersected
     * with prefix / [start_key, end_key) when those are set too. */
    const tfrec_bt_range *ranges;
    size_t n_ranges;
    /* keys != NULL: exactly these rows (sorted and de-duplicated here; keys
     * outside prefix / [start_key, end_key) dropped); n_keys 0 reads
     * nothing. Not together with ranges. */
    const void *const *keys;
    const size_t *key_lens;
    size_t n_keys;
    /* With family: only cells of family:column (with all_versions 0, the
     * latest cell of that one column: one record per row). */
    const char *column;
    /* The row set is split into parallel_scans ranges of about equal size
     * at the table's SampleRowKeys boundaries (or split_keys), read by as
     * many concurrent ReadRows streams [1]. */
    int parallel_scans;
    /* Worker shard_index of num_shards [0 of 1]: the row set is split into
     * num_shards shares and this worker reads its one, itself split into
     * parallel_scans ranges. The workers' shares are disjoint and cover the
     * row set only when every worker cuts at the same keys, so a range
     * read with num_shards > 1 needs `plan` (made once, include/tfrec/
     * bigtable_plan.h) or split_keys, or sample_split = 1; without them
     * tfrec_bt_reader_open refuses (TFREC_E_INVALID). A key list is split
     * by count and needs none of them. */
    int shard_index;
    int num_shards;
    /* 0: rows in key order over all ranges (ranges ahead of the one being
     * returned are buffered up to max_buffer_bytes each, then paused and
     * resumed later); 1: rows as they arrive, key order only within each
     * range [0]. */
    int unordered;
    size_t max_buffer_bytes; /* per range [64 MiB] */
    /* Split points used instead of asking SampleRowKeys (sorted here; keys
     * outside the row set ignored). */
    const void *const *split_keys;
    const size_t *split_key_lens;
    size_t n_split_keys;
    /* A stream that fails with a retryable status (UNAVAILABLE, ABORTED,
     * DEADLINE_EXCEEDED, INTERNAL stream resets) is resumed after the last
     * row received, with jittered backoff from retry_initial_ms [100] to
     * 2 s, until no row has arrived for retry_timeout_ms [600000]. */
    int64_t retry_timeout_ms;
    int64_t retry_initial_ms;
    /* Since 1.1. The split plan every worker of a sharded read is given
     * (not owned; must outlive tfrec_bt_reader_open). The reader refuses a
     * plan made for another table, row set or shard count. Not together
     * with split_keys. [NULL] */
    const tfrec_bt_plan *plan;
    /* Since 1.1. 1: without plan or split_keys, let each worker of a
     * sharded read cut the row set at the SampleRowKeys answer it gets.
     * Answers differ between calls (tablets split and move; the emulator
     * samples at random), so the workers' shares may overlap or leave
     * rows out, silently: only for a table known not to change. [0] */
    int sample_split;
    /* Since 1.1. Shuffled reads for training: shuffle_ranges > 1 cuts this
     * worker's share into that many ranges and reads them in a random
     * order that depends only on shuffle_seed and shuffle_epoch, at most
     * parallel_scans at a time, rows as they arrive (unordered is implied;
     * tfrec_bt_row.range is the range's place in key order). Every row of
     * the share still comes exactly once. The cuts are split_keys when
     * given (with a plan too: then they only cut the share), else keys
     * spread evenly between the share's bounds (docs/bigtable.md,
     * "Shuffled reads"); never SampleRowKeys, so the same seed and epoch
     * give the same ranges in the same order. At most 65536. [0: off] */
    size_t shuffle_ranges;
    uint64_t shuffle_seed;
    uint64_t shuffle_epoch;
} tfrec_bt_read_options;

#define TFREC_BT_READ_OPTIONS_INIT TFREC_STRUCT_INIT(tfrec_bt_read_options)
void tfrec_bt_read_options_init(tfrec_bt_read_options *opts);

/* A cell of a row read back. The library sets struct_size to its own
 * sizeof: fields at or beyond a cell's struct_size do not exist in it. */
typedef struct tfrec_bt_cell {
    size_t struct_size;
    const char *family;
    const uint8_t *qualifier;
    size_t qualifier_len;
    int64_t timestamp_micros;
    const uint8_t *value;
    size_t value_len;
    /* The labels a filter's apply_label_transformer attached to the cell
     * (NUL-terminated; NULL when n_labels is 0, always so for the scans of
     * tfrec_bt_reader_open, which apply no such filter). */
    const char *const *labels;
    size_t n_labels;
} tfrec_bt_cell;

#define TFREC_BT_CELL_INIT TFREC_STRUCT_INIT(tfrec_bt_cell)
void tfrec_bt_cell_init(tfrec_bt_cell *cell);

/* A row read back, filled by tfrec_bt_reader_next into the caller's struct
 * (struct_size set by the caller). cells is an array of ncells pointers, so
 * tfrec_bt_cell can grow without changing how the array is walked. */
typedef struct tfrec_bt_row {
    size_t struct_size;
    const uint8_t *key;
    size_t key_len;
    const tfrec_bt_cell *const *cells;
    size_t ncells;
    /* Which of the reader's ranges the row belongs to: 0 .. ranges-1 in key
     * order (tfrec_bt_read_stats.ranges; parallel_scans of them, or
     * shuffle_ranges, some possibly empty). Worker shard_index's range i is range
     * shard_index * parallel_scans + i of the whole row set. */
    size_t range;
} tfrec_bt_row;

#define TFREC_BT_ROW_INIT TFREC_STRUCT_INIT(tfrec_bt_row)
void tfrec_bt_row_init(tfrec_bt_row *row);

int tfrec_bt_reader_open(tfrec_bt_reader **out, tfrec_bt_client *c, const char *table,
                         const tfrec_bt_read_options *opts);
/* Next complete row: TFREC_OK (row and its cells valid until the next
 * call), TFREC_END, or a negative code. Rows come in key order (with
 * unordered, in key order within each range). A stream that breaks with a
 * retryable status, or stays silent for the client's rpc_timeout_ms, is
 * resumed after the last row it delivered: every row comes exactly once.
 * A server never reached (nothing listening, no connection made, no
 * answer) is TFREC_E_NETWORK after at most 10 s (or retry_timeout_ms if
 * shorter), "cannot reach Bigtable at ENDPOINT: ... (tried for S s, N
 * attempts)", not retried for the whole retry_timeout_ms. */
int tfrec_bt_reader_next(tfrec_bt_reader *r, tfrec_bt_row *row);
/* (since 1.1) Many values per call, for bindings that pay per call: b is
 * emptied, then gets the value of the reader's column (the read options'
 * family and column, both required, else TFREC_E_INVALID) of the next
 * rows, one item per row, its offset the row's range
 * (tfrec_bt_row.range), until b holds max_values items or at least
 * max_bytes bytes (0: no limit for that one). Rows without the column are
 * skipped. Returns TFREC_OK with at least one item, TFREC_END (no items)
 * at the end of the scan, or a negative code with no items. A failure
 * after some rows returns those with TFREC_OK, and comes from the next
 * call. Each call may wait for the network until the batch is full. */
int tfrec_bt_reader_next_values(tfrec_bt_reader *r, tfrec_record_batch *b, size_t max_values,
                                size_t max_bytes);
/* (since 1.1) The same one value at a time, not copied: the next row's
 * value of the reader's column, valid until the next call (for large
 * values, where a copy costs more than a call). TFREC_OK, TFREC_END or a
 * negative code. */
int tfrec_bt_reader_next_value(tfrec_bt_reader *r, const uint8_t **value, size_t *len);
const char *tfrec_bt_reader_errmsg(const tfrec_bt_reader *r);
/* Ask a reader to stop, e.g. from a SIGINT handler (async-signal-safe: it
 * only sets a flag). A tfrec_bt_reader_next in progress, or the next one,
 * cancels the streams and returns TFREC_E_STATE ("stopped") within about a
 * quarter of a second; so does every later call. NULL is a no-op. */
void tfrec_bt_reader_stop(tfrec_bt_reader *r);

/* What a reader did so far. */
typedef struct tfrec_bt_read_stats {
    size_t struct_size;
    uint64_t rows;    /* rows returned */
    uint64_t bytes;   /* key + value bytes of the rows returned */
    uint64_t ranges;  /* ranges this reader scans (after planning) */
    uint64_t samples; /* SampleRowKeys boundaries the plan used */
    uint64_t streams; /* ReadRows calls started */
    uint64_t resumed; /* streams broken by a retryable status and resumed */
    uint64_t paused;  /* calls cancelled because their range's buffer was full */
} tfrec_bt_read_stats;

#define TFREC_BT_READ_STATS_INIT TFREC_STRUCT_INIT(tfrec_bt_read_stats)
void tfrec_bt_read_stats_init(tfrec_bt_read_stats *stats);
int tfrec_bt_reader_stats_get(const tfrec_bt_reader *r, tfrec_bt_read_stats *stats);

/* Release the reader (cancelling its stream). NULL is a no-op. */
void tfrec_bt_reader_free(tfrec_bt_reader *r);

/* ---------------------------------------------------------------- helpers */

/* Row key of the reference loader: prefix + index zero-padded to `width`
 * digits (width = tfrec_bt_key_width(num_records)). With reversed != 0 the
 * padded digits are written in reverse order, which spreads a sequential
 * load over the key space (see docs/bigtable.md). Returns the key length,
 * or the needed length if it does not fit in cap (buf untouched). */
size_t tfrec_bt_row_key(char *buf, size_t cap, const char *prefix, uint64_t index, int width,
                        int reversed);
/* Digits of num_records - 1 (at least 1); 10 when num_records is 0 (unset). */
int tfrec_bt_key_width(uint64_t num_records);

/* Name of a gRPC status code ("UNAVAILABLE"). */
const char *tfrec_bt_code_name(int grpc_code);

TFREC_END_DECLS
#endif

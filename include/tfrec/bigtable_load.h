/* libtfrec: load TFRecord files into Bigtable, one record per row, the way
 * tensorflow/tpu's tools/datasets/tfrecords_to_bigtable.py does: record i
 * of the files taken in the order given (i counted over all of them) becomes
 * row <row_prefix><i zero-padded to the key width> with one cell
 * <family>:<column> holding the record's bytes.
 *
 *   tfrec_bt_load_options o = TFREC_BT_LOAD_OPTIONS_INIT;
 *   o.row_prefix = "train_";
 *   o.num_records = 1281167;            // keys train_0000000 .. train_1281166
 *   tfrec_bt_load_stats st = TFREC_BT_LOAD_STATS_INIT;
 *   int rc = tfrec_bt_load(writer, files, nfiles, &o, &st);
 *   // st.next_index: every record below it is acknowledged; pass it as
 *   // o.start_index to resume after a failure or an interruption.
 *
 * The caller opens the client and the writer (tfrec_bt_writer_open), so it
 * chooses their options, and closes and frees them afterwards (the failed
 * rows stay readable from the writer).
 *
 * Growable structs: each starts with struct_size; initialise with the
 * _INIT macro or the _init() function. A NULL options pointer means the
 * defaults in brackets.
 */
#ifndef TFREC_BIGTABLE_LOAD_H
#define TFREC_BIGTABLE_LOAD_H

#include "common.h"

#include <stddef.h>
#include <stdint.h>

#include "bigtable.h"
#include "error.h"
#include "fs.h"
#include "io.h"

TFREC_BEGIN_DECLS

/* Figures of one tfrec_bt_load call. */
typedef struct tfrec_bt_load_stats {
    size_t struct_size;       /* sizeof(tfrec_bt_load_stats): TFREC_BT_LOAD_STATS_INIT */
    uint64_t records_read;    /* records put as rows (a dry run: counted) */
    uint64_t bytes_read;      /* their payload bytes */
    uint64_t records_skipped; /* records below start_index, read over without writing */
    uint64_t rows_acked;      /* rows of this call the server acknowledged */
    uint64_t bytes_acked;     /* their key + value bytes */
    uint64_t rows_failed;     /* rows of this call the writer gave up on */
    /* Every record below next_index is acknowledged (or was below
     * start_index): the point to resume from. */
    uint64_t next_index;
    double seconds; /* wall time of the call so far */
    /* When the writer stopped after failures (the server gone, say), the
     * records from there on are still read, to count them, but not sent:
     * the rows not written are rows_failed + records_not_sent, and they
     * are exactly the records from next_index on that were not acknowledged. */
    uint64_t records_not_sent;
    int input_left; /* 1: num_records ended the load before the end of the input */
    /* The records this call was to load: [share_begin, share_end) of the
     * global sequence (the whole load: 0 and num_records, or UINT64_MAX
     * when num_records is 0), and total_records, the count the task
     * shares were cut from (0 when not split into tasks). */
    uint64_t share_begin, share_end;
    uint64_t total_records;
    int total_source;       /* enum tfrec_bt_load_total: where total_records came from */
    uint64_t files_indexed; /* files whose record count came from a fresh FILE.idx */
    uint64_t files_counted; /* files read through only to count their records */
    /* Files passed over whole, unopened, because their records (counted,
     * or listed by a fresh index) all lie below the first one to load. */
    uint64_t files_skipped;
} tfrec_bt_load_stats;

/* Where a split load's total_records came from. */
enum tfrec_bt_load_total {
    TFREC_BT_TOTAL_NONE = 0,    /* not split into tasks */
    TFREC_BT_TOTAL_GIVEN = 1,   /* num_records */
    TFREC_BT_TOTAL_INDEXES = 2, /* counted: every file had a fresh FILE.idx */
    TFREC_BT_TOTAL_READ = 3     /* counted: at least one file read through to count it */
};

#define TFREC_BT_LOAD_STATS_INIT TFREC_STRUCT_INIT(tfrec_bt_load_stats)
void tfrec_bt_load_stats_init(tfrec_bt_load_stats *s);

/* What a progress callback sees; valid during the call only. */
typedef struct tfrec_bt_load_progress {
    size_t struct_size;               /* set by the library */
    const tfrec_bt_load_stats *stats; /* the figures so far */
    size_t file_index;                /* index of the file being read; nfiles at the end */
    const char *file;                 /* its name; NULL at the end */
    int done;                         /* 1 on the last call: everything put is resolved */
} tfrec_bt_load_progress;

/* Called on the loading thread at most every progress_interval seconds
 * while reading (and while counting the records of a load split into
 * tasks), and once more at the end (done = 1). A non-zero return
 * stops the load: no further record is put, what was put is flushed, and
 * tfrec_bt_load returns TFREC_E_STATE (the stats say what is acknowledged).
 * A writer stopped with tfrec_bt_writer_stop (a signal handler, say) ends
 * the load the same way, with the writer's bounded wait instead of a full
 * flush. */
typedef int (*tfrec_bt_load_progress_fn)(void *ctx, const tfrec_bt_load_progress *p);

typedef struct tfrec_bt_load_options {
    size_t struct_size;     /* sizeof(tfrec_bt_load_options): TFREC_BT_LOAD_OPTIONS_INIT */
    const char *row_prefix; /* start of every row key [NULL: none; the reference's is "train_"] */
    const char *column;     /* cell qualifier [NULL: "example"] */
    /* At most this many records are loaded, and keys are padded to the
     * digits of num_records - 1, as the reference does [0: every record,
     * 10 digits]. */
    uint64_t num_records;
    /* Records below this index are read (their keys keep their index) but
     * not written: resume after a run that acknowledged them [0]. */
    uint64_t start_index;
    int key_width;            /* digits of the index [0: tfrec_bt_key_width(num_records)] */
    int reversed_keys;        /* padded digits written backwards (see tfrec_bt_row_key) [0] */
    double max_rows_per_sec;  /* throttle [0: unlimited] */
    int compression;          /* tfrec_compression of the files [AUTO: detected per file] */
    uint64_t max_record_size; /* refuse longer records [the reader's default, 1 GiB] */
    double progress_interval; /* seconds between progress calls [0.25]; < 0: every record */
    tfrec_bt_load_progress_fn progress; /* [NULL] */
    void *progress_ctx;
    /* Deprecated since 1.1, use fs. When set, takes precedence over fs:
     * opens each file as a byte source (set up with TFREC_IO_INIT);
     * open_ctx is passed along; on failure it returns a negative code with
     * the message in tfrec_last_errmsg(). */
    int (*open_source)(void *open_ctx, tfrec_io *io, const char *name);
    void *open_ctx;
    /* Split the load into num_tasks tasks (include/tfrec/task.h) and load
     * only task task_index's share: records [begin, end) of
     * tfrec_task_share(total, task_index, num_tasks), total being
     * num_records when set, else the records of all the files (counted
     * from fresh FILE.idx indexes where there are, else by reading the
     * files). Keys are the ones a single call writes for the same records
     * (width from num_records, not from the share); start_index still
     * skips (a resume point inside the share). Files wholly before the
     * share are not opened when their counts are known. [0 or 1: one task] */
    uint32_t task_index;
    uint32_t num_tasks;
    /* (since 1.1) The file system the files (and their FILE.idx) are read
     * through [NULL: tfrec_fs_default(): local paths, "-", gs:// when
     * libtfrec-storage is loaded or registered; include/tfrec/fs.h]. */
    const struct tfrec_fs *fs;
} tfrec_bt_load_options;

#define TFREC_BT_LOAD_OPTIONS_INIT TFREC_STRUCT_INIT(tfrec_bt_load_options)
void tfrec_bt_load_options_init(tfrec_bt_load_options *o);

/* Load the records of files[0..nfiles) through writer w (w NULL: a dry
 * run that reads and frame-checks the files and counts what would be
 * written). Before returning, whatever stopped it, everything already put
 * is flushed (acknowledged or failed), so stats->next_index is final.
 * Returns TFREC_OK when every record was written and acknowledged; a
 * reader's code for a file that cannot be opened or a corrupt record (the
 * message names the file, the byte offset and the row the record would
 * have been); TFREC_E_STATE when the progress callback stopped it; else
 * the writer's code (rows not written: tfrec_bt_writer_failed_row). The
 * message is in tfrec_last_errmsg(). stats (may be NULL) is filled in
 * every case. */
int tfrec_bt_load(tfrec_bt_writer *w, const char *const *files, size_t nfiles,
                  const tfrec_bt_load_options *opts, tfrec_bt_load_stats *stats);

TFREC_END_DECLS
#endif

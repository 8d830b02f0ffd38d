/* libtfrec: export rows of a Bigtable table into TFRecord files, one record
 * per row (the latest cell of family:column), in key order; the loop
 * bt2tfrec and tfrec.distributed.export_bigtable both run.
 *
 *   tfrec_bt_read_options ro = TFREC_BT_READ_OPTIONS_INIT;
 *   ro.prefix = "train_";
 *   ro.num_shards = 8; ro.shard_index = i; ro.plan = plan;   // bigtable_plan.h
 *   tfrec_bt_export_options eo = TFREC_BT_EXPORT_OPTIONS_INIT;
 *   tfrec_bt_export_stats st = TFREC_BT_EXPORT_STATS_INIT;
 *   int rc = tfrec_bt_export(client, "imagenet", "/out/train", &ro, &eo, &st);
 *
 * Outputs (tfrec_bt_export_output_name): OUTPUT itself for one task and
 * one file; OUTPUT-iiiii-of-nnnnn numbered by task for task i of n; with
 * output_shards one file per parallel scan, numbered over every task's
 * scans. Each is written under a temporary name and appears only complete.
 * Unless no_part_file (or the output is "-", or the rows are a key list,
 * which has no range shares), the task then writes its part file,
 * OUTPUT.part-iiiii-of-nnnnn (tfrec_bt_export_part_name): the plan it ran
 * (table, row set, shard count, plan id), the bounds of its share, its row
 * count and bytes, and each output's name, size, records and CRC32C.
 * tfrec_bt_export_check reads every task's part file and checks that the
 * shares tile the row set with no gap or overlap and that every output is
 * there with its size and CRC32C, naming the task to run again otherwise.
 *
 * A row without the cell is an error by default (TFREC_E_NOT_FOUND naming
 * the row key; nothing is written); missing_cell = TFREC_BT_MISSING_CELL_SKIP
 * skips it and counts it in rows_skipped.
 */
#ifndef TFREC_BIGTABLE_EXPORT_H
#define TFREC_BIGTABLE_EXPORT_H

#include "common.h"

#include <stddef.h>
#include <stdint.h>

#include "bigtable.h"
#include "bigtable_plan.h"
#include "fs.h"

TFREC_BEGIN_DECLS

enum tfrec_bt_missing_cell {
    TFREC_BT_MISSING_CELL_ERROR = 0, /* fail naming the row key */
    TFREC_BT_MISSING_CELL_SKIP = 1   /* skip the row, count it */
};

typedef struct tfrec_bt_export_stats {
    size_t struct_size;
    uint64_t rows;         /* records written */
    uint64_t bytes;        /* their payload bytes */
    uint64_t rows_skipped; /* rows without the cell, skipped */
    uint64_t outputs;      /* files committed */
    double seconds;
    uint64_t ranges; /* the reader's (tfrec_bt_read_stats) */
    uint64_t samples;
    uint64_t streams;
    uint64_t resumed;
} tfrec_bt_export_stats;

#define TFREC_BT_EXPORT_STATS_INIT TFREC_STRUCT_INIT(tfrec_bt_export_stats)
void tfrec_bt_export_stats_init(tfrec_bt_export_stats *s);

/* Called on the exporting thread every progress_interval seconds; a
 * non-zero return stops the export (TFREC_E_STATE; no output kept). */
typedef int (*tfrec_bt_export_progress_fn)(void *ctx, const tfrec_bt_export_stats *st);

typedef struct tfrec_bt_export_options {
    size_t struct_size;
    const char *family;       /* [tfexample] */
    const char *column;       /* [example] */
    int missing_cell;         /* enum tfrec_bt_missing_cell [ERROR] */
    int compression;          /* tfrec_compression of the outputs [NONE] */
    int output_shards;        /* one output per parallel scan [0: one per task] */
    const char *keys_output;  /* also write each row key on its own line here [NULL] */
    int no_part_file;         /* 1: no part file [0] */
    double progress_interval; /* seconds [0.25] */
    tfrec_bt_export_progress_fn progress;
    void *progress_ctx;
    /* The file system every file of the export (outputs, keys, the part
     * file) is written through (include/tfrec/fs.h) [NULL:
     * tfrec_fs_default(): local paths, "-", gs:// with the storage part
     * loaded, mem://]. */
    const tfrec_fs *fs;
    /* Called with the export's reader once it is open, and with NULL
     * before it is freed: a signal handler may tfrec_bt_reader_stop() it
     * in between, so that a read waiting on a silent server ends soon
     * (the export then fails with TFREC_E_STATE, no output kept). [NULL] */
    void (*on_reader)(void *reader_ctx, tfrec_bt_reader *r);
    void *reader_ctx;
} tfrec_bt_export_options;

#define TFREC_BT_EXPORT_OPTIONS_INIT TFREC_STRUCT_INIT(tfrec_bt_export_options)
void tfrec_bt_export_options_init(tfrec_bt_export_options *o);

/* Export the rows read (shard, plan, row set, rows_limit, parallel_scans
 * ... from read; its family and column are replaced by the export's) into
 * the outputs named from output. TFREC_OK when every output and the part
 * file are written; otherwise no output of this call is left (the part
 * file never is) and tfrec_last_errmsg() says why. stats may be NULL. */
int tfrec_bt_export(tfrec_bt_client *c, const char *table, const char *output,
                    const tfrec_bt_read_options *read, const tfrec_bt_export_options *opts,
                    tfrec_bt_export_stats *stats);

/* The name of output i of task shard_index of num_shards (i < parallel_scans
 * with output_shards, else 0) and of the task's part file, written into
 * buf like snprintf: returns the length the name needs. */
size_t tfrec_bt_export_output_name(char *buf, size_t cap, const char *output, int shard_index,
                                   int num_shards, int parallel_scans, int output_shards, size_t i);
size_t tfrec_bt_export_part_name(char *buf, size_t cap, const char *output, int shard_index,
                                 int num_shards);

/* What tfrec_bt_export_check found. */
typedef struct tfrec_bt_export_check_result {
    size_t struct_size;
    uint64_t tasks; /* part files read */
    uint64_t rows;  /* rows of all the tasks */
    uint64_t bytes;
    uint64_t outputs; /* outputs checked */
    uint64_t problems;
    /* One line per problem, each naming the task to run again
     * ("task 2 of 3: ..."); NULL when none. Free with tfrec_bt_free. */
    char *report;
} tfrec_bt_export_check_result;

#define TFREC_BT_EXPORT_CHECK_RESULT_INIT TFREC_STRUCT_INIT(tfrec_bt_export_check_result)
void tfrec_bt_export_check_result_init(tfrec_bt_export_check_result *r);

/* Check the part files parts[0..n) (read through fs, NULL: the default): all of one export (table, row set,
 * shard count, and plan when plan is NULL: the first part's), one per task
 * 0..count-1, the tasks' shares tiling the row set in task order (no gap,
 * no overlap), and every output present with its recorded size and
 * CRC32C (read through). plan, when given, must be the plan they ran.
 * TFREC_OK when all is well; TFREC_E_PARSE for a part file that cannot be
 * read; TFREC_E_STATE when a check failed (result->report lists each
 * problem; tfrec_last_errmsg() the first). */
int tfrec_bt_export_check(const tfrec_fs *fs, const char *const *parts, size_t n,
                          const tfrec_bt_plan *plan, tfrec_bt_export_check_result *result);

/* Release memory the bigtable part returned (a check report). */
void tfrec_bt_free(void *p);

TFREC_END_DECLS
#endif

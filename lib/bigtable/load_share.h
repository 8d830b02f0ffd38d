/* Splitting a load into tasks: record counts of the input files (from
 * fresh indexes, or by reading) and the share of one task. Every input
 * (and its index) is read through o->fs: tfrec_bt_load has made the
 * deprecated open_source that file system (the shim of lib/fs/opener.c)
 * before calling these. */
#ifndef TFREC_BIGTABLE_LOAD_SHARE_H
#define TFREC_BIGTABLE_LOAD_SHARE_H

#include <stddef.h>
#include <stdint.h>

#include "tfrec/bigtable_load.h"
#include "tfrec/record.h"

/* Unknown count in a counts array. */
#define BT_COUNT_UNKNOWN UINT64_MAX

/* The record count of name from a fresh index (name.idx), without reading
 * the data: TFREC_OK; TFREC_E_NOT_FOUND when there is none or it is stale
 * (standard input and forced compression never have one); another code
 * when the index is there but garbled (the message names its line). */
int tfrec_bt_load_index_count(const tfrec_bt_load_options *o, const char *name, uint64_t *n);

/* Asked now and then while counting (file_index into files[]); non-zero
 * stops the count: a progress callback's answer, an interrupt. */
typedef struct bt_count_poll {
    int (*stop)(void *ctx, size_t file_index, const char *file);
    void *ctx;
} bt_count_poll;

/* The count from the index, else by reading the file through (CRCs
 * checked). *from_index says which. poll (may be NULL) is asked every few
 * thousand records; when it says stop, TFREC_E_STATE. */
int tfrec_bt_load_file_count(const tfrec_bt_load_options *o, const char *name, size_t file_index,
                             const bt_count_poll *poll, uint64_t *n, int *from_index);

/* The total of a split load and each file's count: num_records when set
 * (counts[] then BT_COUNT_UNKNOWN), else every file counted. stats gets
 * total_records, total_source, files_indexed and files_counted. */
int tfrec_bt_load_total(const tfrec_bt_load_options *o, const char *const *files, size_t nfiles,
                        const bt_count_poll *poll, uint64_t *counts, uint64_t *total,
                        tfrec_bt_load_stats *stats);

#endif

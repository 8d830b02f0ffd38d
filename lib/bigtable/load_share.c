/* Record counts for a load split into tasks: every task must cut the same
 * global record sequence, so the total is num_records or a count of all
 * the files; the counts also let a task pass over whole files before its
 * share without opening them. */
#include "bigtable/load_share.h"

#include <stdlib.h>
#include <string.h>

#include "tfrec/dataset.h"
#include "tfrec/fs.h"
#include "util/errors.h"

int tfrec_bt_load_index_count(const tfrec_bt_load_options *o, const char *name, uint64_t *n)
{
    if (!strcmp(name, "-") || o->compression > TFREC_COMPRESSION_NONE)
        return TFREC_E_NOT_FOUND;
    tfrec_index *ix = NULL;
    int rc = tfrec_fs_index_load_fresh(o->fs, &ix, name);
    if (rc == TFREC_OK) {
        *n = tfrec_index_records(ix);
        tfrec_index_free(ix);
    }
    /* no index, a stale one, or no such file (reading it will say) */
    return rc == TFREC_E_STATE || rc == TFREC_E_IO ? TFREC_E_NOT_FOUND : rc;
}

/* Records between two polls while counting: a poll costs a clock read. */
#define POLL_EVERY 4096

static int stopped(const bt_count_poll *poll, size_t file_index, const char *name)
{
    if (!poll || !poll->stop || !poll->stop(poll->ctx, file_index, name))
        return TFREC_OK;
    return tfrec_fail(NULL, TFREC_E_STATE, "load stopped while counting the records of %s", name);
}

int tfrec_bt_load_file_count(const tfrec_bt_load_options *o, const char *name, size_t file_index,
                             const bt_count_poll *poll, uint64_t *n, int *from_index)
{
    *from_index = 0;
    int rc = tfrec_bt_load_index_count(o, name, n);
    if (rc == TFREC_OK) {
        *from_index = 1;
        return rc;
    }
    if (rc != TFREC_E_NOT_FOUND)
        return rc;
    if (!strcmp(name, "-"))
        return tfrec_fail(NULL, TFREC_E_INVALID,
                          "a load split into tasks cannot count the records of standard input "
                          "(reading them would consume it): give num_records");
    tfrec_reader_options ro = TFREC_READER_OPTIONS_INIT;
    ro.compression = o->compression;
    ro.max_record_size = o->max_record_size;
    tfrec_reader *rd;
    rc = tfrec_fs_reader_open(o->fs, &rd, name, &ro);
    if (rc)
        return rc; /* the reader's message names the file */
    const uint8_t *data;
    size_t len;
    uint64_t k = 0;
    while ((rc = tfrec_reader_next(rd, &data, &len)) == TFREC_OK)
        if (++k % POLL_EVERY == 0 && (rc = stopped(poll, file_index, name)))
            break;
    if (rc == TFREC_END) {
        *n = k;
        rc = TFREC_OK;
    } else if (rc != TFREC_E_STATE) {
        rc = tfrec_fail(NULL, rc, "counting the records: %s", tfrec_reader_errmsg(rd));
    }
    tfrec_reader_free(rd);
    return rc;
}

int tfrec_bt_load_total(const tfrec_bt_load_options *o, const char *const *files, size_t nfiles,
                        const bt_count_poll *poll, uint64_t *counts, uint64_t *total,
                        tfrec_bt_load_stats *stats)
{
    for (size_t i = 0; i < nfiles; i++)
        counts[i] = BT_COUNT_UNKNOWN;
    if (o->num_records) {
        *total = o->num_records;
        stats->total_source = TFREC_BT_TOTAL_GIVEN;
        stats->total_records = *total;
        return TFREC_OK;
    }
    uint64_t sum = 0;
    for (size_t i = 0; i < nfiles; i++) {
        int from_index;
        int rc = stopped(poll, i, files[i]);
        if (!rc)
            rc = tfrec_bt_load_file_count(o, files[i], i, poll, &counts[i], &from_index);
        if (rc)
            return rc;
        if (from_index)
            stats->files_indexed++;
        else
            stats->files_counted++;
        sum += counts[i];
    }
    *total = sum;
    stats->total_records = sum;
    stats->total_source = stats->files_counted ? TFREC_BT_TOTAL_READ : TFREC_BT_TOTAL_INDEXES;
    return TFREC_OK;
}

/* tfrec_bt_load: TFRecord files -> rows through a bulk writer, with the
 * reference loader's keys, resume, throttling and progress reports. The
 * tools and the Python bindings both load through here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bigtable/load_share.h"
#include "fs/fs_internal.h"
#include "tfrec/bigtable_load.h"
#include "tfrec/record.h"
#include "tfrec/task.h"
#include "util/errors.h"
#include "util/struct_size.h"

#define DEFAULT_COLUMN "example"
#define MAX_KEY_WIDTH 20 /* as tfrec_bt_row_key: a uint64_t has at most 20 digits */

TFREC_DEFINE_STRUCT_INIT(tfrec_bt_load_options)
TFREC_DEFINE_STRUCT_INIT(tfrec_bt_load_stats)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The progress rhythm is checked after every row: the coarse clock (a few ms
 * of resolution) reads memory only, the precise one costs a measurable share
 * of the CPU for small rows. */
static double rhythm_s(void)
{
    struct timespec ts;
#ifdef CLOCK_MONOTONIC_COARSE
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
#else
    clock_gettime(CLOCK_MONOTONIC, &ts);
#endif
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct load {
    tfrec_bt_writer *w;
    tfrec_bt_load_options o;
    tfrec_bt_load_stats st;
    double t0, last_report;
    tfrec_bt_writer_stats base; /* the writer's figures when the call started */
    size_t nfiles;
    int counting;   /* the writer stopped: read on only to count what is not sent */
    int check_left; /* the load ends at num_records: find out whether input is left */
    int first_rc;   /* the put that stopped the writer, while counting */
    char first_msg[TFREC_ERRMSG_MAX];
} load;

/* Bring the acknowledgement figures up to date from the writer. */
static void refresh(load *l)
{
    l->st.seconds = now_s() - l->t0;
    if (!l->w)
        return;
    tfrec_bt_writer_stats ws = TFREC_BT_WRITER_STATS_INIT;
    if (tfrec_bt_writer_stats_get(l->w, &ws))
        return;
    l->st.rows_acked = ws.rows_acked - l->base.rows_acked;
    l->st.bytes_acked = ws.bytes_acked - l->base.bytes_acked;
    l->st.rows_failed = ws.rows_failed - l->base.rows_failed;
    /* Rows put before this call come first in the writer's order: this
     * call's rows count only once those are all acknowledged. */
    uint64_t prefix = ws.acked_prefix > l->base.rows_put ? ws.acked_prefix - l->base.rows_put : 0;
    l->st.next_index = l->o.start_index + prefix;
}

/* Tell the caller, at most every progress_interval unless done. Returns the
 * callback's answer (non-zero: stop). */
static int report(load *l, size_t file_index, const char *file, int done)
{
    if (!l->o.progress)
        return 0;
    double now = rhythm_s();
    if (!done && l->o.progress_interval >= 0 && now - l->last_report < l->o.progress_interval)
        return 0;
    l->last_report = now;
    refresh(l);
    tfrec_bt_load_progress p = { sizeof p, &l->st, file_index, file, done };
    return l->o.progress(l->o.progress_ctx, &p);
}

/* Sleep while ahead of max_rows_per_sec. */
static void throttle(load *l)
{
    double ahead = (double)l->st.records_read / l->o.max_rows_per_sec - (now_s() - l->t0);
    if (ahead > 0.001) {
        struct timespec ts = { (time_t)ahead, (long)((ahead - (double)(time_t)ahead) * 1e9) };
        nanosleep(&ts, NULL);
    }
}

/* Read one file, putting its records; *idx is the global record index. */
static int load_file(load *l, size_t fi, const char *path, uint64_t *idx, uint64_t limit, int width,
                     char *key, size_t keycap)
{
    const tfrec_bt_load_options *o = &l->o;
    tfrec_reader_options ro = TFREC_READER_OPTIONS_INIT;
    ro.compression = o->compression;
    ro.max_record_size = o->max_record_size;
    tfrec_reader *rd;
    int rc = tfrec_fs_reader_open(o->fs, &rd, path, &ro);
    if (rc)
        return rc; /* the reader's message names the file */
    const char *prefix = o->row_prefix ? o->row_prefix : "";
    const char *column = o->column ? o->column : DEFAULT_COLUMN;
    size_t qlen = strlen(column);
    while (*idx < limit) {
        const uint8_t *data;
        size_t len;
        rc = tfrec_reader_next(rd, &data, &len);
        if (rc == TFREC_END) {
            rc = TFREC_OK;
            break;
        }
        size_t kl = tfrec_bt_row_key(key, keycap, prefix, *idx, width, o->reversed_keys);
        if (rc < 0) {
            tfrec_fail(NULL, rc, "%s (record %llu would have been row %.*s)",
                       tfrec_reader_errmsg(rd), (unsigned long long)*idx,
                       (int)(kl < keycap ? kl : 0), key);
            break;
        }
        if (*idx < o->start_index) { /* acknowledged by an earlier run */
            (*idx)++;
            l->st.records_skipped++;
        } else if (l->counting) {
            (*idx)++;
            l->st.records_not_sent++;
        } else {
            if (l->w && (rc = tfrec_bt_writer_put(l->w, key, kl, column, qlen, data, len, *idx))) {
                tfrec_fail(NULL, rc, "row %s (record %llu, %s offset %llu): %s", key,
                           (unsigned long long)*idx, path,
                           (unsigned long long)tfrec_reader_offset(rd),
                           tfrec_bt_writer_errmsg(l->w));
                if (rc != TFREC_E_NETWORK)
                    break;
                /* The writer gave up (failures, not a stop request): every
                 * later record is a row not written too, so read on to
                 * count them; the first failure keeps its message. */
                l->counting = 1;
                l->first_rc = rc;
                snprintf(l->first_msg, sizeof l->first_msg, "%s", tfrec_last_errmsg());
                rc = TFREC_OK;
                (*idx)++;
                l->st.records_not_sent++;
                continue;
            }
            (*idx)++;
            l->st.records_read++;
            l->st.bytes_read += len;
            if (o->max_rows_per_sec > 0)
                throttle(l);
        }
        if (report(l, fi, path, 0)) {
            rc = tfrec_fail(NULL, TFREC_E_STATE, "load stopped at record %llu (%s)",
                            (unsigned long long)*idx, path);
            break;
        }
    }
    if (rc == TFREC_OK && *idx >= limit && l->check_left && !l->st.input_left) {
        const uint8_t *data;
        size_t len;
        l->st.input_left = tfrec_reader_next(rd, &data, &len) == TFREC_OK;
    }
    tfrec_reader_free(rd);
    return rc;
}

/* Has any of files[from..] a record? (num_records stopped the load.) */
static int more_records(const load *l, const char *const *files, size_t from, size_t nfiles)
{
    for (size_t i = from; i < nfiles; i++) {
        tfrec_reader_options ro = TFREC_READER_OPTIONS_INIT;
        ro.compression = l->o.compression;
        tfrec_reader *rd;
        if (tfrec_fs_reader_open(l->o.fs, &rd, files[i], &ro))
            return 1; /* unreadable, but there */
        const uint8_t *data;
        size_t len;
        int rc = tfrec_reader_next(rd, &data, &len);
        tfrec_reader_free(rd);
        if (rc != TFREC_END)
            return 1;
    }
    return 0;
}

/* While counting: the progress callback keeps its rhythm, and can stop. */
static int count_poll(void *ctx, size_t file_index, const char *file)
{
    return report(ctx, file_index, file, 0);
}

/* The share of task task_index: the total counted (or num_records), cut
 * with tfrec_task_share. *counts gets each file's count when counted. */
static int split(load *l, const char *const *files, size_t nfiles, uint64_t **counts,
                 uint64_t *limit)
{
    *counts = malloc((nfiles ? nfiles : 1) * sizeof **counts);
    if (!*counts)
        return tfrec_fail(NULL, TFREC_E_NOMEM, "out of memory");
    uint64_t total, begin, end;
    bt_count_poll poll = { count_poll, l };
    int rc = tfrec_bt_load_total(&l->o, files, nfiles, &poll, *counts, &total, &l->st);
    if (rc)
        return rc;
    uint32_t count = l->o.num_tasks ? l->o.num_tasks : 1;
    rc = tfrec_task_share(total, l->o.task_index, count, &begin, &end);
    if (rc)
        return rc;
    l->st.share_begin = begin;
    l->st.share_end = end;
    *limit = end;
    /* only the last share ends where num_records cuts the input */
    l->check_left = l->o.num_records && end == l->o.num_records;
    return TFREC_OK;
}

int tfrec_bt_load(tfrec_bt_writer *w, const char *const *files, size_t nfiles,
                  const tfrec_bt_load_options *opts, tfrec_bt_load_stats *stats)
{
    load l;
    memset(&l, 0, sizeof l);
    int rc = stats ? TFREC_STRUCT_CHECK_OUT(tfrec_bt_load_stats, stats, NULL) : TFREC_OK;
    if (!rc)
        rc = TFREC_STRUCT_IN(tfrec_bt_load_options, &l.o, opts, NULL);
    if (!rc && nfiles && !files)
        rc = tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_bt_load: files is NULL");
    if (!rc && (l.o.key_width < 0 || l.o.key_width > MAX_KEY_WIDTH))
        rc = tfrec_fail(NULL, TFREC_E_INVALID, "key_width %d is not 0..%d", l.o.key_width,
                        MAX_KEY_WIDTH);
    if (!rc && !(l.o.max_rows_per_sec >= 0)) /* also NaN */
        rc = tfrec_fail(NULL, TFREC_E_INVALID, "max_rows_per_sec must not be negative");
    if (rc)
        return rc;
    /* The deprecated open_source becomes a file system, the one shim of
     * lib/fs/opener.c (still taking precedence over fs): below, every file
     * and index is read through l.o.fs alone. */
    tfrec_fs_opener shim;
    if (l.o.open_source) {
        memset(&shim, 0, sizeof shim);
        shim.ctx = l.o.open_ctx;
        shim.open_io = l.o.open_source;
        l.o.fs = tfrec_fs_opener_make(&shim);
        l.o.open_source = NULL;
    }
    if (l.o.progress_interval == 0)
        l.o.progress_interval = 0.25;
    l.w = w;
    l.nfiles = nfiles;
    l.t0 = now_s();
    l.last_report = rhythm_s();
    tfrec_bt_load_stats_init(&l.st);
    l.st.next_index = l.o.start_index;
    l.base.struct_size = sizeof l.base;
    if (w)
        tfrec_bt_writer_stats_get(w, &l.base);

    int width = l.o.key_width ? l.o.key_width : tfrec_bt_key_width(l.o.num_records);
    uint64_t limit = l.o.num_records ? l.o.num_records : UINT64_MAX;
    l.check_left = l.o.num_records != 0;
    l.st.share_end = limit;
    uint64_t *counts = NULL;
    if (l.o.num_tasks > 1 || l.o.task_index)
        rc = split(&l, files, nfiles, &counts, &limit);
    /* Below the share is below the start: the keys keep their index. */
    if (l.o.start_index < l.st.share_begin)
        l.o.start_index = l.st.share_begin;
    l.st.next_index = l.o.start_index;

    size_t keycap = (l.o.row_prefix ? strlen(l.o.row_prefix) : 0) + MAX_KEY_WIDTH + 24;
    char *key = rc ? NULL : malloc(keycap);
    if (!rc && !key)
        rc = tfrec_fail(NULL, TFREC_E_NOMEM, "out of memory");
    uint64_t idx = 0;
    size_t i = 0;
    /* start_index >= limit: a finished share, or an empty one; nothing to read */
    for (; !rc && i < nfiles && idx < limit && l.o.start_index < limit; i++) {
        uint64_t n = counts ? counts[i] : BT_COUNT_UNKNOWN;
        if (n == BT_COUNT_UNKNOWN && idx < l.o.start_index &&
            tfrec_bt_load_index_count(&l.o, files[i], &n) != TFREC_OK)
            n = BT_COUNT_UNKNOWN; /* no usable index: read over the records */
        if (n != BT_COUNT_UNKNOWN && idx + n <= l.o.start_index) {
            idx += n; /* wholly before the start: not opened */
            l.st.records_skipped += n;
            l.st.files_skipped++;
            continue;
        }
        rc = load_file(&l, i, files[i], &idx, limit, width, key, keycap);
    }
    free(key);
    free(counts);
    if (!rc && idx >= limit && l.check_left && !l.st.input_left && i < nfiles)
        l.st.input_left = more_records(&l, files, i, nfiles);
    if (l.counting) { /* the counted rest done (or cut short): the failure is the cause */
        rc = l.first_rc;
        tfrec_fail(NULL, rc, "%s", l.first_msg);
    }

    /* Whatever stopped the reading, resolve what was put, so next_index
     * covers every acknowledged row. The first cause keeps its message. */
    if (w) {
        char first[TFREC_ERRMSG_MAX];
        snprintf(first, sizeof first, "%s", tfrec_last_errmsg());
        int frc = tfrec_bt_writer_flush(w);
        if (rc)
            tfrec_fail(NULL, rc, "%s", first);
        else
            rc = frc;
    }
    refresh(&l);
    if (l.o.progress) {
        char msg[TFREC_ERRMSG_MAX];
        snprintf(msg, sizeof msg, "%s", tfrec_last_errmsg());
        report(&l, nfiles, NULL, 1);
        if (rc) /* the callback may have used the library */
            tfrec_fail(NULL, rc, "%s", msg);
    }
    if (stats)
        TFREC_STRUCT_OUT(tfrec_bt_load_stats, stats, &l.st, NULL);
    return rc;
}

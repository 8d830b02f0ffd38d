/* tfrec2bt: stream the records of TFRecord files into Bigtable rows
 * <row_prefix><zero-padded global index> : <column_family>:<column>. */
#include <glob.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/progress.h"
#include "tfrec/tfrec.h"
#include "tfrec2bt.h"
#ifdef TFREC_TESTING
#include "bigtable/writer_testing.h"
#endif

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

typedef struct run {
    t2b_flags f;
    char progress_path[4096];
    tfrec_bt_client *client;
    tfrec_bt_writer *writer;
    cli_progress prog;
    uint64_t last_saved;     /* next_index last written to the progress file */
    double last_save_time;
    uint64_t records_read, bytes_read, skipped;
} run;

static void save_progress(run *r, int force)
{
    if (!r->writer) return;
    tfrec_bt_writer_stats st = TFREC_BT_WRITER_STATS_INIT;
    tfrec_bt_writer_stats_get(r->writer, &st);
    cli_progress_update(&r->prog, st.rows_acked, st.bytes_acked);
    uint64_t next = r->f.start_index + st.acked_prefix;
    double now = cli_now();
    if (next != r->last_saved && (force || now - r->last_save_time >= 0.25)) {
        if (t2b_progress_write(r->progress_path, next, &r->f) == 0) r->last_saved = next;
        r->last_save_time = now;
    }
}

#ifdef TFREC_TESTING
/* Test builds only (TFREC2BT_INJECT_RETRY=N): the first acknowledgement of
 * every Nth record is turned into UNAVAILABLE, so the row is written again
 * after the server already applied it; the integration test then checks the
 * cell was replaced (one version), not duplicated. */
static int inject_retry(void *ctx, uint64_t index, unsigned attempt, int code)
{
    uint64_t every = *(const uint64_t *)ctx;
    return code == 0 && attempt == 1 && index % every == 0 ? 14 /* UNAVAILABLE */ : code;
}
#endif

/* Connect, check the table, open the writer. */
static int open_bigtable(run *r)
{
    tfrec_bt_client_options co = TFREC_BT_CLIENT_OPTIONS_INIT;
    co.project = r->f.project;
    co.instance = r->f.instance;
    co.max_message_bytes = r->f.max_message_bytes;
    co.rpc_timeout_ms = (int64_t)(r->f.rpc_timeout_s * 1000);
    if (tfrec_bt_client_open(&r->client, &co)) {
        fprintf(stderr, "tfrec2bt: %s\n", tfrec_last_errmsg());
        return 1;
    }
    int rc = tfrec_bt_ensure_table(r->client, r->f.table, r->f.column_family, r->f.create_table);
    if (rc) {
        const char *msg = tfrec_bt_client_errmsg(r->client);
        if (strstr(msg, "PERMISSION_DENIED")) { /* data-only credentials: just try writing */
            fprintf(stderr, "tfrec2bt: warning: cannot check the table (%s); loading anyway\n", msg);
        } else {
            fprintf(stderr, "tfrec2bt: %s\n", msg);
            return 1;
        }
    }
    tfrec_bt_writer_options wo = TFREC_BT_WRITER_OPTIONS_INIT;
    wo.max_inflight = r->f.max_inflight;
    wo.batch_bytes = r->f.batch_bytes;
    wo.batch_rows = r->f.batch_rows;
    wo.retry_timeout_ms = r->f.retry_timeout_s > 0 ? (int64_t)(r->f.retry_timeout_s * 1000) : -1;
    if (tfrec_bt_writer_open(&r->writer, r->client, r->f.table, r->f.column_family, &wo)) {
        fprintf(stderr, "tfrec2bt: %s\n", tfrec_last_errmsg());
        return 1;
    }
#ifdef TFREC_TESTING
    static uint64_t inject_every;
    const char *inject = getenv("TFREC2BT_INJECT_RETRY");
    if (inject && (inject_every = strtoull(inject, NULL, 10)) > 0)
        tfrec_bt_writer_set_status_hook(r->writer, inject_retry, &inject_every);
#endif
    return 0;
}

/* Sleep while ahead of --max_rows_per_sec. */
static void throttle(run *r)
{
    double ahead = (double)r->records_read / r->f.max_rows_per_sec - (cli_now() - r->prog.start);
    if (ahead > 0.001) {
        struct timespec ts = {(time_t)ahead, (long)((ahead - (double)(time_t)ahead) * 1e9)};
        nanosleep(&ts, NULL);
    }
}

/* Read every file in order and put its records. 0, or 1 after a message. */
static int load(run *r, char **files, size_t nfiles)
{
    const t2b_flags *f = &r->f;
    int width = tfrec_bt_key_width(f->num_records);
    uint64_t limit = f->num_records ? f->num_records : UINT64_MAX;
    uint64_t idx = 0;
    char key[4200];
    size_t qlen = strlen(f->column);
    for (size_t i = 0; i < nfiles && idx < limit; i++) {
        tfrec_reader *rd;
        if (tfrec_reader_open(&rd, files[i], NULL)) {
            fprintf(stderr, "tfrec2bt: %s\n", tfrec_last_errmsg());
            return 1;
        }
        const uint8_t *data;
        size_t len;
        int rc;
        while (idx < limit && (rc = tfrec_reader_next(rd, &data, &len)) == TFREC_OK) {
            if (idx < f->start_index) { /* acknowledged by an earlier run */
                idx++;
                r->skipped++;
                continue;
            }
            size_t kl = tfrec_bt_row_key(key, sizeof key, f->row_prefix, idx, width, f->reversed_keys);
            if (kl >= sizeof key) {
                fprintf(stderr, "tfrec2bt: row key for record %llu is too long\n",
                        (unsigned long long)idx);
                tfrec_reader_free(rd);
                return 1;
            }
            r->records_read++;
            r->bytes_read += len;
            if (f->dry_run) {
                if (r->records_read == 1 && !f->quiet) printf("first row: %s (%zu bytes)\n", key, len);
            } else if (tfrec_bt_writer_put(r->writer, key, kl, f->column, qlen, data, len, idx)) {
                fprintf(stderr, "tfrec2bt: row %s (record %llu, %s offset %llu): %s\n", key,
                        (unsigned long long)idx, files[i],
                        (unsigned long long)tfrec_reader_offset(rd),
                        tfrec_bt_writer_errmsg(r->writer));
                tfrec_reader_free(rd);
                return 1;
            }
            idx++;
            if ((idx & 63) == 0) save_progress(r, 0);
            if (f->max_rows_per_sec > 0) throttle(r);
        }
        if (idx < limit && rc != TFREC_END) {
            fprintf(stderr, "tfrec2bt: %s (record %llu would have been row %s%0*llu)\n",
                    tfrec_reader_errmsg(rd), (unsigned long long)idx, f->row_prefix, width,
                    (unsigned long long)idx);
            tfrec_reader_free(rd);
            return 1;
        }
        tfrec_reader_free(rd);
    }
    if (f->dry_run && !f->quiet) {
        if (r->records_read)
            printf("last row: %s\n", key);
        printf("dry run: %llu records (%llu bytes) would be written, %llu skipped\n",
               (unsigned long long)r->records_read, (unsigned long long)r->bytes_read,
               (unsigned long long)r->skipped);
    }
    return 0;
}

/* The first failures on stderr, every failed row in <progress_file>.failed. */
static void report_failures(run *r)
{
    size_t n = tfrec_bt_writer_failed_count(r->writer);
    char path[4200];
    snprintf(path, sizeof path, "%s.failed", r->progress_path);
    FILE *fp = n ? fopen(path, "w") : NULL;
    fprintf(stderr, "tfrec2bt: %s\n", tfrec_bt_writer_errmsg(r->writer));
    for (size_t i = 0; i < n; i++) {
        const uint8_t *k;
        size_t kl;
        uint64_t idx;
        int code;
        const char *msg;
        tfrec_bt_writer_failed_row(r->writer, i, &k, &kl, &idx, &code, &msg);
        if (i < (size_t)r->f.max_failed_listed)
            fprintf(stderr, "  not written: row %.*s (record %llu): %s\n", (int)kl,
                    (const char *)k, (unsigned long long)idx, tfrec_bt_code_name(code));
        if (fp)
            fprintf(fp, "%.*s\t%llu\t%s\n", (int)kl, (const char *)k, (unsigned long long)idx, msg);
    }
    if (n > (size_t)r->f.max_failed_listed)
        fprintf(stderr, "  ... and %zu more rows\n", n - (size_t)r->f.max_failed_listed);
    if (fp && fclose(fp) == 0)
        fprintf(stderr, "tfrec2bt: all %zu rows not written are listed in %s\n", n, path);
}

int main(int argc, char **argv)
{
    run r;
    memset(&r, 0, sizeof r);
    int rc = t2b_parse_flags(argc, argv, &r.f);
    if (rc) return rc;
    signal(SIGPIPE, SIG_IGN);
    t2b_flags *f = &r.f;

    glob_t g;
    int grc = glob(f->source_glob, 0, NULL, &g);
    if (grc != 0 || g.gl_pathc == 0) {
        fprintf(stderr, "tfrec2bt: no files match --source_glob=%s\n", f->source_glob);
        if (grc == 0) globfree(&g);
        return 1;
    }
    qsort(g.gl_pathv, g.gl_pathc, sizeof *g.gl_pathv, cmp_str); /* byte order, not locale */

    if (f->progress_file)
        snprintf(r.progress_path, sizeof r.progress_path, "%s", f->progress_file);
    else
        snprintf(r.progress_path, sizeof r.progress_path, "tfrec2bt-%s-%s.progress",
                 f->instance ? f->instance : "dry", f->table ? f->table : "run");
    if (f->resume) {
        char err[4200];
        if (t2b_progress_read(r.progress_path, f, &f->start_index, err, sizeof err)) {
            fprintf(stderr, "tfrec2bt: --resume: %s\n", err);
            globfree(&g);
            return 1;
        }
        if (!f->quiet)
            fprintf(stderr, "tfrec2bt: resuming at record %llu (from %s)\n",
                    (unsigned long long)f->start_index, r.progress_path);
    }
    r.last_saved = f->start_index;

    if (!f->dry_run && open_bigtable(&r)) {
        tfrec_bt_writer_free(r.writer);
        tfrec_bt_client_free(r.client);
        globfree(&g);
        return 1;
    }
    uint64_t total = f->num_records > f->start_index ? f->num_records - f->start_index : 0;
    cli_progress_start(&r.prog, "rows", total, f->quiet || f->dry_run);
    double t0 = cli_now();
    int failed = load(&r, g.gl_pathv, g.gl_pathc);
    globfree(&g);
    if (f->dry_run) return failed;

    /* Whatever stopped the reading, push out what was queued, so the
     * progress file covers every acknowledged row. */
    int wrc = tfrec_bt_writer_close(r.writer);
    save_progress(&r, 1);
    cli_progress_finish(&r.prog);
    double secs = cli_now() - t0;
    tfrec_bt_writer_stats st = TFREC_BT_WRITER_STATS_INIT;
    tfrec_bt_writer_stats_get(r.writer, &st);
    if (wrc) report_failures(&r);
    uint64_t next = f->start_index + st.acked_prefix;
    if (!f->quiet || wrc || failed)
        fprintf(stderr,
                "tfrec2bt: %llu rows (%.1f MB) written to %s in %.2f s: %.0f rows/s, %.1f MB/s; "
                "%llu requests, %llu retried entries, %llu failed calls, %llu splits%s\n",
                (unsigned long long)st.rows_acked, (double)st.bytes_acked / 1e6, f->table, secs,
                secs > 0 ? (double)st.rows_acked / secs : 0,
                secs > 0 ? (double)st.bytes_acked / 1e6 / secs : 0,
                (unsigned long long)st.requests, (unsigned long long)st.retried_entries,
                (unsigned long long)st.stream_failures, (unsigned long long)st.splits,
                r.skipped ? " (earlier records skipped)" : "");
    if (wrc || failed)
        fprintf(stderr,
                "tfrec2bt: every record below %llu is acknowledged (saved in %s); "
                "rerun with --resume to continue from there\n",
                (unsigned long long)next, r.progress_path);
    tfrec_bt_writer_free(r.writer);
    tfrec_bt_client_free(r.client);
    return wrc || failed ? 1 : 0;
}

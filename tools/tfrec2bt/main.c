/* tfrec2bt: stream the records of TFRecord files into Bigtable rows
 * <row_prefix><zero-padded global index> : <column_family>:<column>.
 * The loading itself is tfrec_bt_load(); this is flags, the progress file,
 * messages and exit statuses around it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/exit_codes.h"
#include "../common/files.h"
#include "../common/heap.h"
#include "../common/progress.h"
#include "../common/signals.h"
#include "tfrec/tfrec.h"
#include "tfrec2bt.h"

#ifdef TFREC_TESTING
#include "bigtable/writer_testing.h"
#endif

typedef struct run {
    t2b_flags f;
    int argc;
    char **argv;
    char progress_path[4096];
    tfrec_bt_client *client;
    tfrec_bt_writer *writer;
    cli_progress prog;
    uint64_t last_saved; /* next_index last written to the progress file */
    int64_t timestamp;   /* of the cells: kept across resumes */
    int child_report;    /* a --processes child: fd of the report to the parent, else 0 */
    int progress_made;   /* this run wrote the progress file (none was there before) */
    int total_known;     /* the progress line's total is set (or told to the parent) */
} run;

/* The writer a signal stops: set once it is open, read by the handler. */
static tfrec_bt_writer *volatile stoppable;

static void stop_writer(void)
{
    tfrec_bt_writer_stop(stoppable);
}

/* The rows of a split load's share still to write, once the load has
 * counted the records (no --num_records): the progress line's total. */
static void learn_share_total(run *r, const tfrec_bt_load_stats *st)
{
    if (r->total_known || st->total_source == TFREC_BT_TOTAL_NONE)
        return;
    r->total_known = 1;
    uint64_t begin = st->share_begin;
    if (r->f.start_index > begin)
        begin = r->f.start_index < st->share_end ? r->f.start_index : st->share_end;
    r->prog.total = st->share_end - begin;
    if (r->child_report)
        dprintf(r->child_report, "total %llu\n", (unsigned long long)r->prog.total);
}

/* Progress display, resume point and interruption, a few times a second. */
static int on_progress(void *ctx, const tfrec_bt_load_progress *p)
{
    run *r = ctx;
    const tfrec_bt_load_stats *st = p->stats;
    learn_share_total(r, st);
    if (r->writer) {
        cli_progress_update(&r->prog, st->rows_acked, st->bytes_acked);
        if (r->child_report)
            dprintf(r->child_report, "progress %llu %llu\n", (unsigned long long)st->rows_acked,
                    (unsigned long long)st->bytes_acked);
        if (st->next_index != r->last_saved &&
            t2b_progress_write(r->progress_path, st->next_index, r->timestamp, &r->f) == 0)
            r->last_saved = st->next_index;
    }
    return cli_interrupted != 0;
}

#ifdef TFREC_TESTING
/* Test builds only (TFREC2BT_INJECT_RETRY=N): the first acknowledgement of
 * every Nth record is turned into UNAVAILABLE, so the row is written again
 * after the server already applied it; the integration test then checks
 * the cell was replaced (one version), not duplicated. */
static int inject_retry(void *ctx, uint64_t index, unsigned attempt, int code)
{
    uint64_t every = *(const uint64_t *)ctx;
    return code == 0 && attempt == 1 && index % every == 0 ? 14 /* UNAVAILABLE */ : code;
}

static void install_test_hooks(tfrec_bt_writer *w)
{
    static uint64_t every;
    const char *inject = getenv("TFREC2BT_INJECT_RETRY");
    if (inject && (every = strtoull(inject, NULL, 10)) > 0)
        tfrec_bt_writer_set_status_hook(w, inject_retry, &every);
}
#endif

/* Connect, check the table, open the writer. An exit status on failure. */
static int open_bigtable(run *r)
{
    tfrec_bt_client_options co = TFREC_BT_CLIENT_OPTIONS_INIT;
    co.project = r->f.project;
    co.instance = r->f.instance;
    co.max_message_bytes = (int64_t)r->f.max_message_bytes;
    co.rpc_timeout_ms = (int64_t)(r->f.rpc_timeout_s * 1000);
    cli_bt_conn_apply(&r->f.conn, &co);
    int rc = tfrec_bt_client_open(&r->client, &co);
    if (rc) {
        /* Without a project the library asks the metadata server; when that
         * fails, the flag to name it is this tool's to say. */
        cli_log("%s%s", tfrec_last_errmsg(),
                rc == TFREC_E_INVALID && (!co.project || !*co.project) ? "; pass --project" : "");
        return cli_exit_for(rc);
    }
    rc = tfrec_bt_ensure_table(r->client, r->f.table, r->f.column_family, r->f.create_table);
    if (rc) {
        const char *msg = tfrec_bt_client_errmsg(r->client);
        if (strstr(msg, "PERMISSION_DENIED")) { /* data-only credentials: just try writing */
            cli_warn("cannot check the table (%s); loading anyway", msg);
        } else {
            /* The library says how to create what is missing by hand; the
             * flag that creates it is this tool's. */
            cli_log("%s%s", msg,
                    rc == TFREC_E_NOT_FOUND && !r->f.create_table ? ", or pass --create_table"
                                                                  : "");
            return cli_exit_for(rc);
        }
    }
    tfrec_bt_writer_options wo = TFREC_BT_WRITER_OPTIONS_INIT;
    wo.max_inflight = r->f.max_inflight;
    wo.connections = r->f.connections;
    wo.batch_bytes = (size_t)r->f.batch_bytes;
    wo.batch_rows = t2b_batch_rows(&r->f);
    wo.retry_timeout_ms = r->f.retry_timeout_s > 0 ? (int64_t)(r->f.retry_timeout_s * 1000) : -1;
    wo.stop_timeout_ms = r->f.stop_timeout_s > 0 ? (int64_t)(r->f.stop_timeout_s * 1000) : -1;
    /* --timestamp_micros, else a resumed run's first timestamp, else now */
    wo.timestamp_micros = r->f.timestamp_micros ? r->f.timestamp_micros : r->timestamp;
    rc = tfrec_bt_writer_open(&r->writer, r->client, r->f.table, r->f.column_family, &wo);
    if (rc) {
        cli_log("%s", tfrec_last_errmsg());
        return cli_exit_for(rc);
    }
    r->timestamp = tfrec_bt_writer_timestamp(r->writer);
    stoppable = r->writer;
    cli_on_interrupt(stop_writer);
    if (cli_interrupted) /* a signal while connecting */
        tfrec_bt_writer_stop(r->writer);
#ifdef TFREC_TESTING
    install_test_hooks(r->writer);
#endif
    return EXIT_OK;
}

/* Every row of this run not written: the writer's failed rows, then the
 * records not sent after it stopped. Listed in <progress_file>.failed, the
 * first few on stderr too, and counted so that the two agree. */
static void report_failures(run *r, const tfrec_bt_load_stats *st)
{
    const t2b_flags *f = &r->f;
    size_t n = tfrec_bt_writer_failed_count(r->writer);
    uint64_t total = st->rows_failed + st->records_not_sent;
    if (!total)
        return;
    char path[4200];
    snprintf(path, sizeof path, "%s.failed", r->progress_path);
    FILE *fp = fopen(path, "w");
    size_t listed = 0, max = (size_t)f->max_failed_listed;
    for (size_t i = 0; i < n; i++, listed++) {
        const uint8_t *k;
        size_t kl;
        uint64_t idx;
        int code;
        const char *msg;
        tfrec_bt_writer_failed_row(r->writer, i, &k, &kl, &idx, &code, &msg);
        if (listed < max)
            cli_log("  not written: row %.*s (record %llu): %s", (int)kl, (const char *)k,
                    (unsigned long long)idx, tfrec_bt_code_name(code));
        if (fp)
            fprintf(fp, "%.*s\t%llu\t%s\n", (int)kl, (const char *)k, (unsigned long long)idx, msg);
    }
    /* Not sent: the records right after the last one put, in order. */
    int width = tfrec_bt_key_width(f->num_records);
    uint64_t first = st->records_skipped + st->records_read;
    char key[4200];
    for (uint64_t i = 0; i < st->records_not_sent; i++, listed++) {
        tfrec_bt_row_key(key, sizeof key, f->row_prefix, first + i, width, f->reversed_keys);
        if (listed < max)
            cli_log("  not written: row %s (record %llu): not sent", key,
                    (unsigned long long)(first + i));
        if (fp)
            fprintf(fp, "%s\t%llu\tnot sent: the writer had stopped\n", key,
                    (unsigned long long)(first + i));
    }
    if (listed > max)
        cli_log("  ... and %llu more rows", (unsigned long long)(listed - max));
    cli_log("%llu of %llu rows not written: %llu failed, %llu not sent after the "
            "writer stopped",
            (unsigned long long)total,
            (unsigned long long)(st->records_read + st->records_not_sent),
            (unsigned long long)st->rows_failed, (unsigned long long)st->records_not_sent);
    if (fp && fclose(fp) == 0)
        cli_log("all %llu rows not written are listed in %s", (unsigned long long)total, path);
    else
        cli_log("could not write %s", path);
}

static void dry_run_report(const run *r, const tfrec_bt_load_stats *st)
{
    const t2b_flags *f = &r->f;
    int width = tfrec_bt_key_width(f->num_records);
    char key[4200];
    if (st->records_read) {
        /* everything below the first row written was skipped: resume point, other tasks */
        uint64_t first = st->records_skipped;
        tfrec_bt_row_key(key, sizeof key, f->row_prefix, first, width, f->reversed_keys);
        printf("first row: %s\n", key);
        tfrec_bt_row_key(key, sizeof key, f->row_prefix, first + st->records_read - 1, width,
                         f->reversed_keys);
        printf("last row: %s\n", key);
    }
    printf("dry run: %llu records (%llu bytes) would be written, %llu skipped\n",
           (unsigned long long)st->records_read, (unsigned long long)st->bytes_read,
           (unsigned long long)st->records_skipped);
}

/* A split load: which records this task had, and where the total came from. */
static void task_report(const run *r, const tfrec_bt_load_stats *st)
{
    const cli_task *t = &r->f.task;
    if (t->count <= 1 || st->total_source == TFREC_BT_TOTAL_NONE)
        return;
    const char *from = st->total_source == TFREC_BT_TOTAL_GIVEN ? "--num_records"
                       : st->total_source == TFREC_BT_TOTAL_INDEXES
                           ? "counted from fresh .idx files"
                           : "counted by reading files";
    char counted[160] = "";
    if (st->total_source == TFREC_BT_TOTAL_READ)
        snprintf(counted, sizeof counted, "; %llu of %llu files read to count them",
                 (unsigned long long)st->files_counted,
                 (unsigned long long)(st->files_counted + st->files_indexed));
    if (st->share_end == st->share_begin)
        cli_log("task %lld of %lld: no records (%llu in all, %s, fewer than the "
                "tasks): nothing to load",
                (long long)t->index, (long long)t->count, (unsigned long long)st->total_records,
                from);
    else
        cli_log("task %lld of %lld: records %llu..%llu (%llu of %llu, %s%s)", (long long)t->index,
                (long long)t->count, (unsigned long long)st->share_begin,
                (unsigned long long)st->share_end - 1,
                (unsigned long long)(st->share_end - st->share_begin),
                (unsigned long long)st->total_records, from, counted);
}

static void warn_num_records(const run *r, const tfrec_bt_load_stats *st)
{
    if (st->input_left)
        cli_warn("--num_records=%llu stopped the load before the end of the "
                 "input (the files matched by --source_glob hold more records)",
                 (unsigned long long)r->f.num_records);
}

/* A complete load needs no resume point: a load of its own removes its
 * progress file. A task of a split load run by hand (or by a job) keeps
 * it, so that the task re-run with --resume has nothing left to do, and
 * says where it is; a --processes child's file is removed by its parent
 * once every task is done. */
static void done_with_progress_file(const run *r)
{
    if (r->child_report)
        return;
    if (r->f.task.count > 1) {
        if (!r->f.quiet)
            cli_log("task %lld of %lld complete; its progress file %s stays (a re-run with "
                    "--resume has nothing left to do; remove it once the whole load is done)",
                    (long long)r->f.task.index, (long long)r->f.task.count, r->progress_path);
        return;
    }
    if (unlink(r->progress_path) != 0 && errno != ENOENT)
        cli_warn("the load is complete but its progress file %s could not be removed: %s",
                 r->progress_path, strerror(errno));
}

/* After the load: summary, failures, how to continue; the exit status. */
static int finish(run *r, int lrc, const char *lmsg, const tfrec_bt_load_stats *st)
{
    const t2b_flags *f = &r->f;
    int wrc = tfrec_bt_writer_close(r->writer); /* already flushed by the load */
    int saved = t2b_progress_write(r->progress_path, st->next_index, r->timestamp, f) == 0;
    cli_progress_finish(&r->prog);
    int interrupted = cli_interrupted != 0;
    /* the writer's own report (rows not written) follows below */
    if (lrc && lrc != TFREC_E_STATE && strcmp(lmsg, tfrec_bt_writer_errmsg(r->writer)) != 0)
        cli_log("%s", lmsg);
    else if (wrc && !interrupted && !st->rows_failed) /* else counted below */
        cli_log("%s", tfrec_bt_writer_errmsg(r->writer));
    if (!interrupted)
        report_failures(r, st);
    warn_num_records(r, st);
    if (!r->child_report) /* the parent knows the split */
        task_report(r, st);
    tfrec_bt_writer_stats ws = TFREC_BT_WRITER_STATS_INIT;
    tfrec_bt_writer_stats_get(r->writer, &ws);
    if (r->child_report)
        dprintf(r->child_report, "done %llu %llu %llu %llu %llu %llu\n",
                (unsigned long long)st->rows_acked, (unsigned long long)st->bytes_acked,
                (unsigned long long)ws.requests, (unsigned long long)ws.retried_entries,
                (unsigned long long)ws.stream_failures, (unsigned long long)ws.splits);
    /* An interrupted --processes child says nothing more: its parent prints
     * the one summary and the one command for every task. */
    int silent = r->child_report && interrupted;
    double secs = st->seconds;
    if (!silent && (!f->quiet || wrc || lrc || interrupted))
        cli_log("%llu rows (%.1f MB) written to %s in %.2f s: %.0f rows/s, %.1f MB/s; "
                "%llu requests, %llu retried entries, %llu failed calls, %llu splits%s",
                (unsigned long long)st->rows_acked, (double)st->bytes_acked / 1e6, f->table, secs,
                secs > 0 ? (double)st->rows_acked / secs : 0,
                secs > 0 ? (double)st->bytes_acked / 1e6 / secs : 0,
                (unsigned long long)ws.requests, (unsigned long long)ws.retried_entries,
                (unsigned long long)ws.stream_failures, (unsigned long long)ws.splits,
                st->records_skipped > st->share_begin ? " (earlier records skipped)" : "");
    if (!silent && (wrc || lrc || interrupted)) {
        cli_log("%severy record below %llu is acknowledged (%s %s)",
                interrupted ? "interrupted; " : "", (unsigned long long)st->next_index,
                saved ? "saved in" : "could not save it in", r->progress_path);
        if (!interrupted && cli_exit_for(lrc) == EXIT_DATA)
            cli_log("the load stopped at a bad source record, and running it again "
                    "would stop at the same record: repair or regenerate that file (`tfrec "
                    "verify FILE` lists the bad regions) or take it out of --source_glob "
                    "(the keys of later files then shift), and only then continue.");
        if (!r->child_report) /* a --processes child: the parent prints the one command */
            t2b_print_resume_command(r->argc, r->argv, r->progress_path,
                                     r->f.task.count > 1 ? &r->f.task : NULL,
                                     !strcmp(r->f.source_glob, "-"));
    }
    if (interrupted)
        return EXIT_INTERRUPTED;
    int status = cli_worst(cli_exit_for(lrc), cli_exit_for(wrc));
    if (!saved)
        return cli_worst(status, EXIT_IO);
    if (status == EXIT_OK)
        done_with_progress_file(r);
    return status;
}

static int load(run *r, const cli_files *files)
{
    t2b_flags *f = &r->f;
    if (f->progress_file)
        snprintf(r->progress_path, sizeof r->progress_path, "%s", f->progress_file);
    else
        t2b_default_progress_path(r->progress_path, sizeof r->progress_path, f);
    struct stat sb;
    if (!f->dry_run && stat(r->progress_path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        cli_log("progress file %s is a directory (choose a file with "
                "--progress_file)",
                r->progress_path);
        return EXIT_IO;
    }
    if (f->resume) {
        char err[4200];
        int prc =
            t2b_progress_read(r->progress_path, f, &f->start_index, &r->timestamp, err, sizeof err);
        if (prc == T2B_PROGRESS_MISSING) {
            /* so that "always pass --resume" works for the first run too */
            cli_log("--resume: no progress file %s yet; starting at record 0", r->progress_path);
            f->start_index = 0;
        } else if (prc) {
            cli_log("--resume: %s", err);
            return prc == T2B_PROGRESS_UNREADABLE ? EXIT_IO : EXIT_USAGE;
        } else if (!f->quiet) {
            cli_log("resuming at record %llu (from %s)", (unsigned long long)f->start_index,
                    r->progress_path);
        }
    }
    r->last_saved = f->start_index;
    if (!f->dry_run) {
        r->progress_made = access(r->progress_path, F_OK) != 0;
        /* A resume point that cannot be saved would make a failure or an
         * interruption unrecoverable: find out before loading anything. */
        if (t2b_progress_write(r->progress_path, f->start_index, r->timestamp, f) != 0) {
            cli_log("cannot write the progress file %s: %s (choose another "
                    "with --progress_file)",
                    r->progress_path, strerror(errno));
            return EXIT_IO;
        }
        int st = open_bigtable(r);
        if (st != EXIT_OK) {
            /* nothing was loaded: a resume point of this run's own is no use */
            if (r->progress_made)
                unlink(r->progress_path);
            return st;
        }
        t2b_progress_write(r->progress_path, f->start_index, r->timestamp, f);
    }
    tfrec_bt_load_options lo = TFREC_BT_LOAD_OPTIONS_INIT;
    lo.row_prefix = f->row_prefix;
    lo.column = f->column;
    lo.num_records = f->num_records;
    lo.start_index = f->start_index;
    lo.reversed_keys = f->reversed_keys;
    lo.max_rows_per_sec = f->max_rows_per_sec;
    lo.progress = on_progress;
    lo.progress_ctx = r;
    lo.progress_interval = 0.2;
    cli_fs_setup(); /* names through the default file system: gs:// with the storage part */
    lo.task_index = (uint32_t)f->task.index;
    lo.num_tasks = (uint32_t)f->task.count;
    uint64_t total = f->num_records > f->start_index ? f->num_records - f->start_index : 0;
    if (f->task.count > 1) {
        uint64_t begin = 0, end = 0; /* the share of num_records; else not known yet */
        if (f->num_records)
            tfrec_task_share(f->num_records, lo.task_index, lo.num_tasks, &begin, &end);
        if (f->start_index > begin)
            begin = f->start_index < end ? f->start_index : end;
        total = end - begin;
        if (!f->num_records && !f->quiet)
            cli_log("task %lld of %lld: counting the records of %zu files (no "
                    "--num_records)",
                    (long long)f->task.index, (long long)f->task.count, files->n);
    }
    if (!total && f->task.count <= 1)
        total = t2b_total_from_indexes(f, files);
    cli_progress_start(&r->prog, "rows", total, f->quiet || f->dry_run);
    r->total_known = total != 0;
    if (total && r->child_report)
        dprintf(r->child_report, "total %llu\n", (unsigned long long)total);
    tfrec_bt_load_stats st = TFREC_BT_LOAD_STATS_INIT;
    int lrc = tfrec_bt_load(r->writer, (const char *const *)files->paths, files->n, &lo, &st);
    char lmsg[1024];
    snprintf(lmsg, sizeof lmsg, "%s", lrc ? tfrec_last_errmsg() : "");
    if (f->dry_run) {
        if (lrc && lrc != TFREC_E_STATE)
            cli_log("%s", lmsg);
        else if (!f->quiet)
            dry_run_report(r, &st);
        warn_num_records(r, &st);
        if (!lrc)
            task_report(r, &st);
        return cli_interrupted ? EXIT_INTERRUPTED : cli_exit_for(lrc);
    }
    return finish(r, lrc, lmsg, &st);
}

int main(int argc, char **argv)
{
    cli_keep_heap();
    run r;
    memset(&r, 0, sizeof r);
    r.argc = argc;
    r.argv = argv;
    cli_cmdline cl;
    int status = t2b_parse_flags(&cl, argc, argv, &r.f);
    const char *report = getenv(T2B_REPORT_FD_ENV);
    if (report) { /* started by --processes; not passed on to anything this runs */
        r.child_report = atoi(report) > 2 ? atoi(report) : 0;
        unsetenv(T2B_REPORT_FD_ENV);
    }
    if (status == CLI_PARSED) {
        cli_catch_interrupts();
        signal(SIGPIPE, SIG_IGN);
        cli_files files = { 0 };
        char *pattern = (char *)r.f.source_glob; /* "-" stays: the reader takes stdin */
        const char *unmatched = NULL;
        int rc = cli_files_expand(&files, &pattern, 1, &unmatched);
        if (rc == TFREC_E_NOT_FOUND) {
            cli_log("no files match --source_glob=%s", r.f.source_glob);
            status = EXIT_IO;
        } else if (rc) {
            cli_log("--source_glob=%s: %s", r.f.source_glob,
                    cli_is_remote(r.f.source_glob) ? tfrec_last_errmsg() : tfrec_strerror(rc));
            status = EXIT_IO;
        } else if (r.f.processes > 1 && !r.f.dry_run) {
            char base[4096];
            if (r.f.progress_file)
                snprintf(base, sizeof base, "%s", r.f.progress_file);
            else
                t2b_default_progress_path(base, sizeof base, &r.f);
            status = t2b_run_processes(argc, argv, &r.f, base);
        } else {
            status = load(&r, &files);
        }
        cli_files_free(&files);
        cli_on_interrupt(NULL);
        stoppable = NULL;
        tfrec_bt_writer_free(r.writer);
        tfrec_bt_client_free(r.client);
    }
    cli_cmdline_free(&cl);
    return status;
}

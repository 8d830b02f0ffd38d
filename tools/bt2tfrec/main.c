/* bt2tfrec: read rows by prefix back out of Bigtable into a TFRecord file,
 * one record per row (the value of column_family:column), in key order.
 * The way back for verification, and for moving a table to files. */
#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/bt_conn.h"
#include "../common/exit_codes.h"
#include "../common/files.h"
#include "../common/flags.h"
#include "../common/progress.h"
#include "../common/signals.h"
#include "../common/task.h"
#include "tfrec/tfrec.h"

static const char usage[] =
    "usage: bt2tfrec --bigtable_instance=I --bigtable_table=T --output=FILE [flags]\n"
    "\n"
    "Read the rows whose key starts with --row_prefix, in key order, into one\n"
    "TFRecord file: one record per row, the value of <column_family>:<column>.\n"
    "--parallel_scans=N splits the prefix into N ranges of about equal size\n"
    "(SampleRowKeys) read concurrently, each by its own ReadRows calls (the\n"
    "summary counts them: none for a range without rows, one more for each\n"
    "resumption); with --output_shards each\n"
    "range goes to its own file FILE-iiiii-of-nnnnn, else the one file is still\n"
    "in key order. --task_index/--num_tasks (or JOB_COMPLETION_INDEX and\n"
    "TFREC_NUM_TASKS; --shard_index/--num_shards are the same): task i of n\n"
    "reads only its share of the ranges, into FILE-iiiii-of-nnnnn unless\n"
    "--output_shards. A stream that breaks is resumed after its last row.\n"
    "The outputs appear only when every row was read (written under a\n"
    "temporary name and renamed); SIGINT/SIGTERM stops within a second, even\n"
    "while waiting for a server that does not answer, removes the partial\n"
    "output and exits with status 130. A server never reached (nothing\n"
    "listening at the address, no connection) is reported within 10 s\n"
    "(or --retry_timeout if shorter), naming the endpoint, with status 3.\n";

static const char *const compressions[] = { "none", "zlib", "gzip", NULL };

typedef struct bt2_flags {
    const char *instance, *table, *project, *prefix, *family, *column, *output, *keys_path;
    const char *split_keys_path;
    int64_t max_rows;
    int quiet;
    int compression; /* index in compressions[] */
    int parallel_scans, output_shards, shard_index, num_shards;
    double retry_timeout_s;
    cli_bt_conn conn;
} bt2_flags;

static int run(const bt2_flags *f);

/* The reader a SIGINT/SIGTERM stops: a read waiting on a server that does
 * not answer returns within a quarter second instead of when the retries
 * run out, and the partial output is removed as for any interruption. */
static tfrec_bt_reader *volatile stoppable;

static void stop_reader(void)
{
    tfrec_bt_reader *r = stoppable;
    if (r)
        tfrec_bt_reader_stop(r); /* async-signal-safe: sets a flag */
}

/* --task_index/--num_tasks (defaults from the environment) and the older
 * names --shard_index/--num_shards for the same share: one pair or the
 * other. The shard flags, when given, leave the environment unread. */
static int resolve_task(const cli_cmdline *cl, bt2_flags *f, cli_task *task)
{
    int shards = cli_flag_seen(cl, "shard_index") || cli_flag_seen(cl, "num_shards");
    int tasks = cli_flag_seen(cl, "task_index") || cli_flag_seen(cl, "num_tasks");
    if (shards && tasks) {
        cli_usage_error(cl, "--shard_index/--num_shards and --task_index/--num_tasks name the "
                            "same share: give one pair");
        return EXIT_USAGE;
    }
    if (shards)
        return CLI_PARSED;
    int st = cli_task_resolve(cl, task);
    if (st != CLI_PARSED)
        return st;
    if (task->count > 65536) {
        cli_usage_error(cl, "--num_tasks=%lld: at most 65536 tasks read one table",
                        (long long)task->count);
        return EXIT_USAGE;
    }
    f->shard_index = (int)task->index;
    f->num_shards = (int)task->count;
    return CLI_PARSED;
}

/* Every received message is a malloc'ed buffer of about a row, freed once
 * merged: glibc's default of giving the top of the heap back to the kernel
 * and taking it again cost a quarter of the CPU for 110 KB rows in TLB
 * flushes and page faults (bench/RESULTS.md, "Bigtable reads: where the CPU
 * goes"). The heap this process keeps is bounded by its read buffers. */
static void keep_heap(void)
{
#ifdef __GLIBC__
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    mallopt(M_TOP_PAD, 32 << 20);
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
#endif
}

int main(int argc, char **argv)
{
    keep_heap();
    bt2_flags f = { 0 };
    f.prefix = "train_";
    f.family = "tfexample";
    f.column = "example";
    f.parallel_scans = 1;
    f.num_shards = 1;
    f.retry_timeout_s = 600;
    cli_task task = { 0, 1 };
    cli_flag flags[] = {
        { .name = "bigtable_instance",
          .type = CLI_STRING,
          .dest = &f.instance,
          .value_name = "I",
          .help = "Cloud Bigtable instance (required)" },
        { .name = "bigtable_table",
          .type = CLI_STRING,
          .dest = &f.table,
          .value_name = "T",
          .help = "table to read (required)" },
        { .name = "output",
          .type = CLI_PATH,
          .dest = &f.output,
          .value_name = "FILE",
          .help = "TFRecord file to write (required); gs://BUCKET/OBJECT\n"
                  "uploads it (the object appears only when complete)" },
        { .name = "project",
          .type = CLI_STRING,
          .dest = &f.project,
          .value_name = "P",
          .help = "project [from the GCE metadata server]" },
        { .name = "row_prefix",
          .type = CLI_STRING,
          .dest = &f.prefix,
          .value_name = "P",
          .help = "rows whose key starts with P [train_]; '' for all rows" },
        { .name = "column_family",
          .type = CLI_STRING,
          .dest = &f.family,
          .value_name = "F",
          .help = "[tfexample]" },
        { .name = "column",
          .type = CLI_STRING,
          .dest = &f.column,
          .value_name = "C",
          .help = "[example]" },
        { .name = "max_rows",
          .type = CLI_INT64,
          .dest = &f.max_rows,
          .min = 0,
          .max = INT64_MAX,
          .help = "stop after N rows [all]" },
        { .name = "keys_file",
          .type = CLI_LOCAL_PATH,
          .dest = &f.keys_path,
          .value_name = "FILE",
          .help = "also write each row key on its own line" },
        { .name = "compression",
          .type = CLI_CHOICE,
          .dest = &f.compression,
          .choices = compressions,
          .help = "of the output, as TFRecordOptions [none]" },
        { .name = "parallel_scans",
          .type = CLI_INT,
          .dest = &f.parallel_scans,
          .min = 1,
          .max = 256,
          .value_name = "N",
          .help = "split the rows into N ranges of about equal size, read\n"
                  "concurrently; the summary counts ranges and ReadRows\n"
                  "calls (a range without rows needs none, a resumed one\n"
                  "more) [1]" },
        { .name = "output_shards",
          .type = CLI_BOOL,
          .dest = &f.output_shards,
          .help = "one file per range, OUTPUT-iiiii-of-nnnnn, numbered over all\n"
                  "workers' ranges [one file in key order]" },
        { .name = "shard_index",
          .type = CLI_INT,
          .dest = &f.shard_index,
          .min = 0,
          .max = 65535,
          .value_name = "I",
          .help = "the same as --task_index (not both) [0]" },
        { .name = "num_shards",
          .type = CLI_INT,
          .dest = &f.num_shards,
          .min = 1,
          .max = 65536,
          .value_name = "N",
          .help = "the same as --num_tasks (not both) [1]" },
        { .name = "split_keys_file",
          .type = CLI_PATH,
          .dest = &f.split_keys_path,
          .value_name = "FILE",
          .help = "split points, one key a line, instead of SampleRowKeys (so\n"
                  "that workers cut the rows at the same keys)" },
        { .name = "retry_timeout",
          .type = CLI_DOUBLE,
          .dest = &f.retry_timeout_s,
          .dmin = 0.001,
          .dmax = 1e9,
          .value_name = "SECONDS",
          .help = "give up on a broken stream after this long without a row [600]" },
        { .name = "quiet", .type = CLI_BOOL, .dest = &f.quiet, .help = "no progress display" },
        CLI_BT_CONN_FLAGS(&f.conn),
        CLI_TASK_FLAGS(&task),
        { 0 }
    };
    cli_cmdline cl = { .prog = "bt2tfrec",
                       .usage = usage,
                       .flags = flags,
                       .max_args = 0,
                       .footer = "BIGTABLE_EMULATOR_HOST=host:port selects the emulator.\n" };
    int st = cli_parse(&cl, argc, argv);
    if (st == CLI_PARSED)
        st = resolve_task(&cl, &f, &task);
    if (st == CLI_PARSED) {
        if (!f.instance || !f.table || !f.output) {
            cli_usage_error(&cl, "--bigtable_instance, --bigtable_table and --output are required");
            st = EXIT_USAGE;
        } else if (f.shard_index >= f.num_shards) {
            cli_usage_error(&cl, "--shard_index must be below --num_shards");
            st = EXIT_USAGE;
        } else if (f.output_shards && !strcmp(f.output, "-")) {
            cli_usage_error(&cl, "--output_shards needs a file name, not -");
            st = EXIT_USAGE;
        } else {
            cli_catch_interrupts();
            cli_on_interrupt(stop_reader);
            st = run(&f);
        }
    }
    cli_cmdline_free(&cl);
    return st;
}

/* The files rows go to: one, or one per range of this worker. */
typedef struct outputs {
    tfrec_writer **w;
    char **names;
    size_t n;
} outputs;

/* Copy the rows the reader yields into the outputs (and their keys into keys). */
static int copy_rows(const bt2_flags *f, tfrec_bt_reader *rd, outputs *out, FILE *keys,
                     uint64_t *rows, uint64_t *bytes)
{
    cli_progress prog;
    cli_progress_start(&prog, "rows", (uint64_t)f->max_rows, f->quiet);
    size_t clen = strlen(f->column);
    int status = EXIT_OK, rc;
    tfrec_bt_row row = TFREC_BT_ROW_INIT;
    while (!cli_interrupted && (rc = tfrec_bt_reader_next(rd, &row)) == TFREC_OK) {
        const tfrec_bt_cell *cell = NULL;
        for (size_t i = 0; i < row.ncells; i++)
            if (!strcmp(row.cells[i]->family, f->family) && row.cells[i]->qualifier_len == clen &&
                !memcmp(row.cells[i]->qualifier, f->column, clen))
                cell = row.cells[i];
        if (!cell) {
            fprintf(stderr, "bt2tfrec: row %.*s has no %s:%s cell\n", (int)row.key_len,
                    (const char *)row.key, f->family, f->column);
            status = EXIT_DATA;
            break;
        }
        tfrec_writer *w = out->w[out->n > 1 ? row.range : 0];
        if ((rc = tfrec_writer_write(w, cell->value, cell->value_len))) {
            fprintf(stderr, "bt2tfrec: %s\n", tfrec_writer_errmsg(w));
            status = cli_worst(cli_exit_for(rc), EXIT_IO);
            break;
        }
        if (keys)
            fprintf(keys, "%.*s\n", (int)row.key_len, (const char *)row.key);
        (*rows)++;
        *bytes += cell->value_len;
        cli_progress_update(&prog, *rows, *bytes);
    }
    if (cli_interrupted) {
        fprintf(stderr, "bt2tfrec: interrupted after %llu rows\n", (unsigned long long)*rows);
        status = EXIT_INTERRUPTED;
    } else if (status == EXIT_OK && rc < 0) {
        fprintf(stderr, "bt2tfrec: %s\n", tfrec_bt_reader_errmsg(rd));
        status = cli_exit_for(rc);
    }
    cli_progress_finish(&prog);
    return status;
}

/* --output must be a file name: a directory would only be found out when
 * the finished file is renamed, after reading the whole table. */
static int check_output(const char *path)
{
    struct stat sb;
    if (strcmp(path, "-") != 0 && !cli_is_remote(path) && stat(path, &sb) == 0 &&
        S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "bt2tfrec: --output=%s is a directory; name the file to write\n", path);
        return EXIT_IO;
    }
    return EXIT_OK;
}

/* Split points: one key a line (a trailing \r dropped), blank lines skipped. */
typedef struct split_keys {
    char **keys;
    size_t *lens;
    size_t n;
} split_keys;

static int read_split_keys(const char *path, split_keys *sk)
{
    FILE *fp = cli_fopen_read(path); /* any name of the file system layer */
    if (!fp) {
        fprintf(stderr, "bt2tfrec: --split_keys_file=%s: %s\n", path, strerror(errno));
        return EXIT_IO;
    }
    char *line = NULL;
    size_t cap = 0, room = 0;
    ssize_t n;
    int status = EXIT_OK;
    while ((n = getline(&line, &cap, fp)) >= 0) {
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            line[--n] = 0;
        if (!n)
            continue;
        if (sk->n == room) {
            room = room ? 2 * room : 64;
            char **k = realloc(sk->keys, room * sizeof *k);
            size_t *l = k ? realloc(sk->lens, room * sizeof *l) : NULL;
            if (k)
                sk->keys = k;
            if (!l) {
                status = EXIT_IO;
                break;
            }
            sk->lens = l;
        }
        if (!(sk->keys[sk->n] = strdup(line))) {
            status = EXIT_IO;
            break;
        }
        sk->lens[sk->n++] = (size_t)n;
    }
    if (ferror(fp) || status) {
        fprintf(stderr, "bt2tfrec: could not read --split_keys_file=%s\n", path);
        status = EXIT_IO;
    }
    free(line);
    fclose(fp);
    return status;
}

static void split_keys_free(split_keys *sk)
{
    for (size_t i = 0; i < sk->n; i++)
        free(sk->keys[i]);
    free(sk->keys);
    free(sk->lens);
}

/* Output i of this task: OUTPUT-iiiii-of-nnnnn numbered over every task's
 * ranges with --output_shards; else one file, OUTPUT itself, or for a task
 * of a split job OUTPUT-iiiii-of-nnnnn numbered by task, so that the tasks
 * of one command line do not write the same file. */
static void output_name(const bt2_flags *f, size_t i, char *buf, size_t cap)
{
    if (f->output_shards)
        snprintf(buf, cap, "%s-%05ld-of-%05ld", f->output,
                 (long)f->shard_index * f->parallel_scans + (long)i,
                 (long)f->num_shards * f->parallel_scans);
    else if (f->num_shards > 1 && strcmp(f->output, "-") != 0)
        snprintf(buf, cap, "%s-%05d-of-%05d", f->output, f->shard_index, f->num_shards);
    else
        snprintf(buf, cap, "%s", f->output);
}

static int open_outputs(const bt2_flags *f, outputs *out)
{
    tfrec_writer_options wo = TFREC_WRITER_OPTIONS_INIT;
    wo.compression = TFREC_COMPRESSION_NONE + f->compression;
    out->n = f->output_shards ? (size_t)f->parallel_scans : 1;
    out->w = calloc(out->n, sizeof *out->w);
    out->names = calloc(out->n, sizeof *out->names);
    if (!out->w || !out->names) {
        fprintf(stderr, "bt2tfrec: out of memory\n");
        return EXIT_IO;
    }
    for (size_t i = 0; i < out->n; i++) {
        size_t len = strlen(f->output) + 32;
        if (!(out->names[i] = malloc(len)))
            return EXIT_IO;
        output_name(f, i, out->names[i], len);
        int rc = cli_writer_open(&out->w[i], out->names[i], &wo);
        if (rc) {
            fprintf(stderr, "bt2tfrec: %s\n", tfrec_last_errmsg());
            return cli_exit_for(rc);
        }
    }
    return EXIT_OK;
}

/* Close every output (or remove them all after a failure). */
static int close_outputs(outputs *out, int status)
{
    for (size_t i = 0; out->w && i < out->n; i++) {
        if (!out->w[i])
            continue;
        int rc;
        if (status)
            tfrec_writer_abort(out->w[i]); /* no partial output file */
        else if ((rc = tfrec_writer_close(out->w[i]))) {
            fprintf(stderr, "bt2tfrec: %s\n", tfrec_writer_errmsg(out->w[i]));
            status = cli_worst(cli_exit_for(rc), EXIT_IO);
        }
        tfrec_writer_free(out->w[i]);
        out->w[i] = NULL;
    }
    /* one failed close: the others, already renamed, would be a partial set */
    for (size_t i = 0; status && status != EXIT_INTERRUPTED && out->n > 1 && i < out->n; i++)
        if (out->names[i])
            remove(out->names[i]);
    for (size_t i = 0; out->names && i < out->n; i++)
        free(out->names[i]);
    free(out->names);
    free(out->w);
    return status;
}

static void summary(const bt2_flags *f, const outputs *out, const char *name, tfrec_bt_reader *rd,
                    uint64_t rows, uint64_t bytes, double secs)
{
    tfrec_bt_read_stats st = TFREC_BT_READ_STATS_INIT;
    tfrec_bt_reader_stats_get(rd, &st);
    char where[64];
    if (out->n > 1)
        snprintf(where, sizeof where, "%zu files", out->n);
    /* the same figures and units as tfrec2bt's summary */
    fprintf(stderr,
            "bt2tfrec: %llu rows (%.1f MB) read from %s into %s in %.2f s: %.0f rows/s, "
            "%.1f MB/s\n",
            (unsigned long long)rows, (double)bytes / 1e6, f->table, out->n > 1 ? where : name,
            secs, secs > 0 ? (double)rows / secs : 0, secs > 0 ? (double)bytes / 1e6 / secs : 0);
    if (f->parallel_scans > 1 || f->num_shards > 1 || st.resumed)
        /* Not "streams": a range with no rows needs no call, a resumed or
         * paused one another (--help says the same). */
        fprintf(stderr,
                "bt2tfrec: %llu ranges (task %d of %d) read concurrently, %llu ReadRows calls, "
                "%llu resumed\n",
                (unsigned long long)st.ranges, f->shard_index, f->num_shards,
                (unsigned long long)st.streams, (unsigned long long)st.resumed);
}

static int run(const bt2_flags *f)
{
    char name[4200]; /* the one output file's name, for messages */
    output_name(f, 0, name, sizeof name);
    int status = check_output(name);
    if (status)
        return status;
    split_keys sk = { 0 };
    if (f->split_keys_path && (status = read_split_keys(f->split_keys_path, &sk))) {
        split_keys_free(&sk);
        return status;
    }
    double t0 = cli_now();
    tfrec_bt_client *cl;
    tfrec_bt_client_options co = TFREC_BT_CLIENT_OPTIONS_INIT;
    co.project = f->project;
    co.instance = f->instance;
    cli_bt_conn_apply(&f->conn, &co);
    int rc = tfrec_bt_client_open(&cl, &co);
    if (rc) {
        fprintf(stderr, "bt2tfrec: %s%s\n", tfrec_last_errmsg(),
                rc == TFREC_E_INVALID && (!co.project || !*co.project) ? "; pass --project" : "");
        split_keys_free(&sk);
        return cli_exit_for(rc);
    }
    tfrec_bt_read_options ro = TFREC_BT_READ_OPTIONS_INIT;
    if (*f->prefix)
        ro.prefix = f->prefix;
    ro.rows_limit = f->max_rows;
    ro.family = f->family;
    ro.column = f->column; /* the latest cell of family:column, nothing else */
    ro.parallel_scans = f->parallel_scans;
    ro.shard_index = f->shard_index;
    ro.num_shards = f->num_shards;
    ro.unordered = f->output_shards; /* each file is still in key order */
    ro.retry_timeout_ms = (int64_t)(f->retry_timeout_s * 1000);
    if (sk.n) {
        ro.split_keys = (const void *const *)sk.keys;
        ro.split_key_lens = sk.lens;
        ro.n_split_keys = sk.n;
    }
    tfrec_bt_reader *rd = NULL;
    outputs out = { 0 };
    FILE *keys = NULL;
    uint64_t rows = 0, bytes = 0;
    /* the outputs first: a file that cannot be created fails before reading */
    if ((status = open_outputs(f, &out)))
        ;
    else if ((rc = tfrec_bt_reader_open(&rd, cl, f->table, &ro))) {
        fprintf(stderr, "bt2tfrec: %s\n", tfrec_last_errmsg());
        status = cli_exit_for(rc);
    } else if (f->keys_path && !(keys = fopen(f->keys_path, "w"))) {
        perror(f->keys_path);
        status = EXIT_IO;
    } else {
        stoppable = rd;
        status = copy_rows(f, rd, &out, keys, &rows, &bytes);
        stoppable = NULL;
    }
    if (keys && fclose(keys) != 0)
        status = cli_worst(status, EXIT_IO);
    status = close_outputs(&out, status);
    if (status == EXIT_INTERRUPTED)
        fprintf(stderr, "bt2tfrec: removed the partial output; %s was not written\n", name);
    if (!status && rows == 0)
        fprintf(stderr, "bt2tfrec: warning: no row of table %s %s%s%s; %s holds no records\n",
                f->table, *f->prefix ? "has a key starting with '" : "was found",
                *f->prefix ? f->prefix : "", *f->prefix ? "'" : "", name);
    if (!status && !f->quiet)
        summary(f, &out, name, rd, rows, bytes, cli_now() - t0);
    tfrec_bt_reader_free(rd);
    tfrec_bt_client_free(cl);
    split_keys_free(&sk);
    return status;
}

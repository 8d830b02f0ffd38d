/* bt2tfrec: read rows by prefix back out of Bigtable into a TFRecord file,
 * one record per row (the value of column_family:column), in key order.
 * The way back for verification, and for moving a table to files. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/bt_conn.h"
#include "../common/exit_codes.h"
#include "../common/files.h"
#include "../common/flags.h"
#include "../common/heap.h"
#include "../common/progress.h"
#include "../common/signals.h"
#include "../common/task.h"
#include "tfrec/bigtable_export.h"
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
    "reads only its share, into FILE-iiiii-of-nnnnn unless --output_shards.\n"
    "Tasks must cut the rows at the same keys: make a split plan once\n"
    "  bt2tfrec --write_split_plan=PLAN --num_shards=N --bigtable_table=T ...\n"
    "and give every task --split_plan=PLAN (or --split_keys_file for a table\n"
    "loaded by tfrec2bt). Without either a split task refuses to start;\n"
    "--split_keys=sample lets each task ask SampleRowKeys itself, which can\n"
    "lose or repeat rows (a warning says so). Each task writes a part file,\n"
    "FILE.part-iiiii-of-nnnnn, with its share and each output's size and\n"
    "CRC32C; --merge_parts=FILE (or a directory, or a pattern of part files)\n"
    "checks that the tasks' shares cover every row once and that every output\n"
    "is intact, and names the task to run again otherwise (exit status 1).\n"
    "A row without the cell fails the export (naming the row) unless\n"
    "--missing_cell=skip. A stream that breaks is resumed after its last row.\n"
    "The outputs appear only when every row was read (written under a\n"
    "temporary name and renamed); SIGINT/SIGTERM stops within a second, even\n"
    "while waiting for a server that does not answer, removes the partial\n"
    "output and exits with status 130. A server never reached (nothing\n"
    "listening at the address, no connection) is reported within 10 s\n"
    "(or --retry_timeout if shorter), naming the endpoint, with status 3.\n";

static const char *const compressions[] = { "none", "zlib", "gzip", NULL };
static const char *const missing_policies[] = { "error", "skip", NULL };

typedef struct bt2_flags {
    const char *instance, *table, *project, *prefix, *family, *column, *output, *keys_path;
    const char *split_keys_path, *split_keys, *split_plan, *write_plan, *merge_parts;
    int missing_cell; /* index in missing_policies[] */
    int64_t max_rows;
    int quiet;
    int compression; /* index in compressions[] */
    int parallel_scans, output_shards, shard_index, num_shards;
    double retry_timeout_s;
    cli_bt_conn conn;
} bt2_flags;

static int run(const bt2_flags *f);
static int write_plan(const bt2_flags *f);
static int merge_parts(const bt2_flags *f);

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

/* The defaults, before parsing. */
static void set_defaults(bt2_flags *f, cli_task *task)
{
    memset(f, 0, sizeof *f);
    f->prefix = "train_";
    f->family = "tfexample";
    f->column = "example";
    f->parallel_scans = 1;
    f->num_shards = 1;
    f->retry_timeout_s = 600;
    task->index = 0;
    task->count = 1;
}

/* The flag table, pointing into f and task, in --help order. Returns the
 * entries written (the last is the zeroed end), 0 when cap is too small. */
static size_t flag_table(bt2_flags *f, cli_task *task, cli_flag *out, size_t cap)
{
    const cli_flag flags[] = {
        CLI_BT_TABLE_FLAGS(&f->instance, &f->table, "Cloud Bigtable instance (required)",
                           "table to read (required)"),
        { .name = "output",
          .type = CLI_PATH,
          .dest = &f->output,
          .value_name = "FILE",
          .help = "TFRecord file to write (required); gs://BUCKET/OBJECT\n"
                  "uploads it (the object appears only when complete)" },
        CLI_BT_PROJECT_FLAG(&f->project),
        { .name = "row_prefix",
          .type = CLI_STRING,
          .dest = &f->prefix,
          .value_name = "P",
          .help = "rows whose key starts with P [train_]; '' for all rows" },
        CLI_BT_CELL_FLAGS(&f->family, &f->column, "[example]"),
        { .name = "max_rows",
          .type = CLI_INT64,
          .dest = &f->max_rows,
          .min = 0,
          .max = INT64_MAX,
          .help = "stop after N rows [all]" },
        { .name = "keys_file",
          .type = CLI_LOCAL_PATH,
          .dest = &f->keys_path,
          .value_name = "FILE",
          .help = "also write each row key on its own line" },
        { .name = "compression",
          .type = CLI_CHOICE,
          .dest = &f->compression,
          .choices = compressions,
          .help = "of the output, as TFRecordOptions [none]" },
        { .name = "parallel_scans",
          .type = CLI_INT,
          .dest = &f->parallel_scans,
          .min = 1,
          .max = 256,
          .value_name = "N",
          .help = "split the rows into N ranges of about equal size, read\n"
                  "concurrently; the summary counts ranges and ReadRows\n"
                  "calls (a range without rows needs none, a resumed one\n"
                  "more) [1]" },
        { .name = "output_shards",
          .type = CLI_BOOL,
          .dest = &f->output_shards,
          .help = "one file per range, OUTPUT-iiiii-of-nnnnn, numbered over all\n"
                  "workers' ranges [one file in key order]" },
        { .name = "shard_index",
          .type = CLI_INT,
          .dest = &f->shard_index,
          .min = 0,
          .max = 65535,
          .value_name = "I",
          .help = "the same as --task_index (not both) [0]" },
        { .name = "num_shards",
          .type = CLI_INT,
          .dest = &f->num_shards,
          .min = 1,
          .max = 65536,
          .value_name = "N",
          .help = "the same as --num_tasks (not both) [1]" },
        { .name = "split_keys_file",
          .type = CLI_PATH,
          .dest = &f->split_keys_path,
          .value_name = "FILE",
          .help = "split points, one key a line, instead of SampleRowKeys (so\n"
                  "that workers cut the rows at the same keys)" },
        { .name = "split_plan",
          .type = CLI_PATH,
          .dest = &f->split_plan,
          .value_name = "FILE",
          .help = "the split plan every task of a split export is given\n"
                  "(made once by --write_split_plan; local or gs://)" },
        { .name = "write_split_plan",
          .type = CLI_PATH,
          .dest = &f->write_plan,
          .value_name = "FILE",
          .help = "plan --num_shards shares of the rows (SampleRowKeys, or\n"
                  "--split_keys_file) into FILE and exit; nothing is exported" },
        { .name = "split_keys",
          .type = CLI_STRING,
          .dest = &f->split_keys,
          .value_name = "sample",
          .help = "sample: each task plans from its own SampleRowKeys (may lose\n"
                  "or repeat rows; only for a table whose tablets never change)" },
        { .name = "merge_parts",
          .type = CLI_LOCAL_PATH,
          .dest = &f->merge_parts,
          .value_name = "FILE|DIR|PATTERN",
          .help = "check the part files of an export's tasks (FILE.part-*, the\n"
                  "*.part-* of DIR, or a pattern) and their outputs; nothing is read\n"
                  "from Bigtable. With --split_plan, against that plan" },
        { .name = "missing_cell",
          .type = CLI_CHOICE,
          .dest = &f->missing_cell,
          .choices = missing_policies,
          .help = "a row without <column_family>:<column>: error or skip [error]" },
        { .name = "retry_timeout",
          .type = CLI_DOUBLE,
          .dest = &f->retry_timeout_s,
          .dmin = 0.001,
          .dmax = 1e9,
          .value_name = "SECONDS",
          .help = "give up on a broken stream after this long without a row [600]" },
        { .name = "quiet", .type = CLI_BOOL, .dest = &f->quiet, .help = "no progress display" },
        CLI_BT_CONN_FLAGS(&f->conn),
        CLI_TASK_FLAGS(task),
        { 0 }
    };
    return cli_flags_copy(out, cap, flags, sizeof flags / sizeof flags[0]);
}

/* What the flags together cannot mean, or NULL: the message of the usage
 * error, in the order the checks are listed. */
static const char *conflict(const bt2_flags *f, char *buf, size_t cap)
{
    if (!f->instance || !f->table || (!f->output && !f->write_plan))
        return "--bigtable_instance, --bigtable_table and --output (or --write_split_plan) are "
               "required";
    if (f->shard_index >= f->num_shards)
        return "--shard_index must be below --num_shards";
    if (f->output && f->output_shards && !strcmp(f->output, "-"))
        return "--output_shards needs a file name, not -";
    if (f->split_keys && strcmp(f->split_keys, "sample") != 0) {
        snprintf(buf, cap,
                 "--split_keys=%s: the only value is sample (split points go in "
                 "--split_keys_file, a shared plan in --split_plan)",
                 f->split_keys);
        return buf;
    }
    if (!!f->split_plan + !!f->split_keys_path + !!f->split_keys > 1)
        return "--split_plan, --split_keys_file and --split_keys=sample are three ways to cut "
               "the rows: give one";
    if (f->write_plan && (f->split_plan || f->split_keys))
        return "--write_split_plan plans from SampleRowKeys or --split_keys_file";
    return NULL;
}

/* A split export needs one plan for every task: say how to make it. */
static int refuse_unplanned_split(const bt2_flags *f)
{
    cli_log("task %d of %d: a split export needs the same split plan in "
            "every task, or tasks that each ask SampleRowKeys may lose or repeat rows.\n"
            "Make one plan:  bt2tfrec --write_split_plan=PLAN --num_shards=%d "
            "--bigtable_instance=%s --bigtable_table=%s --row_prefix='%s'\n"
            "then give every task --split_plan=PLAN (or --split_keys_file=FILE for a "
            "table loaded by tfrec2bt; --split_keys=sample accepts the risk).",
            f->shard_index, f->num_shards, f->num_shards, f->instance, f->table, f->prefix);
    return EXIT_USAGE;
}

/* The export itself, stopped by SIGINT/SIGTERM. */
static int export_rows(const bt2_flags *f)
{
    if (f->split_keys && f->num_shards > 1)
        cli_warn("--split_keys=sample: task %d of %d cuts the "
                 "rows at its own SampleRowKeys answer; tasks that get different "
                 "answers lose or repeat rows without an error (use "
                 "--split_plan)",
                 f->shard_index, f->num_shards);
    cli_catch_interrupts();
    cli_on_interrupt(stop_reader);
    return run(f);
}

/* What the parsed command line asks for: check parts, refuse, plan or export. */
static int dispatch(const cli_cmdline *cl, const bt2_flags *f)
{
    char buf[512];
    const char *why;
    if (f->merge_parts)
        return merge_parts(f);
    if ((why = conflict(f, buf, sizeof buf)) != NULL) {
        cli_usage_error(cl, "%s", why);
        return EXIT_USAGE;
    }
    if (!f->write_plan && f->num_shards > 1 && !f->split_plan && !f->split_keys_path &&
        !f->split_keys)
        return refuse_unplanned_split(f);
    if (f->write_plan)
        return write_plan(f);
    return export_rows(f);
}

#define MAX_FLAGS 64

int main(int argc, char **argv)
{
    cli_keep_heap();
    bt2_flags f;
    cli_task task;
    cli_flag flags[MAX_FLAGS];
    set_defaults(&f, &task);
    if (!flag_table(&f, &task, flags, MAX_FLAGS)) {
        cli_log("the flag table does not fit MAX_FLAGS");
        return EXIT_IO;
    }
    cli_cmdline cl = { .prog = "bt2tfrec",
                       .usage = usage,
                       .flags = flags,
                       .max_args = 0,
                       .footer = "BIGTABLE_EMULATOR_HOST=host:port selects the emulator.\n" };
    /* The export, plan and part files go through the library's default
     * file system: register gs:// (the storage part) before any is opened;
     * this program calls no cli_*_open that would pull that in. */
    cli_fs_setup();
    int st = cli_parse(&cl, argc, argv);
    if (st == CLI_PARSED) {
        int g = cli_bt_conn_share_with_gcs(&f.conn, "bt2tfrec");
        st = g != EXIT_OK ? g : st;
    }
    if (st == CLI_PARSED)
        st = resolve_task(&cl, &f, &task);
    if (st == CLI_PARSED)
        st = dispatch(&cl, &f);
    cli_cmdline_free(&cl);
    return st;
}

/* --output must be a file name: a directory would only be found out when
 * the finished file is renamed, after reading the whole table. */
static int check_output(const char *path)
{
    struct stat sb;
    if (strcmp(path, "-") != 0 && !cli_is_remote(path) && stat(path, &sb) == 0 &&
        S_ISDIR(sb.st_mode)) {
        cli_log("--output=%s is a directory; name the file to write", path);
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
        cli_log("--split_keys_file=%s: %s", path, strerror(errno));
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
        cli_log("could not read --split_keys_file=%s", path);
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

/* What every command that reads the table shares: the client, the row set
 * and how it is cut. */
typedef struct source {
    tfrec_bt_client *client;
    tfrec_bt_read_options ro;
    split_keys sk;
    tfrec_bt_plan *plan;
} source;

static void source_free(source *s)
{
    tfrec_bt_plan_free(s->plan);
    tfrec_bt_client_free(s->client);
    split_keys_free(&s->sk);
}

static int source_open(const bt2_flags *f, source *s)
{
    memset(s, 0, sizeof *s);
    int status;
    if (f->split_keys_path && (status = read_split_keys(f->split_keys_path, &s->sk)))
        return status;
    if (f->split_plan) {
        int rc = tfrec_bt_plan_read(&s->plan, NULL, f->split_plan);
        if (rc) {
            cli_log("--split_plan: %s", tfrec_last_errmsg());
            return rc == TFREC_E_PARSE ? EXIT_USAGE : cli_exit_for(rc);
        }
    }
    tfrec_bt_client_options co = TFREC_BT_CLIENT_OPTIONS_INIT;
    co.project = f->project;
    co.instance = f->instance;
    cli_bt_conn_apply(&f->conn, &co);
    int rc = tfrec_bt_client_open(&s->client, &co);
    if (rc) {
        cli_log("%s%s", tfrec_last_errmsg(),
                rc == TFREC_E_INVALID && (!co.project || !*co.project) ? "; pass --project" : "");
        return cli_exit_for(rc);
    }
    tfrec_bt_read_options *ro = &s->ro;
    tfrec_bt_read_options_init(ro);
    if (*f->prefix)
        ro->prefix = f->prefix;
    ro->rows_limit = f->max_rows;
    ro->parallel_scans = f->parallel_scans;
    ro->shard_index = f->shard_index;
    ro->num_shards = f->num_shards;
    ro->retry_timeout_ms = (int64_t)(f->retry_timeout_s * 1000);
    ro->plan = s->plan;
    ro->sample_split = f->split_keys != NULL;
    if (s->sk.n) {
        ro->split_keys = (const void *const *)s->sk.keys;
        ro->split_key_lens = s->sk.lens;
        ro->n_split_keys = s->sk.n;
    }
    return EXIT_OK;
}

static int write_plan(const bt2_flags *f)
{
    source s;
    int status = source_open(f, &s);
    tfrec_bt_plan *p = NULL;
    if (!status) {
        int rc = tfrec_bt_plan_create(&p, s.client, f->table, &s.ro);
        if (!rc)
            rc = tfrec_bt_plan_write(p, NULL, f->write_plan);
        if (rc) {
            cli_log("%s", tfrec_last_errmsg());
            status = cli_exit_for(rc);
        } else if (!f->quiet) {
            cli_log("split plan %08x for %zu shards of %s written to %s; give "
                    "every task --split_plan=%s",
                    (unsigned)tfrec_bt_plan_id(p), tfrec_bt_plan_num_shards(p),
                    tfrec_bt_plan_table(p), f->write_plan, f->write_plan);
        }
    }
    tfrec_bt_plan_free(p);
    source_free(&s);
    return status;
}

/* The part files --merge_parts names: FILE.part-*, DIR/ *.part-*, or a pattern. */
static int merge_parts(const bt2_flags *f)
{
    struct stat sb;
    char *arg;
    const char *pat = f->merge_parts;
    size_t len = strlen(pat) + 32;
    if (!(arg = malloc(len)))
        return EXIT_IO;
    if (stat(pat, &sb) == 0 && S_ISDIR(sb.st_mode))
        snprintf(arg, len, "%s/*.part-[0-9]*-of-[0-9]*", pat);
    else if (strpbrk(pat, "*?["))
        snprintf(arg, len, "%s", pat);
    else
        snprintf(arg, len, "%s.part-[0-9]*-of-[0-9]*", pat);
    cli_files parts = { 0 };
    const char *unmatched = NULL;
    int rc = cli_files_expand(&parts, &arg, 1, &unmatched);
    int status = EXIT_OK;
    if (rc) {
        cli_log("--merge_parts=%s: no part file matches %s", pat, arg);
        free(arg);
        return EXIT_DATA;
    }
    tfrec_bt_plan *plan = NULL;
    if (f->split_plan && (rc = tfrec_bt_plan_read(&plan, NULL, f->split_plan))) {
        cli_log("--split_plan: %s", tfrec_last_errmsg());
        status = EXIT_USAGE;
    }
    tfrec_bt_export_check_result res = TFREC_BT_EXPORT_CHECK_RESULT_INIT;
    if (!status) {
        rc = tfrec_bt_export_check(NULL, (const char *const *)parts.paths, parts.n, plan, &res);
        if (rc == TFREC_E_STATE) {
            cli_log("the export is not complete: %llu problem%s%s%s",
                    (unsigned long long)res.problems, res.problems == 1 ? "" : "s",
                    res.report ? "\n" : "", res.report ? res.report : "");
            status = EXIT_DATA;
        } else if (rc) {
            cli_log("%s", tfrec_last_errmsg());
            status = rc == TFREC_E_PARSE ? EXIT_DATA : cli_exit_for(rc);
        } else {
            printf("%llu tasks, %llu rows, %llu bytes, %llu outputs: every row once, every "
                   "output intact\n",
                   (unsigned long long)res.tasks, (unsigned long long)res.rows,
                   (unsigned long long)res.bytes, (unsigned long long)res.outputs);
        }
    }
    tfrec_bt_free(res.report);
    tfrec_bt_plan_free(plan);
    cli_files_free(&parts);
    free(arg);
    return status;
}

typedef struct prog_ctx {
    cli_progress prog;
} prog_ctx;

static void on_reader(void *ctx, tfrec_bt_reader *r)
{
    (void)ctx;
    stoppable = r;
}

static int on_progress(void *ctx, const tfrec_bt_export_stats *st)
{
    prog_ctx *p = ctx;
    cli_progress_update(&p->prog, st->rows, st->bytes);
    return cli_interrupted != 0;
}

static int run(const bt2_flags *f)
{
    char name[4200]; /* the one output file's name, for messages */
    tfrec_bt_export_output_name(name, sizeof name, f->output, f->shard_index, f->num_shards,
                                f->parallel_scans, f->output_shards, 0);
    int status = check_output(name);
    if (status)
        return status;
    double t0 = cli_now();
    source s;
    if ((status = source_open(f, &s))) {
        source_free(&s);
        return status;
    }
    tfrec_bt_export_options eo = TFREC_BT_EXPORT_OPTIONS_INIT;
    eo.family = f->family;
    eo.column = f->column;
    eo.missing_cell = f->missing_cell;
    eo.compression = TFREC_COMPRESSION_NONE + f->compression;
    eo.output_shards = f->output_shards;
    eo.keys_output = f->keys_path;
    prog_ctx pc;
    cli_progress_start(&pc.prog, "rows", (uint64_t)f->max_rows, f->quiet);
    eo.progress = on_progress;
    eo.progress_ctx = &pc;
    eo.progress_interval = 0.1;
    eo.on_reader = on_reader;
    tfrec_bt_export_stats st = TFREC_BT_EXPORT_STATS_INIT;
    int rc = tfrec_bt_export(s.client, f->table, f->output, &s.ro, &eo, &st);
    cli_progress_finish(&pc.prog);
    if (rc && cli_interrupted) {
        cli_log("interrupted after %llu rows", (unsigned long long)st.rows);
        cli_log("removed the partial output; %s was not written", name);
        status = EXIT_INTERRUPTED;
    } else if (rc) {
        cli_log("%s", tfrec_last_errmsg());
        status = rc == TFREC_E_NOT_FOUND && strstr(tfrec_last_errmsg(), " cell") ? EXIT_DATA
                                                                                 : cli_exit_for(rc);
    }
    if (!status && st.rows == 0)
        cli_warn("no row of table %s %s%s%s; %s holds no records", f->table,
                 *f->prefix ? "has a key starting with '" : "was found",
                 *f->prefix ? f->prefix : "", *f->prefix ? "'" : "", name);
    if (!status && st.rows_skipped)
        cli_log("skipped %llu rows without a %s:%s cell", (unsigned long long)st.rows_skipped,
                f->family, f->column);
    if (!status && !f->quiet) {
        double secs = cli_now() - t0;
        char where[64];
        snprintf(where, sizeof where, "%llu files", (unsigned long long)st.outputs);
        /* the same figures and units as tfrec2bt's summary */
        cli_log("%llu rows (%.1f MB) read from %s into %s in %.2f s: %.0f rows/s, "
                "%.1f MB/s",
                (unsigned long long)st.rows, (double)st.bytes / 1e6, f->table,
                st.outputs > 1 ? where : name, secs, secs > 0 ? (double)st.rows / secs : 0,
                secs > 0 ? (double)st.bytes / 1e6 / secs : 0);
        if (f->parallel_scans > 1 || f->num_shards > 1 || st.resumed)
            /* Not "streams": a range with no rows needs no call, a resumed or
             * paused one another (--help says the same). */
            cli_log("%llu ranges (task %d of %d) read concurrently, %llu ReadRows "
                    "calls, %llu resumed",
                    (unsigned long long)st.ranges, f->shard_index, f->num_shards,
                    (unsigned long long)st.streams, (unsigned long long)st.resumed);
    }
    source_free(&s);
    return status;
}

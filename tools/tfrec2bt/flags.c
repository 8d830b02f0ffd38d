/* Command-line flags: the reference's names, meanings and defaults, plus
 * our own; parsed by the tools' common flag module. */
#include <stdio.h>
#include <string.h>

#include "../common/exit_codes.h"

#include "tfrec2bt.h"

static const char usage[] =
    "usage: tfrec2bt --source_glob=GLOB --bigtable_instance=I --bigtable_table=T [flags]\n"
    "\n"
    "Load TFRecord files into Cloud Bigtable, one record per row: record i of the\n"
    "matched files (sorted by name, read in order) becomes row <row_prefix><i\n"
    "zero-padded> with the cell <column_family>:<column>, exactly as\n"
    "tensorflow/tpu's tools/datasets/tfrecords_to_bigtable.py writes it.\n";

static const char footer[] =
    "BIGTABLE_EMULATOR_HOST=host:port selects the emulator (no credentials).\n"
    "The progress file (default: tfrec2bt-<instance>-<table>-<row_prefix>.progress\n"
    "in the working directory) holds the resume point; it must be writable before\n"
    "anything is loaded. On SIGINT/SIGTERM reading stops, the calls in flight get\n"
    "--stop_timeout seconds, the progress file is saved and the command that\n"
    "continues the load is printed (status 130). --resume without a progress file\n"
    "starts at record 0, so it can always be given.\n"
    "--task_index=I --num_tasks=N (or JOB_COMPLETION_INDEX and TFREC_NUM_TASKS): run\n"
    "the same command N times, task I loading the I-th of N equal slices of the\n"
    "records (counted first unless --num_records is given) under the keys one\n"
    "process would write; each task has its own progress file.\n";

static const char *const key_orders[] = { "sequential", "reversed", NULL };

/* The reference's defaults and ours, before parsing. */
static void set_defaults(t2b_flags *f)
{
    memset(f, 0, sizeof *f);
    f->column_family = "tfexample";
    f->column = "example";
    f->row_prefix = "train_";
    f->retry_timeout_s = 600;
    f->max_failed_listed = 20;
    f->stop_timeout_s = 10;
    f->processes = 1;
}

/* The flag table, pointing into f, in --help order: the reference's flags,
 * then ours. Returns the entries written (the last is the zeroed end), 0
 * when cap is too small. */
static size_t flag_table(t2b_flags *f, cli_flag *out, size_t cap)
{
    const cli_flag flags[] = {
        { .name = "source_glob",
          .type = CLI_PATH,
          .dest = &f->source_glob,
          .value_name = "GLOB",
          .section = "Flags of tfrecords_to_bigtable.py (same meaning and defaults):",
          .help = "TFRecord files to load (sorted by name, read in order);\n"
                  "gs://BUCKET/train-* lists the bucket" },
        CLI_BT_TABLE_FLAGS(&f->instance, &f->table, "Cloud Bigtable instance", "table to write to"),
        CLI_BT_PROJECT_FLAG(&f->project),
        { .name = "num_records",
          .type = CLI_UINT64,
          .dest = &f->num_records,
          .umin = 1,
          .umax = UINT64_MAX,
          .help = "write at most N records; keys are zero-padded to the\n"
                  "digits of N-1 [all records, 10 digits]" },
        { .name = "num_parallel_reads",
          .type = CLI_INT,
          .dest = &f->num_parallel_reads,
          .min = 0,
          .max = 1 << 20,
          .help = "accepted; files are always read in order, so the keys\n"
                  "do not depend on it" },
        CLI_BT_CELL_FLAGS(&f->column_family, &f->column, "column qualifier [example]"),
        { .name = "row_prefix",
          .type = CLI_STRING,
          .dest = &f->row_prefix,
          .value_name = "P",
          .help = "row key prefix [train_]" },
        { .name = "start_index",
          .type = CLI_UINT64,
          .dest = &f->start_index,
          .section = "Beyond the reference:",
          .help = "skip the first N records (their keys keep their index)" },
        { .name = "resume",
          .type = CLI_BOOL,
          .dest = &f->resume,
          .help = "continue from the progress file's acknowledged index\n"
                  "(no progress file: start at record 0)" },
        { .name = "progress_file",
          .type = CLI_LOCAL_PATH,
          .dest = &f->progress_file,
          .value_name = "PATH",
          .help = "resume point [tfrec2bt-<instance>-<table>-<row_prefix>.progress,\n"
                  "in the working directory]" },
        { .name = "max_inflight",
          .type = CLI_INT,
          .dest = &f->max_inflight,
          .min = 1,
          .max = 64,
          .help = "MutateRows calls in flight [2]" },
        { .name = "connections",
          .type = CLI_INT,
          .dest = &f->connections,
          .min = 1,
          .max = 16,
          .help = "TCP connections the calls are spread over\n[one per call in flight]" },
        { .name = "processes",
          .type = CLI_INT,
          .dest = &f->processes,
          .min = 1,
          .max = 64,
          .help = "load with N processes at once, each a task's share of the\n"
                  "records (the keys do not change); one resume command [1]" },
        { .name = "batch_bytes",
          .type = CLI_SIZE,
          .dest = &f->batch_bytes,
          .umin = 1024,
          .umax = (uint64_t)1 << 40,
          .help = "request size limit, K/M/G suffixes [8M]" },
        { .name = "batch_rows",
          .type = CLI_UINT64,
          .dest = &f->batch_rows,
          .umin = 1,
          .umax = 99999,
          .help = "rows per request [5000]" },
        { .name = "max_message_bytes",
          .type = CLI_SIZE,
          .dest = &f->max_message_bytes,
          .umin = 1024,
          .umax = 0x7fffffff,
          .help = "gRPC channel message limit [256M]" },
        { .name = "retry_timeout",
          .type = CLI_DOUBLE,
          .dest = &f->retry_timeout_s,
          .dmin = 0,
          .dmax = 1e9,
          .value_name = "SECONDS",
          .help = "give up on a row this long after its first failure\n[600]; 0: no retries" },
        { .name = "rpc_timeout",
          .type = CLI_DOUBLE,
          .dest = &f->rpc_timeout_s,
          .dmin = 0.001,
          .dmax = 1e9,
          .value_name = "SECONDS",
          .help = "deadline of each MutateRows attempt [120]" },
        { .name = "stop_timeout",
          .type = CLI_DOUBLE,
          .dest = &f->stop_timeout_s,
          .dmin = 0,
          .dmax = 1e6,
          .value_name = "SECONDS",
          .help = "on SIGINT/SIGTERM, wait this long for the calls in\n"
                  "flight before cancelling them [10]" },
        { .name = "max_rows_per_sec",
          .type = CLI_DOUBLE,
          .dest = &f->max_rows_per_sec,
          .dmin = 0,
          .dmax = 1e12,
          .value_name = "R",
          .help = "throttle, to spare a cluster that is serving [unlimited]" },
        { .name = "timestamp_micros",
          .type = CLI_INT64,
          .dest = &f->timestamp_micros,
          .min = -1,
          .max = INT64_MAX,
          .value_name = "T",
          .help = "timestamp of every cell, in microseconds (whole milliseconds);\n"
                  "give the same T to every task of a split load so a re-run task\n"
                  "replaces its cells instead of adding versions; -1: server time\n"
                  "[the first run's start, kept in the progress file]" },
        { .name = "row_key_order",
          .type = CLI_CHOICE,
          .dest = &f->reversed_keys,
          .choices = key_orders,
          .help = "reversed writes the padded digits backwards, spreading\n"
                  "a sequential load over tablets (see docs/bigtable.md)" },
        { .name = "create_table",
          .type = CLI_BOOL,
          .dest = &f->create_table,
          .help = "create the table / column family if missing" },
        { .name = "dry_run",
          .type = CLI_BOOL,
          .dest = &f->dry_run,
          .help = "read and frame-check the files, show the keys; write nothing" },
        { .name = "quiet", .type = CLI_BOOL, .dest = &f->quiet, .help = "no progress display" },
        CLI_BT_CONN_FLAGS(&f->conn),
        CLI_TASK_FLAGS(&f->task),
        { 0 }
    };
    return cli_flags_copy(out, cap, flags, sizeof flags / sizeof flags[0]);
}

/* What the flags together cannot mean, or NULL: the message of the usage
 * error, in the order the checks are listed. */
static const char *conflict(const t2b_flags *f, char *buf, size_t cap)
{
    int from_stdin = f->source_glob && !strcmp(f->source_glob, "-");
    const char *missing = !f->source_glob                 ? "--source_glob"
                          : (!f->dry_run && !f->instance) ? "--bigtable_instance"
                          : (!f->dry_run && !f->table)    ? "--bigtable_table"
                                                          : NULL;
    if (missing) {
        snprintf(buf, cap, "%s is required", missing);
        return buf;
    }
    if (!*f->column_family || !*f->column)
        return "--column_family and --column must not be empty";
    if (f->task.count > 1 && !f->num_records && from_stdin) /* counting would consume it */
        return "a load split into tasks reads standard input only with --num_records";
    if (f->timestamp_micros > 0 && f->timestamp_micros % 1000) {
        /* Bigtable keeps cell timestamps at millisecond granularity */
        snprintf(buf, cap, "--timestamp_micros=%lld is not a whole number of milliseconds",
                 (long long)f->timestamp_micros);
        return buf;
    }
    if (f->processes > 1 && f->task.count > 1)
        return "--processes splits the load into tasks itself: it cannot run one task of "
               "--num_tasks (run each task with --processes=1)";
    if (f->processes > 1 && from_stdin)
        return "--processes needs files: the processes cannot share standard input";
    if (f->resume && f->start_index)
        return "use either --resume or --start_index, not both";
    return NULL;
}

#define MAX_FLAGS 80

int t2b_parse_flags(cli_cmdline *cl, int argc, char **argv, t2b_flags *f)
{
    cli_flag flags[MAX_FLAGS];
    set_defaults(f);
    memset(cl, 0, sizeof *cl);
    if (!flag_table(f, flags, MAX_FLAGS)) {
        cli_log("the flag table does not fit MAX_FLAGS");
        return EXIT_IO;
    }
    cl->prog = "tfrec2bt";
    cl->usage = usage;
    cl->footer = footer;
    cl->flags = flags;
    cl->max_args = 0; /* like the reference: no positional arguments */
    int st = cli_parse(cl, argc, argv);
    if (st == CLI_PARSED) {
        int g = cli_bt_conn_share_with_gcs(&f->conn, "tfrec2bt");
        st = g != EXIT_OK ? g : st;
    }
    if (st == CLI_PARSED) /* which flags were given: the table is still here */
        st = cli_task_resolve(cl, &f->task);
    cl->flags = NULL; /* the table lives on this stack frame */
    if (st != CLI_PARSED)
        return st;
    char buf[256];
    const char *why = conflict(f, buf, sizeof buf);
    if (why) {
        cli_usage_error(cl, "%s", why);
        return EXIT_USAGE;
    }
    return CLI_PARSED;
}

/* tfrec2bt: load TFRecord files into Cloud Bigtable (a drop-in for
 * tensorflow/tpu's tools/datasets/tfrecords_to_bigtable.py). */
#ifndef TFREC2BT_H
#define TFREC2BT_H

#include <stddef.h>
#include <stdint.h>

#include "../common/bt_conn.h"
#include "../common/files.h"
#include "../common/flags.h"
#include "../common/log.h"
#include "../common/task.h"

typedef struct t2b_flags {
    /* the reference script's flags */
    const char *source_glob, *instance, *table, *project;
    uint64_t num_records;   /* 0 = unset */
    int num_parallel_reads; /* accepted; reading stays in file order */
    const char *column_family, *column, *row_prefix;
    /* ours */
    uint64_t start_index;
    int resume;
    const char *progress_file; /* NULL: derived from instance and table */
    int max_inflight;
    int connections; /* 0: the writer's default */
    uint64_t batch_bytes, batch_rows;
    uint64_t max_message_bytes;
    double retry_timeout_s;
    double rpc_timeout_s; /* deadline of each call attempt, 0 = library default */
    int dry_run, create_table, quiet;
    cli_bt_conn conn;
    int reversed_keys; /* --row_key_order=reversed */
    int max_failed_listed;
    double max_rows_per_sec;  /* 0 = unlimited */
    double stop_timeout_s;    /* after SIGINT/SIGTERM: wait for calls in flight */
    cli_task task;            /* this process's share of the load */
    int64_t timestamp_micros; /* of every cell; 0: the first run's open time, -1: server time */
    int processes;            /* --processes: child processes, one task each */
} t2b_flags;

/* Parse argv into f (strings stay valid until cli_cmdline_free(cl)).
 * Returns CLI_PARSED, or an exit status after printing help or the error. */
int t2b_parse_flags(cli_cmdline *cl, int argc, char **argv, t2b_flags *f);

/* Rows per MutateRows request: --batch_rows (the writer's 5000 by default),
 * but with --max_rows_per_sec at most one second of the allowed rate, so a
 * throttled load sends something every second or so instead of filling a
 * batch for minutes. */
size_t t2b_batch_rows(const t2b_flags *f);

/* The rows a load of its own (no tasks, no --num_records) will write, for
 * the progress line's total and ETA: the sum of the files' fresh FILE.idx
 * counts less --start_index, or 0 (not known) when a file has no fresh
 * index or the input is standard input. */
uint64_t t2b_total_from_indexes(const t2b_flags *f, const cli_files *files);

/* Progress file: the next record index to load (everything below it is
 * acknowledged), the cell timestamp of the run (a resumed run writes with
 * the same one, so a row the server applied without acknowledging it is
 * replaced, not given a second version), plus the table, prefix and glob
 * it belongs to (reading refuses a file written for others). Written
 * atomically (temporary file + rename); -1 with errno set on failure.
 * A split load's file also names its task, and is refused by another.
 * Reading returns 0, T2B_PROGRESS_MISSING (no such file),
 * T2B_PROGRESS_UNREADABLE or T2B_PROGRESS_MISMATCH (written for other
 * flags, or not a progress file) with the reason in err; *timestamp is 0
 * when the file has none. */
enum { T2B_PROGRESS_UNREADABLE = -1, T2B_PROGRESS_MISMATCH = -2, T2B_PROGRESS_MISSING = -3 };
int t2b_progress_read(const char *path, const t2b_flags *f, uint64_t *next_index,
                      int64_t *timestamp, char *err, size_t errcap);
int t2b_progress_write(const char *path, uint64_t next_index, int64_t timestamp,
                       const t2b_flags *f);

/* The default progress file name, in the working directory:
 * tfrec2bt-<instance>-<table>-<row_prefix>.progress, or for task I of N
 * tfrec2bt-<instance>-<table>-<row_prefix>-task-IIIII-of-NNNNN.progress
 * (each task resumes on its own); characters other than letters, digits,
 * '.', '_' and '-' replaced by '_'. */
void t2b_default_progress_path(char *buf, size_t cap, const t2b_flags *f);

/* Is arg the flag `name` (-name, --name, --name=V, or --noname for a
 * boolean)? *takes_next: its value is the next argument. */
int t2b_is_flag(const char *arg, const char *name, int boolean, int *takes_next);

/* The command that continues a load, on stderr: argv without
 * --start_index/--resume/--progress_file/--task_index/--num_tasks, plus
 * --resume, the progress file's absolute path (the default one depends on
 * the working directory) and, with task, the task flags (the task may have
 * come from the environment, which a person re-running it does not have). */
void t2b_print_resume_command(int argc, char **argv, const char *progress_path,
                              const cli_task *task, int from_stdin);

/* --processes=N (N > 1): run this command as N child processes, tasks
 * 0..N-1 of N, each with its own progress file, progress_base with
 * -task-IIIII-of-NNNNN before its .progress; forward SIGINT/SIGTERM to
 * them, show one progress display and one summary, print one resume
 * command. Returns the exit status. */
int t2b_run_processes(int argc, char **argv, const t2b_flags *f, const char *progress_base);

/* The progress file of task index of count for a --processes load. */
void t2b_task_progress_path(char *buf, size_t cap, const char *base, int index, int count);

/* A --processes child reports to its parent through the file descriptor
 * in this variable: lines "progress ROWS BYTES" while it loads, then
 * "done ROWS BYTES REQUESTS RETRIED FAILED_CALLS SPLITS". */
#define T2B_REPORT_FD_ENV "TFREC2BT_REPORT_FD"

#endif

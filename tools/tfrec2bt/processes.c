/* --processes=N: one command runs N copies of itself, tasks 0..N-1 of N of
 * the --task_index/--num_tasks split (same keys as one process). Processes
 * rather than threads because the serialisation measured against the
 * emulator is inside one process's gRPC core (bench/RESULTS.md). The parent
 * forwards SIGINT/SIGTERM, adds up the children's reports into one progress
 * display and one summary, and prints one command that resumes every task. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/exit_codes.h"
#include "../common/progress.h"
#include "../common/signals.h"
#include "tfrec2bt.h"

#define MAX_ARGS 4096

typedef struct child {
    pid_t pid;
    int fd;     /* read end of its report pipe; -1 after end of file */
    int status; /* exit status once reaped, -1 before */
    int signal; /* the signal that ended it, 0 if it exited */
    int done;   /* its final "done" line arrived */
    int total_known;
    uint64_t total; /* rows of its share to write, once it knows */
    uint64_t rows, bytes, requests, retried, failed_calls, splits;
    char line[256];
    size_t len;
} child;

void t2b_task_progress_path(char *buf, size_t cap, const char *base, int index, int count)
{
    /* base.progress -> base-task-IIIII-of-NNNNN.progress: the name a task
     * run by hand gets by default, so both ways resume each other */
    size_t n = strlen(base), suffix = strlen(".progress");
    int has = n > suffix && !strcmp(base + n - suffix, ".progress");
    snprintf(buf, cap, "%.*s-task-%05d-of-%05d%s", (int)(has ? n - suffix : n), base, index, count,
             has ? ".progress" : "");
}

/* The child's end: its own process group (a terminal's ^C reaches only the
 * parent, which forwards it once), stopped when the parent dies, then this
 * program again as one task. Never returns. */
static void exec_child(char **argv, int report_fd, pid_t parent)
{
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent)
        _exit(EXIT_INTERRUPTED);
    int fd = fcntl(report_fd, F_DUPFD, 3); /* without close-on-exec */
    char num[32];
    snprintf(num, sizeof num, "%d", fd);
    if (fd < 0 || setenv(T2B_REPORT_FD_ENV, num, 1) != 0)
        _exit(EXIT_IO);
    execv("/proc/self/exe", argv);
    cli_log("cannot run a --processes child (/proc/self/exe): %s", strerror(errno));
    _exit(EXIT_IO);
}

/* Start child i of n: argv plus its task, its progress file and --quiet
 * (the parent draws the progress). 0, or -1 with a message. */
static int start_child(child *c, int argc, char **argv, int i, int n, const char *base)
{
    char task[3][4200];
    snprintf(task[0], sizeof task[0], "--task_index=%d", i);
    snprintf(task[1], sizeof task[1], "--num_tasks=%d", n);
    char path[4100];
    t2b_task_progress_path(path, sizeof path, base, i, n);
    snprintf(task[2], sizeof task[2], "--progress_file=%s", path);
    char *args[MAX_ARGS + 8];
    int k = 0;
    for (int j = 0; j < argc && j < MAX_ARGS && strcmp(argv[j], "--") != 0; j++)
        args[k++] = argv[j];
    args[k++] = task[0];
    args[k++] = task[1];
    args[k++] = task[2];
    args[k++] = "--processes=1";
    args[k++] = "--quiet";
    args[k] = NULL;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        cli_log("--processes: pipe: %s", strerror(errno));
        return -1;
    }
    pid_t parent = getpid();
    fflush(NULL);
    c->pid = fork();
    if (c->pid == 0)
        exec_child(args, fds[1], parent);
    close(fds[1]);
    if (c->pid < 0) {
        cli_log("--processes: fork: %s", strerror(errno));
        close(fds[0]);
        return -1;
    }
    c->fd = fds[0];
    c->status = -1;
    return 0;
}

static void parse_line(child *c, const char *line)
{
    unsigned long long v[6];
    if (sscanf(line, "total %llu", &v[0]) == 1) {
        c->total = v[0];
        c->total_known = 1;
    } else if (sscanf(line, "progress %llu %llu", &v[0], &v[1]) == 2) {
        c->rows = v[0];
        c->bytes = v[1];
    } else if (sscanf(line, "done %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
                      &v[5]) == 6) {
        c->rows = v[0];
        c->bytes = v[1];
        c->requests = v[2];
        c->retried = v[3];
        c->failed_calls = v[4];
        c->splits = v[5];
        c->done = 1;
    }
}

/* Read what the child wrote; at end of file close its pipe. */
static void read_reports(child *c)
{
    char buf[1024];
    ssize_t n = read(c->fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
        return;
    if (n <= 0) {
        close(c->fd);
        c->fd = -1;
        return;
    }
    for (ssize_t i = 0; i < n; i++) {
        if (buf[i] == '\n') {
            c->line[c->len] = '\0';
            parse_line(c, c->line);
            c->len = 0;
        } else if (c->len + 1 < sizeof c->line) {
            c->line[c->len++] = buf[i];
        }
    }
}

/* The rows of the whole load once every task has said its share's. */
static uint64_t known_total(const child *kids, int started, int n)
{
    uint64_t sum = 0;
    for (int i = 0; i < n; i++) {
        if (i >= started || !kids[i].total_known)
            return 0;
        sum += kids[i].total;
    }
    return sum;
}

/* Every task finished: the load is complete, no resume point is needed. */
static void remove_progress_files(const char *base, int n)
{
    char path[4100];
    for (int i = 0; i < n; i++) {
        t2b_task_progress_path(path, sizeof path, base, i, n);
        if (unlink(path) != 0 && errno != ENOENT)
            cli_warn("the load is complete but its progress file %s could not be removed: %s", path,
                     strerror(errno));
    }
}

static void reap(child *c)
{
    int ws;
    pid_t p;
    while ((p = waitpid(c->pid, &ws, 0)) < 0 && errno == EINTR)
        ;
    if (p != c->pid) {
        c->status = EXIT_IO;
        return;
    }
    if (WIFEXITED(ws)) {
        c->status = WEXITSTATUS(ws);
    } else {
        c->signal = WIFSIGNALED(ws) ? WTERMSIG(ws) : 0;
        c->status = EXIT_IO;
    }
}

int t2b_run_processes(int argc, char **argv, const t2b_flags *f, const char *progress_base)
{
    int n = f->processes;
    child *kids = calloc((size_t)n, sizeof *kids);
    if (!kids) {
        cli_log("out of memory");
        return EXIT_IO;
    }
    cli_progress prog;
    uint64_t total = f->num_records > f->start_index ? f->num_records - f->start_index : 0;
    cli_progress_start(&prog, "rows", total, f->quiet);
    int started = 0, status = EXIT_OK;
    for (; started < n && !cli_interrupted; started++)
        if (start_child(&kids[started], argc, argv, started, n, progress_base) != 0) {
            status = EXIT_IO;
            break;
        }
    int forwarded = 0; /* once only: a second signal ends a tfrec2bt at once */
    if (started < n) { /* a fork failed (or a signal came): stop the ones running */
        for (int i = 0; i < started; i++)
            kill(kids[i].pid, SIGTERM);
        forwarded = 1;
    }
    for (;;) {
        struct pollfd pf[64];
        int np = 0, map[64];
        for (int i = 0; i < started; i++)
            if (kids[i].fd >= 0) {
                pf[np].fd = kids[i].fd;
                pf[np].events = POLLIN;
                map[np++] = i;
            }
        if (!np)
            break;
        int sig = cli_interrupted;
        if (sig && !forwarded) { /* the children stop as one process would */
            for (int i = 0; i < started; i++)
                kill(kids[i].pid, sig);
            forwarded = 1;
        }
        int r = poll(pf, (nfds_t)np, 200);
        for (int j = 0; r > 0 && j < np; j++)
            if (pf[j].revents)
                read_reports(&kids[map[j]]);
        uint64_t rows = 0, bytes = 0;
        for (int i = 0; i < started; i++) {
            rows += kids[i].rows;
            bytes += kids[i].bytes;
        }
        if (!prog.total)
            prog.total = known_total(kids, started, n);
        cli_progress_update(&prog, rows, bytes);
    }
    for (int i = 0; i < started; i++)
        reap(&kids[i]);
    cli_progress_finish(&prog);
    int interrupted = cli_interrupted != 0;
    uint64_t rows = 0, bytes = 0, requests = 0, retried = 0, failed_calls = 0, splits = 0;
    for (int i = 0; i < started; i++) {
        child *c = &kids[i];
        rows += c->rows;
        bytes += c->bytes;
        requests += c->requests;
        retried += c->retried;
        failed_calls += c->failed_calls;
        splits += c->splits;
        if (c->signal)
            cli_log("task %d of %d (process %d) was killed by signal %d", i, n, (int)c->pid,
                    c->signal);
        else if (c->status != EXIT_OK && !(interrupted && c->status == EXIT_INTERRUPTED))
            cli_log("task %d of %d (process %d) failed with exit status %d; its "
                    "messages are above",
                    i, n, (int)c->pid, c->status);
        status = cli_worst(status, c->status);
    }
    double secs = cli_progress_elapsed(&prog);
    if (!f->quiet || status != EXIT_OK || interrupted)
        cli_log("%" PRIu64 " rows (%.1f MB) written to %s by %d processes in %.2f s: "
                "%.0f rows/s, %.1f MB/s; %" PRIu64 " requests, %" PRIu64
                " retried entries, %" PRIu64 " failed calls, %" PRIu64 " splits",
                rows, (double)bytes / 1e6, f->table, n, secs, secs > 0 ? (double)rows / secs : 0,
                secs > 0 ? (double)bytes / 1e6 / secs : 0, requests, retried, failed_calls, splits);
    if (status != EXIT_OK || interrupted) {
        char first[4100];
        t2b_task_progress_path(first, sizeof first, progress_base, 0, n);
        cli_log("%severy task saved its resume point (%s and the other tasks' files beside it)",
                interrupted ? "interrupted; " : "", first);
        t2b_print_resume_command(argc, argv, progress_base, NULL, 0);
    } else if (started == n)
        remove_progress_files(progress_base, n);
    free(kids);
    if (interrupted)
        return EXIT_INTERRUPTED;
    return status;
}

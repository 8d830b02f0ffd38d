/* The command that continues an interrupted or failed load. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tfrec2bt.h"

/* Print arg for a POSIX shell: as is when it is plain, else single-quoted. */
static void put_shell_word(FILE *out, const char *arg)
{
    if (*arg && !arg[strspn(arg, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                 "0123456789_-./=:,+@%")]) {
        fputs(arg, out);
        return;
    }
    fputc('\'', out);
    for (; *arg; arg++)
        if (*arg == '\'')
            fputs("'\\''", out);
        else
            fputc(*arg, out);
    fputc('\'', out);
}

/* Is argv[i] the flag `name` (any of -name, --name, --name=V, --noname)?
 * *takes_next: its value is the next argument. */
int t2b_is_flag(const char *arg, const char *name, int boolean, int *takes_next)
{
    *takes_next = 0;
    if (arg[0] != '-')
        return 0;
    arg += arg[1] == '-' ? 2 : 1;
    if (boolean && !strncmp(arg, "no", 2) && !strcmp(arg + 2, name))
        return 1;
    size_t n = strlen(name);
    if (strncmp(arg, name, n) != 0 || (arg[n] && arg[n] != '='))
        return 0;
    *takes_next = !boolean && !arg[n];
    return 1;
}

/* The command that continues this load: the same arguments without
 * --start_index/--resume/--progress_file/--task_index/--num_tasks, plus
 * --resume, the absolute progress file path (the default one depends on
 * the working directory) and, for a split load, the task flags (the task
 * may have come from the environment, which a person re-running it by
 * hand does not have). The command is one log line of its own, after the
 * prefix and two spaces. */
void t2b_print_resume_command(int argc, char **argv, const char *progress_path,
                              const cli_task *task, int from_stdin)
{
    char *cmd = NULL;
    size_t cmd_len = 0;
    FILE *out = open_memstream(&cmd, &cmd_len);
    if (!out) {
        cli_log("to continue, run the same command with --resume --progress_file=%s",
                progress_path);
        return;
    }
    put_shell_word(out, argv[0]);
    for (int i = 1; i < argc; i++) {
        int next;
        if (!strcmp(argv[i], "--")) {
            break;
        } else if (t2b_is_flag(argv[i], "start_index", 0, &next) ||
                   t2b_is_flag(argv[i], "progress_file", 0, &next) ||
                   t2b_is_flag(argv[i], "resume", 1, &next) ||
                   t2b_is_flag(argv[i], "task_index", 0, &next) ||
                   t2b_is_flag(argv[i], "num_tasks", 0, &next)) {
            i += next;
            continue;
        }
        fputc(' ', out);
        put_shell_word(out, argv[i]);
    }
    char abs[8192];
    const char *p = progress_path;
    char cwd[4096];
    if (p[0] != '/' && getcwd(cwd, sizeof cwd)) {
        snprintf(abs, sizeof abs, "%s/%s", cwd, p);
        p = abs;
    }
    if (task)
        fprintf(out, " --task_index=%lld --num_tasks=%lld", (long long)task->index,
                (long long)task->count);
    fputs(" --resume ", out);
    char flag[8300];
    snprintf(flag, sizeof flag, "--progress_file=%s", p);
    put_shell_word(out, flag);
    fclose(out);
    cli_log("to continue, run:\n  %s", cmd ? cmd : "");
    free(cmd);
    if (from_stdin)
        cli_log("  (with the same data on standard input: records below the resume "
                "point are read again, not written)");
}

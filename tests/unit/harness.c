#include "harness.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int current_failed;
static char tmpdir[4096];

void harness_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    current_failed = 1;
    fprintf(stdout, "    %s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stdout, fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
}

static void remove_tmpdir(void)
{
    if (tmpdir[0] && !getenv("HARNESS_KEEP_TMP")) {
        char cmd[4200];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove %s\n", tmpdir);
    }
}

const char *harness_tmpdir(void)
{
    if (!tmpdir[0]) {
        const char *base = getenv("TMPDIR");
        snprintf(tmpdir, sizeof tmpdir, "%s/tfrec-test-XXXXXX", base ? base : "/tmp");
        if (!mkdtemp(tmpdir)) {
            perror("mkdtemp");
            exit(2);
        }
        atexit(remove_tmpdir);
    }
    return tmpdir;
}

const char *harness_path(const char *name)
{
    static char slots[8][4200];
    static int next;
    char *p = slots[next++ & 7];
    snprintf(p, sizeof slots[0], "%s/%s", harness_tmpdir(), name);
    return p;
}

void harness_random(void *buf, size_t len, uint64_t seed)
{
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    unsigned char *p = buf;
    for (size_t i = 0; i < len; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        p[i] = (unsigned char)(x >> 24);
    }
}

int harness_main(int argc, char **argv, const harness_test *tests, size_t n)
{
    const char *only = argc > 1 ? argv[1] : NULL;
    int passed = 0, failed = 0;
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (size_t i = 0; i < n; i++) {
        if (only && !strstr(tests[i].name, only))
            continue;
        current_failed = 0;
        tests[i].fn();
        printf("%s %s\n", current_failed ? "FAIL" : "PASS", tests[i].name);
        if (current_failed)
            failed++;
        else
            passed++;
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

int harness_run_self(const char *const *argv, const char *const *envs, size_t nenv, char *out,
                     size_t cap)
{
    int fds[2];
    if (cap == 0 || pipe(fds) != 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        for (size_t i = 0; i < nenv; i++) {
            if (envs[2 * i + 1])
                setenv(envs[2 * i], envs[2 * i + 1], 1);
            else
                unsetenv(envs[2 * i]);
        }
        execv("/proc/self/exe", (char *const *)argv);
        _exit(127);
    }
    close(fds[1]);
    size_t got = 0;
    ssize_t n;
    while (got + 1 < cap && (n = read(fds[0], out + got, cap - 1 - got)) > 0)
        got += (size_t)n;
    out[got] = '\0';
    close(fds[0]);
    int st;
    if (waitpid(pid, &st, 0) < 0)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

#include "progress.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void cli_progress_start(cli_progress *p, const char *label, uint64_t total, int quiet)
{
    p->label = label;
    p->total = total;
    p->done = 0;
    p->bytes = 0;
    p->start = cli_now();
    p->last_draw = p->start;
    p->tty = isatty(STDERR_FILENO);
    /* Logs get a line every 10 s; a terminal is redrawn 5 times a second. */
    p->interval = p->tty ? 0.2 : 10.0;
    p->quiet = quiet;
    p->drawn = 0;
}

double cli_progress_elapsed(const cli_progress *p)
{
    return cli_now() - p->start;
}

static void format_duration(char *buf, size_t n, double s)
{
    /* Clamp so an absurd early estimate cannot overflow the field. */
    long t = s > 359999.0 ? 359999 : (long)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, n, "%ldh%02ldm", t / 3600, (t / 60) % 60);
    else
        snprintf(buf, n, "%ldm%02lds", t / 60, t % 60);
}

static void draw(cli_progress *p, double now)
{
    double el = now - p->start;
    double rate = el > 0 ? (double)p->done / el : 0;
    double mbs = el > 0 ? (double)p->bytes / el / 1e6 : 0;
    char eta[64] = "";
    if (p->total && rate > 0 && p->done <= p->total) {
        char d[48];
        format_duration(d, sizeof d, (double)(p->total - p->done) / rate);
        snprintf(eta, sizeof eta, " ETA %s", d);
    }
    char head[160];
    if (p->total)
        snprintf(head, sizeof head, "%llu/%llu %s (%.1f%%)", (unsigned long long)p->done,
                 (unsigned long long)p->total, p->label,
                 100.0 * (double)p->done / (double)p->total);
    else
        snprintf(head, sizeof head, "%llu %s", (unsigned long long)p->done, p->label);
    if (p->tty) {
        fputc('\r', stderr);
    } else {
        char prefix[160];
        cli_log_prefix(prefix, sizeof prefix, cli_log_name, 0);
        fputs(prefix, stderr);
    }
    fprintf(stderr, "%s  %.0f %s/s  %.1f MB/s%s%s", head, rate, p->label, mbs, eta,
            p->tty ? "\033[K" : "\n");
    fflush(stderr);
    p->drawn = 1;
    p->last_draw = now;
}

void cli_progress_update(cli_progress *p, uint64_t done, uint64_t bytes)
{
    p->done = done;
    p->bytes = bytes;
    if (p->quiet)
        return;
    double now = cli_now();
    if (now - p->last_draw >= p->interval)
        draw(p, now);
}

void cli_progress_finish(cli_progress *p)
{
    if (p->quiet || (!p->tty && !p->drawn))
        return;
    draw(p, cli_now());
    if (p->tty)
        fputc('\n', stderr);
}

/* Progress display for the command-line tools.
 *
 * On a terminal: one self-rewriting line on stderr with count, rate, MB/s and
 * ETA. Otherwise: a plain line every `interval` seconds (default 10), so logs
 * stay readable. Disabled entirely with quiet. Not thread-safe: call from one
 * thread (workers can publish counters with atomics for that thread to read). */
#ifndef TFREC_TOOLS_PROGRESS_H
#define TFREC_TOOLS_PROGRESS_H

#include <stdint.h>

#include "log.h" /* cli_log: the tools include this header for it */

typedef struct cli_progress {
    const char *label; /* "images", "records", "rows" */
    uint64_t total;    /* expected units, 0 if unknown (no ETA then) */
    uint64_t done;
    uint64_t bytes;
    double start, last_draw;
    double interval;
    int tty, quiet, drawn;
} cli_progress;

void cli_progress_start(cli_progress *p, const char *label, uint64_t total, int quiet);
/* Set the absolute counters; redraws at most a few times a second. */
void cli_progress_update(cli_progress *p, uint64_t done, uint64_t bytes);
/* Final redraw and newline. */
void cli_progress_finish(cli_progress *p);
/* Seconds since start (monotonic). */
double cli_progress_elapsed(const cli_progress *p);
/* Monotonic clock in seconds. */
double cli_now(void);

#endif

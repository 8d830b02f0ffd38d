/* SIGINT / SIGTERM for the tools. Either the first one sets cli_interrupted,
 * so a tool can stop cleanly (save its resume point, remove a partial
 * output) and exit with EXIT_INTERRUPTED, a second one terminating at once;
 * or, for tools with nothing to clean up, the first one exits at once with
 * EXIT_INTERRUPTED. A signal ignored when the tool starts (a background job
 * of a script, nohup) stays ignored. */
#ifndef TFREC_TOOLS_SIGNALS_H
#define TFREC_TOOLS_SIGNALS_H

#include <signal.h>

extern volatile sig_atomic_t cli_interrupted; /* the signal number, 0 if none */

void cli_catch_interrupts(void);
void cli_exit_on_interrupt(void);
/* With cli_catch_interrupts: also call fn from the handler (it must be
 * async-signal-safe, e.g. tfrec_bt_writer_stop). NULL removes it. */
void cli_on_interrupt(void (*fn)(void));

/* For a tool whose clean stop can be held up (a read blocked on a pipe or
 * a hung mount never returns to check cli_interrupted): the signals are
 * taken by a thread of their own. The first sets cli_interrupted; if the
 * tool has not finished within grace seconds, or a second signal comes,
 * that thread calls cleanup(ctx) (remove partial output) and exits with
 * EXIT_INTERRUPTED. Call before any other thread is started (the signals
 * are blocked in the threads created afterwards). */
void cli_catch_interrupts_cleanup(void (*cleanup)(void *ctx), void *ctx, double grace);

#endif

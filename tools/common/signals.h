/* SIGINT / SIGTERM for the tools: the first one sets cli_interrupted, so a
 * tool can stop cleanly (save its resume point, remove a partial output)
 * and exit with EXIT_INTERRUPTED; a second one terminates at once. */
#ifndef TFREC_TOOLS_SIGNALS_H
#define TFREC_TOOLS_SIGNALS_H

#include <signal.h>

extern volatile sig_atomic_t cli_interrupted; /* the signal number, 0 if none */

void cli_catch_interrupts(void);

#endif

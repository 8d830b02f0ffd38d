#include "signals.h"

#include <string.h>

volatile sig_atomic_t cli_interrupted;

static void on_signal(int sig)
{
    cli_interrupted = sig;
}

void cli_catch_interrupts(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    /* Restart interrupted reads (the loops check the flag between records);
     * reset to the default so a second signal ends a tool that is stuck. */
    sa.sa_flags = SA_RESTART | SA_RESETHAND;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

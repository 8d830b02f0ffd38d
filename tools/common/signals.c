#include "signals.h"

#include <string.h>
#include <unistd.h>

#include "exit_codes.h"

volatile sig_atomic_t cli_interrupted;
static void (*volatile on_interrupt)(void);

static void on_signal(int sig)
{
    cli_interrupted = sig;
    if (on_interrupt)
        on_interrupt();
}

void cli_on_interrupt(void (*fn)(void))
{
    on_interrupt = fn;
}

static void exit_now(int sig)
{
    (void)sig;
    _exit(EXIT_INTERRUPTED);
}

static void install(void (*handler)(int), int flags)
{
    static const int sigs[] = { SIGINT, SIGTERM };
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old, sa;
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = handler;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = flags;
        sigaction(sigs[i], &sa, NULL);
    }
}

void cli_catch_interrupts(void)
{
    /* Restart interrupted reads (the loops check the flag between records);
     * reset to the default so a second signal ends a tool that is stuck. */
    install(on_signal, SA_RESTART | SA_RESETHAND);
}

void cli_exit_on_interrupt(void)
{
    install(exit_now, 0);
}

#include "signals.h"

#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"

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
    install(on_signal, (int)(SA_RESTART | SA_RESETHAND)); /* SA_RESETHAND is 0x80000000u */
}

void cli_exit_on_interrupt(void)
{
    install(exit_now, 0);
}

static struct {
    sigset_t set;
    void (*cleanup)(void *);
    void *ctx;
    double grace;
} watch;

static void *watcher(void *arg)
{
    (void)arg;
    int sig;
    if (sigwait(&watch.set, &sig) != 0)
        return NULL;
    cli_interrupted = sig;
    struct timespec ts = { (time_t)watch.grace,
                           (long)((watch.grace - (double)(time_t)watch.grace) * 1e9) };
    siginfo_t si;
    int again = sigtimedwait(&watch.set, &si, &ts) > 0;
    /* Still running: the tool is stuck (or a second signal says hurry). */
    if (watch.cleanup)
        watch.cleanup(watch.ctx);
    cli_log("interrupted by %s and %s: stopped without waiting for the work in progress, "
            "partial output removed; run the same command again to start over",
            sig == SIGINT ? "SIGINT" : "SIGTERM",
            again ? "a second signal" : "not stopped cleanly in time (a read blocked?)");
    _exit(EXIT_INTERRUPTED);
}

void cli_catch_interrupts_cleanup(void (*cleanup)(void *ctx), void *ctx, double grace)
{
    static const int sigs[] = { SIGINT, SIGTERM };
    sigemptyset(&watch.set);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old;
        /* A signal ignored at start (nohup, a script's background job) stays so. */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        sigaddset(&watch.set, sigs[i]);
    }
    watch.cleanup = cleanup;
    watch.ctx = ctx;
    watch.grace = grace;
    pthread_t t;
    if (pthread_sigmask(SIG_BLOCK, &watch.set, NULL) != 0 ||
        pthread_create(&t, NULL, watcher, NULL) != 0) {
        pthread_sigmask(SIG_UNBLOCK, &watch.set, NULL);
        cli_catch_interrupts(); /* the flag alone, as before */
        return;
    }
    pthread_detach(t);
}

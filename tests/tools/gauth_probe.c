/* Drives the storage part's token source (lib/gauth/gauth.h) for
 * tests/python/test_gauth.py, which plays the token endpoint and
 * the metadata server.
 *
 *   gauth_probe [--file=F] [--anonymous] [--timeout-ms=N]
 *                      [--probe-ms=N] [--attempts=N] [--backoff-ms=N] STEP...
 *
 * Steps, run in order on one handle, each printing one line:
 *   get          "ok <header line>" or "err <code> <message>"
 *   force        the same with force_refresh
 *   sleep:MS     "slept MS"
 *   threads:N    N threads ask at once: "threads <ok> <distinct headers>",
 *                then "err ..." for each failure
 *   account      "account <name>"
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gauth/gauth.h"
#include "gauth/gauth_internal.h"

#define MAX_THREADS 64

typedef struct ask {
    tfrec_gauth *auth;
    pthread_barrier_t *start;
    int rc;
    char *header;
    char err[1024];
} ask;

static void *ask_once(void *p)
{
    ask *q = p;
    pthread_barrier_wait(q->start);
    q->rc = tfrec_gauth_header(q->auth, 0, &q->header, q->err, sizeof q->err);
    return NULL;
}

static void print_result(int rc, const char *header, const char *err)
{
    if (rc == 0)
        printf("ok %s\n", header ? header : "(none)");
    else
        printf("err %d %s\n", rc, err);
}

static int threads(tfrec_gauth *a, int n)
{
    if (n < 1 || n > MAX_THREADS)
        return 2;
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, (unsigned)n);
    ask q[MAX_THREADS];
    pthread_t th[MAX_THREADS];
    for (int i = 0; i < n; i++) {
        q[i] = (ask){ .auth = a, .start = &start };
        pthread_create(&th[i], NULL, ask_once, &q[i]);
    }
    int ok = 0, distinct = 0;
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < n; i++) {
        if (q[i].rc != 0)
            continue;
        ok++;
        int seen = 0;
        for (int k = 0; k < i && !seen; k++)
            seen = q[k].rc == 0 && strcmp(q[k].header, q[i].header) == 0;
        distinct += !seen;
    }
    printf("threads %d %d\n", ok, distinct);
    for (int i = 0; i < n; i++) {
        if (q[i].rc != 0)
            print_result(q[i].rc, NULL, q[i].err);
        free(q[i].header);
    }
    pthread_barrier_destroy(&start);
    return 0;
}

static int step(tfrec_gauth *a, const char *s)
{
    char err[1024] = "", *header = NULL;
    if (strcmp(s, "get") == 0 || strcmp(s, "force") == 0) {
        int rc = tfrec_gauth_header(a, s[0] == 'f', &header, err, sizeof err);
        print_result(rc, header, err);
        free(header);
    } else if (strncmp(s, "sleep:", 6) == 0) {
        long ms = atol(s + 6);
        struct timespec ts = { ms / 1000, ms % 1000 * 1000000L };
        nanosleep(&ts, NULL);
        printf("slept %ld\n", ms);
    } else if (strncmp(s, "threads:", 8) == 0) {
        return threads(a, atoi(s + 8));
    } else if (strcmp(s, "account") == 0) {
        printf("account %s\n", tfrec_gauth_account(a));
    } else {
        return 2;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *file = NULL;
    int anonymous = 0, i = 1;
    tfrec_gauth_tuning t = { 0 };
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
        const char *v = strchr(argv[i], '=');
        v = v ? v + 1 : "";
        if (strncmp(argv[i], "--file=", 7) == 0)
            file = v;
        else if (strcmp(argv[i], "--anonymous") == 0)
            anonymous = 1;
        else if (strncmp(argv[i], "--timeout-ms=", 13) == 0)
            t.timeout_ms = atol(v);
        else if (strncmp(argv[i], "--probe-ms=", 11) == 0)
            t.probe_timeout_ms = atol(v);
        else if (strncmp(argv[i], "--attempts=", 11) == 0)
            t.attempts = atoi(v);
        else if (strncmp(argv[i], "--backoff-ms=", 13) == 0)
            t.backoff_ms = atol(v);
        else
            break;
    }
    tfrec_gauth *a;
    char err[512];
    if (tfrec_gauth_new(&a, file, anonymous, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    tfrec_gauth_tune(a, &t);
    int rc = 0;
    for (; i < argc && rc == 0; i++) {
        rc = step(a, argv[i]);
        if (rc)
            fprintf(stderr, "gauth_probe: bad step %s\n", argv[i]);
        fflush(stdout);
    }
    tfrec_gauth_free(a);
    return rc;
}

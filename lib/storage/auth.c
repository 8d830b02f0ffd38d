/* Access tokens for Cloud Storage requests: the cache shared by every
 * thread of a client. One thread at a time refreshes (the others wait for
 * its result instead of each asking the token endpoint), and nothing is
 * held locked across the network exchange. A token is refreshed 5 minutes
 * before it expires, or halfway through its life if that is shorter; if
 * the refresh fails while the old token is still valid, the old one is
 * used until it expires. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>

#include "storage/auth_internal.h"
#include "tfrec/error.h"

#define REFRESH_MARGIN_S 300

struct tfrec_gcs_auth {
    int anonymous;
    char *credentials_file;
    tfrec_gcs_tuning tuning;

    pthread_mutex_t mu;
    pthread_cond_t done; /* a refresh finished */
    int refreshing;
    uint64_t refreshes; /* finished refreshes, successful or not */
    int resolved;       /* cred holds the chain's answer */
    tfrec_gcs_cred cred;
    char *header;                 /* "Authorization: Bearer ..." or NULL */
    double refresh_at, expire_at; /* monotonic seconds */
    int last_rc;
    char last_err[TFREC_GCS_ACCOUNT_MAX + 512];
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void set_err(char *err, size_t errcap, const char *msg)
{
    if (errcap)
        snprintf(err, errcap, "%s", msg);
}

int tfrec_gcs_auth_new(tfrec_gcs_auth **out, const char *credentials_file, int anonymous, char *err,
                       size_t errcap)
{
    tfrec_gcs_auth *a = calloc(1, sizeof *a);
    if (!a || (credentials_file && !(a->credentials_file = strdup(credentials_file)))) {
        free(a);
        set_err(err, errcap, "out of memory");
        return TFREC_E_NOMEM;
    }
    a->anonymous = anonymous;
    pthread_mutex_init(&a->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&a->done, &ca);
    pthread_condattr_destroy(&ca);
    tfrec_gcs_auth_tune(a, NULL);
    *out = a;
    return TFREC_OK;
}

void tfrec_gcs_auth_tune(tfrec_gcs_auth *a, const tfrec_gcs_tuning *t)
{
    tfrec_gcs_tuning d = { 30000, 1500, 4, 250 };
    if (t) {
        d.timeout_ms = t->timeout_ms > 0 ? t->timeout_ms : d.timeout_ms;
        d.probe_timeout_ms = t->probe_timeout_ms > 0 ? t->probe_timeout_ms : d.probe_timeout_ms;
        d.attempts = t->attempts > 0 ? t->attempts : d.attempts;
        d.backoff_ms = t->backoff_ms > 0 ? t->backoff_ms : d.backoff_ms;
    }
    pthread_mutex_lock(&a->mu);
    a->tuning = d;
    pthread_mutex_unlock(&a->mu);
}

static void free_header(char *h)
{
    if (h)
        OPENSSL_cleanse(h, strlen(h));
    free(h);
}

void tfrec_gcs_auth_free(tfrec_gcs_auth *a)
{
    if (!a)
        return;
    tfrec_gcs_cred_clear(&a->cred);
    free_header(a->header);
    free(a->credentials_file);
    pthread_cond_destroy(&a->done);
    pthread_mutex_destroy(&a->mu);
    free(a);
}

/* The network part of a refresh, run without the lock by the one thread
 * refreshing. cred is that thread's to fill while resolved == 0. */
static int fetch(tfrec_gcs_auth *a, int resolved, tfrec_gcs_cred *cred, const tfrec_gcs_tuning *t,
                 char **header, int64_t *life, char *err, size_t errcap)
{
    int rc;
    if (!resolved && (rc = tfrec_gcs_chain_resolve(cred, a->credentials_file, t, err, errcap)) < 0)
        return rc;
    char *token = NULL;
    if ((rc = tfrec_gcs_token_fetch(cred, t, &token, life, err, errcap)) < 0)
        return rc;
    size_t n = strlen(token) + 32;
    *header = malloc(n);
    if (*header)
        snprintf(*header, n, "Authorization: Bearer %s", token);
    OPENSSL_cleanse(token, strlen(token));
    free(token);
    if (!*header) {
        set_err(err, errcap, "out of memory");
        return TFREC_E_NOMEM;
    }
    return TFREC_OK;
}

/* Copy the cached header for the caller (lock held). */
static int hand_out(tfrec_gcs_auth *a, char **header, char *err, size_t errcap)
{
    if (!(*header = strdup(a->header))) {
        set_err(err, errcap, "out of memory");
        return TFREC_E_NOMEM;
    }
    return TFREC_OK;
}

int tfrec_gcs_auth_header(tfrec_gcs_auth *a, int force_refresh, char **header, char *err,
                          size_t errcap)
{
    *header = NULL;
    if (a->anonymous)
        return TFREC_OK;
    pthread_mutex_lock(&a->mu);
    uint64_t seen = a->refreshes;
    while (a->refreshing)
        pthread_cond_wait(&a->done, &a->mu);
    if (a->refreshes != seen) {
        /* A refresh began and ended while this call waited: its outcome is
         * as fresh as one this call would get (even after a 401). */
        int rc = a->last_rc;
        if (rc == TFREC_OK)
            rc = hand_out(a, header, err, errcap);
        else
            set_err(err, errcap, a->last_err);
        pthread_mutex_unlock(&a->mu);
        return rc;
    }
    if (a->header && !force_refresh && now_s() < a->refresh_at) {
        int rc = hand_out(a, header, err, errcap);
        pthread_mutex_unlock(&a->mu);
        return rc;
    }
    a->refreshing = 1;
    int resolved = a->resolved;
    tfrec_gcs_tuning t = a->tuning;
    pthread_mutex_unlock(&a->mu);

    tfrec_gcs_cred fresh = { 0 };
    char *h = NULL;
    int64_t life = 0;
    char msg[sizeof a->last_err] = "";
    int rc = fetch(a, resolved, resolved ? &a->cred : &fresh, &t, &h, &life, msg, sizeof msg);
    double t0 = now_s();

    pthread_mutex_lock(&a->mu);
    if (!resolved && fresh.kind) {
        a->cred = fresh; /* the chain is walked once; the account stays put */
        a->resolved = 1;
    }
    if (rc == TFREC_OK) {
        free_header(a->header);
        a->header = h;
        int64_t margin = life / 2 < REFRESH_MARGIN_S ? life / 2 : REFRESH_MARGIN_S;
        a->refresh_at = t0 + (double)(life - margin);
        a->expire_at = t0 + (double)life;
        rc = hand_out(a, header, err, errcap);
    } else {
        set_err(err, errcap, msg);
        /* A token that has not expired still works for this call, unless
         * the server just refused it. */
        if (a->header && !force_refresh && t0 < a->expire_at)
            rc = hand_out(a, header, err, errcap);
    }
    a->last_rc = *header ? TFREC_OK : rc;
    snprintf(a->last_err, sizeof a->last_err, "%s", msg);
    a->refreshing = 0;
    a->refreshes++;
    pthread_cond_broadcast(&a->done);
    pthread_mutex_unlock(&a->mu);
    return rc;
}

const char *tfrec_gcs_auth_account(tfrec_gcs_auth *a)
{
    if (a->anonymous)
        return "anonymous";
    pthread_mutex_lock(&a->mu);
    const char *s = a->resolved ? a->cred.account : "(credentials not looked up yet)";
    pthread_mutex_unlock(&a->mu);
    return s;
}

/* Token sources: one per set of credentials in the process, shared by
 * every client of both parts (a registry keyed by what the credentials
 * are read from), each with a token cache. One thread at a time refreshes (the others wait for
 * its result instead of each asking the token endpoint), and nothing is
 * held locked across the network exchange. A token is refreshed 5 minutes
 * before it expires, or halfway through its life if that is shorter; its
 * life counts from when it was asked for, not from when the answer came
 * (the server counts from issuing it, and a slow answer must not make it
 * look younger). If the refresh fails while the old token is still valid,
 * the old one is used until it expires. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>

#include "gauth/gauth_internal.h"
#include "util/config.h"
#include "tfrec/error.h"

#define REFRESH_MARGIN_S 300

/* A source lives as long as the process: a token outlives the client
 * that asked for it, so the next client (of either part) does not fetch
 * another. There are as many as distinct credentials were named. */
typedef struct source {
    struct source *next;
    char *key; /* what the credentials are read from; see source_key() */
    char *credentials_file;
    tfrec_gauth_tuning tuning;
    uint64_t fetched; /* tokens obtained */

    pthread_mutex_t mu;
    pthread_cond_t done; /* a refresh finished */
    int refreshing;
    uint64_t refreshes; /* finished refreshes, successful or not */
    int resolved;       /* cred holds the chain's answer */
    tfrec_gauth_cred cred;
    char *header;                 /* "Authorization: Bearer ..." or NULL */
    double refresh_at, expire_at; /* monotonic seconds */
    int last_rc;
    char last_err[TFREC_GAUTH_ACCOUNT_MAX + 512];
} source;

struct tfrec_gauth {
    int anonymous;
    source *src; /* NULL when anonymous */
};

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static source *registry;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void set_err(char *err, size_t errcap, const char *msg)
{
    if (errcap)
        snprintf(err, errcap, "%s", msg);
}

/* The registry key: the file, or the chain's inputs; either way the
 * token endpoint override, which changes where a key file's token comes
 * from. Two handles with equal keys would resolve the same credentials. */
static char *source_key(const char *file)
{
    static const tfrec_cfg_id chain[] = { TFREC_CFG_GOOGLE_APPLICATION_CREDENTIALS,
                                          TFREC_CFG_CLOUDSDK_CONFIG, TFREC_CFG_HOME,
                                          TFREC_CFG_GCE_METADATA_HOST,
                                          TFREC_CFG_GCE_METADATA_ROOT };
    size_t cap = 6 * 4200 + 16, n = 0;
    char *key = malloc(cap), v[4096];
    if (!key)
        return NULL;
    n += (size_t)snprintf(key + n, cap - n, "%s\n%s", file ? "file" : "chain", file ? file : "");
    if (!file)
        for (size_t i = 0; i < sizeof chain / sizeof chain[0]; i++) {
            tfrec_cfg(chain[i], v, sizeof v);
            n += (size_t)snprintf(key + n, cap - n, "\n%s", v);
        }
    tfrec_cfg(TFREC_CFG_TOKEN_URI, v, sizeof v);
    snprintf(key + n, cap - n, "\n%s", v);
    return key;
}

static source *source_new(char *key, const char *file)
{
    source *src = calloc(1, sizeof *src);
    if (!src || (file && !(src->credentials_file = strdup(file)))) {
        free(src);
        return NULL;
    }
    src->key = key;
    pthread_mutex_init(&src->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&src->done, &ca);
    pthread_condattr_destroy(&ca);
    src->tuning = (tfrec_gauth_tuning){ 30000, 1500, 4, 250 };
    return src;
}

int tfrec_gauth_new(tfrec_gauth **out, const char *credentials_file, int anonymous, char *err,
                    size_t errcap)
{
    *out = NULL;
    if (credentials_file && !*credentials_file)
        credentials_file = NULL;
    tfrec_gauth *a = calloc(1, sizeof *a);
    char *key = anonymous || !a ? NULL : source_key(credentials_file);
    if (!a || (!anonymous && !key)) {
        free(a);
        free(key);
        set_err(err, errcap, "out of memory");
        return TFREC_E_NOMEM;
    }
    a->anonymous = anonymous;
    if (!anonymous) {
        pthread_mutex_lock(&registry_lock);
        source *src = registry;
        while (src && strcmp(src->key, key) != 0)
            src = src->next;
        if (src) {
            free(key);
        } else if ((src = source_new(key, credentials_file))) {
            src->next = registry;
            registry = src;
        }
        pthread_mutex_unlock(&registry_lock);
        if (!src) {
            free(key);
            free(a);
            set_err(err, errcap, "out of memory");
            return TFREC_E_NOMEM;
        }
        a->src = src;
    }
    *out = a;
    return TFREC_OK;
}

void tfrec_gauth_tune(tfrec_gauth *a, const tfrec_gauth_tuning *t)
{
    if (!a->src)
        return;
    tfrec_gauth_tuning d = { 30000, 1500, 4, 250 };
    if (t) {
        d.timeout_ms = t->timeout_ms > 0 ? t->timeout_ms : d.timeout_ms;
        d.probe_timeout_ms = t->probe_timeout_ms > 0 ? t->probe_timeout_ms : d.probe_timeout_ms;
        d.attempts = t->attempts > 0 ? t->attempts : d.attempts;
        d.backoff_ms = t->backoff_ms > 0 ? t->backoff_ms : d.backoff_ms;
    }
    pthread_mutex_lock(&a->src->mu);
    a->src->tuning = d;
    pthread_mutex_unlock(&a->src->mu);
}

static void free_header(char *h)
{
    if (h)
        OPENSSL_cleanse(h, strlen(h));
    free(h);
}

void tfrec_gauth_free(tfrec_gauth *a)
{
    free(a); /* the source stays in the registry */
}

/* The network part of a refresh, run without the lock by the one thread
 * refreshing. cred is that thread's to fill while resolved == 0. */
static int fetch(source *a, int resolved, tfrec_gauth_cred *cred, const tfrec_gauth_tuning *t,
                 char **header, int64_t *life, double *asked_at, char *err, size_t errcap)
{
    int rc;
    if (!resolved &&
        (rc = tfrec_gauth_chain_resolve(cred, a->credentials_file, t, err, errcap)) < 0)
        return rc;
    char *token = NULL;
    *asked_at = now_s();
    if ((rc = tfrec_gauth_token_fetch(cred, t, &token, life, err, errcap)) < 0)
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
static int hand_out(source *a, char **header, char *err, size_t errcap)
{
    if (!(*header = strdup(a->header))) {
        set_err(err, errcap, "out of memory");
        return TFREC_E_NOMEM;
    }
    return TFREC_OK;
}

int tfrec_gauth_header(tfrec_gauth *g, int force_refresh, char **header, char *err, size_t errcap)
{
    *header = NULL;
    if (g->anonymous)
        return TFREC_OK;
    source *a = g->src;
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
    tfrec_gauth_tuning t = a->tuning;
    pthread_mutex_unlock(&a->mu);

    tfrec_gauth_cred fresh = { 0 };
    char *h = NULL;
    int64_t life = 0;
    char msg[sizeof a->last_err] = "";
    double asked_at = now_s();
    int rc =
        fetch(a, resolved, resolved ? &a->cred : &fresh, &t, &h, &life, &asked_at, msg, sizeof msg);
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
        a->refresh_at = asked_at + (double)(life - margin);
        a->expire_at = asked_at + (double)life;
        a->fetched++;
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

const char *tfrec_gauth_account(tfrec_gauth *h)
{
    if (h->anonymous)
        return "anonymous";
    pthread_mutex_lock(&h->src->mu);
    const char *s = h->src->resolved ? h->src->cred.account : "(credentials not looked up yet)";
    pthread_mutex_unlock(&h->src->mu);
    return s;
}

int tfrec_gauth_fresh(tfrec_gauth *h)
{
    if (h->anonymous)
        return 1;
    pthread_mutex_lock(&h->src->mu);
    int fresh = h->src->header && !h->src->refreshing && now_s() < h->src->refresh_at;
    pthread_mutex_unlock(&h->src->mu);
    return fresh;
}

uint64_t tfrec_gauth_tokens_fetched(tfrec_gauth *h)
{
    if (h->anonymous)
        return 0;
    pthread_mutex_lock(&h->src->mu);
    uint64_t n = h->src->fetched;
    pthread_mutex_unlock(&h->src->mu);
    return n;
}

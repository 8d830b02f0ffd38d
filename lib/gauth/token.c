/* Trading credentials for an access token: a signed JWT or a refresh token
 * POSTed to the token endpoint (RFC 6749 / RFC 7523), or a GET from the
 * metadata server. Connection failures, 408, 429 and 5xx are retried with
 * jittered exponential backoff; any other answer is final, and a refusal
 * is reported with the server's own `error` / `error_description`. */
#include <curl/curl.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "gauth/gauth_internal.h"
#include "tfrec/error.h"

#define ACCESS_TOKEN_MAX (16 * 1024)

static const char jwt_grant[] = "urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer";

/* Server text fit for a message: printable ASCII, shortened. */
static const char *shown(char *buf, size_t cap, const char *s)
{
    size_t n = 0;
    for (; *s && n + 4 < cap; s++)
        buf[n++] = *s >= 0x20 && *s < 0x7f ? *s : ' ';
    buf[n] = 0;
    if (*s)
        strcat(buf, "...");
    return buf;
}

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* Full jitter over [delay/2, delay]: spreads out clients that failed
 * together. */
static long jittered(long delay)
{
    static _Thread_local unsigned long long x;
    if (!x) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        x = (unsigned long long)ts.tv_nsec ^ (unsigned long long)(uintptr_t)&x ^
            0x9e3779b97f4a7c15ull;
    }
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    long half = delay / 2;
    return half + (half > 0 ? (long)(x % (unsigned long long)(half + 1)) : 0);
}

/* The request body for a key file (NULL with err set on failure). */
static char *request_form(const tfrec_gauth_cred *c, char *err, size_t errcap)
{
    char *form = NULL;
    if (c->kind == TFREC_GAUTH_CRED_SERVICE_ACCOUNT) {
        char *jwt = NULL, why[200];
        if (tfrec_gauth_jwt_sign(c->key, c->private_key_id, c->client_email, TFREC_GAUTH_SCOPE,
                                 c->token_uri, (int64_t)time(NULL), &jwt, why, sizeof why) < 0) {
            snprintf(err, errcap, "%s: %s", c->origin, why);
            return NULL;
        }
        size_t n = sizeof jwt_grant + strlen(jwt) + 32;
        if ((form = malloc(n)))
            snprintf(form, n, "grant_type=%s&assertion=%s", jwt_grant, jwt);
        free(jwt);
    } else {
        char *id = curl_easy_escape(NULL, c->client_id, 0);
        char *secret = curl_easy_escape(NULL, c->client_secret, 0);
        char *refresh = curl_easy_escape(NULL, c->refresh_token, 0);
        if (id && secret && refresh) {
            size_t n = strlen(id) + strlen(secret) + strlen(refresh) + 96;
            if ((form = malloc(n)))
                snprintf(form, n,
                         "grant_type=refresh_token&client_id=%s&client_secret=%s&refresh_token=%s",
                         id, secret, refresh);
        }
        if (secret)
            OPENSSL_cleanse(secret, strlen(secret));
        if (refresh)
            OPENSSL_cleanse(refresh, strlen(refresh));
        curl_free(id);
        curl_free(secret);
        curl_free(refresh);
    }
    if (!form)
        snprintf(err, errcap, "out of memory");
    return form;
}

/* "HTTP 400 (invalid_grant: Invalid JWT Signature.)" from a refusal. */
static void describe_refusal(const tfrec_gauth_http_reply *r, char *out, size_t cap)
{
    char a[160], b[240];
    tfrec_gauth_json *j = NULL;
    char why[80];
    const char *error = NULL, *desc = NULL;
    if (r->len && tfrec_gauth_json_parse(&j, r->body, r->len, why, sizeof why) == TFREC_OK) {
        error = tfrec_gauth_json_string(j, "error");
        desc = tfrec_gauth_json_string(j, "error_description");
    }
    if (error)
        snprintf(out, cap, "HTTP %ld (%s%s%s)", r->status, shown(a, sizeof a, error),
                 desc ? ": " : "", desc ? shown(b, sizeof b, desc) : "");
    else if (r->len)
        snprintf(out, cap, "HTTP %ld (%s)", r->status, shown(b, sizeof b, r->body));
    else
        snprintf(out, cap, "HTTP %ld", r->status);
    tfrec_gauth_json_free(j);
}

/* A 200 reply: the token and its lifetime. */
static int parse_token(const tfrec_gauth_http_reply *r, const char *who, char **token,
                       int64_t *expires_in, char *err, size_t errcap)
{
    tfrec_gauth_json *j = NULL;
    char why[120], buf[80];
    int rc = tfrec_gauth_json_parse(&j, r->body, r->len, why, sizeof why);
    if (rc < 0) {
        snprintf(err, errcap, "%s answered HTTP 200 with something other than a token (%s)", who,
                 why);
        return TFREC_E_PARSE;
    }
    const char *tok = tfrec_gauth_json_string(j, "access_token");
    const char *type = tfrec_gauth_json_string(j, "token_type");
    int64_t life = 3600;
    rc = TFREC_E_PARSE;
    if (!tok || !*tok) {
        snprintf(err, errcap, "%s answered HTTP 200 without an \"access_token\"", who);
    } else if (strlen(tok) > ACCESS_TOKEN_MAX ||
               strspn(tok, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
                           "-._~+/=") != strlen(tok)) {
        /* It goes into a header line: nothing that could end or fold it. */
        snprintf(err, errcap, "%s answered with a malformed \"access_token\"", who);
    } else if (type && strcasecmp(type, "Bearer") != 0) {
        snprintf(err, errcap, "%s answered with a token of type \"%s\", not Bearer", who,
                 shown(buf, sizeof buf, type));
    } else if (tfrec_gauth_json_has(j, "expires_in") &&
               (!tfrec_gauth_json_int(j, "expires_in", &life) || life <= 0)) {
        snprintf(err, errcap, "%s answered with a bad \"expires_in\"", who);
    } else if (!(*token = strdup(tok))) {
        snprintf(err, errcap, "out of memory");
        rc = TFREC_E_NOMEM;
    } else {
        *expires_in = life;
        rc = TFREC_OK;
    }
    tfrec_gauth_json_free(j);
    return rc;
}

static int transient(const tfrec_gauth_http_reply *r, int rc)
{
    if (rc == TFREC_E_NETWORK) {
        switch (r->curl_rc) {
        case CURLE_UNSUPPORTED_PROTOCOL:
        case CURLE_URL_MALFORMAT:
        case CURLE_PEER_FAILED_VERIFICATION:
        case CURLE_SSL_CACERT_BADFILE:
        case CURLE_SSL_CERTPROBLEM: return 0;
        default: return 1;
        }
    }
    return rc == TFREC_OK && (r->status == 408 || r->status == 429 || r->status >= 500);
}

int tfrec_gauth_token_fetch(const tfrec_gauth_cred *c, const tfrec_gauth_tuning *t, char **token,
                            int64_t *expires_in, char *err, size_t errcap)
{
    char url[600], who[800], what[400];
    int metadata = c->kind == TFREC_GAUTH_CRED_METADATA;
    if (metadata) {
        snprintf(url, sizeof url,
                 "http://%s/computeMetadata/v1/instance/service-accounts/default/token",
                 c->metadata_host);
        snprintf(who, sizeof who, "the GCE metadata server (%s)", url);
    } else {
        snprintf(url, sizeof url, "%s", c->token_uri);
        snprintf(who, sizeof who, "%s: token endpoint %s", c->origin, c->token_uri);
    }
    long delay = t->backoff_ms;
    tfrec_gauth_http_reply r = { 0 };
    for (int attempt = 1;; attempt++) {
        char *form = NULL;
        if (!metadata && !(form = request_form(c, err, errcap)))
            return TFREC_E_INVALID;
        int rc = tfrec_gauth_http(url, form, metadata, t->timeout_ms, t->timeout_ms, &r);
        if (form)
            OPENSSL_cleanse(form, strlen(form));
        free(form);
        if (rc == TFREC_OK && r.status == 200) {
            rc = parse_token(&r, who, token, expires_in, err, errcap);
            OPENSSL_cleanse(r.body, r.len);
            tfrec_gauth_http_reply_clear(&r);
            return rc;
        }
        if (rc == TFREC_E_NOMEM) {
            tfrec_gauth_http_reply_clear(&r);
            snprintf(err, errcap, "out of memory");
            return rc;
        }
        if (rc == TFREC_OK)
            describe_refusal(&r, what, sizeof what);
        else
            snprintf(what, sizeof what, "%s", r.curl_msg);
        int again = transient(&r, rc);
        tfrec_gauth_http_reply_clear(&r);
        if (!again) {
            snprintf(err, errcap, "%s %s: %s", who,
                     rc == TFREC_OK ? "refused the credentials" : "failed", what);
            return rc == TFREC_OK ? TFREC_E_INVALID : rc;
        }
        if (attempt >= t->attempts) {
            snprintf(err, errcap, "%s failed after %d attempts: %s", who, attempt, what);
            return TFREC_E_NETWORK;
        }
        sleep_ms(jittered(delay));
        delay *= 2;
    }
}

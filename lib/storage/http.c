/* One request to the JSON API over libcurl, the retry policy around it,
 * and the mapping of HTTP failures to errors that name the object. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "storage/storage_internal.h"

uint64_t tfrec_gcs_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ------------------------------------------------------------ retries */

void tfrec_gcs_retry_start(const tfrec_storage *st, gcs_retry *r)
{
    uint32_t d = st->opts.retry_deadline_ms ? st->opts.retry_deadline_ms : 600000u;
    r->deadline_ms = tfrec_gcs_now_ms() + d;
    r->delay_ms = st->backoff_first_ms ? st->backoff_first_ms : 500u;
    r->attempts = 1;
    r->seed = tfrec_gcs_now_ms() ^ (uint64_t)(uintptr_t)r ^ 0x9E3779B97F4A7C15ull;
}

uint64_t tfrec_gcs_retry_after_ms(const char *v, int64_t now_s)
{
    if (!v || !*v)
        return 0;
    if (*v >= '0' && *v <= '9') {
        /* delay-seconds: digits only */
        uint64_t s = 0;
        for (; *v >= '0' && *v <= '9'; v++)
            if ((s = s * 10 + (uint64_t)(*v - '0')) > 86400u * 365u)
                s = 86400u * 365u;
        return *v ? 0 : s * 1000u;
    }
    time_t when = curl_getdate(v, NULL); /* an HTTP date */
    return when == (time_t)-1 || (int64_t)when <= now_s ? 0
                                                        : (uint64_t)((int64_t)when - now_s) * 1000u;
}

int tfrec_gcs_retry_wait_after(tfrec_storage *st, gcs_retry *r, const gcs_resp *resp)
{
    uint64_t asked = resp ? tfrec_gcs_retry_after_ms(resp->retry_after, (int64_t)time(NULL)) : 0;
    /* Half the delay fixed, half random: many clients that failed together
     * do not come back together. A server that says when to come back
     * (429, 503 with Retry-After) is not asked sooner, within a bound. */
    r->seed ^= r->seed << 13;
    r->seed ^= r->seed >> 7;
    r->seed ^= r->seed << 17;
    unsigned half = r->delay_ms / 2;
    uint64_t sleep_ms = half + (half ? (unsigned)(r->seed % (half + 1)) : 0);
    if (asked > GCS_MAX_RETRY_AFTER_MS)
        asked = GCS_MAX_RETRY_AFTER_MS;
    if (asked > sleep_ms)
        sleep_ms = asked;
    if (tfrec_gcs_now_ms() + sleep_ms >= r->deadline_ms)
        return -1;
    struct timespec ts = { (time_t)(sleep_ms / 1000), (long)(sleep_ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0) {
    }
    if (r->delay_ms < 32000u)
        r->delay_ms *= 2;
    r->attempts++;
    atomic_fetch_add(&st->retries, 1);
    return 0;
}

int tfrec_gcs_retry_wait(tfrec_storage *st, gcs_retry *r)
{
    return tfrec_gcs_retry_wait_after(st, r, NULL);
}

int tfrec_gcs_status_retryable(long s)
{
    return s == 408 || s == 429 || s == 500 || s == 502 || s == 503 || s == 504;
}

int tfrec_gcs_curl_retryable(CURLcode c)
{
    switch (c) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_PARTIAL_FILE:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_WEIRD_SERVER_REPLY: return 1;
    default: return 0;
    }
}

/* ------------------------------------------------------------ secrets */

void tfrec_gcs_wipe(void *p, size_t n)
{
    if (p)
        explicit_bzero(p, n);
}

void tfrec_gcs_headers_free(struct curl_slist *h)
{
    /* curl_slist_append copied the Authorization line: wipe that copy too
     * (the bearer token in it is a credential). */
    for (struct curl_slist *p = h; p; p = p->next)
        if (p->data && strncasecmp(p->data, "authorization:", 14) == 0)
            tfrec_gcs_wipe(p->data, strlen(p->data));
    curl_slist_free_all(h);
}

/* Query parameters whose values are capabilities: a resumable session's
 * id lets anyone holding it write the object; the others are the usual
 * names of signed-URL and token parameters. */
static int secret_param(const char *k, size_t n)
{
    static const char *const names[] = {
        "upload_id", "access_token", "x-goog-signature", "x-goog-credential", "signature",
        "key",       "token"
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strlen(names[i]) == n && strncasecmp(k, names[i], n) == 0)
            return 1;
    return 0;
}

void tfrec_gcs_redact_url(const char *url, char *out, size_t cap)
{
    if (!cap)
        return;
    size_t o = 0;
    const char *q = url ? strchr(url, '?') : NULL;
    const char *p = url ? url : "";
#define PUT(ch)              \
    do {                     \
        if (o + 1 < cap)     \
            out[o++] = (ch); \
    } while (0)
    const char *end = q ? q + 1 : p + strlen(p);
    for (; p < end; p++)
        PUT(*p);
    while (q && *p) {
        /* one key=value */
        size_t klen = strcspn(p, "=&;?#");
        size_t vlen = p[klen] == '=' ? strcspn(p + klen + 1, "&;?#") : 0;
        int hide = p[klen] == '=' && secret_param(p, klen);
        for (size_t i = 0; i < klen; i++)
            PUT(p[i]);
        p += klen;
        if (*p == '=') {
            PUT('=');
            p++;
            if (hide) {
                for (const char *r = "REDACTED"; *r; r++)
                    PUT(*r);
            } else {
                for (size_t i = 0; i < vlen; i++)
                    PUT(p[i]);
            }
            p += vlen;
        }
        if (*p == '&' || *p == ';' || *p == '?') {
            /* ';' and a second '?' separate parameters for some servers */
            PUT(*p);
            p++;
        } else if (*p) {
            /* a fragment or a stray separator: nothing after it is shown */
            break;
        }
    }
#undef PUT
    out[o] = 0;
    /* Cut short: say so rather than end in the middle of a value. */
    if (o + 1 >= cap && cap > 4)
        memcpy(out + cap - 4, "...", 4);
}

/* ------------------------------------------------------------ responses */

void tfrec_gcs_resp_free(gcs_resp *resp)
{
    free(resp->body);
    memset(resp, 0, sizeof *resp);
}

void tfrec_gcs_resp_reset(gcs_resp *resp)
{
    tfrec_gcs_resp_free(resp);
}

static void keep_header(char *dst, size_t cap, const char *v, size_t n, int append)
{
    size_t have = append ? strlen(dst) : 0;
    if (append && have && have + 1 < cap)
        dst[have++] = ',';
    if (have + n >= cap)
        n = have < cap ? cap - have - 1 : 0;
    memcpy(dst + have, v, n);
    dst[have + n] = 0;
}

void tfrec_gcs_resp_header(gcs_resp *r, const char *p, size_t n)
{
    size_t len = n;
    while (len && (p[len - 1] == '\r' || p[len - 1] == '\n'))
        len--;
    if (len > 5 && strncmp(p, "HTTP/", 5) == 0) {
        /* A new response (after a 100 Continue): forget the last one's. */
        const char *sp = memchr(p, ' ', len);
        long status = 0;
        int digits = 0;
        if (sp)
            for (const char *d = sp + 1; d < p + len && *d >= '0' && *d <= '9' && digits < 3;
                 d++, digits++)
                status = status * 10 + (*d - '0');
        r->status = digits == 3 && status >= 100 ? status : 0;
        r->location[0] = r->range[0] = r->content_range[0] = 0;
        r->goog_hash[0] = r->goog_generation[0] = r->retry_after[0] = 0;
        return;
    }
    const char *colon = memchr(p, ':', len);
    if (!colon)
        return;
    size_t kl = (size_t)(colon - p);
    const char *v = colon + 1;
    while (v < p + len && (*v == ' ' || *v == '\t'))
        v++;
    size_t vl = (size_t)(p + len - v);
    while (vl && (v[vl - 1] == ' ' || v[vl - 1] == '\t'))
        vl--;
    /* A NUL inside a value would cut it short unseen: such a header is
     * dropped (it cannot come from a real server). */
    if (memchr(v, 0, vl))
        return;
#define IS(name) (kl == sizeof(name) - 1 && strncasecmp(p, name, kl) == 0)
    if (IS("location"))
        keep_header(r->location, sizeof r->location, v, vl, 0);
    else if (IS("range"))
        keep_header(r->range, sizeof r->range, v, vl, 0);
    else if (IS("content-range"))
        keep_header(r->content_range, sizeof r->content_range, v, vl, 0);
    else if (IS("x-goog-hash"))
        keep_header(r->goog_hash, sizeof r->goog_hash, v, vl, 1);
    else if (IS("x-goog-generation"))
        keep_header(r->goog_generation, sizeof r->goog_generation, v, vl, 0);
    else if (IS("retry-after"))
        keep_header(r->retry_after, sizeof r->retry_after, v, vl, 0);
#undef IS
}

static size_t on_header(char *p, size_t size, size_t nitems, void *ud)
{
    /* libcurl's header buffer is not NUL-terminated: parsed by length. */
    tfrec_gcs_resp_header(ud, p, size * nitems);
    return size * nitems;
}

/* Decimal digits only (no sign, no space), at most 19 of them. */
static const char *parse_u64(const char *p, uint64_t *out)
{
    uint64_t v = 0;
    int n = 0;
    while (*p >= '0' && *p <= '9') {
        if (++n > 19)
            return NULL;
        v = v * 10 + (uint64_t)(*p++ - '0');
    }
    if (!n)
        return NULL;
    *out = v;
    return p;
}

int tfrec_gcs_parse_content_range(const char *v, uint64_t *first, uint64_t *last, uint64_t *total)
{
    if (strncasecmp(v, "bytes ", 6) != 0)
        return -1;
    const char *p = v + 6;
    uint64_t a, z, t;
    if (*p == '*') {
        /* "bytes *", a slash and N: no range (a 416 answer), only the size. */
        if (p[1] != '/' || !(p = parse_u64(p + 2, &t)) || *p)
            return -1;
        *total = t;
        return 1;
    }
    if (!(p = parse_u64(p, &a)) || *p++ != '-' || !(p = parse_u64(p, &z)) || *p++ != '/')
        return -1;
    if (*p == '*' && !p[1])
        t = UINT64_MAX; /* length unknown */
    else if (!(p = parse_u64(p, &t)) || *p)
        return -1;
    if (a > z || (t != UINT64_MAX && z >= t))
        return -1;
    *first = a;
    *last = z;
    *total = t;
    return 0;
}

int tfrec_gcs_parse_session_range(const char *v, uint64_t *held)
{
    if (!v[0]) {
        *held = 0; /* no Range: nothing committed */
        return 0;
    }
    uint64_t a, z;
    const char *p = strncasecmp(v, "bytes=", 6) == 0 ? v + 6 : NULL;
    if (!p || !(p = parse_u64(p, &a)) || *p++ != '-' || !(p = parse_u64(p, &z)) || *p || a != 0 ||
        z == UINT64_MAX)
        return -1;
    *held = z + 1;
    return 0;
}

static size_t on_write(char *p, size_t size, size_t nitems, void *ud)
{
    gcs_resp *r = ud;
    const gcs_call *call = r->call;
    size_t n = size * nitems;
    int ok = r->status >= 200 && r->status < 300;
    if (ok && call->on_body)
        return call->on_body(call->body_ctx, p, n);
    size_t limit =
        ok ? (call->body_limit ? call->body_limit : GCS_MAX_JSON_BODY) : GCS_MAX_ERROR_BODY;
    if (r->body_len + n > limit) {
        if (ok) {
            r->body_overflow = 1;
            return 0; /* stop: a reply this large is not what we asked for */
        }
        n = limit - r->body_len; /* keep the start of an error reply only */
        if (!n)
            return size * nitems;
    }
    char *b = realloc(r->body, r->body_len + n + 1);
    if (!b)
        return 0;
    memcpy(b + r->body_len, p, n);
    r->body = b;
    r->body_len += n;
    b[r->body_len] = 0;
    return size * nitems;
}

/* ------------------------------------------------------------ requests */

int tfrec_gcs_easy_setup(tfrec_storage *st, CURL *e, const gcs_call *call, gcs_resp *resp,
                         struct curl_slist **hdrs, int force_refresh, tfrec_err *err)
{
    *hdrs = NULL;
    struct curl_slist *h = NULL;
    int has_type = 0;
    for (const char *const *p = call->headers; p && *p; p++) {
        if (strncasecmp(*p, "content-type:", 13) == 0)
            has_type = 1;
        struct curl_slist *n = curl_slist_append(h, *p);
        if (!n)
            goto nomem;
        h = n;
    }
    if (!has_type && call->data) {
        struct curl_slist *n = curl_slist_append(h, "Content-Type: application/octet-stream");
        if (!n)
            goto nomem;
        h = n;
    }
    {
        /* No 100-continue round trip before each upload chunk. */
        struct curl_slist *n = curl_slist_append(h, "Expect:");
        if (!n)
            goto nomem;
        h = n;
    }
    if (st->opts.user_project) {
        /* Quota and billing go to this project (userProject in the URL
         * covers requester-pays buckets; the header, quota). */
        char line[512];
        snprintf(line, sizeof line, "x-goog-user-project: %s", st->opts.user_project);
        struct curl_slist *n = curl_slist_append(h, line);
        if (!n)
            goto nomem;
        h = n;
    }
    if (!st->no_auth) {
        char *auth = NULL, why[512] = "";
        int rc = tfrec_gauth_header(st->auth, force_refresh, &auth, why, sizeof why);
        if (rc < 0) {
            tfrec_gcs_headers_free(h);
            return tfrec_fail(err, rc, "%s: no credentials for Cloud Storage: %s", call->what, why);
        }
        if (auth) {
            struct curl_slist *n = curl_slist_append(h, auth);
            tfrec_gcs_wipe(auth, strlen(auth));
            free(auth);
            if (!n)
                goto nomem;
            h = n;
        }
    }
    curl_easy_setopt(e, CURLOPT_URL, call->url);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    /* The path goes out as built: libcurl would otherwise resolve "." and
     * ".." segments into a request on another resource (url.c escapes the
     * dots of names too; this is the second guard). */
    curl_easy_setopt(e, CURLOPT_PATH_AS_IS, 1L);
    /* Never follow a redirect: requests go to the configured endpoint only. */
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
#endif
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, 30000L);
    /* A transfer that stalls for a minute is broken; retries take over. */
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, 60L);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
    /* resp and call live as long as the transfer. */
    resp->call = call;
    curl_easy_setopt(e, CURLOPT_HEADERDATA, resp);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, resp);
    curl_easy_setopt(e, CURLOPT_SHARE, st->share);
    if (st->opts.ca_bundle_file)
        curl_easy_setopt(e, CURLOPT_CAINFO, st->opts.ca_bundle_file);
    curl_easy_setopt(e, CURLOPT_USERAGENT, "libtfrec/" TFREC_VERSION_STRING);
    /* An emulator is local: a proxy from the environment would only take
     * its requests elsewhere. Real endpoints honour the usual proxy
     * variables. */
    if (st->emulator)
        curl_easy_setopt(e, CURLOPT_NOPROXY, "*");
    if (strcmp(call->method, "GET") == 0) {
        curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
    } else {
        curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, call->method);
        if (strcmp(call->method, "DELETE") != 0) {
            curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)call->data_len);
            curl_easy_setopt(e, CURLOPT_POSTFIELDS, call->data ? call->data : "");
        }
    }
    *hdrs = h;
    return TFREC_OK;
nomem:
    tfrec_gcs_headers_free(h);
    return tfrec_fail(err, TFREC_E_NOMEM, "%s: out of memory", call->what);
}

CURLcode tfrec_gcs_attempt(tfrec_storage *st, const gcs_call *call, gcs_resp *resp,
                           int force_refresh, tfrec_err *err, int *auth_failed)
{
    *auth_failed = 0;
    tfrec_gcs_resp_reset(resp);
    CURL *e = curl_easy_init();
    if (!e) {
        *auth_failed = tfrec_fail(err, TFREC_E_NOMEM, "%s: libcurl could not start", call->what);
        return CURLE_FAILED_INIT;
    }
    struct curl_slist *h;
    int rc = tfrec_gcs_easy_setup(st, e, call, resp, &h, force_refresh, err);
    if (rc < 0) {
        curl_easy_cleanup(e);
        *auth_failed = rc;
        return CURLE_FAILED_INIT;
    }
    atomic_fetch_add(&st->requests, 1);
    CURLcode c = curl_easy_perform(e);
    long status = 0;
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
    if (status)
        resp->status = status;
    tfrec_gcs_headers_free(h);
    curl_easy_cleanup(e);
    return c;
}

/* The server's own words from an error reply: error.message of the JSON
 * body, else its first line. */
static void server_message(const gcs_resp *resp, char *out, size_t cap)
{
    out[0] = 0;
    if (!resp->body_len)
        return;
    tfrec_json_value *doc = NULL;
    char why[64];
    if (tfrec_json_parse(resp->body, resp->body_len, GCS_JSON_LIMITS, &doc, why, sizeof why) ==
        TFREC_OK) {
        const char *m = tfrec_json_member_str(tfrec_json_member(doc, "error"), "message");
        if (m)
            snprintf(out, cap, "%s", m);
        tfrec_json_value_free(doc);
        if (m)
            return;
    }
    size_t n = 0;
    for (size_t i = 0; i < resp->body_len && n + 1 < cap && n < 200; i++) {
        unsigned char ch = (unsigned char)resp->body[i];
        if (ch == '\n' || ch == '\r')
            break;
        out[n++] = ch < 0x20 || ch == 0x7f ? '?' : (char)ch;
    }
    out[n] = 0;
}

int tfrec_gcs_status_error(tfrec_storage *st, tfrec_err *err, const gcs_call *call,
                           const gcs_resp *resp)
{
    char msg[300];
    server_message(resp, msg, sizeof msg);
    const char *sep = msg[0] ? ": " : "";
    long s = resp->status;
    switch (s) {
    case 404:
        return tfrec_fail(err, TFREC_E_NOT_FOUND, "%s: not found (HTTP 404)%s%s", call->what, sep,
                          msg);
    case 403:
        return tfrec_fail(
            err, TFREC_E_IO,
            "%s: permission denied (HTTP 403): %s lacks the permission %s%s%s (grant it a role "
            "holding that permission on the bucket, e.g. roles/storage.objectViewer to read, "
            "roles/storage.objectUser to write; a requester-pays bucket also needs "
            "--user_project; see docs/storage-auth.md)",
            call->what, st->no_auth ? "anonymous access" : tfrec_gauth_account(st->auth),
            call->permission ? call->permission : "for this request", sep, msg);
    case 401:
        return tfrec_fail(err, TFREC_E_IO,
                          "%s: not authenticated (HTTP 401) as %s%s%s (the token was refused "
                          "also after a fresh one: check that these credentials are valid and "
                          "not revoked, run `gcloud auth application-default login` for user "
                          "credentials, or name others with GOOGLE_APPLICATION_CREDENTIALS; see "
                          "docs/storage-auth.md)",
                          call->what, st->no_auth ? "anonymous" : tfrec_gauth_account(st->auth),
                          sep, msg);
    case 400:
        return tfrec_fail(err, TFREC_E_INVALID, "%s: bad request (HTTP 400)%s%s", call->what, sep,
                          msg);
    case 412:
        return tfrec_fail(err, TFREC_E_STATE, "%s: precondition failed (HTTP 412)%s%s", call->what,
                          sep, msg);
    default:
        return tfrec_fail(err, tfrec_gcs_status_retryable(s) ? TFREC_E_NETWORK : TFREC_E_IO,
                          "%s: %s %s failed (HTTP %ld)%s%s", call->what, call->method,
                          tfrec_gcs_status_retryable(s) ? "still" : "", s, sep, msg);
    }
}

int tfrec_gcs_net_error(tfrec_err *err, const gcs_call *call, CURLcode c, const char *detail)
{
    char url[1024];
    tfrec_gcs_redact_url(call->url, url, sizeof url);
    if (c == CURLE_PEER_FAILED_VERIFICATION || c == CURLE_SSL_CACERT_BADFILE)
        return tfrec_fail(err, TFREC_E_NETWORK,
                          "%s: %s %s: the TLS handshake failed: the server's certificate is not "
                          "trusted (%s); give the CA that issued it with --ca_bundle "
                          "(ca_bundle_file, TFREC_CA_BUNDLE)",
                          call->what, call->method, url, curl_easy_strerror(c));
    return tfrec_fail(err, TFREC_E_NETWORK, "%s: %s %s: %s%s%s", call->what, call->method, url,
                      curl_easy_strerror(c), detail && *detail ? ", " : "", detail ? detail : "");
}

int tfrec_gcs_call(tfrec_storage *st, const gcs_call *call, gcs_resp *resp, tfrec_err *err)
{
    gcs_retry r;
    tfrec_gcs_retry_start(st, &r);
    int refreshed = 0, force = 0;
    for (;;) {
        int auth_rc;
        CURLcode c = tfrec_gcs_attempt(st, call, resp, force, err, &auth_rc);
        force = 0;
        if (auth_rc < 0)
            return auth_rc;
        if (c == CURLE_OK) {
            long s = resp->status;
            if (s == 401 && !refreshed && !st->no_auth) {
                /* The token may have been revoked or expired early: one
                 * fresh token, then the answer stands. */
                refreshed = force = 1;
                atomic_fetch_add(&st->refreshes, 1);
                continue;
            }
            if ((s >= 200 && s < 300) || s == 308)
                return TFREC_OK;
            if (tfrec_gcs_status_retryable(s) && tfrec_gcs_retry_wait_after(st, &r, resp) == 0)
                continue;
            return tfrec_gcs_status_error(st, err, call, resp);
        }
        if (resp->body_overflow)
            return tfrec_fail(err, TFREC_E_PARSE, "%s: reply larger than %zu bytes", call->what,
                              call->body_limit ? call->body_limit : (size_t)GCS_MAX_JSON_BODY);
        if (tfrec_gcs_curl_retryable(c) && tfrec_gcs_retry_wait(st, &r) == 0)
            continue;
        char detail[64] = "";
        if (r.attempts > 1)
            snprintf(detail, sizeof detail, "gave up after %u attempts", r.attempts);
        return tfrec_gcs_net_error(err, call, c, detail);
    }
}

/* One exchange with a token endpoint or the metadata server, on an easy
 * handle of its own: tokens are fetched rarely, and keeping them off the
 * storage client's connections means a stalled token request never holds
 * a data connection. Replies are bounded; only http and https are spoken,
 * and redirects are not followed (a credential goes nowhere but the
 * configured endpoint). */
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gauth/gauth_internal.h"
#include "tfrec/error.h"
#include "util/loopback.h"

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;

static void init_curl(void)
{
    curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static size_t on_body(char *p, size_t size, size_t n, void *ctx)
{
    tfrec_gauth_http_reply *r = ctx;
    size_t got = size * n;
    if (got > TFREC_GAUTH_BODY_MAX - r->len) {
        r->too_big = 1;
        return 0;
    } /* too big for a token reply: abort the transfer */
    memcpy(r->body + r->len, p, got);
    r->len += got;
    r->body[r->len] = 0;
    return got;
}

static size_t on_header(char *p, size_t size, size_t n, void *ctx)
{
    tfrec_gauth_http_reply *r = ctx;
    size_t len = size * n;
    static const char name[] = "metadata-flavor:";
    if (len > sizeof name - 1 && strncasecmp(p, name, sizeof name - 1) == 0) {
        const char *v = p + sizeof name - 1;
        const char *end = p + len;
        while (v < end && (*v == ' ' || *v == '\t'))
            v++;
        while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' '))
            end--;
        r->flavor_google = end - v == 6 && strncasecmp(v, "Google", 6) == 0;
    }
    return len;
}

int tfrec_gauth_url_allowed(const char *url)
{
    if (strncasecmp(url, "https://", 8) == 0)
        return url[8] != 0;
    if (strncasecmp(url, "http://", 7) != 0)
        return 0;
    const char *h = url + 7;
    size_t len = strcspn(h, "/?#");
    if (memchr(h, '@', len))
        return 0; /* user info would make the part before it look like the host */
    const char *colon = h[0] == '[' ? memchr(h, ']', len) : memchr(h, ':', len);
    if (colon && h[0] == '[')
        colon++; /* past "]" */
    size_t hostlen = colon ? (size_t)(colon - h) : len;
    return tfrec_host_is_loopback(h, hostlen);
}

int tfrec_gauth_http(const char *url, const char *form, int metadata, long connect_timeout_ms,
                     long timeout_ms, tfrec_gauth_http_reply *r)
{
    memset(r, 0, sizeof *r);
    pthread_once(&curl_once, init_curl);
    if (curl_init_rc != CURLE_OK) {
        r->curl_rc = (int)curl_init_rc;
        snprintf(r->curl_msg, sizeof r->curl_msg, "libcurl could not start");
        return TFREC_E_NETWORK;
    }
    r->body = malloc(TFREC_GAUTH_BODY_MAX + 1);
    CURL *curl = curl_easy_init();
    if (!r->body || !curl) {
        curl_easy_cleanup(curl);
        snprintf(r->curl_msg, sizeof r->curl_msg, "out of memory");
        r->curl_rc = CURLE_OUT_OF_MEMORY;
        return TFREC_E_NOMEM;
    }
    r->body[0] = 0;
    struct curl_slist *hdr = NULL, *h;
    if (metadata && (h = curl_slist_append(hdr, "Metadata-Flavor: Google")))
        hdr = h;
    if ((h = curl_slist_append(hdr, "Accept: application/json")))
        hdr = h;
    if ((h = curl_slist_append(hdr, "Expect:"))) /* no 100-continue round trip */
        hdr = h;
    char errbuf[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, r);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, connect_timeout_ms);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_USERAGENT, "libtfrec-storage");
    if (metadata)
        curl_easy_setopt(curl, CURLOPT_NOPROXY, "*"); /* link-local, never behind a proxy */
    if (form) {
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, form);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, (long)strlen(form));
    }
    CURLcode rc = curl_easy_perform(curl);
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &r->status);
    curl_slist_free_all(hdr);
    curl_easy_cleanup(curl);
    r->curl_rc = (int)rc;
    if (r->too_big) {
        snprintf(r->curl_msg, sizeof r->curl_msg, "reply longer than %d bytes",
                 TFREC_GAUTH_BODY_MAX);
        return TFREC_E_PARSE;
    }
    if (rc != CURLE_OK) {
        snprintf(r->curl_msg, sizeof r->curl_msg, "%s",
                 errbuf[0] ? errbuf : curl_easy_strerror(rc));
        r->status = 0;
        return TFREC_E_NETWORK;
    }
    return TFREC_OK;
}

void tfrec_gauth_http_reply_clear(tfrec_gauth_http_reply *r)
{
    free(r->body);
    r->body = NULL;
    r->len = 0;
}

/* Client handles: the endpoint, credentials and the shared connection
 * cache every request of lib/storage goes through. The layers above (the
 * object calls, sources, sinks, listings) call in; this file calls none of
 * them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <strings.h>
#include <unistd.h>

#include "storage/storage_internal.h"
#include "util/config.h"
#include "util/loopback.h"
#include "util/struct_size.h"

TFREC_DEFINE_STRUCT_INIT(tfrec_storage_options)
TFREC_DEFINE_STRUCT_INIT(tfrec_storage_object)

int tfrec_storage_is_remote(const char *name)
{
    return name && strncasecmp(name, "gs://", 5) == 0;
}

/* ------------------------------------------------------------ handles */

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;

static void curl_init(void)
{
    curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static void share_lock(CURL *h, curl_lock_data d, curl_lock_access a, void *ud)
{
    (void)h, (void)a;
    pthread_mutex_lock(&((tfrec_storage *)ud)->share_locks[d]);
}

static void share_unlock(CURL *h, curl_lock_data d, void *ud)
{
    (void)h;
    pthread_mutex_unlock(&((tfrec_storage *)ud)->share_locks[d]);
}

/* gcloud names the storage endpoint with its API path
 * ("https://HOST/storage/v1/"); requests here add that path themselves. */
static void strip_api_path(char *ep)
{
    size_t n = strlen(ep);
    while (n && ep[n - 1] == '/')
        ep[--n] = 0;
    static const char api[] = "/storage/v1";
    if (n >= sizeof api - 1 && strcasecmp(ep + n - (sizeof api - 1), api) == 0)
        ep[n - (sizeof api - 1)] = 0;
}

/* Plain text only to this machine: a token or an object sent unencrypted
 * anywhere else could be read on the way (lib/util/loopback.c, the rule
 * Bigtable endpoints follow). */
static int plain_text_allowed(const char *ep)
{
    const char *h = ep + 7; /* past "http://" */
    size_t len = strcspn(h, "/?#");
    if (memchr(h, '@', len))
        return 0;
    const char *colon = h[0] == '[' ? memchr(h, ']', len) : memchr(h, ':', len);
    if (colon && h[0] == '[')
        colon++;
    return tfrec_host_is_loopback(h, colon ? (size_t)(colon - h) : len);
}

static int set_endpoint(tfrec_storage *st, const char *ep, tfrec_err *err)
{
    char emu[2048], over[2048];
    const char *from = "tfrec_storage_options.endpoint";
    if (!ep && tfrec_cfg(TFREC_CFG_STORAGE_EMULATOR_HOST, emu, sizeof emu) > 0) {
        ep = emu;
        st->emulator = 1;
    }
    if (!ep && tfrec_cfg(TFREC_CFG_STORAGE_ENDPOINT, over, sizeof over) > 0) {
        strip_api_path(over);
        ep = over;
        from = "CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE";
    }
    if (!ep)
        ep = "https://storage.googleapis.com";
    int has_scheme = strstr(ep, "://") != NULL;
    st->no_auth =
        st->emulator || st->opts.anonymous || !has_scheme || strncasecmp(ep, "http://", 7) == 0;
    if (has_scheme && strncasecmp(ep, "http://", 7) != 0 && strncasecmp(ep, "https://", 8) != 0)
        return tfrec_fail(err, TFREC_E_INVALID,
                          "Cloud Storage endpoint %s: only http:// and "
                          "https:// are supported",
                          ep);
    size_t n = strlen(ep);
    st->endpoint = malloc(n + 8);
    if (!st->endpoint)
        return tfrec_fail(err, TFREC_E_NOMEM, "out of memory");
    snprintf(st->endpoint, n + 8, "%s%s", has_scheme ? "" : "http://", ep);
    n = strlen(st->endpoint);
    while (n && st->endpoint[n - 1] == '/')
        st->endpoint[--n] = 0;
    if (strpbrk(st->endpoint, " \r\n\t"))
        return tfrec_fail(err, TFREC_E_INVALID, "Cloud Storage endpoint %s: bad URL", ep);
    /* The emulator variable keeps its convention (any host, plain text):
     * it names a test server on purpose. */
    if (!st->emulator && strncasecmp(st->endpoint, "http://", 7) == 0 &&
        !plain_text_allowed(st->endpoint))
        return tfrec_fail(err, TFREC_E_INVALID,
                          "Cloud Storage endpoint %s (%s): plain http:// is allowed only to "
                          "localhost, 127.0.0.0/8 or ::1; use https://",
                          ep, from);
    return TFREC_OK;
}

/* *dst = a copy of the option, else of the setting, else NULL. */
static int copy_setting(const char **dst, const char *opt, tfrec_cfg_id id)
{
    char buf[4096];
    *dst = NULL;
    if (!opt && tfrec_cfg(id, buf, sizeof buf) > 0)
        opt = buf;
    if (opt && *opt && !(*dst = strdup(opt)))
        return tfrec_fail(NULL, TFREC_E_NOMEM, "out of memory");
    return TFREC_OK;
}

int tfrec_storage_new(tfrec_storage **out, const tfrec_storage_options *opts)
{
    if (!out)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_storage_new: NULL argument");
    *out = NULL;
    pthread_once(&curl_once, curl_init);
    if (curl_init_rc != CURLE_OK)
        return tfrec_fail(NULL, TFREC_E_IO, "libcurl could not start: %s",
                          curl_easy_strerror(curl_init_rc));
    tfrec_storage *st = calloc(1, sizeof *st);
    if (!st)
        return tfrec_fail(NULL, TFREC_E_NOMEM, "out of memory");
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_init(&st->share_locks[i], NULL);
    int rc = TFREC_STRUCT_IN(tfrec_storage_options, &st->opts, opts, NULL);
    if (rc < 0)
        goto fail;
    if (st->opts.upload_chunk_bytes % (256u << 10)) {
        rc = tfrec_fail(NULL, TFREC_E_INVALID,
                        "tfrec_storage_options.upload_chunk_bytes %zu is not a multiple of 256 KiB",
                        st->opts.upload_chunk_bytes);
        goto fail;
    }
    /* The strings are the caller's: what is needed later is copied. */
    st->opts.endpoint = NULL;
    st->opts.user_project = NULL;
    st->opts.credentials_file = NULL;
    const char *ca_opt = st->opts.ca_bundle_file; /* NULL for a caller older than the field */
    st->opts.ca_bundle_file = NULL;
    if ((rc = set_endpoint(st, opts ? opts->endpoint : NULL, NULL)) < 0)
        goto fail_opts;
    if ((rc = copy_setting(&st->opts.user_project, opts ? opts->user_project : NULL,
                           TFREC_CFG_USER_PROJECT)) < 0 ||
        (rc = copy_setting(&st->opts.ca_bundle_file, ca_opt, TFREC_CFG_CA_BUNDLE)) < 0)
        goto fail_opts;
    if (st->opts.user_project && strpbrk(st->opts.user_project, "\r\n")) {
        rc = tfrec_fail(NULL, TFREC_E_INVALID, "Cloud Storage user project: a line break in \"%s\"",
                        st->opts.user_project);
        goto fail_opts;
    }
    /* Checked here, where the name is still the caller's, rather than as a
     * TLS failure at the first request; plain text endpoints use none. */
    if (st->opts.ca_bundle_file && strncasecmp(st->endpoint, "https://", 8) == 0 &&
        access(st->opts.ca_bundle_file, R_OK) != 0) {
        rc = tfrec_fail(NULL, TFREC_E_INVALID, "Cloud Storage CA bundle %s: %s",
                        st->opts.ca_bundle_file, strerror(errno));
        goto fail_opts;
    }
    char why[512] = "";
    rc = tfrec_gauth_new(&st->auth, opts ? opts->credentials_file : NULL, st->no_auth, why,
                         sizeof why);
    if (rc < 0) {
        tfrec_fail(NULL, rc, "Cloud Storage credentials: %s", why);
        goto fail_opts;
    }
    st->share = curl_share_init();
    if (!st->share) {
        rc = tfrec_fail(NULL, TFREC_E_NOMEM, "libcurl share could not start");
        goto fail_opts;
    }
    curl_share_setopt(st->share, CURLSHOPT_LOCKFUNC, share_lock);
    curl_share_setopt(st->share, CURLSHOPT_UNLOCKFUNC, share_unlock);
    curl_share_setopt(st->share, CURLSHOPT_USERDATA, st);
    curl_share_setopt(st->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    curl_share_setopt(st->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    curl_share_setopt(st->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
    *out = st;
    return TFREC_OK;
fail_opts:
    /* endpoint was reset to NULL above: only our copies are freed. */
    tfrec_storage_free(st);
    return rc;
fail:
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_destroy(&st->share_locks[i]);
    free(st);
    return rc;
}

void tfrec_storage_free(tfrec_storage *st)
{
    if (!st)
        return;
    if (st->share)
        curl_share_cleanup(st->share);
    tfrec_gauth_free(st->auth);
    free(st->endpoint);
    free((char *)st->opts.user_project);
    free((char *)st->opts.ca_bundle_file);
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_destroy(&st->share_locks[i]);
    free(st);
}

static pthread_once_t default_once = PTHREAD_ONCE_INIT;
static tfrec_storage *default_st;
static char default_msg[TFREC_ERRMSG_MAX];

static void free_default(void)
{
    tfrec_storage_free(default_st);
    default_st = NULL;
}

static void make_default(void)
{
    if (tfrec_storage_new(&default_st, NULL) == TFREC_OK)
        atexit(free_default);
    else
        snprintf(default_msg, sizeof default_msg, "%s", tfrec_last_errmsg());
}

tfrec_storage *tfrec_storage_default(void)
{
    pthread_once(&default_once, make_default);
    if (!default_st)
        tfrec_fail(NULL, TFREC_E_IO, "%s", default_msg);
    return default_st;
}

tfrec_storage *tfrec_gcs_client(tfrec_storage *st, tfrec_err *err)
{
    if (st)
        return st;
    st = tfrec_storage_default();
    if (!st)
        tfrec_fail(err, TFREC_E_IO, "%s", default_msg);
    return st;
}

void tfrec_storage_set_list_page_size(tfrec_storage *st, unsigned n)
{
    st->list_page_size = n;
}

void tfrec_storage_set_backoff_ms(tfrec_storage *st, unsigned first_ms)
{
    st->backoff_first_ms = first_ms;
}

/* Client handles, the local/remote switch of every entry point, and the
 * single-object calls (stat, remove). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "storage/storage_internal.h"
#include "tfrec/fs.h"
#include "util/config.h"
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

static int set_endpoint(tfrec_storage *st, const char *ep, tfrec_err *err)
{
    char emu[2048];
    if (!ep && tfrec_cfg(TFREC_CFG_STORAGE_EMULATOR_HOST, emu, sizeof emu) > 0) {
        ep = emu;
        st->emulator = 1;
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
    if ((rc = set_endpoint(st, opts ? opts->endpoint : NULL, NULL)) < 0)
        goto fail_opts;
    if (opts && opts->user_project && !(st->opts.user_project = strdup(opts->user_project))) {
        rc = tfrec_fail(NULL, TFREC_E_NOMEM, "out of memory");
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

/* ------------------------------------------------------------ sources, sinks */

int tfrec_storage_open_source(tfrec_storage *st, tfrec_io *io, const char *name)
{
    if (!tfrec_storage_is_remote(name))
        return tfrec_io_open_source(io, name);
    if (!(st = tfrec_gcs_client(st, NULL)))
        return TFREC_E_IO;
    return tfrec_gcs_open_source(st, io, name);
}

int tfrec_storage_open_sink(tfrec_storage *st, tfrec_io *io, const char *name)
{
    if (!tfrec_storage_is_remote(name))
        return tfrec_io_open_sink(io, name);
    if (!(st = tfrec_gcs_client(st, NULL)))
        return TFREC_E_IO;
    return tfrec_gcs_open_sink(st, io, name);
}

int tfrec_storage_reader_open(tfrec_storage *st, tfrec_reader **out, const char *name,
                              const tfrec_reader_options *opts)
{
    tfrec_io io = TFREC_IO_INIT;
    int rc = tfrec_storage_open_source(st, &io, name);
    return rc < 0 ? rc : tfrec_reader_open_io(out, &io, name, opts);
}

int tfrec_storage_writer_open(tfrec_storage *st, tfrec_writer **out, const char *name,
                              const tfrec_writer_options *opts)
{
    tfrec_io io = TFREC_IO_INIT;
    int rc = tfrec_storage_open_sink(st, &io, name);
    return rc < 0 ? rc : tfrec_writer_open_io(out, &io, name, opts);
}

/* ------------------------------------------------------------ stat, remove */

int tfrec_gcs_object_from_json(const tfrec_json_value *o, tfrec_storage_object *info)
{
    uint64_t size, gen = 0;
    if (tfrec_json_member_u64(o, "size", &size))
        return -1;
    if (tfrec_json_member_u64(o, "generation", &gen) == 0 && gen > (uint64_t)INT64_MAX)
        return -1;
    info->size = size;
    info->generation = (int64_t)gen;
    const char *crc = tfrec_json_member_str(o, "crc32c");
    info->has_crc32c = crc && tfrec_gcs_crc_from_base64(crc, strlen(crc), &info->crc32c) == 0;
    if (!info->has_crc32c)
        info->crc32c = 0;
    return 0;
}

int tfrec_gcs_stat(tfrec_storage *st, const gcs_name *n, const char *shown,
                   tfrec_storage_object *info, tfrec_err *err)
{
    char *url = tfrec_gcs_object_url(st, "/storage/v1", n->bucket, n->object);
    if (!url)
        return tfrec_fail(err, TFREC_E_NOMEM, "%s: out of memory", shown);
    if (tfrec_gcs_url_param(&url, "fields", "name,size,generation,crc32c")) {
        free(url);
        return tfrec_fail(err, TFREC_E_NOMEM, "%s: out of memory", shown);
    }
    gcs_call call = {
        .method = "GET", .url = url, .what = shown, .permission = "storage.objects.get"
    };
    gcs_resp resp = { 0 };
    int rc = tfrec_gcs_call(st, &call, &resp, err);
    if (rc == TFREC_OK) {
        tfrec_json_value *doc = NULL;
        char why[128];
        rc = tfrec_json_parse(resp.body ? resp.body : "", resp.body_len, GCS_JSON_LIMITS, &doc, why,
                              sizeof why);
        if (rc < 0)
            tfrec_fail(err, rc, "%s: bad metadata reply: %s", shown, why);
        else if (tfrec_gcs_object_from_json(doc, info) != 0)
            rc = tfrec_fail(err, TFREC_E_PARSE, "%s: metadata reply without a valid size", shown);
        tfrec_json_value_free(doc);
    }
    tfrec_gcs_resp_free(&resp);
    free(url);
    return rc;
}

int tfrec_storage_stat(tfrec_storage *st, const char *name, tfrec_storage_object *info)
{
    int rc = TFREC_STRUCT_CHECK_OUT(tfrec_storage_object, info, NULL);
    if (rc)
        return rc;
    if (!name)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_storage_stat: NULL name");
    tfrec_storage_object o = TFREC_STORAGE_OBJECT_INIT;
    o.name = name;
    if (!tfrec_storage_is_remote(name)) {
        tfrec_fs_info li = TFREC_FS_INFO_INIT;
        if ((rc = tfrec_fs_stat(tfrec_fs_local(), name, &li)) < 0)
            return rc;
        o.size = li.size;
        return TFREC_STRUCT_OUT(tfrec_storage_object, info, &o, NULL);
    }
    gcs_name n;
    if ((rc = tfrec_gcs_parse(name, &n, NULL)) < 0)
        return rc;
    if (!(st = tfrec_gcs_client(st, NULL)))
        return TFREC_E_IO;
    if ((rc = tfrec_gcs_stat(st, &n, name, &o, NULL)) < 0)
        return rc;
    return TFREC_STRUCT_OUT(tfrec_storage_object, info, &o, NULL);
}

int tfrec_storage_remove(tfrec_storage *st, const char *name)
{
    if (!name)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_storage_remove: NULL name");
    if (!tfrec_storage_is_remote(name)) {
        if (remove(name) == 0)
            return TFREC_OK;
        return tfrec_fail(NULL, errno == ENOENT ? TFREC_E_NOT_FOUND : TFREC_E_IO,
                          "%s: cannot remove: %s", name, strerror(errno));
    }
    gcs_name n;
    int rc = tfrec_gcs_parse(name, &n, NULL);
    if (rc < 0)
        return rc;
    if (!(st = tfrec_gcs_client(st, NULL)))
        return TFREC_E_IO;
    char *url = tfrec_gcs_object_url(st, "/storage/v1", n.bucket, n.object);
    if (!url)
        return tfrec_fail(NULL, TFREC_E_NOMEM, "%s: out of memory", name);
    gcs_call call = {
        .method = "DELETE", .url = url, .what = name, .permission = "storage.objects.delete"
    };
    gcs_resp resp = { 0 };
    rc = tfrec_gcs_call(st, &call, &resp, NULL);
    tfrec_gcs_resp_free(&resp);
    free(url);
    return rc;
}

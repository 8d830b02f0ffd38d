/* Internal: the Cloud Storage client shared by the files of lib/storage.
 *
 * client.c   handles, stat, remove, the local/remote switch
 * url.c      gs:// names, percent-encoding, base64 CRC32C
 * http.c     one libcurl request, retries, status -> error mapping
 * list.c     objects.list pages and glob matching
 * source.c   media download (pinned generation, parallel ranges, CRC32C)
 * sink.c     uploads (one request or a resumable session)
 */
#ifndef TFREC_STORAGE_INTERNAL_H
#define TFREC_STORAGE_INTERNAL_H

#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "gauth/gauth.h"
#include "tfrec/crc32c.h"
#include "tfrec/storage.h"
#include "util/errors.h"
#include "util/json_read.h"

/* Longest bucket name is 222 bytes, object names 1024 bytes of UTF-8. */
#define GCS_MAX_BUCKET 222
#define GCS_MAX_OBJECT 1024
/* Bodies read into memory (metadata, listing pages, upload replies). A
 * listing page of 1000 objects is well below this. */
#define GCS_MAX_JSON_BODY (4u << 20)
/* What is kept of an error reply for messages. */
#define GCS_MAX_ERROR_BODY 4096u

struct tfrec_storage {
    tfrec_storage_options opts;
    char *endpoint; /* no trailing slash */
    int emulator;   /* endpoint from STORAGE_EMULATOR_HOST */
    /* No Authorization header: an emulator, anonymous = 1, or a plain
     * http:// endpoint (a bearer token is never sent unencrypted). */
    int no_auth;
    tfrec_gauth *auth;
    CURLSH *share;
    pthread_mutex_t share_locks[CURL_LOCK_DATA_LAST];
    /* Test knobs (reached through the functions below): listing page size
     * (0: the server's default) and the first backoff delay. */
    unsigned list_page_size;
    unsigned backoff_first_ms;
    /* Counters for tests and diagnostics. */
    atomic_ulong requests, retries, refreshes;
};

/* ------------------------------------------------------------ url.c */
typedef struct gcs_name {
    char bucket[GCS_MAX_BUCKET + 1];
    char object[GCS_MAX_OBJECT + 1]; /* may be empty (a bucket or a prefix) */
} gcs_name;

/* Split gs://BUCKET/OBJECT. Refuses an empty bucket, names too long, and
 * bytes a name cannot hold (NUL cannot occur; CR and LF are refused). */
int tfrec_gcs_parse(const char *url, gcs_name *out, tfrec_err *err);
/* Append s percent-encoded (everything but A-Za-z0-9-._~) to buf of cap
 * bytes at *len. Returns 0, or -1 when it does not fit. */
int tfrec_gcs_escape(char *buf, size_t cap, size_t *len, const char *s);
/* malloc'd "{endpoint}{prefix}/b/BUCKET/o[/OBJECT]" (OBJECT escaped; no
 * object part when obj is NULL) with ?userProject= when configured; prefix
 * is "/storage/v1" or "/upload/storage/v1". NULL when out of memory. */
char *tfrec_gcs_object_url(const tfrec_storage *st, const char *prefix, const char *bucket,
                           const char *obj);
/* Append &key=value (or ?key=value), both escaped, reallocating *url.
 * Returns 0, or -1 when out of memory (*url is then still valid). */
int tfrec_gcs_url_param(char **url, const char *key, const char *value);
/* crc32c values travel as base64 of the big-endian 4 bytes. */
void tfrec_gcs_crc_to_base64(uint32_t crc, char out[9]);
int tfrec_gcs_crc_from_base64(const char *s, size_t len, uint32_t *crc);
/* crc32c=... out of an x-goog-hash header value (several may be listed). */
int tfrec_gcs_hash_header_crc(const char *value, uint32_t *crc);

/* ------------------------------------------------------------ JSON */
/* Replies, key files and token replies are read with util/json_read.h
 * under these bounds: a listing page of 1000 objects is far below them,
 * and a hostile server cannot make the reader use more than a small
 * multiple of the bytes it sent. */
#define GCS_JSON_LIMITS (&(const tfrec_json_limits){ GCS_MAX_JSON_BODY, 32, 200000, 0 })

/* ------------------------------------------------------------ http.c */
typedef struct gcs_call gcs_call;

typedef struct gcs_resp {
    const gcs_call *call; /* set by tfrec_gcs_easy_setup */
    long status;
    /* Response headers the client needs (empty when absent). */
    char location[2048];
    char range[96];
    char content_range[96];
    char goog_hash[256];
    char goog_generation[32];
    /* Body kept in memory when the call has no on_body (bounded by
     * body_limit, GCS_MAX_ERROR_BODY for error replies). */
    char *body;
    size_t body_len;
    int body_overflow;
} gcs_resp;

struct gcs_call {
    const char *method; /* GET, POST, PUT, DELETE */
    const char *url;
    const char *const *headers; /* extra header lines, NULL-terminated (may be NULL) */
    const void *data;           /* request body (PUT/POST) */
    size_t data_len;
    /* Successful (2xx) body bytes go here when set (return n to go on,
     * anything else aborts the transfer); otherwise into resp->body. */
    size_t (*on_body)(void *ctx, const char *p, size_t n);
    void *body_ctx;
    size_t body_limit;      /* 0: GCS_MAX_JSON_BODY */
    const char *what;       /* the object or bucket, for messages ("gs://b/o") */
    const char *permission; /* what a 403 lacks, e.g. "storage.objects.get" */
};

/* Retry state of one operation: deadline and jittered exponential backoff. */
typedef struct gcs_retry {
    uint64_t deadline_ms; /* monotonic */
    unsigned delay_ms;
    unsigned attempts;
    uint64_t seed;
} gcs_retry;

uint64_t tfrec_gcs_now_ms(void);
void tfrec_gcs_retry_start(const tfrec_storage *st, gcs_retry *r);
/* Sleep before the next attempt. Returns 0, or -1 when the deadline would
 * pass (no sleep then). */
int tfrec_gcs_retry_wait(tfrec_storage *st, gcs_retry *r);
/* Statuses worth another attempt: 408, 429, 500, 502, 503, 504. */
int tfrec_gcs_status_retryable(long status);
/* libcurl failures worth another attempt (connection level). */
int tfrec_gcs_curl_retryable(CURLcode c);

/* An easy handle set up for call (URL, method, headers with the current
 * Authorization line, body in and out, the shared connection cache).
 * *hdrs must be freed with curl_slist_free_all after the transfer. */
int tfrec_gcs_easy_setup(tfrec_storage *st, CURL *easy, const gcs_call *call, gcs_resp *resp,
                         struct curl_slist **hdrs, int force_refresh, tfrec_err *err);
/* One attempt. Returns the CURLcode; resp->status is the HTTP status. */
CURLcode tfrec_gcs_attempt(tfrec_storage *st, const gcs_call *call, gcs_resp *resp,
                           int force_refresh, tfrec_err *err, int *auth_failed);
/* A whole operation: attempts until a non-retryable answer or the
 * deadline, one token refresh after a 401. Returns TFREC_OK with
 * resp->status 2xx or 3xx (308), or a failure (from
 * tfrec_gcs_status_error for HTTP errors). resp must be freed with
 * tfrec_gcs_resp_free. */
int tfrec_gcs_call(tfrec_storage *st, const gcs_call *call, gcs_resp *resp, tfrec_err *err);
void tfrec_gcs_resp_reset(gcs_resp *resp);
void tfrec_gcs_resp_free(gcs_resp *resp);
/* The error for an HTTP failure status: 404 TFREC_E_NOT_FOUND naming the
 * object, 403 naming the account and the permission, 401, 412, others with
 * the server's message. */
int tfrec_gcs_status_error(tfrec_storage *st, tfrec_err *err, const gcs_call *call,
                           const gcs_resp *resp);
/* A network failure after retries. */
int tfrec_gcs_net_error(tfrec_err *err, const gcs_call *call, CURLcode c, const char *detail);

/* ------------------------------------------------------------ client.c */
/* st itself, or the default client. NULL (message in err) if it fails. */
tfrec_storage *tfrec_gcs_client(tfrec_storage *st, tfrec_err *err);
/* Object metadata (GET .../o/OBJ): size, generation, crc32c. */
int tfrec_gcs_stat(tfrec_storage *st, const gcs_name *n, const char *shown,
                   tfrec_storage_object *info, tfrec_err *err);
/* Fill info from one object resource of a reply. */
int tfrec_gcs_object_from_json(const tfrec_json_value *o, tfrec_storage_object *info);

/* Test knobs. */
void tfrec_storage_set_list_page_size(tfrec_storage *st, unsigned n);
void tfrec_storage_set_backoff_ms(tfrec_storage *st, unsigned first_ms);

/* ------------------------------------------------------------ glob */
/* glob(3)'s matching rules on one whole name: * ? [...] never match '/',
 * nor a leading '.' of a path component; backslash quotes. */
int tfrec_gcs_glob_match(const char *pattern, const char *name);
/* The literal text before the first wildcard (what objects.list can take
 * as its prefix), as a length of pattern. */
size_t tfrec_gcs_glob_prefix(const char *pattern);

/* ------------------------------------------------------------ source.c, sink.c */
int tfrec_gcs_open_source(tfrec_storage *st, tfrec_io *io, const char *name);
/* Bytes [offset, offset + length) only (length UINT64_MAX: to the end). */
int tfrec_gcs_open_source_range(tfrec_storage *st, tfrec_io *io, const char *name, uint64_t offset,
                                uint64_t length);
int tfrec_gcs_open_sink(tfrec_storage *st, tfrec_io *io, const char *name);

/* What a source did, for tests: requests made, the most ranges in flight at
 * once, whether a whole-object CRC32C was checked. ctx is io->ctx. */
typedef struct gcs_source_stats {
    unsigned long requests, resumes;
    unsigned max_in_flight;
    int crc_checked;
} gcs_source_stats;
void tfrec_gcs_source_stats(void *ctx, gcs_source_stats *out);

/* What a sink did: 0 = one request, else the resumable chunks sent. */
typedef struct gcs_sink_stats {
    unsigned long chunks, status_queries;
    int resumable;
} gcs_sink_stats;
void tfrec_gcs_sink_stats(void *ctx, gcs_sink_stats *out);

#endif

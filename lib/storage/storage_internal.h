/* Internal: the Cloud Storage client shared by the files of lib/storage.
 * Calls go one way, from the top of this list down:
 *
 * fs.c       gs:// as a tfrec_fs, registered in the core's registry
 * open.c     tfrec_storage_open_source/sink, reader/writer: local or gs://
 * range.c    a source over part of an object or file
 * list.c     objects.list pages and glob matching
 * source.c   media download (pinned generation, parallel ranges, CRC32C)
 * sink.c     uploads (one request or a resumable session)
 *            (source.c and sink.c are declared in storage/transfer.h)
 * object.c   single-object calls: stat, remove, object metadata
 * http.c     one libcurl request, retries, status -> error mapping
 * url.c      gs:// names, percent-encoding, base64 CRC32C
 * client.c   handles: endpoint, credentials, the shared connection cache
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
    /* Most pages one listing may take (0: GCS_LIST_MAX_PAGES). */
    unsigned long list_max_pages;
    /* Counters for tests and diagnostics. */
    atomic_ulong requests, retries, refreshes;
};

/* ------------------------------------------------------------ url.c */
typedef struct gcs_name {
    char bucket[GCS_MAX_BUCKET + 1];
    char object[GCS_MAX_OBJECT + 1]; /* may be empty (a bucket or a prefix) */
} gcs_name;

/* Split gs://BUCKET/OBJECT under Cloud Storage's naming rules: the bucket
 * as tfrec_gcs_bucket_check, the object as tfrec_gcs_object_check. */
int tfrec_gcs_parse(const char *url, gcs_name *out, tfrec_err *err);
/* Bucket names: 1-222 bytes of a-z 0-9 - _ ., a letter or digit first and
 * last, dot-separated parts of 1-63 characters (so never "." or ".."), 63
 * at most without dots. url is the name shown in messages. */
int tfrec_gcs_bucket_check(const char *b, size_t blen, const char *url, tfrec_err *err);
/* Object names: at most 1024 bytes of UTF-8 without CR or LF, not "." or
 * "..", not ending in such a segment ("dir/.."), not under
 * ".well-known/acme-challenge/". Empty is allowed (a bucket or a prefix). */
int tfrec_gcs_object_check(const char *obj, const char *url, tfrec_err *err);
/* Append s percent-encoded (everything but A-Za-z0-9-._~, and the dots of
 * a segment made of dots only, as %2E) to buf of cap bytes at *len.
 * Returns 0, or -1 when it does not fit. */
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
    char retry_after[64];
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

/* One response header line of n bytes (not NUL-terminated; CR LF or not)
 * into resp: a status line resets the kept headers and sets status (0
 * unless three digits), the headers above are kept (cut to their buffers,
 * x-goog-hash lines joined with ','), others ignored. Any bytes. */
void tfrec_gcs_resp_header(gcs_resp *resp, const char *p, size_t n);
/* Content-Range "bytes A-Z/N" (N may be '*': *total UINT64_MAX) with
 * A <= Z < N: returns 0; the form without a range ("bytes *", a slash, N):
 * returns 1 with *total only; anything else -1. Digits only, no signs or
 * spaces. */
int tfrec_gcs_parse_content_range(const char *v, uint64_t *first, uint64_t *last, uint64_t *total);
/* A resumable session's 308 Range, "bytes=0-N": *held = N + 1; "" (no
 * header): 0 bytes. -1 for anything else. */
int tfrec_gcs_parse_session_range(const char *v, uint64_t *held);

uint64_t tfrec_gcs_now_ms(void);
void tfrec_gcs_retry_start(const tfrec_storage *st, gcs_retry *r);
/* Sleep before the next attempt. Returns 0, or -1 when the deadline would
 * pass (no sleep then). */
int tfrec_gcs_retry_wait(tfrec_storage *st, gcs_retry *r);
/* The same after a retryable HTTP answer: a Retry-After in it (seconds or
 * an HTTP date) is honoured as the least wait, up to
 * GCS_MAX_RETRY_AFTER_MS; one that would pass the deadline ends the
 * retries at once. */
#define GCS_MAX_RETRY_AFTER_MS 60000u
int tfrec_gcs_retry_wait_after(tfrec_storage *st, gcs_retry *r, const gcs_resp *resp);
/* A Retry-After value in milliseconds from now (0: absent, unreadable or
 * past); now_s is the wall clock (seconds) an HTTP date is measured
 * from. */
uint64_t tfrec_gcs_retry_after_ms(const char *value, int64_t now_s);
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
/* Secrets: tfrec_gcs_wipe clears memory the compiler may not skip;
 * tfrec_gcs_headers_free wipes a header list's Authorization line before
 * freeing it; tfrec_gcs_redact_url copies url into out (cap bytes, cut with
 * "...") with the values of capability parameters (upload_id, signatures,
 * tokens) replaced by REDACTED: what a message may show of a URL. */
void tfrec_gcs_wipe(void *p, size_t n);
void tfrec_gcs_headers_free(struct curl_slist *h);
void tfrec_gcs_redact_url(const char *url, char *out, size_t cap);
/* A network failure after retries (the URL shown redacted). */
int tfrec_gcs_net_error(tfrec_err *err, const gcs_call *call, CURLcode c, const char *detail);

/* ------------------------------------------------------------ client.c */
/* st itself, or the default client. NULL (message in err) if it fails. */
tfrec_storage *tfrec_gcs_client(tfrec_storage *st, tfrec_err *err);

/* Test knobs. */
void tfrec_storage_set_list_page_size(tfrec_storage *st, unsigned n);
void tfrec_storage_set_backoff_ms(tfrec_storage *st, unsigned first_ms);

/* ------------------------------------------------------------ object.c */
/* Object metadata (GET .../o/OBJ): size, generation, crc32c. */
int tfrec_gcs_stat(tfrec_storage *st, const gcs_name *n, const char *shown,
                   tfrec_storage_object *info, tfrec_err *err);
/* Fill info from one object resource of a reply. */
int tfrec_gcs_object_from_json(const tfrec_json_value *o, tfrec_storage_object *info);
/* Fill info from a metadata reply's body (one object resource); shown
 * names the object in messages. */
int tfrec_gcs_metadata_reply(const gcs_resp *resp, const char *shown, tfrec_storage_object *info,
                             tfrec_err *err);

/* ------------------------------------------------------------ list.c */
/* A listing ends within this many pages (100 M objects at 1000 a page),
 * and within this many pages in a row that hold nothing. */
#define GCS_LIST_MAX_PAGES 100000ul
#define GCS_LIST_MAX_EMPTY_PAGES 1000ul
/* One objects.list reply (body of len bytes, any bytes): the items whose
 * names match pattern are added to l as gs://BUCKET/NAME, *next is the
 * malloc'd nextPageToken (NULL when there is none or it is empty) and
 * *entries the page's items and prefixes. shown names the listing in
 * messages. Returns TFREC_OK or a failure (*next NULL then). */
int tfrec_gcs_list_parse_page(const char *body, size_t len, const char *bucket, const char *pattern,
                              const char *shown, tfrec_storage_list *l, char **next,
                              size_t *entries);
/* An empty list for tfrec_gcs_list_parse_page (tfrec_storage_list_free). */
tfrec_storage_list *tfrec_gcs_list_new(void);

/* ------------------------------------------------------------ glob */
/* glob(3)'s matching rules on one whole name: * ? [...] never match '/',
 * nor a leading '.' of a path component; backslash quotes. */
int tfrec_gcs_glob_match(const char *pattern, const char *name);
/* The literal text before the first wildcard (what objects.list can take
 * as its prefix), as a length of pattern. */
size_t tfrec_gcs_glob_prefix(const char *pattern);

#endif

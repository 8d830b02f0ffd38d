/* gs:// sinks. Bytes are buffered up to one chunk; an object closed within
 * it goes up in one multipart request carrying its CRC32C, a larger one
 * through a resumable session whose chunks are sent as the buffer fills.
 * Either way the object appears only when the sink is closed with commit:
 * the single request is made then, and a session's last chunk (with the
 * length and the X-Goog-Hash of the whole object) is only sent then, so
 * an aborted or failed writer leaves nothing behind but a session it
 * cancels. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "io/io_util.h"
#include "storage/storage_internal.h"
#include "storage/transfer.h"
#include "util/json_writer.h"
#include "util/struct_size.h"

#define QUANTUM (256u << 10) /* resumable chunks are multiples of this */

typedef struct gcs_sink {
    tfrec_storage *st;
    char *name;
    gcs_name n;
    size_t chunk;
    char *buf; /* bytes from offset `committed` on, not yet held by the server */
    size_t len;
    uint64_t committed, total;
    uint32_t crc;
    char *session;
    int failed, finished;
    gcs_sink_stats stats;
    tfrec_err err;
} gcs_sink;

static char *metadata_json(const gcs_sink *s, int with_crc)
{
    tfrec_json j;
    tfrec_json_init(&j, NULL);
    tfrec_json_object_begin(&j);
    tfrec_json_field_str(&j, "name", s->n.object);
    if (with_crc) {
        char b64[9];
        tfrec_gcs_crc_to_base64(s->crc, b64);
        tfrec_json_field_str(&j, "crc32c", b64);
    }
    tfrec_json_object_end(&j);
    return tfrec_json_take(&j);
}

/* Remove the object an upload stored wrongly: only the generation that
 * upload made (ifGenerationMatch), so a newer object by another writer is
 * kept. Appends what happened to the sink's message. */
static void remove_bad(gcs_sink *s, int64_t generation)
{
    char *url = tfrec_gcs_object_url(s->st, "/storage/v1", s->n.bucket, s->n.object);
    char gen[24];
    snprintf(gen, sizeof gen, "%" PRId64, generation);
    int rc = TFREC_E_NOMEM;
    tfrec_err err = { 0 };
    if (url && (generation <= 0 || tfrec_gcs_url_param(&url, "ifGenerationMatch", gen) == 0)) {
        gcs_call call = {
            .method = "DELETE", .url = url, .what = s->name, .permission = "storage.objects.delete"
        };
        gcs_resp resp = { 0 };
        rc = tfrec_gcs_call(s->st, &call, &resp, &err);
        tfrec_gcs_resp_free(&resp);
    }
    free(url);
    char msg[TFREC_ERRMSG_MAX];
    snprintf(msg, sizeof msg, "%s", s->err.msg);
    if (rc == TFREC_OK || rc == TFREC_E_NOT_FOUND)
        tfrec_fail(&s->err, s->err.code, "%s; the object was removed", msg);
    else
        tfrec_fail(&s->err, s->err.code, "%s; removing the object failed too: %s", msg,
                   err.msg[0] ? err.msg : "out of memory");
}

/* The reply that finished an upload describes the object: it must be the
 * bytes we sent. A server that did not check the hash itself (or stored
 * another length) is caught here, and the object it stored is removed
 * rather than left looking complete. */
static int check_result(gcs_sink *s, const gcs_resp *resp)
{
    tfrec_json_value *doc = NULL;
    char why[128];
    int rc = tfrec_json_parse(resp->body ? resp->body : "", resp->body_len, GCS_JSON_LIMITS, &doc,
                              why, sizeof why);
    if (rc < 0)
        return tfrec_fail(&s->err, rc, "%s: bad reply to the upload: %s", s->name, why);
    tfrec_storage_object o = TFREC_STORAGE_OBJECT_INIT;
    int stored = 0; /* the reply describes an object that is wrong */
    if (tfrec_gcs_object_from_json(doc, &o) != 0)
        rc =
            tfrec_fail(&s->err, TFREC_E_PARSE, "%s: the upload's reply has no valid size", s->name);
    else if (o.size != s->total)
        stored = 1,
        rc = tfrec_fail(&s->err, TFREC_E_IO,
                        "%s: the server stored %" PRIu64 " bytes, %" PRIu64 " were sent", s->name,
                        o.size, s->total);
    else if (o.has_crc32c && o.crc32c != s->crc && !s->st->opts.no_checksum)
        stored = 1, rc = tfrec_fail(&s->err, TFREC_E_IO,
                                    "%s: CRC32C mismatch: the server stored 0x%08x, the bytes "
                                    "sent have 0x%08x (corrupted in transit)",
                                    s->name, o.crc32c, s->crc);
    tfrec_json_value_free(doc);
    if (stored) {
        s->err.code = rc;
        remove_bad(s, o.generation);
    }
    return rc;
}

/* ------------------------------------------------------------ one request */

static int upload_single(gcs_sink *s)
{
    char *meta = metadata_json(s, !s->st->opts.no_checksum);
    char *url = tfrec_gcs_object_url(s->st, "/upload/storage/v1", s->n.bucket, NULL);
    if (!meta || !url || tfrec_gcs_url_param(&url, "uploadType", "multipart")) {
        free(meta);
        free(url);
        return tfrec_fail(&s->err, TFREC_E_NOMEM, "%s: out of memory", s->name);
    }
    /* A boundary that occurs in neither part. */
    char boundary[40];
    uint64_t x = (uint64_t)s->total * 0x9E3779B97F4A7C15ull ^ s->crc ^ tfrec_gcs_now_ms();
    do {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        snprintf(boundary, sizeof boundary, "tfrec_boundary_%016" PRIx64, x);
    } while (memmem(s->buf, s->len, boundary, strlen(boundary)) || strstr(meta, boundary));
    size_t blen = strlen(boundary), mlen = strlen(meta);
    size_t cap = s->len + mlen + 3 * blen + 200;
    char *body = malloc(cap);
    if (!body) {
        free(meta);
        free(url);
        return tfrec_fail(&s->err, TFREC_E_NOMEM, "%s: out of memory", s->name);
    }
    size_t n =
        (size_t)snprintf(body, cap,
                         "--%s\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n%s\r\n"
                         "--%s\r\nContent-Type: application/octet-stream\r\n\r\n",
                         boundary, meta, boundary);
    memcpy(body + n, s->buf, s->len);
    n += s->len;
    n += (size_t)snprintf(body + n, cap - n, "\r\n--%s--\r\n", boundary);
    char type[96];
    snprintf(type, sizeof type, "Content-Type: multipart/related; boundary=%s", boundary);
    const char *hdrs[] = { type, NULL };
    gcs_call call = { .method = "POST",
                      .url = url,
                      .headers = hdrs,
                      .data = body,
                      .data_len = n,
                      .what = s->name,
                      .permission = "storage.objects.create" };
    gcs_resp resp = { 0 };
    int rc = tfrec_gcs_call(s->st, &call, &resp, &s->err);
    if (rc == TFREC_OK)
        rc = check_result(s, &resp);
    tfrec_gcs_resp_free(&resp);
    free(body);
    free(meta);
    free(url);
    return rc;
}

/* ------------------------------------------------------------ resumable */

static int same_origin(const char *endpoint, const char *url)
{
    size_t n = strlen(endpoint);
    return strncasecmp(endpoint, url, n) == 0 && url[n] == '/';
}

static int start_session(gcs_sink *s)
{
    char *meta = metadata_json(s, 0);
    char *url = tfrec_gcs_object_url(s->st, "/upload/storage/v1", s->n.bucket, NULL);
    if (!meta || !url || tfrec_gcs_url_param(&url, "uploadType", "resumable") ||
        tfrec_gcs_url_param(&url, "name", s->n.object)) {
        free(meta);
        free(url);
        return tfrec_fail(&s->err, TFREC_E_NOMEM, "%s: out of memory", s->name);
    }
    const char *hdrs[] = { "Content-Type: application/json; charset=UTF-8", NULL };
    gcs_call call = { .method = "POST",
                      .url = url,
                      .headers = hdrs,
                      .data = meta,
                      .data_len = strlen(meta),
                      .what = s->name,
                      .permission = "storage.objects.create" };
    gcs_resp resp = { 0 };
    int rc = tfrec_gcs_call(s->st, &call, &resp, &s->err);
    if (rc == TFREC_OK && !resp.location[0])
        rc = tfrec_fail(&s->err, TFREC_E_PARSE,
                        "%s: the server opened no upload session (no Location header)", s->name);
    else if (rc == TFREC_OK && !same_origin(s->st->endpoint, resp.location)) {
        char shown[512];
        tfrec_gcs_redact_url(resp.location, shown, sizeof shown);
        rc = tfrec_fail(&s->err, TFREC_E_PARSE,
                        "%s: the upload session %s is not on the endpoint %s; refusing to send "
                        "data there",
                        s->name, shown, s->st->endpoint);
    } else if (rc == TFREC_OK && !(s->session = strdup(resp.location)))
        rc = tfrec_fail(&s->err, TFREC_E_NOMEM, "%s: out of memory", s->name);
    s->stats.resumable = 1;
    tfrec_gcs_resp_free(&resp);
    free(meta);
    free(url);
    return rc;
}

/* What a 308 says is committed: "Range: bytes=0-N" is N+1 bytes, no Range
 * is none. The buffer drops what the server now holds. */
static int take_committed(gcs_sink *s, const gcs_resp *resp)
{
    uint64_t held = 0;
    if (tfrec_gcs_parse_session_range(resp->range, &held) != 0)
        return tfrec_fail(&s->err, TFREC_E_PARSE, "%s: bad Range '%s' in the session's reply",
                          s->name, resp->range);
    if (held < s->committed || held > s->committed + s->len)
        return tfrec_fail(&s->err, TFREC_E_PARSE,
                          "%s: the session says it holds %" PRIu64 " bytes; %" PRIu64
                          " were committed and %zu more sent",
                          s->name, held, s->committed, s->len);
    size_t adv = (size_t)(held - s->committed);
    memmove(s->buf, s->buf + adv, s->len - adv);
    s->len -= adv;
    s->committed = held;
    return TFREC_OK;
}

/* One PUT to the session: n bytes of the buffer, or none (a status query,
 * or the end of an upload whose bytes the server already holds). */
static CURLcode session_put(gcs_sink *s, size_t n, int final, int query, int force_refresh,
                            gcs_resp *resp, tfrec_err *err, int *auth_rc)
{
    char range[96], hash[64];
    char total[24] = "*";
    if (final)
        snprintf(total, sizeof total, "%" PRIu64, s->total);
    if (n)
        snprintf(range, sizeof range, "Content-Range: bytes %" PRIu64 "-%" PRIu64 "/%s",
                 s->committed, s->committed + n - 1, total);
    else
        snprintf(range, sizeof range, "Content-Range: bytes */%s", total);
    const char *hdrs[3] = { range, NULL, NULL };
    if (final && !query && !s->st->opts.no_checksum) {
        char b64[9];
        tfrec_gcs_crc_to_base64(s->crc, b64);
        snprintf(hash, sizeof hash, "X-Goog-Hash: crc32c=%s", b64);
        hdrs[1] = hash;
    }
    gcs_call call = { .method = "PUT",
                      .url = s->session,
                      .headers = hdrs,
                      .data = s->buf,
                      .data_len = n,
                      .what = s->name,
                      .permission = "storage.objects.create" };
    if (query)
        s->stats.status_queries++;
    else
        s->stats.chunks++;
    return tfrec_gcs_attempt(s->st, &call, resp, force_refresh, err, auth_rc);
}

/* Send the first n buffered bytes (final: all of them, ending the upload),
 * resuming from what the session holds after any failure. */
static int send_chunk(gcs_sink *s, size_t n, int final)
{
    gcs_retry r;
    tfrec_gcs_retry_start(s->st, &r);
    uint64_t goal = s->committed + n;
    int query = 0, refreshed = 0, force = 0;
    unsigned stalls = 0;
    gcs_resp resp = { 0 };
    int rc = TFREC_OK;
    for (;;) {
        int auth_rc;
        size_t send = query ? 0 : (size_t)(goal - s->committed);
        uint64_t before = s->committed;
        CURLcode c = session_put(s, send, final, query, force, &resp, &s->err, &auth_rc);
        force = 0;
        if (auth_rc < 0) {
            rc = auth_rc;
            break;
        }
        long st = resp.status;
        gcs_call what = { .method = "PUT",
                          .url = s->session,
                          .what = s->name,
                          .permission = "storage.objects.create" };
        if (c == CURLE_OK && st == 308) {
            if ((rc = take_committed(s, &resp)) < 0)
                break;
            /* A server that keeps taking nothing is not going to finish. */
            stalls = s->committed == before && !query ? stalls + 1 : 0;
            if (stalls > 3) {
                rc = tfrec_fail(&s->err, TFREC_E_IO,
                                "%s: the upload session accepts no more bytes after %" PRIu64,
                                s->name, s->committed);
                break;
            }
            query = 0;
            if (s->committed == goal && !final)
                break;
            /* Part of it is missing (or it was a status query): send the
             * rest without waiting. */
            continue;
        }
        if (c == CURLE_OK && (st == 200 || st == 201)) {
            if (!final) {
                rc = tfrec_fail(&s->err, TFREC_E_PARSE,
                                "%s: the server finished the upload at %" PRIu64
                                " bytes before the last chunk",
                                s->name, s->committed + send);
                break;
            }
            s->finished = 1;
            rc = check_result(s, &resp);
            break;
        }
        if (c == CURLE_OK && (st == 404 || st == 410)) {
            rc = tfrec_fail(&s->err, TFREC_E_IO,
                            "%s: the upload session expired or was cancelled (HTTP %ld) after "
                            "%" PRIu64 " bytes",
                            s->name, st, s->committed);
            break;
        }
        if (c == CURLE_OK && st == 401 && !refreshed && !s->st->no_auth) {
            /* The token expired during a long upload: a fresh one, then
             * ask the session where it stands. */
            refreshed = force = query = 1;
            atomic_fetch_add(&s->st->refreshes, 1);
            continue;
        }
        int transient =
            c == CURLE_OK ? tfrec_gcs_status_retryable(st) : tfrec_gcs_curl_retryable(c);
        /* resp holds what arrived even when the transfer then failed: a
         * server that answers 429 before taking the whole body and closes
         * the connection still says when to come back. */
        if (!transient || tfrec_gcs_retry_wait_after(s->st, &r, &resp) != 0) {
            rc = c == CURLE_OK ? tfrec_gcs_status_error(s->st, &s->err, &what, &resp)
                               : tfrec_gcs_net_error(&s->err, &what, c, "during the upload");
            break;
        }
        /* The chunk may have arrived in part: ask before resending. */
        query = 1;
    }
    tfrec_gcs_resp_free(&resp);
    return rc;
}

static void cancel_session(gcs_sink *s)
{
    if (!s->session || s->finished)
        return;
    /* Best effort, one attempt: an abandoned session expires by itself. */
    gcs_call call = { .method = "DELETE", .url = s->session, .what = s->name };
    gcs_resp resp = { 0 };
    tfrec_err ignore = { 0 };
    int auth_rc;
    tfrec_gcs_attempt(s->st, &call, &resp, 0, &ignore, &auth_rc);
    tfrec_gcs_resp_free(&resp);
}

/* ------------------------------------------------------------ tfrec_io */

static int sink_write(void *ctx, const void *data, size_t n)
{
    gcs_sink *s = ctx;
    if (s->failed)
        return tfrec_fail(&s->err, TFREC_E_STATE, "%s: an earlier failure ended this upload",
                          s->name);
    const char *p = data;
    s->crc = tfrec_crc32c_extend(s->crc, p, n);
    s->total += n;
    while (n) {
        if (s->len == s->chunk) {
            /* A full chunk and more to come: it is not the last one. */
            int rc = s->session ? 0 : start_session(s);
            if (rc == 0)
                rc = send_chunk(s, s->chunk, 0);
            if (rc < 0) {
                s->failed = 1;
                return rc;
            }
        }
        size_t k = s->chunk - s->len < n ? s->chunk - s->len : n;
        memcpy(s->buf + s->len, p, k);
        s->len += k;
        p += k;
        n -= k;
    }
    return TFREC_OK;
}

static int sink_close(void *ctx, int commit)
{
    gcs_sink *s = ctx;
    int rc = TFREC_OK;
    if (commit && s->failed)
        rc = tfrec_fail(&s->err, TFREC_E_STATE, "%s: not written: %s", s->name, s->err.msg);
    else if (commit && !s->session && s->total < s->chunk)
        rc = upload_single(s);
    else if (commit) {
        rc = s->session ? 0 : start_session(s);
        if (rc == 0)
            rc = send_chunk(s, s->len, 1);
    }
    cancel_session(s);
    if (rc < 0)
        tfrec_fail(NULL, rc, "%s", s->err.msg);
    if (s->session)
        tfrec_gcs_wipe(s->session, strlen(s->session));
    free(s->session);
    free(s->buf);
    free(s->name);
    free(s);
    return rc;
}

static const char *sink_errmsg(void *ctx)
{
    return ((gcs_sink *)ctx)->err.msg;
}

void tfrec_gcs_sink_stats(void *ctx, gcs_sink_stats *out)
{
    *out = ((gcs_sink *)ctx)->stats;
}

int tfrec_gcs_open_sink(tfrec_storage *st, tfrec_io *io, const char *name)
{
    int rc = TFREC_STRUCT_CHECK_OUT(tfrec_io, io, NULL);
    if (rc)
        return rc;
    gcs_sink *s = calloc(1, sizeof *s);
    if (!s)
        return tfrec_fail(NULL, TFREC_E_NOMEM, "%s: out of memory", name);
    if ((rc = tfrec_gcs_parse(name, &s->n, NULL)) < 0) {
        free(s);
        return rc;
    }
    if (!s->n.object[0]) {
        free(s);
        return tfrec_fail(NULL, TFREC_E_INVALID, "%s: no object name", name);
    }
    s->st = st;
    s->chunk = st->opts.upload_chunk_bytes ? st->opts.upload_chunk_bytes : 16u << 20;
    s->name = strdup(name);
    s->buf = malloc(s->chunk);
    if (!s->name || !s->buf) {
        free(s->name);
        free(s->buf);
        free(s);
        return tfrec_fail(NULL, TFREC_E_NOMEM, "%s: out of memory", name);
    }
    tfrec_io t = TFREC_IO_INIT;
    t.ctx = s;
    t.read = io_read_unsupported;
    t.write = sink_write;
    t.close = sink_close;
    t.errmsg = sink_errmsg;
    return TFREC_STRUCT_OUT(tfrec_io, io, &t, NULL);
}

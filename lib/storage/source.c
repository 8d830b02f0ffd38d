/* gs:// sources: media download of one pinned generation.
 *
 * Opening makes no metadata request: the first ranged GET's reply tells the
 * object's size (Content-Range), generation (x-goog-generation) and CRC32C
 * (x-goog-hash), and its body is the first block. Later ranges pin that
 * generation. (A metadata request costs a round trip per object, and some
 * servers hash the whole object to answer it.)
 *
 * The object is read as a queue of blocks: the head block is the one the
 * caller is reading, the others are the read-ahead. How they are filled
 * depends on the access:
 * - streamed (a whole object opened for reading from its start): one
 *   open-ended GET whose body fills the blocks in order, paused while they
 *   are all full; a cut connection resumes with a Range from the byte
 *   reached. Each request pays the server's first-byte latency, so a
 *   sequential reader makes one (bench/RESULTS.md, "gs:// sequential
 *   reads").
 * - ranged (a slice, or a streamed source after a second seek outside its
 *   window, i.e. random access): each block is one ranged GET, up to
 *   parallel_reads of them in flight on one curl multi handle; a block
 *   whose transfer breaks resumes at the byte it reached.
 * Bytes handed out in
 * order from offset 0 feed a running CRC32C that is checked against the
 * object's when the last byte goes out (from x-goog-hash, else from the
 * metadata of the generation read: one request at the end). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/io_util.h"
#include "storage/storage_internal.h"
#include "storage/transfer.h"
#include "util/struct_size.h"

typedef struct gcs_source gcs_source;

typedef struct block {
    gcs_source *src;
    uint64_t off; /* first byte of the block in the object */
    size_t len, got;
    char *buf;
    int active, done, refreshed;
    /* The attempt in flight. */
    CURL *easy;
    struct curl_slist *hdrs;
    gcs_call call;
    gcs_resp resp;
    char range[64];
    const char *headers[2];
    uint64_t skip;   /* bytes to drop: a 200 reply to a ranged request */
    int checked;     /* this attempt's reply headers were checked */
    int abort_rc;    /* why on_body stopped the transfer */
    gcs_retry retry; /* started when the block is scheduled */
    size_t mark;     /* got when this attempt started */
} block;

struct gcs_source {
    tfrec_storage *st;
    char *name;
    gcs_name n;
    char *url;      /* media URL of the pinned generation */
    char *url0;     /* media URL of whatever is current: the first request */
    int probing;    /* the first reply's headers are not in yet */
    int probe_stat; /* the first reply could not tell (416): ask metadata */
    /* A view of bytes [base, base + size) of the object (a member of an
     * archive): offsets below are the view's; partial: no CRC32C check. */
    uint64_t base, want_len;
    int partial;
    uint64_t size;
    int64_t generation;
    int has_crc;
    uint32_t crc;
    uint64_t pos; /* the next byte the caller gets */
    block *blocks;
    unsigned nblocks; /* slots (parallel_reads) */
    unsigned head, count;
    uint64_t next_off; /* first byte not yet scheduled */
    size_t block_size;
    CURLM *multi;
    unsigned in_flight;
    uint32_t crc_run;
    uint64_t crc_pos; /* bytes [0, crc_pos) went into crc_run */
    /* Streamed: xfer is the one GET; its off is where its bytes start and
     * off + got the next byte it delivers. A body piece that did not fit
     * in the blocks waits in spill (at most one piece; the transfer is
     * paused while it waits). */
    int stream;
    block xfer;
    char *spill;
    size_t spill_len, spill_cap;
    int paused;
    unsigned far_seeks;
    gcs_source_stats stats;
    tfrec_err err;
};

static block *slot(gcs_source *s, unsigned i)
{
    return &s->blocks[(s->head + i) % s->nblocks];
}

/* The view's size once the object's is known. */
static int set_view(gcs_source *s, uint64_t object_size)
{
    if (s->base > object_size || (s->want_len != UINT64_MAX && s->want_len > object_size - s->base))
        return s->want_len == UINT64_MAX
                   ? tfrec_fail(&s->err, TFREC_E_INVALID,
                                "%s: offset %" PRIu64 " is past the end of the %" PRIu64
                                "-byte object",
                                s->name, s->base, object_size)
                   : tfrec_fail(&s->err, TFREC_E_INVALID,
                                "%s: bytes %" PRIu64 "-%" PRIu64 " are past the end of the %" PRIu64
                                "-byte object",
                                s->name, s->base, s->base + s->want_len - 1, object_size);
    s->size = s->want_len == UINT64_MAX ? object_size - s->base : s->want_len;
    s->partial = s->base > 0 || s->size < object_size;
    if (s->partial)
        s->has_crc = 0; /* the object's CRC32C says nothing about a part */
    return TFREC_OK;
}

/* The first reply of an open (block 0's) in place of object metadata. */
static int learn_object(gcs_source *s, block *b)
{
    const gcs_resp *r = &b->resp;
    uint64_t size;
    if (r->status == 206) {
        uint64_t a, z, total;
        if (tfrec_gcs_parse_content_range(r->content_range, &a, &z, &total) != 0 || a != s->base ||
            total == UINT64_MAX)
            return tfrec_fail(&s->err, TFREC_E_PARSE,
                              "%s: asked for bytes from %" PRIu64 ", the server sent '%s'", s->name,
                              s->base, r->content_range);
        size = total;
    } else {
        /* The whole object came back (the range was ignored). */
        curl_off_t cl = -1;
        curl_easy_getinfo(b->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl);
        if (cl < 0)
            return tfrec_fail(&s->err, TFREC_E_PARSE,
                              "%s: the server's reply tells neither a range nor a length", s->name);
        size = (uint64_t)cl;
    }
    int64_t gen = 0;
    if (r->goog_generation[0]) {
        char *end;
        gen = strtoll(r->goog_generation, &end, 10);
        if (*end || gen <= 0)
            return tfrec_fail(&s->err, TFREC_E_PARSE, "%s: bad x-goog-generation '%s'", s->name,
                              r->goog_generation);
        char g[24];
        snprintf(g, sizeof g, "%" PRId64, gen);
        if (!(s->url = strdup(s->url0)) || tfrec_gcs_url_param(&s->url, "generation", g))
            return tfrec_fail(&s->err, TFREC_E_NOMEM, "%s: out of memory", s->name);
    }
    s->generation = gen;
    int rc = set_view(s, size);
    if (rc < 0)
        return rc;
    block *b0 = slot(s, 0);
    if (b0->len > s->size)
        b0->len = (size_t)s->size;
    s->next_off = b0->len;
    if (s->stream)
        s->xfer.len = (size_t)(s->size - s->xfer.off);
    s->probing = 0;
    return TFREC_OK;
}

/* The first body bytes of an attempt: its headers are in. 0, or the
 * transfer is to stop (b->abort_rc says why). */
static int check_reply(gcs_source *s, block *b)
{
    b->checked = 1;
    uint64_t want = s->base + b->off + b->got;
    const gcs_resp *r = &b->resp;
    if (s->probing && (b->abort_rc = learn_object(s, b)) < 0)
        return -1;
    if (r->goog_generation[0] && s->generation &&
        strtoll(r->goog_generation, NULL, 10) != s->generation) {
        b->abort_rc = tfrec_fail(&s->err, TFREC_E_STATE,
                                 "%s: the object was replaced while being read (generation "
                                 "%s, opened %" PRId64 ")",
                                 s->name, r->goog_generation, s->generation);
        return -1;
    }
    if (r->status == 206) {
        uint64_t a, z, total;
        if (tfrec_gcs_parse_content_range(r->content_range, &a, &z, &total) != 0 || a != want) {
            b->abort_rc = tfrec_fail(&s->err, TFREC_E_PARSE,
                                     "%s: asked for bytes from %" PRIu64 ", the server sent '%s'",
                                     s->name, want, r->content_range);
            return -1;
        }
    } else {
        b->skip = want; /* the whole object came back */
    }
    if (!s->has_crc && !s->partial && r->goog_hash[0] &&
        tfrec_gcs_hash_header_crc(r->goog_hash, &s->crc) == 0)
        s->has_crc = 1;
    return 0;
}

static size_t block_body(void *ctx, const char *p, size_t n)
{
    block *b = ctx;
    gcs_source *s = b->src;
    if (!b->checked && check_reply(s, b) < 0)
        return 0;
    size_t total = n;
    if (b->skip) {
        size_t drop = b->skip < n ? (size_t)b->skip : n;
        b->skip -= drop;
        p += drop;
        n -= drop;
    }
    if (n > b->len - b->got) {
        if (b->resp.status == 200)
            n = b->len - b->got; /* the rest belongs to later blocks */
        else {
            b->abort_rc = tfrec_fail(&s->err, TFREC_E_PARSE,
                                     "%s: the server sent more than the %zu bytes asked for at "
                                     "offset %" PRIu64,
                                     s->name, b->len, b->off);
            return 0;
        }
    }
    memcpy(b->buf + b->got, p, n);
    b->got += n;
    return total;
}

static int assign_blocks(gcs_source *s);

/* The window of the queue: bytes [window_start, next_off) have blocks. */
static uint64_t window_start(gcs_source *s)
{
    return s->count ? slot(s, 0)->off : s->next_off;
}

/* Streamed bytes into the blocks, in order: what lies before the window
 * (blocks dropped by a seek) is dropped too. Bytes taken. */
static size_t stream_fill(gcs_source *s, const char *p, size_t n)
{
    block *x = &s->xfer;
    size_t took = 0;
    while (took < n) {
        uint64_t fp = x->off + x->got;
        if (fp >= s->size) { /* past the view: nothing there to fill */
            took = n;
            break;
        }
        uint64_t w = window_start(s);
        size_t k;
        if (fp < w) {
            k = w - fp < n - took ? (size_t)(w - fp) : n - took;
        } else {
            if (fp >= s->next_off && (assign_blocks(s) < 0 || fp >= s->next_off))
                break; /* no free slot (or no memory: the piece waits) */
            block *b = slot(s, 0);
            for (unsigned i = 1; fp >= b->off + b->len; i++)
                b = slot(s, i);
            k = b->len - b->got < n - took ? b->len - b->got : n - took;
            memcpy(b->buf + b->got, p + took, k);
            b->got += k;
            if (b->got == b->len)
                b->done = 1;
        }
        x->got += k;
        took += k;
    }
    return took;
}

/* The spill into blocks freed since; the transfer goes on once it is empty. */
static void stream_drain(gcs_source *s)
{
    if (s->spill_len) {
        size_t k = stream_fill(s, s->spill, s->spill_len);
        memmove(s->spill, s->spill + k, s->spill_len - k);
        s->spill_len -= k;
    }
    if (!s->spill_len && s->paused && s->xfer.active) {
        s->paused = 0;
        curl_easy_pause(s->xfer.easy, CURLPAUSE_CONT); /* may call stream_body */
    }
}

static size_t stream_body(void *ctx, const char *p, size_t n)
{
    block *x = ctx;
    gcs_source *s = x->src;
    if (!x->checked && check_reply(s, x) < 0)
        return 0;
    if (s->spill_len) {
        stream_drain(s);
        if (s->spill_len) {
            s->paused = 1;
            return CURL_WRITEFUNC_PAUSE; /* delivered again on unpause */
        }
    }
    size_t total = n;
    if (x->skip) {
        size_t drop = x->skip < n ? (size_t)x->skip : n;
        x->skip -= drop;
        p += drop;
        n -= drop;
    }
    size_t k = stream_fill(s, p, n);
    if (k < n) {
        if (s->spill_cap < n - k) {
            char *q = realloc(s->spill, n - k);
            if (!q) {
                x->abort_rc = tfrec_fail(&s->err, TFREC_E_NOMEM, "%s: out of memory", s->name);
                return 0;
            }
            s->spill = q;
            s->spill_cap = n - k;
        }
        memcpy(s->spill, p + k, n - k);
        s->spill_len = n - k;
    }
    return total;
}

/* Start (or restart) the transfer of b's missing bytes. */
static int start(gcs_source *s, block *b, int force_refresh)
{
    int streamed = b == &s->xfer;
    if (streamed)
        snprintf(b->range, sizeof b->range, "Range: bytes=%" PRIu64 "-", s->base + b->off + b->got);
    else
        snprintf(b->range, sizeof b->range, "Range: bytes=%" PRIu64 "-%" PRIu64,
                 s->base + b->off + b->got, s->base + b->off + b->len - 1);
    b->mark = b->got;
    b->headers[0] = b->range;
    b->headers[1] = NULL;
    b->call = (gcs_call){ .method = "GET",
                          .url = s->url,
                          .headers = b->headers,
                          .on_body = streamed ? stream_body : block_body,
                          .body_ctx = b,
                          .what = s->name,
                          .permission = "storage.objects.get" };
    tfrec_gcs_resp_reset(&b->resp);
    b->skip = 0;
    b->checked = 0;
    b->abort_rc = 0;
    if (!b->easy && !(b->easy = curl_easy_init()))
        return tfrec_fail(&s->err, TFREC_E_NOMEM, "%s: libcurl could not start", s->name);
    curl_easy_reset(b->easy);
    int rc =
        tfrec_gcs_easy_setup(s->st, b->easy, &b->call, &b->resp, &b->hdrs, force_refresh, &s->err);
    if (rc < 0)
        return rc;
    curl_easy_setopt(b->easy, CURLOPT_PRIVATE, b);
    /* Large receive buffers: one write callback and one socket read per
     * 512 KiB instead of per 16 KiB (the default) cut the per-byte cost
     * of a download several times. */
    curl_easy_setopt(b->easy, CURLOPT_BUFFERSIZE, 512L << 10);
    if (curl_multi_add_handle(s->multi, b->easy) != CURLM_OK)
        return tfrec_fail(&s->err, TFREC_E_NOMEM, "%s: libcurl could not start a transfer",
                          s->name);
    b->active = 1;
    s->in_flight++;
    s->stats.requests++;
    atomic_fetch_add(&s->st->requests, 1);
    if (s->in_flight > s->stats.max_in_flight)
        s->stats.max_in_flight = s->in_flight;
    return TFREC_OK;
}

static void stop(gcs_source *s, block *b)
{
    if (b == &s->xfer)
        s->paused = 0;
    if (b->active) {
        curl_multi_remove_handle(s->multi, b->easy);
        b->active = 0;
        s->in_flight--;
    }
    tfrec_gcs_headers_free(b->hdrs);
    b->hdrs = NULL;
}

/* Drop every block; reading goes on at s->pos. */
static void reset_queue(gcs_source *s)
{
    for (unsigned i = 0; i < s->count; i++)
        stop(s, slot(s, i));
    s->count = 0;
    s->next_off = s->pos;
    stop(s, &s->xfer);
    s->xfer.off = s->pos;
    s->xfer.got = 0;
    s->spill_len = 0;
}

/* Blocks for the free slots; ranged: each one's request starts. */
static int assign_blocks(gcs_source *s)
{
    /* While probing, the size is not known: block 0 only. */
    while (s->count < s->nblocks && s->next_off < s->size && !(s->probing && s->count)) {
        block *b = slot(s, s->count);
        uint64_t left = s->size - s->next_off;
        b->off = s->next_off;
        b->len = left < s->block_size ? (size_t)left : s->block_size;
        b->got = 0;
        b->done = b->refreshed = 0;
        if (!b->buf && !(b->buf = malloc(s->block_size)))
            return tfrec_fail(&s->err, TFREC_E_NOMEM, "%s: out of memory", s->name);
        s->count++;
        s->next_off += b->len;
        if (!s->stream) {
            tfrec_gcs_retry_start(s->st, &b->retry);
            int rc = start(s, b, 0);
            if (rc < 0)
                return rc;
        }
    }
    return TFREC_OK;
}

static int schedule(gcs_source *s)
{
    int rc = assign_blocks(s);
    block *x = &s->xfer;
    if (rc == 0 && s->stream && !x->active && x->off + x->got + s->spill_len < s->size) {
        x->len = (size_t)(s->size - x->off);
        tfrec_gcs_retry_start(s->st, &x->retry);
        x->refreshed = 0;
        rc = start(s, x, 0);
    }
    return rc;
}

/* A transfer ended: done, retried, resumed, or a failure. */
static int finished(gcs_source *s, block *b, CURLcode c)
{
    stop(s, b);
    long st = b->resp.status;
    if (b->abort_rc)
        return b->abort_rc;
    if (s->probing && c == CURLE_OK && st == 416) {
        s->probe_stat = 1; /* e.g. an empty object: no byte 0 to range over */
        return TFREC_OK;
    }
    if (s->probing && c == CURLE_OK && st >= 200 && st < 300) {
        int rc = learn_object(s, b); /* a reply without a body */
        if (rc < 0)
            return rc;
    }
    /* A streamed piece that waits in the spill was received. */
    size_t spilled = b == &s->xfer ? s->spill_len : 0;
    if (c == CURLE_OK && st >= 200 && st < 300) {
        if (b->got + spilled == b->len) {
            b->done = 1;
            return TFREC_OK;
        }
        c = CURLE_PARTIAL_FILE; /* the body ended early: resume below */
    }
    if (c == CURLE_OK) {
        if (st == 401 && !b->refreshed && !s->st->no_auth) {
            b->refreshed = 1;
            atomic_fetch_add(&s->st->refreshes, 1);
            return start(s, b, 1);
        }
        if (tfrec_gcs_status_retryable(st) &&
            tfrec_gcs_retry_wait_after(s->st, &b->retry, &b->resp) == 0)
            return start(s, b, 0);
        if (st == 404 && s->generation && !s->probing)
            return tfrec_fail(&s->err, TFREC_E_STATE,
                              "%s: generation %" PRId64 " is gone at offset %" PRIu64
                              ": the object was replaced or deleted while being read",
                              s->name, s->generation, s->base + b->off + b->got);
        return tfrec_gcs_status_error(s->st, &s->err, &b->call, &b->resp);
    }
    if (b == &s->xfer) {
        s->spill_len = 0; /* asked for again from off + got */
        if (b->got > b->mark)
            tfrec_gcs_retry_start(s->st, &b->retry); /* it made progress: a fresh budget */
    }
    if (tfrec_gcs_curl_retryable(c) && tfrec_gcs_retry_wait(s->st, &b->retry) == 0) {
        if (b->got)
            s->stats.resumes++;
        return start(s, b, 0);
    }
    char detail[96];
    snprintf(detail, sizeof detail, "at offset %" PRIu64 " after %u attempts",
             s->base + b->off + b->got, b->retry.attempts);
    return tfrec_gcs_net_error(&s->err, &b->call, c, detail);
}

static int head_ready(gcs_source *s)
{
    block *h = slot(s, 0);
    return h->got > s->pos - h->off || h->done;
}

static int probe_over(gcs_source *s)
{
    return !s->probing || s->probe_stat || slot(s, 0)->done;
}

/* Run the transfers until ready(s) (by default: the head block holds the
 * byte at s->pos). They are driven at every read, even when the head
 * already has the bytes, so the read-ahead keeps flowing while the caller
 * works. */
static int pump_until(gcs_source *s, int (*ready)(gcs_source *))
{
    for (;;) {
        int running;
        CURLMcode mc = curl_multi_perform(s->multi, &running);
        if (mc != CURLM_OK)
            return tfrec_fail(&s->err, TFREC_E_NETWORK, "%s: %s", s->name, curl_multi_strerror(mc));
        CURLMsg *m;
        int left;
        while ((m = curl_multi_info_read(s->multi, &left))) {
            if (m->msg != CURLMSG_DONE)
                continue;
            block *b = NULL;
            curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&b);
            int rc = finished(s, b, m->data.result);
            if (rc < 0)
                return rc;
        }
        if (ready(s))
            return TFREC_OK;
        curl_multi_poll(s->multi, NULL, 0, 1000, NULL);
    }
}

static int pump(gcs_source *s)
{
    return pump_until(s, head_ready);
}

static int check_crc(gcs_source *s)
{
    s->stats.crc_checked = 1;
    if (s->crc_run == s->crc)
        return TFREC_OK;
    char want[9], got[9];
    tfrec_gcs_crc_to_base64(s->crc, want);
    tfrec_gcs_crc_to_base64(s->crc_run, got);
    return tfrec_fail(&s->err, TFREC_E_IO,
                      "%s: CRC32C mismatch: the object's is %s, the %" PRIu64
                      " bytes read give %s (corrupted in storage or in transit)",
                      s->name, want, s->size, got);
}

/* The replies carried no x-goog-hash (some servers and proxies leave it
 * out): the object's CRC32C from its metadata, of the generation read. A
 * check that cannot be made fails the read unless no_checksum says to go
 * without it; it is never skipped silently. */
static int crc_from_metadata(gcs_source *s)
{
    char *url = tfrec_gcs_object_url(s->st, "/storage/v1", s->n.bucket, s->n.object);
    char gen[24];
    snprintf(gen, sizeof gen, "%" PRId64, s->generation);
    if (!url || tfrec_gcs_url_param(&url, "fields", "size,generation,crc32c") ||
        (s->generation && tfrec_gcs_url_param(&url, "generation", gen))) {
        free(url);
        return tfrec_fail(&s->err, TFREC_E_NOMEM, "%s: out of memory", s->name);
    }
    gcs_call call = {
        .method = "GET", .url = url, .what = s->name, .permission = "storage.objects.get"
    };
    gcs_resp resp = { 0 };
    int rc = tfrec_gcs_call(s->st, &call, &resp, &s->err);
    tfrec_storage_object o = TFREC_STORAGE_OBJECT_INIT;
    if (rc == TFREC_OK)
        rc = tfrec_gcs_metadata_reply(&resp, s->name, &o, &s->err);
    tfrec_gcs_resp_free(&resp);
    free(url);
    if (rc < 0)
        return rc;
    if (o.size != s->size || (s->generation && o.generation && o.generation != s->generation))
        return tfrec_fail(&s->err, TFREC_E_STATE,
                          "%s: the object's metadata (%" PRIu64 " bytes, generation %" PRId64
                          ") is not the object read (%" PRIu64 " bytes, generation %" PRId64
                          "): it was replaced while being read",
                          s->name, o.size, o.generation, s->size, s->generation);
    if (!o.has_crc32c)
        return tfrec_fail(&s->err, TFREC_E_IO,
                          "%s: cannot check the %" PRIu64 " bytes read: the server sent no "
                          "x-goog-hash and the object's metadata has no crc32c (set "
                          "no_checksum to read without the check)",
                          s->name, s->size);
    s->crc = o.crc32c;
    s->has_crc = 1;
    return TFREC_OK;
}

static ptrdiff_t src_read(void *ctx, void *buf, size_t n)
{
    gcs_source *s = ctx;
    if (s->pos >= s->size || n == 0)
        return 0;
    if (s->count && (s->pos < slot(s, 0)->off || s->pos >= slot(s, 0)->off + slot(s, 0)->len))
        reset_queue(s);
    int rc = schedule(s);
    if (rc == 0)
        rc = pump(s);
    if (rc < 0) {
        reset_queue(s);
        return rc;
    }
    block *h = slot(s, 0);
    size_t at = (size_t)(s->pos - h->off);
    size_t k = h->got - at;
    if (k > n)
        k = n;
    memcpy(buf, h->buf + at, k);
    /* The running CRC takes whatever part of these bytes continues it, so
     * rereading the start (format detection, a seek back) does not lose
     * the check. */
    if (s->pos <= s->crc_pos && s->crc_pos < s->pos + k) {
        size_t skip = (size_t)(s->crc_pos - s->pos);
        s->crc_run = tfrec_crc32c_extend(s->crc_run, h->buf + at + skip, k - skip);
        s->crc_pos += k - skip;
    }
    s->pos += k;
    if (s->pos == h->off + h->len) {
        stop(s, h); /* complete; its end-of-transfer may not have been seen */
        s->head = (s->head + 1) % s->nblocks;
        s->count--;
        if (s->stream)
            stream_drain(s);
    }
    if (s->crc_pos == s->size && !s->partial && !s->st->opts.no_checksum && !s->stats.crc_checked) {
        if (!s->has_crc && (rc = crc_from_metadata(s)) < 0) {
            s->stats.crc_checked = 1; /* reported once */
            return rc;
        }
        if ((rc = check_crc(s)) < 0)
            return rc;
    }
    return (ptrdiff_t)k;
}

static int src_seek(void *ctx, uint64_t off)
{
    gcs_source *s = ctx;
    if (off > s->size)
        return tfrec_fail(&s->err, TFREC_E_INVALID,
                          "%s: cannot seek to offset %" PRIu64 " of a %" PRIu64 "-byte object",
                          s->name, off, s->size);
    s->pos = off;
    /* Keep the blocks at or after the new position. */
    if (s->count && off >= slot(s, 0)->off && off < s->next_off) {
        while (slot(s, 0)->off + slot(s, 0)->len <= off) {
            stop(s, slot(s, 0));
            s->head = (s->head + 1) % s->nblocks;
            s->count--;
        }
        if (s->stream)
            stream_drain(s);
    } else {
        /* A streamed source restarts its GET at the new position once (a
         * reader of one part of a file); a second time it is read at
         * random: ranged blocks from then on. */
        if (s->stream && off < s->size && ++s->far_seeks > 1)
            s->stream = 0;
        reset_queue(s);
    }
    return TFREC_OK;
}

static int64_t src_size(void *ctx)
{
    return (int64_t)((gcs_source *)ctx)->size;
}

static int src_close(void *ctx, int commit)
{
    (void)commit;
    gcs_source *s = ctx;
    for (unsigned i = 0; i <= s->nblocks; i++) {
        block *b = i < s->nblocks ? &s->blocks[i] : &s->xfer;
        stop(s, b);
        if (b->easy)
            curl_easy_cleanup(b->easy);
        tfrec_gcs_resp_free(&b->resp);
        free(b->buf);
    }
    free(s->spill);
    if (s->multi)
        curl_multi_cleanup(s->multi);
    free(s->blocks);
    if (s->url != s->url0)
        free(s->url);
    free(s->url0);
    free(s->name);
    free(s);
    return TFREC_OK;
}

static const char *src_errmsg(void *ctx)
{
    return ((gcs_source *)ctx)->err.msg;
}

void tfrec_gcs_source_stats(void *ctx, gcs_source_stats *out)
{
    *out = ((gcs_source *)ctx)->stats;
}

int tfrec_gcs_open_source(tfrec_storage *st, tfrec_io *io, const char *name)
{
    return tfrec_gcs_open_source_range(st, io, name, 0, UINT64_MAX);
}

int tfrec_gcs_open_source_range(tfrec_storage *st, tfrec_io *io, const char *name, uint64_t offset,
                                uint64_t length)
{
    int rc = TFREC_STRUCT_CHECK_OUT(tfrec_io, io, NULL);
    if (rc)
        return rc;
    gcs_name n;
    if ((rc = tfrec_gcs_parse(name, &n, NULL)) < 0)
        return rc;
    if (!n.object[0])
        return tfrec_fail(NULL, TFREC_E_INVALID, "%s: no object name", name);
    gcs_source *s = calloc(1, sizeof *s);
    if (!s || !(s->name = strdup(name))) {
        free(s);
        return tfrec_fail(NULL, TFREC_E_NOMEM, "%s: out of memory", name);
    }
    s->n = n;
    s->st = st;
    s->url0 = tfrec_gcs_object_url(st, "/storage/v1", n.bucket, n.object);
    if (!s->url0 || tfrec_gcs_url_param(&s->url0, "alt", "media"))
        goto nomem;
    s->url = s->url0;
    size_t ahead = st->opts.read_ahead_bytes ? st->opts.read_ahead_bytes : 8u << 20;
    unsigned par = st->opts.parallel_reads ? st->opts.parallel_reads : 4;
    if (par > 64)
        par = 64;
    /* To the end of the object: streamed. Its read-ahead is cut into at
     * least 4 blocks so that the GET goes on while the caller reads one. */
    s->stream = length == UINT64_MAX;
    if (s->stream && par < 4)
        par = 4;
    s->xfer.src = s;
    s->block_size = ahead / par;
    if (s->block_size < (64u << 10))
        s->block_size = 64u << 10;
    s->blocks = calloc(par, sizeof *s->blocks);
    s->multi = curl_multi_init();
    if (!s->blocks || !s->multi)
        goto nomem;
    s->nblocks = par;
    for (unsigned i = 0; i < par; i++)
        s->blocks[i].src = s;
    /* Block 0's request stands in for the metadata request; while it is
     * out, the view's size is what was asked for. */
    s->base = offset;
    s->want_len = length;
    s->size = length;
    s->probing = 1;
    if (length == 0) { /* nothing to ask for: the object's size is still checked */
        s->probe_stat = 1;
    }
    if (!s->probe_stat && (rc = schedule(s)) == 0)
        rc = pump_until(s, probe_over);
    if (rc < 0) {
        tfrec_fail_copy(NULL, &s->err);
        goto fail_quiet;
    }
    if (s->probe_stat) {
        reset_queue(s);
        s->next_off = 0;
        s->probing = 0;
        tfrec_storage_object meta = TFREC_STORAGE_OBJECT_INIT;
        if ((rc = tfrec_gcs_stat(st, &n, name, &meta, NULL)) < 0)
            goto fail_quiet;
        s->generation = meta.generation;
        s->has_crc = meta.has_crc32c;
        s->crc = meta.crc32c;
        if ((rc = set_view(s, meta.size)) < 0) {
            tfrec_fail_copy(NULL, &s->err);
            goto fail_quiet;
        }
        char gen[24];
        snprintf(gen, sizeof gen, "%" PRId64, s->generation);
        if (s->generation &&
            (!(s->url = strdup(s->url0)) || tfrec_gcs_url_param(&s->url, "generation", gen)))
            goto nomem;
    }
    tfrec_io t = TFREC_IO_INIT;
    t.ctx = s;
    t.read = src_read;
    t.write = io_write_unsupported;
    t.seek = src_seek;
    t.size = src_size;
    t.close = src_close;
    t.errmsg = src_errmsg;
    return TFREC_STRUCT_OUT(tfrec_io, io, &t, NULL);
nomem:
    rc = tfrec_fail(NULL, TFREC_E_NOMEM, "%s: out of memory", name);
fail_quiet:
    src_close(s, 0);
    return rc;
}

/* The bulk writer: batching, calls in flight, per-entry results, retries.
 *
 * Single-threaded by design: all work happens inside put/flush/close on the
 * caller's thread, which pulls completion events from the transport. Rows
 * move queue -> in flight -> (acked | backoff -> queue | failed). */
#include <grpc/grpc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bigtable/mutate_response.h"
#include "bigtable/retry.h"
#include "bigtable/writer_internal.h"
#include "util/struct_size.h"

/* ------------------------------------------------------------ retry */

/* server_delay_ms: the wait the server asked for (google.rpc.RetryInfo),
 * 0 if none; like Google's client libraries we then wait that long instead
 * of our own backoff, within the retry deadline. */
static void retry_or_fail(tfrec_bt_writer *w, bt_entry *e, int code, const char *msg,
                          int stream_level, int64_t server_delay_ms)
{
    int64_t now = tfrec_bt_now_ms();
    if (!e->first_fail_ms)
        e->first_fail_ms = now;
    const char *why = NULL;
    if (w->ts < 0)
        why = "not retried: server-side timestamps are not idempotent";
    else if (w->o.retry_timeout_ms < 0)
        why = "retries disabled";
    else if (now - e->first_fail_ms >= w->o.retry_timeout_ms)
        why = "retry deadline passed";
    else if (w->broken_reason[0])
        why = "writer stopped";
    if (why) {
        tfrec_bt_w_fail(w, e, code, "%s: %s (%s after %u attempt%s)", tfrec_bt_code_name(code), msg,
                        why, e->attempts, e->attempts == 1 ? "" : "s");
        if (stream_level && !w->broken_reason[0])
            snprintf(w->broken_reason, sizeof w->broken_reason, "%s: %s (%s)",
                     tfrec_bt_code_name(code), msg, why);
        return;
    }
    int64_t left = e->first_fail_ms + w->o.retry_timeout_ms - now;
    int64_t d = server_delay_ms > 0 ? server_delay_ms : tfrec_bt_backoff_delay(&w->bo, e->attempts);
    e->due_ms = now + (d < left ? d : left);
    e->next = w->backoff;
    w->backoff = e;
    w->st.retried_entries++;
}

/* Backed-off rows whose time has come go to the front of the queue, so the
 * acknowledged prefix (what --resume relies on) keeps advancing. Returns the
 * earliest due time still waiting, or INT64_MAX. */
static int64_t promote_due(tfrec_bt_writer *w)
{
    if (!w->backoff) /* the usual case: no clock read per row */
        return INT64_MAX;
    int64_t now = tfrec_bt_now_ms(), next = INT64_MAX;
    bt_entry **pp = &w->backoff;
    while (*pp) {
        bt_entry *e = *pp;
        if (e->due_ms <= now) {
            *pp = e->next;
            tfrec_bt_w_queue_push_front(w, e);
        } else {
            if (e->due_ms < next)
                next = e->due_ms;
            pp = &e->next;
        }
    }
    return next;
}

/* Nothing in flight: sleep until the next backed-off row is due (next from
 * promote_due), a second at most so a stop request is noticed. */
static void sleep_until(int64_t next)
{
    int64_t wait = next - tfrec_bt_now_ms();
    if (wait > 1000)
        wait = 1000;
    if (wait > 0) {
        struct timespec ts = { wait / 1000, (wait % 1000) * 1000000 };
        nanosleep(&ts, NULL);
    }
}

/* ------------------------------------------------------------ calls */

static void call_free(wcall *c)
{
    free(c->e);
    free(c->seen);
    free(c);
}

static void on_slice_done(void *p)
{
    tfrec_bt_entry_unref(p);
}

static void stream_failed(tfrec_bt_writer *w, wcall *c, int code, const char *msg,
                          int64_t server_delay_ms);

/* Send the next batch from the queue head, taking rows while they fit: one
 * walk over the queue (for 1 KB rows a batch is thousands of entries, and
 * walking them twice was a measurable share of the client's CPU). */
static void send_batch(tfrec_bt_writer *w)
{
    size_t cap = w->q_rows < w->o.batch_rows ? w->q_rows : w->o.batch_rows;
    wcall *c = calloc(1, sizeof *c);
    grpc_slice *sl = malloc((cap + 1) * sizeof *sl);
    if (c) {
        c->e = malloc(cap * sizeof *c->e);
        c->seen = calloc(cap, 1);
    }
    if (!c || !sl || !c->e || !c->seen) {
        if (c)
            call_free(c);
        free(sl);
        tfrec_fail(&w->err, TFREC_E_NOMEM, "out of memory building a MutateRows request");
        snprintf(w->broken_reason, sizeof w->broken_reason, "out of memory");
        return;
    }
    c->w = w;
    sl[0] = grpc_slice_from_copied_buffer((const char *)w->hdr, w->hdr_len);
    size_t n = 0, bytes = w->hdr_len, muts = 0;
    for (bt_entry *e = w->q_head; e && n < cap; e = w->q_head) {
        if (muts + e->ncells > w->o.batch_mutations || (n && bytes + e->enc_len > w->batch_bytes))
            break;
        tfrec_bt_w_queue_pop(w);
        bytes += e->enc_len;
        muts += e->ncells;
        e->attempts++;
        c->e[n] = e;
        atomic_fetch_add(&e->refs, 1);
        sl[++n] = grpc_slice_new_with_user_data(e->enc, e->enc_len, on_slice_done, e);
    }
    c->n = n;
    c->req_bytes = bytes;
    c->auth_epoch = w->ra.epoch;
    w->st.requests++;
    w->inflight++;
    tfrec_err err = { 0 };
    int rc = w->tr.start(w->tr.ctx, c, sl, n + 1, &err);
    for (size_t i = 0; i <= n; i++)
        grpc_slice_unref(sl[i]);
    free(sl);
    if (rc) {
        w->inflight--;
        stream_failed(w, c, BT_UNAVAILABLE, err.msg, 0);
        call_free(c);
    }
}

static int batch_ready(const tfrec_bt_writer *w)
{
    return w->q_rows >= w->o.batch_rows || w->q_mutations >= w->o.batch_mutations ||
           w->q_bytes + w->hdr_len >= w->batch_bytes;
}

static void dispatch(tfrec_bt_writer *w, int partial_ok)
{
    while (!w->broken_reason[0] && w->inflight < w->o.max_inflight && w->q_head &&
           (partial_ok || batch_ready(w)))
        send_batch(w);
}

static void stream_failed(tfrec_bt_writer *w, wcall *c, int code, const char *msg,
                          int64_t server_delay_ms)
{
    size_t left = 0;
    for (size_t i = 0; i < c->n; i++)
        left += !c->seen[i];
    if (!left)
        return;
    w->st.stream_failures++;
    if (tfrec_bt_is_too_large(code, msg) && left > 1) {
        /* Halve the request size and re-send at once: a size refusal is
         * deterministic, so waiting would not help. */
        size_t half = c->req_bytes / 2;
        if (half < w->batch_bytes)
            w->batch_bytes = half > 1 ? half : 1;
        w->st.splits++;
        for (size_t i = c->n; i-- > 0;)
            if (!c->seen[i]) {
                c->e[i]->attempts--; /* not the row's fault */
                tfrec_bt_w_queue_push_front(w, c->e[i]);
            }
        return;
    }
    if (tfrec_bt_is_too_large(code, msg)) {
        bt_entry *e = NULL;
        for (size_t i = 0; i < c->n; i++)
            if (!c->seen[i])
                e = c->e[i];
        tfrec_bt_w_fail(w, e, code, "%s: row of %zu encoded bytes refused as too large: %s",
                        tfrec_bt_code_name(code), e->enc_len, msg);
        return;
    }
    char why[512] = "", hint[640] = "";
    if (code == BT_UNAUTHENTICATED &&
        tfrec_bt_reauth_decide(&w->ra, c->auth_epoch, w->tr.reauth, w->tr.ctx, why, sizeof why)) {
        /* The token expired or was revoked: a fresh one is in place, and
         * the server applied nothing of a refused call. */
        for (size_t i = c->n; i-- > 0;)
            if (!c->seen[i]) {
                c->e[i]->attempts--;
                tfrec_bt_w_queue_push_front(w, c->e[i]);
            }
        return;
    }
    if (w->tr.hint)
        w->tr.hint(w->tr.ctx, code, msg, hint, sizeof hint);
    int retry = tfrec_bt_retryable(code, msg);
    for (size_t i = 0; i < c->n; i++) {
        if (c->seen[i])
            continue;
        if (retry)
            retry_or_fail(w, c->e[i], code, msg, 1, server_delay_ms);
        else
            tfrec_bt_w_fail(w, c->e[i], code, "%s: %.200s%s%s%s%s", tfrec_bt_code_name(code), msg,
                            why[0] ? " (" : "", why, why[0] ? ")" : "", hint);
    }
    if (!retry && !w->broken_reason[0] &&
        (code == BT_NOT_FOUND || code == BT_PERMISSION_DENIED || code == BT_UNAUTHENTICATED ||
         code == BT_UNIMPLEMENTED || code == BT_FAILED_PRECONDITION || code == BT_UNAVAILABLE))
        snprintf(w->broken_reason, sizeof w->broken_reason, "%s: %.200s%.150s",
                 tfrec_bt_code_name(code), msg, hint);
}

typedef struct msg_ctx {
    tfrec_bt_writer *w;
    wcall *c;
} msg_ctx;

static void on_entry_result(void *ctx, int64_t i, int32_t code, const char *msg, size_t msg_len,
                            int64_t retry_delay_ms)
{
    tfrec_bt_writer *w = ((msg_ctx *)ctx)->w;
    wcall *c = ((msg_ctx *)ctx)->c;
    if (i < 0 || (uint64_t)i >= c->n || c->seen[i])
        return;
    c->seen[i] = 1;
    bt_entry *e = c->e[i];
    if (w->status_hook)
        code = w->status_hook(w->status_hook_ctx, e->index, e->attempts, code);
    if (code == BT_OK) {
        tfrec_bt_w_ack(w, e);
        return;
    }
    char text[512]; /* the server's message, cut to what a report shows */
    snprintf(text, sizeof text, "%.*s", msg_len > 511 ? 511 : (int)msg_len, msg);
    if (tfrec_bt_retryable(code, text))
        retry_or_fail(w, e, code, text, 0, retry_delay_ms);
    else
        tfrec_bt_w_fail(w, e, code, "%s: %s", tfrec_bt_code_name(code), text);
}

static void on_message(tfrec_bt_writer *w, wcall *c, const uint8_t *data, size_t len)
{
    msg_ctx m = { w, c };
    /* A malformed response yields nothing: its entries count as missing at
     * DONE and are re-sent. */
    tfrec_bt_mutate_response_each(data, len, on_entry_result, &m);
}

static void on_done(tfrec_bt_writer *w, wcall *c, int code, const char *details,
                    int64_t server_delay_ms)
{
    w->inflight--;
    if (code == BT_OK)
        tfrec_bt_reauth_passed(&w->ra);
    if (code == BT_OK) /* entries the server never answered for: resend */
        stream_failed(w, c, BT_ABORTED, "stream ended without a result for this row", 0);
    else
        stream_failed(w, c, code, details, server_delay_ms);
    call_free(c);
}

/* Handle events until the deadline, then everything already waiting. */
static void pump(tfrec_bt_writer *w, int64_t deadline_ms)
{
    bt_event ev;
    while (w->inflight > 0 && w->tr.next(w->tr.ctx, deadline_ms, &ev) == 1) {
        wcall *c = ev.user;
        if (ev.kind == BT_EV_MESSAGE)
            on_message(w, c, ev.data, ev.len);
        else
            on_done(w, c, ev.code, ev.details, ev.retry_delay_ms);
        tfrec_bt_event_release(&ev);
        deadline_ms = 0; /* drain without waiting */
    }
    promote_due(w);
}

/* A stop request (tfrec_bt_writer_stop) takes effect here, on the caller's
 * thread: nothing more is sent, and the calls in flight get a deadline. */
static int stopping(tfrec_bt_writer *w)
{
    if (!w->stop_requested)
        return 0;
    if (!w->stop_deadline_ms) {
        if (!w->broken_reason[0])
            snprintf(w->broken_reason, sizeof w->broken_reason, "stopped (interrupted)");
        int64_t t = w->o.stop_timeout_ms > 0 ? w->o.stop_timeout_ms : 0;
        w->stop_deadline_ms = tfrec_bt_now_ms() + t;
        if (!w->stop_deadline_ms)
            w->stop_deadline_ms = 1;
    }
    return 1;
}

/* Past the stop deadline: cancel what is still in flight (once). */
static void cancel_if_due(tfrec_bt_writer *w)
{
    if (w->stop_deadline_ms && !w->cancelled && w->inflight &&
        tfrec_bt_now_ms() >= w->stop_deadline_ms && w->tr.cancel_all) {
        w->tr.cancel_all(w->tr.ctx);
        w->cancelled = 1;
    }
}

/* ------------------------------------------------------------ public */

int tfrec_bt_writer_open_transport(tfrec_bt_writer **out, const bt_transport *t,
                                   const char *table_name, const char *app_profile,
                                   const char *family, const tfrec_bt_writer_options *opts)
{
    *out = NULL;
    tfrec_bt_writer *w = calloc(1, sizeof *w);
    if (!w)
        return tfrec_fail(NULL, TFREC_E_NOMEM, "out of memory");
    int rc = TFREC_STRUCT_IN(tfrec_bt_writer_options, &w->o, opts, NULL);
    if (rc) {
        free(w);
        return rc;
    }
    w->tr = *t;
    tfrec_bt_writer_options *o = &w->o;
    if (!o->batch_rows)
        o->batch_rows = 5000;
    if (!o->batch_mutations || o->batch_mutations > MAX_MUTATIONS)
        o->batch_mutations = MAX_MUTATIONS;
    if (!o->batch_bytes)
        o->batch_bytes = 8u << 20;
    if (o->max_inflight <= 0)
        o->max_inflight = 2;
    if (!o->max_buffered_bytes)
        o->max_buffered_bytes = (size_t)(o->max_inflight + 1) * o->batch_bytes;
    if (!o->retry_initial_ms)
        o->retry_initial_ms = 100;
    if (!o->retry_max_ms)
        o->retry_max_ms = 5000;
    if (o->retry_multiplier < 1.0)
        o->retry_multiplier = 1.5;
    if (!o->retry_timeout_ms)
        o->retry_timeout_ms = 600000;
    if (!o->stop_timeout_ms)
        o->stop_timeout_ms = 10000;
    w->batch_bytes = o->batch_bytes;
    w->bo = (bt_backoff){ o->retry_initial_ms, o->retry_max_ms, o->retry_multiplier,
                          (uint64_t)time(NULL) * 2654435761u ^ (uintptr_t)w };
    if (o->timestamp_micros == 0) {
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        w->ts = ((int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000) * 1000;
    } else {
        w->ts = o->timestamp_micros < 0 ? -1 : o->timestamp_micros;
    }

    size_t tl = strlen(table_name), al = app_profile ? strlen(app_profile) : 0;
    w->family = strdup(family);
    w->hdr = malloc(2 * 10 + tl + al + 2);
    if (!w->family || !w->hdr) {
        free(w->family);
        free(w->hdr);
        free(w);
        return tfrec_fail(NULL, TFREC_E_NOMEM, "out of memory");
    }
    uint8_t *p = tfrec_bt_put_bytes_field(w->hdr, 1, table_name, tl); /* table_name = 1 */
    if (al)
        p = tfrec_bt_put_bytes_field(p, 3, app_profile, al); /* app_profile_id = 3 */
    w->hdr_len = (size_t)(p - w->hdr);
    *out = w;
    return TFREC_OK;
}

void tfrec_bt_writer_stop(tfrec_bt_writer *w)
{
    if (w)
        w->stop_requested = 1;
}

void tfrec_bt_writer_set_status_hook(tfrec_bt_writer *w, tfrec_bt_status_hook hook, void *ctx)
{
    if (!w)
        return;
    w->status_hook = hook;
    w->status_hook_ctx = ctx;
}

int tfrec_bt_writer_put_cells(tfrec_bt_writer *w, const void *key, size_t key_len,
                              const tfrec_bt_cell_in *cells, size_t ncells, uint64_t index)
{
    if (!w)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_bt_writer_put: NULL writer");
    if ((!key && key_len) || (!cells && ncells))
        return tfrec_fail(&w->err, TFREC_E_INVALID, "tfrec_bt_writer_put: NULL key or cells");
    if (w->closed)
        return tfrec_fail(&w->err, TFREC_E_STATE, "put on a closed Bigtable writer");
    if (stopping(w))
        return tfrec_fail(&w->err, TFREC_E_STATE, "Bigtable writer stopped (interrupted)");
    if (w->broken_reason[0])
        return tfrec_fail(&w->err, TFREC_E_NETWORK, "Bigtable writer stopped: %s",
                          w->broken_reason);
    if (key_len == 0 || key_len > MAX_KEY)
        return tfrec_fail(&w->err, TFREC_E_INVALID,
                          "row key of record %llu is %zu bytes; Bigtable takes 1..4096",
                          (unsigned long long)index, key_len);
    if (ncells == 0 || ncells > w->o.batch_mutations)
        return tfrec_fail(&w->err, TFREC_E_INVALID, "row '%.*s' has %zu cells",
                          (int)(key_len > 200 ? 200 : key_len), (const char *)key, ncells);
    for (size_t i = 0; i < ncells; i++)
        if (cells[i].qualifier_len > MAX_QUALIFIER)
            return tfrec_fail(&w->err, TFREC_E_INVALID, "row '%.*s': qualifier over 16 KiB",
                              (int)(key_len > 200 ? 200 : key_len), (const char *)key);
    bt_entry *e =
        tfrec_bt_entry_new(key, key_len, w->family, cells, ncells, w->ts < 0 ? -1 : w->ts);
    if (!e || tfrec_bt_w_track(w)) {
        tfrec_bt_entry_unref(e);
        return tfrec_fail(&w->err, TFREC_E_NOMEM, "out of memory queueing row %llu",
                          (unsigned long long)index);
    }
    e->seq = w->next_seq++;
    e->index = index;
    w->buffered += e->enc_len;
    w->st.rows_put++;
    tfrec_bt_w_queue_push_back(w, e);

    if (w->inflight)
        pump(w, 0);
    dispatch(w, 0);
    /* Back-pressure: wait for acknowledgements while too much is unresolved. */
    while (w->buffered > w->o.max_buffered_bytes && !w->broken_reason[0] && !w->stop_requested) {
        dispatch(w, 1);
        int64_t next = promote_due(w);
        if (!w->inflight && !w->q_head) {
            if (!w->backoff)
                break;
            sleep_until(next);
            continue;
        }
        pump(w, next < tfrec_bt_now_ms() + 1000 ? next : tfrec_bt_now_ms() + 1000);
    }
    return TFREC_OK;
}

int tfrec_bt_writer_put(tfrec_bt_writer *w, const void *key, size_t key_len, const void *qualifier,
                        size_t qualifier_len, const void *value, size_t value_len, uint64_t index)
{
    tfrec_bt_cell_in cell = { qualifier, qualifier_len, value, value_len };
    return tfrec_bt_writer_put_cells(w, key, key_len, &cell, 1, index);
}

static void fail_unsent(tfrec_bt_writer *w)
{
    while (w->q_head) {
        bt_entry *e = tfrec_bt_w_queue_pop(w);
        tfrec_bt_w_fail(w, e, BT_UNAVAILABLE, "not sent: writer stopped after %s",
                        w->broken_reason);
    }
    while (w->backoff) {
        bt_entry *e = w->backoff;
        w->backoff = e->next;
        tfrec_bt_w_fail(w, e, BT_UNAVAILABLE, "not re-sent: writer stopped after %s",
                        w->broken_reason);
    }
}

int tfrec_bt_writer_flush(tfrec_bt_writer *w)
{
    if (!w)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_bt_writer_flush: NULL writer");
    for (;;) {
        stopping(w);
        if (w->broken_reason[0])
            fail_unsent(w);
        dispatch(w, 1);
        if (!w->inflight && !w->q_head && !w->backoff)
            break;
        cancel_if_due(w);
        int64_t next = promote_due(w);
        if (w->q_head && w->inflight < w->o.max_inflight)
            continue;
        if (!w->inflight) {
            sleep_until(next);
            promote_due(w);
            continue;
        }
        int64_t cap = tfrec_bt_now_ms() + (w->stop_requested ? 100 : 1000);
        if (w->stop_deadline_ms && !w->cancelled && w->stop_deadline_ms < cap)
            cap = w->stop_deadline_ms;
        pump(w, next < cap ? next : cap);
    }
    return tfrec_bt_w_report(w);
}

int tfrec_bt_writer_close(tfrec_bt_writer *w)
{
    if (!w)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_bt_writer_close: NULL writer");
    if (w->closed)
        return tfrec_bt_w_report(w);
    int rc = tfrec_bt_writer_flush(w);
    w->closed = 1;
    return rc;
}

void tfrec_bt_writer_free(tfrec_bt_writer *w)
{
    if (!w)
        return;
    if (!w->closed) {
        /* Nothing more may be sent: fail what is queued, wait for calls. */
        if (!w->broken_reason[0])
            snprintf(w->broken_reason, sizeof w->broken_reason, "freed");
        tfrec_bt_writer_close(w);
    }
    if (w->tr.destroy)
        w->tr.destroy(w->tr.ctx);
    tfrec_bt_w_free_rows(w);
    free(w->family);
    free(w->hdr);
    free(w);
}

/* The reader's event loop: merge the scan whose rows are due, keep every
 * other scan's stream running (paused when its buffer is full), resume
 * broken streams after the last row received. */
#include <stdlib.h>
#include <string.h>

#include "bigtable/plan_internal.h"
#include "bigtable/reader_internal.h"
#include "bigtable/read_response.h"
#include "util/struct_size.h"

static int q_push(bt_scan *s, bt_event *ev)
{
    if (s->qlen == s->qcap) {
        size_t cap = s->qcap ? 2 * s->qcap : 8;
        bt_event *q = malloc(cap * sizeof *q);
        if (!q)
            return TFREC_E_NOMEM;
        for (size_t i = 0; i < s->qlen; i++)
            q[i] = s->q[(s->qhead + i) % s->qcap];
        free(s->q);
        s->q = q;
        s->qcap = cap;
        s->qhead = 0;
    }
    s->q[(s->qhead + s->qlen++) % s->qcap] = *ev;
    s->qbytes += ev->len;
    return TFREC_OK;
}

static bt_event q_pop(bt_scan *s)
{
    bt_event ev = s->q[s->qhead];
    s->qhead = (s->qhead + 1) % s->qcap;
    s->qlen--;
    s->qbytes -= ev.len;
    ev.data = GRPC_SLICE_START_PTR(ev.slice); /* a small message is inline: moved */
    return ev;
}

static int drained(const bt_scan *s)
{
    return !s->qlen && !s->cur.kind;
}

/* The current message is merged; the row in progress may go on in the
 * next one: copy what it has here before the bytes go. */
static int retire_cur(bt_scan *s, tfrec_err *err)
{
    int rc = s->cur.kind ? tfrec_bt_merger_keep(&s->m, err) : 0;
    tfrec_bt_event_release(&s->cur);
    return rc;
}

/* Make ev the message being merged. Rows point into its bytes, which for
 * a small message are inside the slice struct: s->cur does not move. */
static void set_cur(bt_scan *s, const bt_event *ev)
{
    s->cur = *ev;
    s->cur.data = GRPC_SLICE_START_PTR(s->cur.slice);
    s->pos = 0;
}

/* Cancel every call and wait for their DONE events. */
static void stop_all(tfrec_bt_reader *r)
{
    for (size_t i = 0; i < r->nscans; i++)
        if (r->scans[i].call)
            r->t.cancel(r->t.ctx, r->scans[i].call);
    int64_t until = tfrec_bt_now_ms() + 60000;
    while (r->running > 0) {
        bt_event ev;
        if (r->t.next(r->t.ctx, until, &ev) != 1)
            break;
        if (ev.kind == BT_EV_DONE) {
            bt_scan *s = ev.user;
            s->call = NULL;
            r->running--;
        }
        tfrec_bt_event_release(&ev);
    }
}

static int fail(tfrec_bt_reader *r, int code)
{
    stop_all(r);
    return code;
}

/* A stop request waits this long at most to be seen. */
#define STOP_POLL_MS 250

/* Whether the server was reached: an answer said so (on_done, pump), or a
 * connection is up now. */
static int reached(tfrec_bt_reader *r)
{
    if (!r->reached && r->t.connected && r->t.connected(r->t.ctx))
        r->reached = 1;
    return r->reached;
}

/* Never reached and past the connect timeout: say where, how long, and the
 * last status (or that nothing came at all). */
static int unreachable(tfrec_bt_reader *r, int64_t now, const bt_event *last)
{
    return tfrec_fail(&r->err, TFREC_E_NETWORK,
                      "ReadRows on %s: cannot reach Bigtable at %s: %s%s%s (tried for %.1f s, "
                      "%u attempt%s)",
                      r->name, r->t.endpoint, last ? tfrec_bt_code_name(last->code) : "no answer",
                      last ? ": " : ", no connection", last ? last->details : "",
                      (double)(now - r->first_call_ms) / 1000, r->connect_attempts,
                      r->connect_attempts == 1 ? "" : "s");
}

/* Merge what scan s has received: 1 a row is ready, 0 nothing buffered.
 * The row handed out last is no longer in use when this is called. */
static int consume(tfrec_bt_reader *r, bt_scan *s)
{
    for (;;) {
        bt_chunk ch;
        while (s->cur.kind && tfrec_bt_read_response_next(s->cur.data, s->cur.len, &s->pos, &ch)) {
            tfrec_err merr;
            merr.msg[0] = 0;
            int rc = tfrec_bt_merger_feed(&s->m, &ch, &merr);
            if (rc < 0)
                return tfrec_fail(&r->err, rc, "ReadRows on %s at %s: %s", r->name, r->t.endpoint,
                                  merr.msg);
            if (rc == 1)
                return 1;
        }
        if (retire_cur(s, &r->err))
            return r->err.code;
        if (!s->qlen)
            break;
        bt_event ev = q_pop(s);
        if (tfrec_bt_read_response_each(ev.data, ev.len, NULL, NULL)) {
            tfrec_bt_event_release(&ev);
            return tfrec_fail(&r->err, TFREC_E_PARSE, "unparsable ReadRows response from %s",
                              r->t.endpoint);
        }
        set_cur(s, &ev);
    }
    if (s->state == SCAN_EOS) {
        tfrec_err merr;
        int rc = tfrec_bt_merger_finish(&s->m, &merr);
        if (rc)
            return tfrec_fail(&r->err, rc, "ReadRows on %s at %s: %s", r->name, r->t.endpoint,
                              merr.msg);
        s->state = SCAN_DONE;
    }
    return 0;
}

/* Start the calls that are due: idle scans whose data is all merged;
 * shuffled scans in their order, a new one only while fewer than
 * max_active are under way. */
static int start_due(tfrec_bt_reader *r, int64_t now, int64_t *wake)
{
    size_t active = 0;
    for (size_t i = 0; r->order && i < r->nscans; i++)
        if (r->scans[i].begun && r->scans[i].state != SCAN_DONE)
            active++;
    for (size_t k = 0; k < r->nscans; k++) {
        bt_scan *s = &r->scans[r->order ? r->order[k] : k];
        if (s->state != SCAN_IDLE || !drained(s))
            continue;
        if (r->order && !s->begun) {
            if (active >= r->max_active)
                continue;
            s->begun = 1;
            int rc = tfrec_bt_scan_start(r, s);
            if (rc)
                return rc;
            if (s->state != SCAN_DONE)
                active++;
            continue;
        }
        if (s->retry_at > now) {
            if (s->retry_at < *wake)
                *wake = s->retry_at;
            continue;
        }
        int rc = tfrec_bt_scan_start(r, s);
        if (rc)
            return rc;
    }
    return TFREC_OK;
}

/* A call ended. */
static int on_done(tfrec_bt_reader *r, bt_scan *s, const bt_event *ev, int64_t now)
{
    s->call = NULL;
    r->running--;
    if (!tfrec_bt_unreachable(ev->code) && ev->code != BT_CANCELLED)
        r->reached = 1; /* the server answered */
    if (ev->code == BT_OK) {
        tfrec_bt_reauth_passed(&r->ra);
        s->pausing = 0;
        s->stalled = 0;
        s->state = SCAN_EOS;
        return TFREC_OK;
    }
    s->state = SCAN_IDLE;
    if (s->pausing) {
        s->pausing = 0;
        s->stalled = 0;
        s->retry_at = 0; /* again once the buffer is merged */
        return TFREC_OK;
    }
    int stalled = s->stalled;
    s->stalled = 0;
    char why[512] = "", hint[640] = "";
    if (ev->code == BT_UNAUTHENTICATED &&
        tfrec_bt_reauth_decide(&r->ra, s->auth_epoch, r->t.reauth, r->t.ctx, why, sizeof why)) {
        /* A fresh token is in place: resume after the last row delivered. */
        r->st.resumed++;
        s->retry_at = now;
        return TFREC_OK;
    }
    if (r->t.hint)
        r->t.hint(r->t.ctx, ev->code, ev->details, hint, sizeof hint);
    /* Throttling (RESOURCE_EXHAUSTED that is not a size limit) waits and
     * resumes like the writer's rows do; the backoff spreads the load. */
    if (stalled || tfrec_bt_retryable(ev->code, ev->details)) {
        if (!s->failures++)
            s->fail_since = now;
        if (!reached(r) && (stalled || tfrec_bt_unreachable(ev->code)) &&
            now - r->first_call_ms >= r->connect_timeout_ms)
            return unreachable(r, now, stalled ? NULL : ev);
        if (now - s->fail_since <= r->retry_timeout_ms) {
            r->st.resumed++;
            /* A delay the server named (RetryInfo) replaces our backoff,
             * as Google's client libraries do. */
            int64_t d = !stalled && ev->retry_delay_ms > 0
                            ? ev->retry_delay_ms
                            : tfrec_bt_backoff_delay(&r->backoff, s->failures);
            s->retry_at = now + d;
            return TFREC_OK;
        }
        return tfrec_fail(&r->err, TFREC_E_NETWORK,
                          "ReadRows on %s at %s: %s: %s (giving up after %u attempts in %lld ms)",
                          r->name, r->t.endpoint,
                          stalled ? "no response" : tfrec_bt_code_name(ev->code),
                          stalled ? "the stream went silent" : ev->details, s->failures,
                          (long long)(now - s->fail_since));
    }
    return tfrec_fail(&r->err, ev->code == BT_NOT_FOUND ? TFREC_E_NOT_FOUND : TFREC_E_NETWORK,
                      "ReadRows on %s at %s: %s: %.200s%s%s%s%s", r->name, r->t.endpoint,
                      tfrec_bt_code_name(ev->code), ev->details, why[0] ? " (" : "", why,
                      why[0] ? ")" : "", hint);
}

/* Wait for one event (or until wake) and file it under its scan. */
static int pump(tfrec_bt_reader *r, int64_t wake)
{
    int64_t now = tfrec_bt_now_ms();
    int64_t deadline = r->running ? r->last_event_ms + r->stall_ms : wake;
    if (wake < deadline)
        deadline = wake;
    /* Wake up to see a stop request, and when a server not reached yet
     * runs out of its connect time. */
    if (deadline > now + STOP_POLL_MS)
        deadline = now + STOP_POLL_MS;
    int connecting = r->running && !reached(r);
    if (connecting && deadline > r->first_call_ms + r->connect_timeout_ms)
        deadline = r->first_call_ms + r->connect_timeout_ms;
    bt_event ev;
    int got = r->t.next(r->t.ctx, deadline, &ev);
    if (got != 1) {
        int64_t t = tfrec_bt_now_ms();
        if (connecting && !reached(r) && t - r->first_call_ms >= r->connect_timeout_ms)
            return unreachable(r, t, NULL); /* fail() cancels the calls */
        /* Silence on every stream: a connection that died without a word
         * (no reset reached us). Cancel and resume them like any broken
         * stream; the retry deadline still bounds the whole. */
        if (r->running && t >= r->last_event_ms + r->stall_ms)
            for (size_t i = 0; i < r->nscans; i++)
                if (r->scans[i].call && !r->scans[i].stalled) {
                    r->scans[i].stalled = 1;
                    r->t.cancel(r->t.ctx, r->scans[i].call);
                }
        return TFREC_OK; /* a retry is due, or the cancelled calls end */
    }
    r->last_event_ms = tfrec_bt_now_ms();
    bt_scan *s = ev.user;
    if (ev.kind == BT_EV_DONE)
        return on_done(r, s, &ev, r->last_event_ms);
    r->reached = 1; /* a message: the server is there */
    /* ...and took the call's token: a stream resumed later on a token
     * revoked meanwhile may refresh again (once per run of refusals). */
    if (s->auth_epoch == r->ra.epoch)
        tfrec_bt_reauth_passed(&r->ra);
    if (q_push(s, &ev)) {
        tfrec_bt_event_release(&ev);
        return tfrec_fail(&r->err, TFREC_E_NOMEM, "out of memory");
    }
    /* A full buffer: cancel the stream, resume it after its last row once
     * the reader has caught up (the bytes in flight are kept). */
    if (s->qbytes > r->max_buffer && s->call && !s->pausing) {
        s->pausing = 1;
        r->st.paused++;
        r->t.cancel(r->t.ctx, s->call);
    }
    return TFREC_OK;
}

static int row_out(tfrec_bt_reader *r, bt_scan *s, tfrec_bt_row *row)
{
    const tfrec_bt_row *in = &s->m.row;
    r->returned++;
    s->failures = 0;
    r->st.rows++;
    r->st.bytes += in->key_len;
    for (size_t i = 0; i < in->ncells; i++)
        r->st.bytes += in->cells[i]->value_len;
    tfrec_bt_row out = *in;
    out.range = s->index;
    return TFREC_STRUCT_OUT(tfrec_bt_row, row, &out, NULL);
}

int tfrec_bt_reader_next(tfrec_bt_reader *r, tfrec_bt_row *row)
{
    if (!r)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_bt_reader_next: NULL reader");
    if (TFREC_STRUCT_CHECK_OUT(tfrec_bt_row, row, NULL))
        return TFREC_E_INVALID;
    if (r->err.code)
        return r->err.code;
    for (;;) {
        if (atomic_load_explicit(&r->stop, memory_order_relaxed))
            return fail(r, tfrec_fail(&r->err, TFREC_E_STATE,
                                      "ReadRows on %s at %s: stopped (tfrec_bt_reader_stop) after "
                                      "%llu rows",
                                      r->name, r->t.endpoint, (unsigned long long)r->returned));
        if (r->rows_limit > 0 && r->returned >= r->rows_limit) {
            stop_all(r);
            return TFREC_END;
        }
        /* ordered: only the first unfinished scan; else round robin */
        size_t live = 0;
        for (size_t k = 0; k < r->nscans; k++) {
            size_t i = r->unordered ? (r->cur + k) % r->nscans : k;
            bt_scan *s = &r->scans[i];
            if (s->state == SCAN_DONE)
                continue;
            int rc = consume(r, s);
            if (rc < 0)
                return fail(r, rc);
            if (rc == 1) {
                if (r->unordered)
                    r->cur = (i + 1) % r->nscans;
                return row_out(r, s, row);
            }
            if (s->state != SCAN_DONE)
                live++;
            if (!r->unordered && s->state != SCAN_DONE)
                break;
        }
        if (!live) {
            stop_all(r);
            return TFREC_END;
        }
        int64_t now = tfrec_bt_now_ms(), wake = now + r->stall_ms;
        int rc = start_due(r, now, &wake);
        /* nothing streaming and no retry waiting: a scan just turned out
         * empty (DONE), so look again at which scan is due */
        if (!rc && r->running == 0 && wake >= now + r->stall_ms)
            continue;
        if (!rc)
            rc = pump(r, wake);
        if (rc)
            return fail(r, rc);
    }
}

/* The cell of family:column in row, or NULL. */
static const tfrec_bt_cell *column_cell(const tfrec_bt_row *row, const char *family,
                                        const char *column, size_t column_len)
{
    for (size_t i = 0; i < row->ncells; i++) {
        const tfrec_bt_cell *c = row->cells[i];
        if (c->qualifier_len == column_len && !memcmp(c->qualifier, column, column_len) &&
            !strcmp(c->family, family))
            return c;
    }
    return NULL;
}

int tfrec_bt_reader_next_value(tfrec_bt_reader *r, const uint8_t **value, size_t *len)
{
    if (!r || !value || !len)
        return tfrec_fail(r ? &r->err : NULL, TFREC_E_INVALID,
                          "tfrec_bt_reader_next_value: NULL argument");
    if (!r->family || !r->column)
        return tfrec_fail(&r->err, TFREC_E_INVALID,
                          "tfrec_bt_reader_next_value: the reader was opened without a family "
                          "and a column");
    size_t column_len = strlen(r->column);
    for (;;) {
        tfrec_bt_row row = TFREC_BT_ROW_INIT;
        int rc = tfrec_bt_reader_next(r, &row);
        if (rc)
            return rc;
        const tfrec_bt_cell *c = column_cell(&row, r->family, r->column, column_len);
        if (c) {
            *value = c->value_len ? c->value : (const uint8_t *)"";
            *len = c->value_len;
            return TFREC_OK;
        }
    }
}

int tfrec_bt_reader_next_values(tfrec_bt_reader *r, tfrec_record_batch *b, size_t max_values,
                                size_t max_bytes)
{
    if (!r || !b)
        return tfrec_fail(r ? &r->err : NULL, TFREC_E_INVALID,
                          "tfrec_bt_reader_next_values: NULL argument");
    tfrec_record_batch_clear(b);
    if (!r->family || !r->column)
        return tfrec_fail(&r->err, TFREC_E_INVALID,
                          "tfrec_bt_reader_next_values: the reader was opened without a family "
                          "and a column");
    size_t column_len = strlen(r->column), n = 0, bytes = 0;
    while ((!max_values || n < max_values) && (!max_bytes || bytes < max_bytes)) {
        tfrec_bt_row row = TFREC_BT_ROW_INIT;
        int rc = tfrec_bt_reader_next(r, &row);
        if (rc == TFREC_END || (rc < 0 && n))
            break; /* a failure after some rows comes from the next call */
        if (rc < 0)
            return rc;
        const tfrec_bt_cell *c = column_cell(&row, r->family, r->column, column_len);
        if (!c)
            continue;
        if (tfrec_record_batch_append(b, c->value, c->value_len, row.range)) {
            tfrec_record_batch_clear(b);
            return fail(
                r, tfrec_fail(&r->err, TFREC_E_NOMEM, "ReadRows on %s: out of memory", r->name));
        }
        n++;
        bytes += c->value_len;
    }
    return n ? TFREC_OK : TFREC_END;
}

void tfrec_bt_reader_free(tfrec_bt_reader *r)
{
    if (!r)
        return;
    if (r->have_t) {
        stop_all(r);
        r->t.destroy(r->t.ctx);
    }
    for (size_t i = 0; i < r->nscans; i++) {
        bt_scan *s = &r->scans[i];
        while (s->qlen) {
            bt_event ev = q_pop(s);
            tfrec_bt_event_release(&ev);
        }
        free(s->q);
        tfrec_bt_event_release(&s->cur);
        tfrec_bt_merger_free(&s->m);
        tfrec_bt_rowset_free(&s->set);
    }
    free(r->scans);
    free(r->order);
    free(r->app_profile);
    free(r->family);
    free(r->column);
    tfrec_bt_plan_free(r->plan);
    free(r);
}

/* Bulk writer logic against an in-process fake MutateRows server: batching
 * limits, per-entry retries (only failed entries re-sent), whole-stream
 * failures, too-large splits, deadlines, and the request encoding itself
 * (decoded with the protobuf-c code generated from our .proto files). */
#include <grpc/grpc.h>
#include <grpc/slice.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bigtable/call.h"
#include "bigtable/retry.h"
#include "bigtable/transport.h"
#include "bigtable/writer_testing.h"
#include "google/bigtable/v2/bigtable.pb-c.h"
#include "harness.h"
#include "tfrec/bigtable.h"

#define MAX_KEYS 4096

/* ------------------------------------------------------------ fake server */

typedef struct fake_ev {
    int kind;
    void *user;
    uint8_t *data;
    size_t len;
    int code;
    char details[200];
    int64_t retry_delay_ms; /* DONE: the RetryInfo delay the call names */
} fake_ev;

typedef struct fake {
    /* policy */
    int (*entry_code)(struct fake *f, uint64_t key_index, unsigned send_no); /* per entry */
    int fail_call_no; /* 1-based call to fail as a whole (0: none) */
    int fail_call_code;
    int64_t fail_retry_delay_ms; /* RetryInfo delay on that failure (0: none) */
    size_t fail_after;           /* entries answered OK before that call fails */
    int fail_all_calls;          /* every call fails UNAVAILABLE */
    size_t max_request;          /* bigger requests: RESOURCE_EXHAUSTED (0: no limit) */
    int hang_from_call; /* 1-based: this call and later ones get no answer until cancelled */
    void *held[64];     /* calls hanging */
    size_t nheld;
    int cancels;      /* cancel_all calls */
    int unauth;       /* every call fails UNAUTHENTICATED (the token is refused) */
    int reauth_fixes; /* a reauth clears unauth (an expired token), else not (revoked) */
    int reauths;      /* reauth calls */
    /* observations */
    int calls, outstanding, max_outstanding;
    unsigned sends[MAX_KEYS]; /* times each key index was sent */
    unsigned acks[MAX_KEYS];  /* times each key index was answered OK */
    size_t max_rows_in_request, max_bytes_accepted, max_mutations;
    Google__Bigtable__V2__MutateRowsRequest *first_request;
    /* event queue */
    fake_ev *ev;
    size_t nev, cap, head;
} fake;

static void push(fake *f, fake_ev e)
{
    if (f->nev == f->cap) {
        f->cap = f->cap ? f->cap * 2 : 64;
        f->ev = realloc(f->ev, f->cap * sizeof *f->ev);
    }
    f->ev[f->nev++] = e;
}

static uint64_t key_index(const ProtobufCBinaryData *k)
{
    /* keys are "row_NNNNNN" */
    char buf[32] = { 0 };
    memcpy(buf, k->data, k->len < 31 ? k->len : 31);
    return strtoull(buf + 4, NULL, 10);
}

static void push_done(fake *f, void *user, int code, const char *details)
{
    fake_ev d = { BT_EV_DONE, user, NULL, 0, code, "", 0 };
    snprintf(d.details, sizeof d.details, "%s", details);
    push(f, d);
}

static int fake_start(void *ctx, void *user, const grpc_slice *sl, size_t n, tfrec_err *err)
{
    (void)err;
    fake *f = ctx;
    size_t len = 0;
    for (size_t i = 0; i < n; i++)
        len += GRPC_SLICE_LENGTH(sl[i]);
    uint8_t *buf = malloc(len), *p = buf;
    for (size_t i = 0; i < n; i++) {
        memcpy(p, GRPC_SLICE_START_PTR(sl[i]), GRPC_SLICE_LENGTH(sl[i]));
        p += GRPC_SLICE_LENGTH(sl[i]);
    }
    f->calls++;
    if (++f->outstanding > f->max_outstanding)
        f->max_outstanding = f->outstanding;
    if (f->max_request && len > f->max_request) {
        free(buf);
        push_done(f, user, BT_RESOURCE_EXHAUSTED,
                  "grpc: received message larger than max (999 vs. 100)");
        return 0;
    }
    Google__Bigtable__V2__MutateRowsRequest *req =
        google__bigtable__v2__mutate_rows_request__unpack(NULL, len, buf);
    free(buf);
    if (!req) {
        push_done(f, user, BT_INVALID_ARGUMENT, "unparsable request");
        return 0;
    }
    if (req->n_entries > f->max_rows_in_request)
        f->max_rows_in_request = req->n_entries;
    if (len > f->max_bytes_accepted)
        f->max_bytes_accepted = len;
    size_t muts = 0;
    for (size_t i = 0; i < req->n_entries; i++)
        muts += req->entries[i]->n_mutations;
    if (muts > f->max_mutations)
        f->max_mutations = muts;
    if (f->hang_from_call && f->calls >= f->hang_from_call && f->nheld < 64) {
        for (size_t i = 0; i < req->n_entries; i++) {
            uint64_t k = key_index(&req->entries[i]->row_key);
            if (k < MAX_KEYS)
                f->sends[k]++;
        }
        f->held[f->nheld++] = user;
        google__bigtable__v2__mutate_rows_request__free_unpacked(req, NULL);
        return 0;
    }

    if (f->unauth) {
        for (size_t i = 0; i < req->n_entries; i++) {
            uint64_t k = key_index(&req->entries[i]->row_key);
            if (k < MAX_KEYS)
                f->sends[k]++;
        }
        google__bigtable__v2__mutate_rows_request__free_unpacked(req, NULL);
        push_done(f, user, BT_UNAUTHENTICATED, "Request had invalid authentication credentials");
        return 0;
    }
    int whole_fail = f->fail_all_calls || f->calls == f->fail_call_no;
    size_t answer = whole_fail ? (f->fail_all_calls ? 0 : f->fail_after) : req->n_entries;
    Google__Bigtable__V2__MutateRowsResponse resp =
        GOOGLE__BIGTABLE__V2__MUTATE_ROWS_RESPONSE__INIT;
    Google__Bigtable__V2__MutateRowsResponse__Entry *ents = calloc(answer + 1, sizeof *ents);
    Google__Bigtable__V2__MutateRowsResponse__Entry **ptrs = calloc(answer + 1, sizeof *ptrs);
    Google__Rpc__Status *st = calloc(answer + 1, sizeof *st);
    for (size_t i = 0; i < req->n_entries; i++) {
        uint64_t k = key_index(&req->entries[i]->row_key);
        if (k < MAX_KEYS)
            f->sends[k]++;
        if (i >= answer)
            continue;
        google__bigtable__v2__mutate_rows_response__entry__init(&ents[i]);
        google__rpc__status__init(&st[i]);
        ents[i].index = (int64_t)i;
        st[i].code = f->entry_code ? f->entry_code(f, k, k < MAX_KEYS ? f->sends[k] : 1) : 0;
        st[i].message = st[i].code ? "injected" : "";
        ents[i].status = &st[i];
        ptrs[i] = &ents[i];
        if (st[i].code == 0 && k < MAX_KEYS)
            f->acks[k]++;
    }
    resp.n_entries = answer;
    resp.entries = ptrs;
    /* Answer in reverse order: the writer must go by index, not position. */
    for (size_t i = 0; i < answer / 2; i++) {
        Google__Bigtable__V2__MutateRowsResponse__Entry *t = ptrs[i];
        ptrs[i] = ptrs[answer - 1 - i];
        ptrs[answer - 1 - i] = t;
    }
    if (answer) {
        fake_ev m = { BT_EV_MESSAGE, user, NULL, 0, 0, "", 0 };
        m.len = google__bigtable__v2__mutate_rows_response__get_packed_size(&resp);
        m.data = malloc(m.len);
        google__bigtable__v2__mutate_rows_response__pack(&resp, m.data);
        push(f, m);
    }
    free(ents);
    free(ptrs);
    free(st);
    push_done(f, user, whole_fail ? (f->fail_all_calls ? BT_UNAVAILABLE : f->fail_call_code) : 0,
              whole_fail ? "connection reset by fake" : "");
    if (whole_fail && !f->fail_all_calls)
        f->ev[f->nev - 1].retry_delay_ms = f->fail_retry_delay_ms;
    if (!f->first_request)
        f->first_request = req;
    else
        google__bigtable__v2__mutate_rows_request__free_unpacked(req, NULL);
    return 0;
}

static int fake_next(void *ctx, int64_t deadline_ms, bt_event *ev)
{
    (void)deadline_ms;
    fake *f = ctx;
    if (f->head == f->nev)
        return 0;
    fake_ev e = f->ev[f->head++];
    memset(ev, 0, sizeof *ev);
    ev->kind = e.kind;
    ev->user = e.user;
    if (e.kind == BT_EV_MESSAGE) {
        ev->slice = grpc_slice_from_copied_buffer((const char *)e.data, e.len);
        ev->data = GRPC_SLICE_START_PTR(ev->slice);
        ev->len = e.len;
        free(e.data);
    } else {
        ev->code = e.code;
        ev->retry_delay_ms = e.retry_delay_ms;
        snprintf(ev->details, sizeof ev->details, "%s", e.details);
        f->outstanding--;
    }
    return 1;
}

static void fake_cancel_all(void *ctx)
{
    fake *f = ctx;
    f->cancels++;
    for (size_t i = 0; i < f->nheld; i++)
        push_done(f, f->held[i], BT_CANCELLED, "Cancelled");
    f->nheld = 0;
}

static fake *fake_new(void)
{
    return calloc(1, sizeof(fake));
}

static void fake_free(fake *f)
{
    free(f->ev);
    if (f->first_request)
        google__bigtable__v2__mutate_rows_request__free_unpacked(f->first_request, NULL);
    free(f);
}

static int fake_reauth(void *ctx, char *err, size_t errcap)
{
    (void)err, (void)errcap;
    fake *f = ctx;
    f->reauths++;
    if (f->reauth_fixes)
        f->unauth = 0;
    return 0;
}

static const char *fake_hint(void *ctx, int code, const char *details, char *buf, size_t cap)
{
    (void)ctx, (void)details;
    snprintf(buf, cap, "%s", code == BT_UNAUTHENTICATED ? " (as loader@example)" : "");
    return buf;
}

static tfrec_bt_writer *open_writer(fake *f, tfrec_bt_writer_options *o)
{
    bt_transport t = { f, fake_start, fake_next, NULL, fake_cancel_all, fake_reauth, fake_hint };
    tfrec_bt_writer *w = NULL;
    if (!o->retry_initial_ms)
        o->retry_initial_ms = 1; /* keep the test fast */
    if (!o->retry_max_ms)
        o->retry_max_ms = 4;
    tfrec_bt_writer_open_transport(&w, &t, "projects/p/instances/i/tables/t", NULL, "tfexample", o);
    return w;
}

static int put_rows(tfrec_bt_writer *w, int from, int to, size_t value_len)
{
    char key[32], *val = calloc(1, value_len + 1);
    int rc = 0;
    for (int i = from; i < to && !rc; i++) {
        snprintf(key, sizeof key, "row_%06d", i);
        memset(val, 'a' + i % 26, value_len);
        rc = tfrec_bt_writer_put(w, key, strlen(key), "example", 7, val, value_len, (uint64_t)i);
    }
    free(val);
    return rc;
}

/* The writer's figures (zeros if it cannot give them: the checks then fail). */
static tfrec_bt_writer_stats stats_of(tfrec_bt_writer *w)
{
    tfrec_bt_writer_stats st = TFREC_BT_WRITER_STATS_INIT;
    tfrec_bt_writer_stats_get(w, &st);
    return st;
}

/* Rows 0..n-1 each acknowledged exactly once. */
static int all_acked(const fake *f, int n)
{
    for (int i = 0; i < n; i++)
        if (f->acks[i] != 1)
            return 0;
    return 1;
}

static void done(tfrec_bt_writer *w, fake *f)
{
    tfrec_bt_writer_free(w);
    fake_free(f);
}

/* ------------------------------------------------------------ tests */

/* tfrec_bt_writer_stop (what a SIGINT handler calls): put refuses rows, and
 * flush waits no longer than stop_timeout_ms for calls that never answer,
 * then cancels them; rows not acknowledged are failed, the queued ones
 * never sent, and the acknowledged prefix stays exact. */
static void test_stop_bounds_the_wait_for_calls_in_flight(void)
{
    fake *f = fake_new();
    f->hang_from_call = 3; /* rows 0..19 answered, 20..39 hang */
    tfrec_bt_writer_options o = TFREC_BT_WRITER_OPTIONS_INIT;
    o.batch_rows = 10;
    o.max_inflight = 2;
    o.stop_timeout_ms = 100;
    tfrec_bt_writer *w = open_writer(f, &o);
    CHECK(w);
    CHECK_EQ(put_rows(w, 0, 60, 20), 0);
    CHECK_EQ(f->nheld, 2);
    tfrec_bt_writer_stop(w);
    CHECK_EQ(put_rows(w, 60, 61, 20), TFREC_E_STATE);
    int64_t t0 = tfrec_bt_now_ms();
    CHECK(tfrec_bt_writer_flush(w) != TFREC_OK);
    int64_t took = tfrec_bt_now_ms() - t0;
    CHECKF(took >= 90 && took < 3000, "flush after stop took %lld ms", (long long)took);
    CHECK_EQ(f->cancels, 1);
    tfrec_bt_writer_stats st = stats_of(w);
    CHECK_EQ(st.rows_acked, 20);
    CHECK_EQ(st.rows_failed, 40);
    CHECK_EQ(st.acked_prefix, 20);
    CHECK_EQ(tfrec_bt_writer_failed_count(w), 40);
    uint64_t idx;
    CHECK_EQ(tfrec_bt_writer_failed_row(w, 0, NULL, NULL, &idx, NULL, NULL), 0);
    CHECK_EQ(idx, 20);
    CHECK_EQ(f->sends[45], 0); /* queued, never sent after the stop */
    CHECK_EQ(tfrec_bt_writer_close(w) != TFREC_OK, 1);
    done(w, f);
}

static void test_request_encoding_decodes(void)
{
    fake *f = fake_new();
    tfrec_bt_writer_options o = TFREC_BT_WRITER_OPTIONS_INIT;
    o.timestamp_micros = 1234567000;
    tfrec_bt_writer *w = open_writer(f, &o);
    CHECK(w);
    CHECK_EQ(put_rows(w, 0, 3, 300), 0);
    CHECK_EQ(tfrec_bt_writer_close(w), 0);
    Google__Bigtable__V2__MutateRowsRequest *r = f->first_request;
    CHECK(r);
    CHECK(!strcmp(r->table_name, "projects/p/instances/i/tables/t"));
    CHECK_EQ(r->n_entries, 3);
    CHECK(r->entries[2]->row_key.len == 10 &&
          !memcmp(r->entries[2]->row_key.data, "row_000002", 10));
    CHECK_EQ(r->entries[2]->n_mutations, 1);
    Google__Bigtable__V2__Mutation *m = r->entries[2]->mutations[0];
    CHECK_EQ(m->mutation_case, GOOGLE__BIGTABLE__V2__MUTATION__MUTATION_SET_CELL);
    CHECK(!strcmp(m->set_cell->family_name, "tfexample"));
    CHECK(m->set_cell->column_qualifier.len == 7 &&
          !memcmp(m->set_cell->column_qualifier.data, "example", 7));
    CHECK_EQ(m->set_cell->timestamp_micros, 1234567000);
    CHECK_EQ(m->set_cell->value.len, 300);
    CHECK(m->set_cell->value.data[0] == 'c' && m->set_cell->value.data[299] == 'c');
    done(w, f);
}

static void test_server_timestamp_encodes_minus_one(void)
{
    fake *f = fake_new();
    tfrec_bt_writer_options o = TFREC_BT_WRITER_OPTIONS_INIT;
    o.timestamp_micros = -1;
    tfrec_bt_writer *w = open_writer(f, &o);
    CHECK_EQ(put_rows(w, 0, 1, 10), 0);
    CHECK_EQ(tfrec_bt_writer_close(w), 0);
    CHECK_EQ(f->first_request->entries[0]->mutations[0]->set_cell->timestamp_micros, -1);
    CHECK_EQ(tfrec_bt_writer_timestamp(w), -1);
    done(w, f);
}

static void test_default_timestamp_is_whole_milliseconds(void)
{
    fake *f = fake_new();
    tfrec_bt_writer_options o = TFREC_BT_WRITER_OPTIONS_INIT;
    tfrec_bt_writer *w = open_writer(f, &o);
    int64_t ts = tfrec_bt_writer_timestamp(w);
    CHECK(ts > 1500000000000000LL); /* after 2017, in micros */
    CHECK_EQ(ts % 1000, 0);
    CHECK_EQ(put_rows(w, 0, 5, 10), 0);
    CHECK_EQ(tfrec_bt_writer_close(w), 0);
    for (size_t i = 0; i < f->first_request->n_entries; i++)
        CHECK_EQ(f->first_request->entries[i]->mutations[0]->set_cell->timestamp_micros, ts);
    done(w, f);
}

static void test_batches_bounded_by_rows_bytes_mutations(void)
{
    fake *f = fake_new();
    tfrec_bt_writer_options o = TFREC_BT_WRITER_OPTIONS_INIT;
    o.batch_rows = 100;
    tfrec_bt_writer *w = open_writer(f, &o);
    CHECK_EQ(put_rows(w, 0, 250, 20), 0);
    CHECK_EQ(tfrec_bt_writer_close(w), 0);
    CHECK_EQ(f->calls, 3);
    CHECK_EQ(f->max_rows_in_request, 100);
    done(w, f);

    f = fake_new();
    tfrec_bt_writer_options_init(&o);
    o.batch_bytes = 4096;
    w = open_writer(f, &o);
    CHECK_EQ(put_rows(w, 0, 100, 1000), 0);
    CHECK_EQ(tfrec_bt_writer_close(w), 0);
    CHECK(f->max_bytes_accepted <= 4096);
    CHECK(f->calls >= 25); /* ~3 rows of ~1 KB per 4 KiB request */
    CHECK(all_acked(f, 100));
    done(w, f);

    f = fake_new();
    tfrec_bt_writer_options_init(&o);
    o.batch_mutations = 10;
    w = open_writer(f, &o);
    tfrec_bt_cell_in cells[3] = { { "a", 1, "x", 1 }, { "b", 1, "y", 1 }, { "c", 1, "z", 1 } };
    for (int i = 0; i < 30; i++) {
        char key[32];
        snprintf(key, sizeof key, "row_%06d", i);
        CHECK_EQ(tfrec_bt_writer_put_cells(w, key, strlen(key), cells, 3, (uint64_t)i), 0);
    }
    CHECK_EQ(tfrec_bt_writer_close(w), 0);
    CHECK(f->max_mutations <= 10);
    CHECK_EQ(f->max_rows_in_request, 3);
    done(w, f);
}

/* Every 7th row fails UNAVAILABLE on its first send; row 10 is rejected
 * for good; row 5 is failed once through the (internal) status hook. */
static int flaky_entries(fake *f, uint64_t k, unsigned send_no)
{
    (void)f;
    if (k == 10)
        return BT_INVALID_ARGUMENT;
    if (k % 7 == 3 && send_no == 1)
        return BT_UNAVAILABLE;
    return BT_OK;
}

static int hook_calls;
static int fail_row5_once(void *ctx, uint64_t index, unsigned attempt, int code)
{
    (void)ctx;
    hook_calls++;
    if (index == 5 && attempt == 1)
        return BT_ABORTED;
    return code;
}

static void test_only_failed_entries_are_retried(void)
{
    fake *f = fake_new();
    f->entry_code = flaky_entries;
    tfrec_bt_writer_options o = TFREC_BT_WRITER_OPTIONS_INIT;
    o.batch_rows = 16;
    tfrec_bt_writer *w = open_writer(f, &o);
    tfrec_bt_writer_set_status_hook(w, fail_row5_once, NULL);
    CHECK_EQ(put_rows(w, 0, 200, 50), 0);
    int rc = tfrec_bt_writer_close(w);
    CHECK_EQ(rc, TFREC_E_NETWORK);
    CHECK(hook_calls > 200);
    for (int i = 0; i < 200; i++) {
        if (i == 10) {
            CHECK_EQ(f->sends[i], 1); /* INVALID_ARGUMENT is not retryable */
            CHECK_EQ(f->acks[i], 0);
        } else if (i % 7 == 3 || i == 5) {
            CHECKF(f->sends[i] == 2, "row %d sent %u times", i, f->sends[i]);
        } else {
            CHECKF(f->sends[i] == 1, "acknowledged row %d re-sent (%u sends)", i, f->sends[i]);
        }
    }
    tfrec_bt_writer_stats st = stats_of(w);
    CHECK_EQ(st.rows_acked, 199);
    CHECK_EQ(st.rows_failed, 1);
    CHECK_EQ(st.retried_entries, 28 + 1); /* 29 rows with k%7==3, minus row 10, plus row 5 */
    CHECK_EQ(st.acked_prefix, 10);        /* row 10 blocks the contiguous prefix */
    CHECK_EQ(tfrec_bt_writer_failed_count(w), 1);
    const uint8_t *key;
    size_t kl;
    uint64_t idx;
    int code;
    const char *msg;
    CHECK_EQ(tfrec_bt_writer_failed_row(w, 0, &key, &kl, &idx, &code, &msg), 0);
    CHECK(kl == 10 && !memcmp(key, "row_000010", 10));
    CHECK_EQ(idx, 10);
    CHECK_EQ(code, BT_INVALID_ARGUMENT);
    CHECK(strstr(msg, "INVALID_ARGUMENT"));
    CHECK(strstr(tfrec_bt_writer_errmsg(w), "row_000010"));
    done(w, f);
}

static void test_broken_stream_resends_only_unanswered(void)
{
    fake *f = fake_new();
    f->fail_call_no = 1;
    f->fail_call_code = BT_UNAVAILABLE;
    f->fail_after = 40; /* first 40 entries of call 1 answered OK, then the stream dies */
    tfrec_bt_writer_options o = TFREC_BT_WRITER_OPTIONS_INIT;
    o.batch_rows = 100;
    tfrec_bt_writer *w = open_writer(f, &o);
    CHECK_EQ(put_rows(w, 0, 100, 30), 0);
    CHECK_EQ(tfrec_bt_writer_close(w), 0);
    for (int i = 0; i < 100; i++)
        CHECKF(f->sends[i] == (i < 40 ? 1u : 2u), "row %d sent %u times", i, f->sends[i]);
    CHECK(all_acked(f, 100));
    tfrec_bt_writer_stats st = stats_of(w);
    CHECK_EQ(st.stream_failures, 1);
    CHECK_EQ(st.acked_prefix, 100);
    done(w, f);
}

/* A throttled call naming a RetryInfo delay: its rows wait that long, not
 * the 1-5 ms backoff configured, and one far beyond the retry deadline is
 * cut to it (the rows are retried at the deadline, not after 60 s). */
static void test_retry_info_delay_replaces_backoff(void)
{
    for (int beyond = 0; beyond < 2; beyond++) {
        fake *f = fake_new();
        f->fail_call_no = 1;
        f->fail_call_code = BT_RESOURCE_EXHAUSTED;
        f->fail_retry_delay_ms = beyond ? 60000 : 300;
        tfrec_bt_writer_options o = TFREC_BT_WRITER_OPTIONS_INIT;
        o.batch_rows = 10;
        o.max_inflight = 1;
        o.retry_initial_ms = 1;
        o.retry_max_ms = 5;
        o.retry_timeout_ms = beyond ? 200 : 600000;
        int64_t t0 = tfrec_bt_now_ms();
        tfrec_bt_writer *w = open_writer(f, &o);
        CHECK_EQ(put_rows(w, 0, 10, 30), 0);
        CHECK_EQ(tfrec_bt_writer_close(w), 0);
        int64_t took = tfrec_bt_now_ms() - t0;
        CHECK(all_acked(f, 10));
        CHECK_EQ(f->calls, 2);
        if (beyond)
            CHECKF(took >= 190 && took < 30000, "took %lld ms", (long long)took);
        else
            CHECKF(took >= 300, "took %lld ms", (long long)took);
        done(w, f);
    }
}

static void test_non_retryable_stream_failure_stops_writer(void)
{
    fake *f = fake_new();
    f->fail_call_no = 1;
    f->fail_call_code = BT_NOT_FOUND;
    tfrec_bt_writer_options o = TFREC_BT_WRITER_OPTIONS_INIT;
    o.batch_rows = 10;
    o.max_inflight = 1;
    tfrec_bt_writer *w = open_writer(f, &o);
    int rc = put_rows(w, 0, 100, 30);
    CHECK_EQ(rc, TFREC_E_NETWORK); /* put refuses once the table is known missing */
    CHECK(strstr(tfrec_bt_writer_errmsg(w), "NOT_FOUND"));
    CHECK(tfrec_bt_writer_close(w) != 0);
    tfrec_bt_writer_stats st = stats_of(w);
    CHECK_EQ(st.rows_acked, 0);
    CHECK_EQ(st.rows_failed, st.rows_put); /* every row accounted for */
    CHECK_EQ(tfrec_bt_writer_failed_count(w), st.rows_put);
    done(w, f);
}

/* A token that expired: UNAUTHENTICATED forces one refresh, the refused
 * calls are re-sent, and every row lands exactly once. */
static void test_unauthenticated_refreshes_once_and_resends(void)
{
    fake *f = fake_new();
    f->unauth = 1;
    f->reauth_fixes = 1;
    tfrec_bt_writer_options o = TFREC_BT_WRITER_OPTIONS_INIT;
    o.batch_rows = 10;
    o.max_inflight = 2;
    tfrec_bt_writer *w = open_writer(f, &o);
    CHECK_EQ(put_rows(w, 0, 100, 30), 0);
    CHECK_EQ(tfrec_bt_writer_flush(w), 0);
    CHECK_EQ(f->reauths, 1);
    CHECK(all_acked(f, 100));
    tfrec_bt_writer_stats st = stats_of(w);
    CHECK_EQ(st.rows_acked, 100);
    CHECK_EQ(st.rows_failed, 0);
    /* Later it expires again: one more refresh, as a call passed since. */
    f->unauth = 1;
    CHECK_EQ(put_rows(w, 100, 150, 30), 0);
    CHECK_EQ(tfrec_bt_writer_flush(w), 0);
    CHECK_EQ(f->reauths, 2);
    CHECK(all_acked(f, 150));
    done(w, f);
}

/* A token refused again after the refresh (revoked, or the account has
 * lost its key): the refusal stands, with the account in the message. */
static void test_unauthenticated_after_refresh_fails_naming_the_account(void)
{
    fake *f = fake_new();
    f->unauth = 1;
    tfrec_bt_writer_options o = TFREC_BT_WRITER_OPTIONS_INIT;
    o.batch_rows = 10;
    o.max_inflight = 1;
    tfrec_bt_writer *w = open_writer(f, &o);
    put_rows(w, 0, 30, 30);
    CHECK(tfrec_bt_writer_close(w) != 0);
    CHECK_EQ(f->reauths, 1);
    const char *msg = tfrec_bt_writer_errmsg(w);
    CHECKF(strstr(msg, "UNAUTHENTICATED") && strstr(msg, "loader@example"), "message: %s", msg);
    tfrec_bt_writer_stats st = stats_of(w);
    CHECK_EQ(st.rows_acked, 0);
    CHECK_EQ(st.rows_failed, st.rows_put);
    done(w, f);
}

static void test_too_large_request_is_split(void)
{
    fake *f = fake_new();
    f->max_request = 3000;
    tfrec_bt_writer_options o = TFREC_BT_WRITER_OPTIONS_INIT;
    tfrec_bt_writer *w = open_writer(f, &o);
    CHECK_EQ(put_rows(w, 0, 40, 500), 0);
    CHECK_EQ(tfrec_bt_writer_close(w), 0);
    CHECK(all_acked(f, 40));
    CHECK(f->max_bytes_accepted <= 3000);
    tfrec_bt_writer_stats st = stats_of(w);
    CHECK(st.splits >= 3);
    CHECK_EQ(st.rows_failed, 0);
    CHECK_EQ(st.retried_entries, 0); /* a split is not a retry with backoff */
    done(w, f);
}

static void test_single_row_too_large_is_reported(void)
{
    fake *f = fake_new();
    f->max_request = 3000;
    tfrec_bt_writer_options o = TFREC_BT_WRITER_OPTIONS_INIT;
    tfrec_bt_writer *w = open_writer(f, &o);
    CHECK_EQ(put_rows(w, 0, 3, 100), 0);
    CHECK_EQ(put_rows(w, 3, 4, 5000), 0);
    CHECK_EQ(put_rows(w, 4, 8, 100), 0);
    CHECK(tfrec_bt_writer_close(w) != 0);
    CHECK_EQ(tfrec_bt_writer_failed_count(w), 1);
    uint64_t idx;
    const char *msg;
    tfrec_bt_writer_failed_row(w, 0, NULL, NULL, &idx, NULL, &msg);
    CHECK_EQ(idx, 3);
    CHECK(strstr(msg, "too large"));
    for (int i = 0; i < 8; i++)
        CHECK_EQ(f->acks[i], i == 3 ? 0 : 1);
    done(w, f);
}

static void test_retry_deadline_fails_every_row(void)
{
    fake *f = fake_new();
    f->fail_all_calls = 1;
    tfrec_bt_writer_options o = TFREC_BT_WRITER_OPTIONS_INIT;
    o.batch_rows = 10;
    o.retry_timeout_ms = 30;
    tfrec_bt_writer *w = open_writer(f, &o);
    CHECK_EQ(put_rows(w, 0, 25, 10), 0);
    CHECK_EQ(tfrec_bt_writer_close(w), TFREC_E_NETWORK);
    tfrec_bt_writer_stats st = stats_of(w);
    CHECK_EQ(st.rows_failed, 25);
    CHECK_EQ(st.acked_prefix, 0);
    CHECK(st.retried_entries >= 10);
    CHECK(strstr(tfrec_bt_writer_errmsg(w), "25 of 25 rows not written"));
    CHECK(tfrec_bt_writer_put(w, "row_000099", 10, "q", 1, "v", 1, 99) != 0);
    done(w, f);
}

static void test_server_timestamps_are_not_retried(void)
{
    fake *f = fake_new();
    f->entry_code = flaky_entries;
    tfrec_bt_writer_options o = TFREC_BT_WRITER_OPTIONS_INIT;
    o.timestamp_micros = -1;
    tfrec_bt_writer *w = open_writer(f, &o);
    CHECK_EQ(put_rows(w, 0, 20, 10), 0);
    CHECK(tfrec_bt_writer_close(w) != 0);
    CHECK_EQ(f->sends[3], 1);
    CHECK_EQ(f->sends[17], 1);
    tfrec_bt_writer_stats st = stats_of(w);
    CHECK_EQ(st.rows_failed, 3); /* rows 3, 10, 17 */
    CHECK_EQ(st.retried_entries, 0);
    done(w, f);
}

static void test_inflight_bounded(void)
{
    fake *f = fake_new();
    tfrec_bt_writer_options o = TFREC_BT_WRITER_OPTIONS_INIT;
    o.batch_rows = 5;
    o.max_inflight = 3;
    o.max_buffered_bytes = 1; /* forces a wait after every put */
    tfrec_bt_writer *w = open_writer(f, &o);
    CHECK_EQ(put_rows(w, 0, 200, 10), 0);
    CHECK_EQ(tfrec_bt_writer_close(w), 0);
    CHECK(f->max_outstanding <= 3);
    CHECK(all_acked(f, 200));
    done(w, f);
}

static void test_invalid_rows_refused_at_put(void)
{
    fake *f = fake_new();
    tfrec_bt_writer_options o = TFREC_BT_WRITER_OPTIONS_INIT;
    tfrec_bt_writer *w = open_writer(f, &o);
    static char big[5000];
    CHECK_EQ(tfrec_bt_writer_put(w, "", 0, "q", 1, "v", 1, 0), TFREC_E_INVALID);
    CHECK_EQ(tfrec_bt_writer_put(w, big, sizeof big, "q", 1, "v", 1, 7), TFREC_E_INVALID);
    CHECK(strstr(tfrec_bt_writer_errmsg(w), "record 7"));
    CHECK_EQ(tfrec_bt_writer_close(w), 0);
    CHECK_EQ(f->calls, 0);
    done(w, f);
}

static void test_row_keys_like_the_reference(void)
{
    char buf[64];
    CHECK_EQ(tfrec_bt_key_width(0), 10);
    CHECK_EQ(tfrec_bt_key_width(1), 1);
    CHECK_EQ(tfrec_bt_key_width(10), 1);
    CHECK_EQ(tfrec_bt_key_width(11), 2);
    CHECK_EQ(tfrec_bt_key_width(1000), 3);
    CHECK_EQ(tfrec_bt_key_width(1001), 4);
    CHECK_EQ(tfrec_bt_row_key(buf, sizeof buf, "train_", 42, 5, 0), 11);
    CHECK(!strcmp(buf, "train_00042"));
    CHECK_EQ(tfrec_bt_row_key(buf, sizeof buf, "train_", 42, 10, 0), 16);
    CHECK(!strcmp(buf, "train_0000000042"));
    tfrec_bt_row_key(buf, sizeof buf, "v_", 123, 5, 1);
    CHECK(!strcmp(buf, "v_32100"));
    CHECK_EQ(tfrec_bt_row_key(buf, 4, "train_", 1, 3, 0), 9); /* too small: needed length */
    /* Against printf's "%0*llu" (the key is formatted by hand): widths
     * 0-22 (clamped to 1-20), values around every power of ten, and the
     * largest uint64_t, forwards and reversed. */
    for (int width = 0; width <= 22; width++) {
        uint64_t v = 0;
        for (int p = 0; p <= 20; p++) {
            uint64_t vals[] = { v, v + 1, v ? v - 1 : 0, UINT64_MAX };
            for (size_t k = 0; k < sizeof vals / sizeof vals[0]; k++) {
                char want[64], rev[64];
                int cw = width < 1 ? 1 : width > 20 ? 20 : width;
                int n = snprintf(want, sizeof want, "k_%0*llu", cw, (unsigned long long)vals[k]);
                CHECK_EQ(tfrec_bt_row_key(buf, sizeof buf, "k_", vals[k], width, 0), (size_t)n);
                CHECKF(!strcmp(buf, want), "%s, want %s (width %d)", buf, want, width);
                for (int i = 0; i < n - 2; i++)
                    rev[i + 2] = want[n - 1 - i];
                memcpy(rev, "k_", 2);
                rev[n] = '\0';
                tfrec_bt_row_key(buf, sizeof buf, "k_", vals[k], width, 1);
                CHECKF(!strcmp(buf, rev), "%s, want %s (reversed, width %d)", buf, rev, width);
            }
            v = p ? v * 10 : 1;
        }
    }
    CHECK(!strcmp(tfrec_bt_code_name(14), "UNAVAILABLE"));
}

static void test_retry_classification(void)
{
    CHECK(tfrec_bt_retryable(BT_UNAVAILABLE, ""));
    CHECK(tfrec_bt_retryable(BT_DEADLINE_EXCEEDED, ""));
    CHECK(tfrec_bt_retryable(BT_ABORTED, ""));
    CHECK(tfrec_bt_retryable(BT_INTERNAL, "Received RST_STREAM with error code 2"));
    CHECK(!tfrec_bt_retryable(BT_INTERNAL, "bad things"));
    CHECK(tfrec_bt_retryable(BT_RESOURCE_EXHAUSTED, "quota exceeded for writes"));
    CHECK(!tfrec_bt_retryable(BT_RESOURCE_EXHAUSTED, "Received message larger than max (5 vs. 4)"));
    CHECK(tfrec_bt_is_too_large(BT_RESOURCE_EXHAUSTED, "grpc: received message larger than max"));
    CHECK(!tfrec_bt_retryable(BT_INVALID_ARGUMENT, ""));
    CHECK(!tfrec_bt_retryable(BT_NOT_FOUND, ""));
    CHECK(!tfrec_bt_retryable(BT_PERMISSION_DENIED, ""));
    CHECK(!tfrec_bt_retryable(BT_UNAVAILABLE,
                              "failed to connect to all addresses; last error: UNKNOWN: "
                              "ipv4:127.0.0.1:1: Ssl handshake failed: SSL_ERROR_SSL: "
                              "error:1000007d:SSL routines:OPENSSL_internal:"
                              "CERTIFICATE_VERIFY_FAILED"));
    bt_backoff b = { 100, 2000, 2.0, 12345 };
    for (unsigned a = 1; a < 12; a++) {
        int64_t cap = 100;
        for (unsigned i = 1; i < a; i++)
            cap = cap * 2 > 2000 ? 2000 : cap * 2;
        int64_t d = tfrec_bt_backoff_delay(&b, a);
        CHECKF(d >= cap / 2 && d <= cap, "attempt %u: %lld not in [%lld, %lld]", a, (long long)d,
               (long long)cap / 2, (long long)cap);
    }
}

TESTS(TEST(test_request_encoding_decodes), TEST(test_server_timestamp_encodes_minus_one),
      TEST(test_default_timestamp_is_whole_milliseconds),
      TEST(test_batches_bounded_by_rows_bytes_mutations),
      TEST(test_only_failed_entries_are_retried), TEST(test_broken_stream_resends_only_unanswered),
      TEST(test_retry_info_delay_replaces_backoff),
      TEST(test_non_retryable_stream_failure_stops_writer), TEST(test_too_large_request_is_split),
      TEST(test_single_row_too_large_is_reported), TEST(test_retry_deadline_fails_every_row),
      TEST(test_server_timestamps_are_not_retried), TEST(test_inflight_bounded),
      TEST(test_invalid_rows_refused_at_put), TEST(test_row_keys_like_the_reference),
      TEST(test_retry_classification), TEST(test_stop_bounds_the_wait_for_calls_in_flight),
      TEST(test_unauthenticated_refreshes_once_and_resends),
      TEST(test_unauthenticated_after_refresh_fails_naming_the_account))

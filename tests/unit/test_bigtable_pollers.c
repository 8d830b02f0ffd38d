/* The bulk writer over its real gRPC transport, its connections polled by
 * one thread (the default), by a thread each ($TFREC_BT_POLLERS=16) or by
 * the writer's thread alone ($TFREC_BT_POLLERS=0), against an in-process MutateRows server (gRPC
 * core's server API on a loopback port): many connections and calls in
 * flight deliver every row exactly once, per-entry failures are retried,
 * and a stop cancels calls the server holds, or waits for them within the
 * stop timeout. Also built with ThreadSanitizer (see docs/bigtable.md). */
#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/time.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "google/bigtable/v2/bigtable.pb-c.h"
#include "harness.h"
#include "tfrec/bigtable.h"
#include "tfrec/tfrec.h"

#define NROWS_MAX 4000

/* ------------------------------------------------------------ server */

enum { T_NEW, T_RECV, T_SENT1, T_SENT, T_CLOSED, T_SHUTDOWN };

typedef struct srv srv;

typedef struct scall {
    srv *s;
    grpc_call *call;
    grpc_call_details details;
    grpc_metadata_array md;
    grpc_byte_buffer *req, *resp[2];
    grpc_slice status_details;
    int cancelled;
    int64_t answer_at_ms; /* held calls: when to answer (0: when cancelled) */
    struct scall *next_held;
    int refs; /* batches not yet completed (serving thread only) */
} scall;

struct srv {
    grpc_server *server;
    grpc_completion_queue *cq;
    pthread_t th;
    int port;
    /* policy */
    int hold_ms;    /* < 0: hold every call until cancelled; > 0: answer after */
    int fail_every; /* entries whose row index % fail_every == 1 fail their first attempt */
    /* observations (the server thread writes, the test reads after stop) */
    atomic_int calls, cancelled_calls, max_concurrent, concurrent, shut_down;
    /* atomic: the test reads them on its own thread, after gRPC's hand-offs
     * that a thread sanitizer cannot see */
    atomic_uint received[NROWS_MAX], acked[NROWS_MAX];
    scall *held;
};

typedef struct stag {
    scall *c;
    int kind;
} stag;

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static stag *tag_of(scall *c, int kind)
{
    if (c)
        c->refs++;
    stag *t = malloc(sizeof *t);
    t->c = c;
    t->kind = kind;
    return t;
}

static void request_call(srv *s)
{
    scall *c = calloc(1, sizeof *c);
    c->s = s;
    grpc_call_details_init(&c->details);
    grpc_metadata_array_init(&c->md);
    c->status_details = grpc_empty_slice();
    grpc_server_request_call(s->server, &c->call, &c->details, &c->md, s->cq, s->cq,
                             tag_of(c, T_NEW));
}

static void scall_free(scall *c)
{
    grpc_call_details_destroy(&c->details);
    grpc_metadata_array_destroy(&c->md);
    if (c->req)
        grpc_byte_buffer_destroy(c->req);
    for (int i = 0; i < 2; i++)
        if (c->resp[i])
            grpc_byte_buffer_destroy(c->resp[i]);
    if (c->call)
        grpc_call_unref(c->call);
    free(c);
}

static uint64_t row_of(const Google__Bigtable__V2__MutateRowsRequest__Entry *e)
{
    char buf[32] = { 0 };
    size_t n = e->row_key.len < sizeof buf - 1 ? e->row_key.len : sizeof buf - 1;
    memcpy(buf, e->row_key.data, n);
    return strtoull(buf + 4, NULL, 10); /* "row-<n>" */
}

static grpc_byte_buffer *pack_response(Google__Bigtable__V2__MutateRowsResponse *r)
{
    size_t n = google__bigtable__v2__mutate_rows_response__get_packed_size(r);
    uint8_t *buf = malloc(n ? n : 1);
    google__bigtable__v2__mutate_rows_response__pack(r, buf);
    grpc_slice sl = grpc_slice_from_copied_buffer((const char *)buf, n);
    free(buf);
    grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&sl, 1);
    grpc_slice_unref(sl);
    return bb;
}

/* Answer every entry in two response messages (the first half, then the
 * rest), then OK. */
static void answer(scall *c)
{
    srv *s = c->s;
    grpc_byte_buffer_reader rd;
    grpc_byte_buffer_reader_init(&rd, c->req);
    grpc_slice all = grpc_byte_buffer_reader_readall(&rd);
    grpc_byte_buffer_reader_destroy(&rd);
    Google__Bigtable__V2__MutateRowsRequest *req =
        google__bigtable__v2__mutate_rows_request__unpack(NULL, GRPC_SLICE_LENGTH(all),
                                                          GRPC_SLICE_START_PTR(all));
    grpc_slice_unref(all);
    size_t n = req ? req->n_entries : 0;
    Google__Bigtable__V2__MutateRowsResponse__Entry *ents = calloc(n + 1, sizeof *ents);
    Google__Bigtable__V2__MutateRowsResponse__Entry **ptrs = calloc(n + 1, sizeof *ptrs);
    Google__Rpc__Status *st = calloc(n + 1, sizeof *st);
    for (size_t i = 0; i < n; i++) {
        uint64_t row = row_of(req->entries[i]);
        google__bigtable__v2__mutate_rows_response__entry__init(&ents[i]);
        google__rpc__status__init(&st[i]);
        ents[i].index = (int64_t)i;
        ents[i].status = &st[i];
        if (row < NROWS_MAX) {
            unsigned seen = atomic_fetch_add(&s->received[row], 1) + 1;
            if (s->fail_every && row % s->fail_every == 1 && seen == 1) {
                st[i].code = 14; /* UNAVAILABLE: retryable */
                st[i].message = "injected";
            } else {
                atomic_fetch_add(&s->acked[row], 1);
            }
        }
        ptrs[i] = &ents[i];
    }
    size_t half = n / 2;
    for (int m = 0; m < 2; m++) {
        Google__Bigtable__V2__MutateRowsResponse r;
        google__bigtable__v2__mutate_rows_response__init(&r);
        r.entries = ptrs + (m ? half : 0);
        r.n_entries = m ? n - half : half;
        c->resp[m] = pack_response(&r);
    }
    if (req)
        google__bigtable__v2__mutate_rows_request__free_unpacked(req, NULL);
    free(ents);
    free(ptrs);
    free(st);

    grpc_op op;
    memset(&op, 0, sizeof op);
    op.op = GRPC_OP_SEND_MESSAGE;
    op.data.send_message.send_message = c->resp[0];
    grpc_call_start_batch(c->call, &op, 1, tag_of(c, T_SENT1), NULL);
}

/* One message at a time: the second, with the status, after the first. */
static void answer_rest(scall *c)
{
    grpc_op ops[2];
    memset(ops, 0, sizeof ops);
    ops[0].op = GRPC_OP_SEND_MESSAGE;
    ops[0].data.send_message.send_message = c->resp[1];
    ops[1].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
    ops[1].data.send_status_from_server.status = GRPC_STATUS_OK;
    ops[1].data.send_status_from_server.status_details = &c->status_details;
    grpc_call_start_batch(c->call, ops, 2, tag_of(c, T_SENT), NULL);
}

static void *serve(void *arg)
{
    srv *s = arg;
    request_call(s);
    for (;;) {
        /* Wake every 10 ms to answer held calls whose time has come. */
        grpc_event e = grpc_completion_queue_next(
            s->cq,
            gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_millis(10, GPR_TIMESPAN)),
            NULL);
        for (scall **pp = &s->held; *pp;) {
            scall *c = *pp;
            if (c->answer_at_ms && now_ms() >= c->answer_at_ms && !c->cancelled) {
                *pp = c->next_held;
                answer(c);
            } else {
                pp = &c->next_held;
            }
        }
        if (e.type == GRPC_QUEUE_TIMEOUT)
            continue;
        if (e.type == GRPC_QUEUE_SHUTDOWN)
            return NULL;
        stag *t = e.tag;
        scall *c = t->c;
        int kind = t->kind;
        if (kind != T_SHUTDOWN)
            free(t);
        if (kind == T_SHUTDOWN) {
            atomic_store(&s->shut_down, 1);
            continue;
        }
        c->refs--;
        if (kind == T_NEW && e.success) {
            request_call(s);
            int now = atomic_fetch_add(&s->concurrent, 1) + 1;
            int most = atomic_load(&s->max_concurrent);
            while (now > most && !atomic_compare_exchange_weak(&s->max_concurrent, &most, now)) {
            }
            atomic_fetch_add(&s->calls, 1);
            grpc_op ops[2];
            memset(ops, 0, sizeof ops);
            ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
            ops[1].op = GRPC_OP_RECV_MESSAGE;
            ops[1].data.recv_message.recv_message = &c->req;
            grpc_call_start_batch(c->call, ops, 2, tag_of(c, T_RECV), NULL);
            memset(ops, 0, sizeof ops);
            ops[0].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
            ops[0].data.recv_close_on_server.cancelled = &c->cancelled;
            grpc_call_start_batch(c->call, ops, 1, tag_of(c, T_CLOSED), NULL);
        } else if (kind == T_RECV && e.success && c->req) {
            if (s->hold_ms) { /* answered later, or never: until cancelled */
                c->answer_at_ms = s->hold_ms > 0 ? now_ms() + s->hold_ms : 0;
                c->next_held = s->held;
                s->held = c;
            } else {
                answer(c);
            }
        } else if (kind == T_SENT1 && e.success) {
            answer_rest(c);
        } else if (kind == T_CLOSED) { /* answered, or cancelled by the client */
            atomic_fetch_sub(&s->concurrent, 1);
            if (c->cancelled)
                atomic_fetch_add(&s->cancelled_calls, 1);
            for (scall **pp = &s->held; *pp; pp = &(*pp)->next_held)
                if (*pp == c) {
                    *pp = c->next_held;
                    break;
                }
        }
        if (c->refs == 0)
            scall_free(c);
    }
}

static srv *srv_start(int hold_ms, int fail_every)
{
    grpc_init(); /* before the client's: the server comes first */
    srv *s = calloc(1, sizeof *s);
    s->hold_ms = hold_ms;
    s->fail_every = fail_every;
    grpc_arg arg = { GRPC_ARG_INTEGER, GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH, { .integer = -1 } };
    grpc_channel_args args = { 1, &arg };
    s->server = grpc_server_create(&args, NULL);
    s->cq = grpc_completion_queue_create_for_next(NULL);
    grpc_server_register_completion_queue(s->server, s->cq, NULL);
    grpc_server_credentials *cr = grpc_insecure_server_credentials_create();
    s->port = grpc_server_add_http2_port(s->server, "127.0.0.1:0", cr);
    grpc_server_credentials_release(cr);
    grpc_server_start(s->server);
    pthread_create(&s->th, NULL, serve, s);
    return s;
}

static void srv_stop(srv *s)
{
    static stag shutdown_tag = { NULL, T_SHUTDOWN }; /* never written: no race */
    grpc_server_shutdown_and_notify(s->server, s->cq, &shutdown_tag);
    grpc_server_cancel_all_calls(s->server);
    while (!atomic_load(&s->shut_down))
        usleep(1000);
    grpc_server_destroy(s->server);
    grpc_completion_queue_shutdown(s->cq);
    pthread_join(s->th, NULL);
    grpc_completion_queue_destroy(s->cq);
    free(s);
    grpc_shutdown();
}

/* ------------------------------------------------------------ client */

typedef struct rig {
    srv *s;
    tfrec_bt_client *c;
    tfrec_bt_writer *w;
} rig;

static int rig_open(rig *r, srv *s, tfrec_bt_writer_options *o)
{
    unsetenv("TFREC_BT_POLLERS"); /* the default; read at each writer open */
    char ep[64];
    snprintf(ep, sizeof ep, "127.0.0.1:%d", s->port);
    tfrec_bt_client_options co = TFREC_BT_CLIENT_OPTIONS_INIT;
    co.project = "p";
    co.instance = "i";
    co.endpoint = ep;
    co.rpc_timeout_ms = 60000;
    r->s = s;
    r->w = NULL;
    if (tfrec_bt_client_open(&r->c, &co))
        return -1;
    return tfrec_bt_writer_open(&r->w, r->c, "t", "f", o) ? -1 : 0;
}

static void rig_close(rig *r)
{
    tfrec_bt_writer_free(r->w);
    tfrec_bt_client_free(r->c);
    srv_stop(r->s);
}

/* Rows from..to-1, keys "row-<i>", values of vlen bytes. */
static int put_rows(tfrec_bt_writer *w, int from, int to, size_t vlen)
{
    static uint8_t val[64 << 10];
    if (vlen > sizeof val)
        vlen = sizeof val;
    for (int i = from; i < to; i++) {
        char key[32];
        int kl = snprintf(key, sizeof key, "row-%d", i);
        memset(val, 'a' + i % 26, vlen);
        int rc = tfrec_bt_writer_put(w, key, (size_t)kl, "q", 1, val, vlen, (uint64_t)i);
        if (rc)
            return rc;
    }
    return 0;
}

/* 16 connections, 16 calls in flight, small batches, each answered in two
 * messages: every row reaches the server once and is acknowledged once, and
 * (with polling threads) the calls really overlap. pollers: the value of
 * $TFREC_BT_POLLERS, NULL for the default (one thread). */
static void every_row_once(const char *pollers)
{
    int threaded = !pollers || strcmp(pollers, "0") != 0;
    rig r;
    tfrec_bt_writer_options o = TFREC_BT_WRITER_OPTIONS_INIT;
    o.batch_rows = 7;
    o.max_inflight = 16;
    o.connections = 16;
    o.retry_timeout_ms = -1;
    CHECKF(rig_open(&r, srv_start(20, 0), &o) == 0, "%s", tfrec_last_errmsg());
    if (pollers) { /* reopen the writer with that many polling threads */
        tfrec_bt_writer_free(r.w);
        setenv("TFREC_BT_POLLERS", pollers, 1);
        CHECKF(tfrec_bt_writer_open(&r.w, r.c, "t", "f", &o) == TFREC_OK, "%s",
               tfrec_last_errmsg());
    }
    const int n = 3000;
    CHECKF(put_rows(r.w, 0, n, 2000) == 0, "%s", tfrec_bt_writer_errmsg(r.w));
    CHECKF(tfrec_bt_writer_close(r.w) == TFREC_OK, "%s", tfrec_bt_writer_errmsg(r.w));
    tfrec_bt_writer_stats st = TFREC_BT_WRITER_STATS_INIT;
    tfrec_bt_writer_stats_get(r.w, &st);
    CHECK_EQ(st.rows_acked, n);
    CHECK_EQ(st.acked_prefix, n);
    CHECK_EQ(st.rows_failed, 0);
    for (int i = 0; i < n; i++)
        CHECKF(r.s->received[i] == 1 && r.s->acked[i] == 1, "row %d received %u acked %u", i,
               r.s->received[i], r.s->acked[i]);
    CHECKF(!threaded || atomic_load(&r.s->max_concurrent) >= 8, "at most %d calls at once",
           atomic_load(&r.s->max_concurrent));
    rig_close(&r);
}

static void test_many_connections_every_row_once(void)
{
    every_row_once(NULL);
}

static void test_many_connections_a_poller_each(void)
{
    every_row_once("16");
}

static void test_many_connections_three_pollers(void)
{
    every_row_once("3");
}

static void test_many_connections_polled_inline(void)
{
    every_row_once("0");
}

/* Entries failed on their first attempt are re-sent alone, over whichever
 * connection, and end acknowledged exactly once. */
static void test_failed_entries_retried_over_pollers(void)
{
    rig r;
    tfrec_bt_writer_options o = TFREC_BT_WRITER_OPTIONS_INIT;
    o.batch_rows = 50;
    o.max_inflight = 4;
    o.retry_initial_ms = 5;
    o.retry_max_ms = 20;
    CHECKF(rig_open(&r, srv_start(0, 5), &o) == 0, "%s", tfrec_last_errmsg());
    const int n = 1000;
    CHECK_EQ(put_rows(r.w, 0, n, 500), 0);
    CHECKF(tfrec_bt_writer_close(r.w) == TFREC_OK, "%s", tfrec_bt_writer_errmsg(r.w));
    tfrec_bt_writer_stats st = TFREC_BT_WRITER_STATS_INIT;
    tfrec_bt_writer_stats_get(r.w, &st);
    CHECK_EQ(st.rows_acked, n);
    CHECK_EQ(st.retried_entries, n / 5);
    CHECK_EQ(st.acked_prefix, n);
    for (int i = 0; i < n; i++) {
        CHECKF(r.s->acked[i] == 1, "row %d acked %u times", i, r.s->acked[i]);
        CHECKF(r.s->received[i] == (i % 5 == 1 ? 2u : 1u), "row %d received %u times", i,
               r.s->received[i]);
    }
    rig_close(&r);
}

static void *stop_later(void *w)
{
    usleep(150 * 1000);
    tfrec_bt_writer_stop(w);
    return NULL;
}

/* The server never answers: a stop from another thread while flush waits
 * ends it after stop_timeout_ms, with every call cancelled on every
 * connection and every row failed, none acknowledged. */
static void test_stop_cancels_calls_on_every_connection(void)
{
    rig r;
    tfrec_bt_writer_options o = TFREC_BT_WRITER_OPTIONS_INIT;
    o.batch_rows = 10;
    o.max_inflight = 8;
    o.stop_timeout_ms = 200;
    CHECKF(rig_open(&r, srv_start(-1, 0), &o) == 0, "%s", tfrec_last_errmsg());
    CHECK_EQ(put_rows(r.w, 0, 80, 30000), 0);
    pthread_t th;
    pthread_create(&th, NULL, stop_later, r.w);
    int64_t t0 = now_ms();
    CHECK(tfrec_bt_writer_flush(r.w) != TFREC_OK);
    int64_t took = now_ms() - t0;
    pthread_join(th, NULL);
    CHECKF(took >= 300 && took < 5000, "flush took %lld ms", (long long)took);
    tfrec_bt_writer_stats st = TFREC_BT_WRITER_STATS_INIT;
    tfrec_bt_writer_stats_get(r.w, &st);
    CHECK_EQ(st.rows_acked, 0);
    CHECK_EQ(st.rows_failed, 80);
    CHECK_EQ(tfrec_bt_writer_failed_count(r.w), 80);
    int code = 0;
    CHECK_EQ(tfrec_bt_writer_failed_row(r.w, 0, NULL, NULL, NULL, &code, NULL), 0);
    CHECKF(code == 1 /* CANCELLED */, "failed with code %d", code);
    /* the server saw the cancellations (they reach it asynchronously) */
    for (int i = 0; i < 200 && atomic_load(&r.s->cancelled_calls) < 8; i++)
        usleep(10000);
    CHECK_EQ(atomic_load(&r.s->cancelled_calls), 8);
    rig_close(&r);
}

/* The server answers after 300 ms: a stop with a 5 s timeout waits for
 * the calls in flight (their rows are acknowledged), fails the rows still
 * queued without sending them, and the acknowledged prefix is exact. */
static void test_stop_waits_for_calls_within_timeout(void)
{
    rig r;
    tfrec_bt_writer_options o = TFREC_BT_WRITER_OPTIONS_INIT;
    o.batch_rows = 10;
    o.max_inflight = 4;
    o.max_buffered_bytes = 1 << 30; /* put never waits */
    o.stop_timeout_ms = 5000;
    CHECKF(rig_open(&r, srv_start(300, 0), &o) == 0, "%s", tfrec_last_errmsg());
    CHECK_EQ(put_rows(r.w, 0, 100, 1000), 0); /* 4 calls of 10 in flight, 60 queued */
    tfrec_bt_writer_stop(r.w);
    int64_t t0 = now_ms();
    CHECK(tfrec_bt_writer_flush(r.w) != TFREC_OK);
    int64_t took = now_ms() - t0;
    CHECKF(took >= 100 && took < 4000, "flush took %lld ms", (long long)took);
    tfrec_bt_writer_stats st = TFREC_BT_WRITER_STATS_INIT;
    tfrec_bt_writer_stats_get(r.w, &st);
    CHECK_EQ(st.rows_acked, 40);
    CHECK_EQ(st.acked_prefix, 40);
    CHECK_EQ(st.rows_failed, 60);
    CHECK_EQ(r.s->received[40], 0);
    CHECK_EQ(atomic_load(&r.s->cancelled_calls), 0);
    rig_close(&r);
}

/* Freeing a writer whose calls the server holds: close is bounded by the
 * stop path (stop first, as tfrec2bt's signal handler does), and nothing
 * leaks or is touched after free (ASan/TSan builds). */
static void test_free_after_stop_with_calls_held(void)
{
    rig r;
    tfrec_bt_writer_options o = TFREC_BT_WRITER_OPTIONS_INIT;
    o.batch_rows = 5;
    o.max_inflight = 6;
    o.stop_timeout_ms = -1; /* cancel at once */
    CHECKF(rig_open(&r, srv_start(-1, 0), &o) == 0, "%s", tfrec_last_errmsg());
    CHECK_EQ(put_rows(r.w, 0, 30, 100), 0);
    tfrec_bt_writer_stop(r.w);
    int64_t t0 = now_ms();
    tfrec_bt_writer_free(r.w);
    r.w = NULL;
    CHECKF(now_ms() - t0 < 3000, "free took %lld ms", (long long)(now_ms() - t0));
    rig_close(&r);
}

TESTS(TEST(test_many_connections_every_row_once), TEST(test_many_connections_a_poller_each),
      TEST(test_many_connections_three_pollers), TEST(test_many_connections_polled_inline),
      TEST(test_failed_entries_retried_over_pollers),
      TEST(test_stop_cancels_calls_on_every_connection),
      TEST(test_stop_waits_for_calls_within_timeout), TEST(test_free_after_stop_with_calls_held))

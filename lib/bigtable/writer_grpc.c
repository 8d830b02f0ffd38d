/* The bulk writer's transport over gRPC: MutateRows calls with the routing
 * header for the table, spread over a few connections. By default one
 * polling thread serves every connection's calls through its completion
 * queue; $TFREC_BT_POLLERS=N gives them N threads and queues (connection i
 * uses queue i mod N), and 0 has the writer's thread poll one queue itself.
 *
 * Why a polling thread: gRPC core moves a connection's bytes (writes as the
 * socket drains, window updates, responses) only while some thread polls,
 * so with the writer's thread as the only poller that happens between
 * reading and encoding rows, for all connections on one thread, and the
 * server sees one call at a time (bench/RESULTS.md, "Polling threads").
 * One thread does as well as one per connection and costs less client CPU
 * (bench/RESULTS.md, "One polling thread").
 *
 * Why several connections: over one HTTP/2 connection every request byte
 * goes through the server's single reader for that connection (in gRPC-Go,
 * one goroutine per connection), and the requests in flight are interleaved
 * frame by frame, so they finish together and the server then parses them
 * while the connection idles. A connection per call in flight lets the
 * server read them in parallel and overlap one request's parsing with the
 * next one's transfer (see bench/RESULTS.md). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bigtable/client_internal.h"
#include "bigtable/transport.h"
#include "util/config.h"
#include "util/struct_size.h"

#define MUTATE_ROWS "/google.bigtable.v2.Bigtable/MutateRows"
#define MAX_CONNECTIONS 16

/* An event a poller thread has taken off its queue for the writer. */
typedef struct ev_node {
    bt_event ev;
    struct ev_node *next;
} ev_node;

/* What a call's events carry: the writer's pointer and the connection; it
 * stays on the live list until the writer has taken the call's DONE. */
typedef struct tr_call {
    void *user;
    int ch;
    bt_call *call; /* NULL once its DONE is out (the call is freed) */
    struct tr_call *prev, *next;
    ev_node done; /* its DONE event, queued without allocating */
} tr_call;

typedef struct grpc_tr grpc_tr;

typedef struct conn {
    grpc_tr *t;
    grpc_channel *ch;          /* [0] is the client's; the rest are ours */
    grpc_completion_queue *cq; /* threaded mode: queue i, for i < npollers */
    pthread_t poller;
    bt_call *deferred; /* the poller's slot for tfrec_bt_cq_poll */
    int busy;          /* calls in flight */
} conn;

struct grpc_tr {
    tfrec_bt_client *client;
    conn k[MAX_CONNECTIONS];
    int nch, next; /* next: where the search for the least busy starts */
    int npollers;  /* threaded mode: connection i uses k[i % npollers]'s queue */
    char params[3 * BT_NAME_MAX + 64];
    tr_call *live; /* calls in flight, for tr_cancel_all (writer's thread only) */

    /* Threaded mode: each queue has its own poller thread, so gRPC's I/O
     * for every connection progresses while the writer's thread reads and
     * encodes rows. mu guards the calls (started and cancelled by
     * the writer's thread, completed by the pollers) and the ready list. */
    int threaded;
    pthread_mutex_t mu;
    pthread_cond_t ready_cv;
    ev_node *head, *tail;

    /* Inline mode: one queue, polled by the writer's thread in tr_next. */
    grpc_completion_queue *cq;
    bt_call *deferred;
};

static void *poll_loop(void *arg)
{
    conn *k = arg;
    grpc_tr *t = k->t;
    for (;;) {
        bt_event ev;
        int rc = tfrec_bt_cq_poll(k->cq, tfrec_bt_now_ms() + 60000, &ev, &k->deferred, &t->mu);
        if (rc < 0)
            return NULL; /* shut down by tr_destroy */
        if (rc == 0)
            continue;
        /* t->mu is held: the call cannot be cancelled while we mark it gone. */
        tr_call *tc = ev.user;
        ev_node *n;
        if (ev.kind == BT_EV_DONE) {
            tc->call = NULL;
            n = &tc->done;
        } else if (!(n = malloc(sizeof *n))) {
            /* Dropping a response is safe: entries without a result count
             * as failed when the call's DONE arrives, and are re-sent. */
            tfrec_bt_event_release(&ev);
            pthread_mutex_unlock(&t->mu);
            continue;
        }
        n->ev = ev;
        n->next = NULL;
        if (t->tail)
            t->tail->next = n;
        else
            t->head = n;
        t->tail = n;
        pthread_cond_signal(&t->ready_cv);
        pthread_mutex_unlock(&t->mu);
    }
}

static void lock(grpc_tr *t)
{
    if (t->threaded)
        pthread_mutex_lock(&t->mu);
}

static void unlock(grpc_tr *t)
{
    if (t->threaded)
        pthread_mutex_unlock(&t->mu);
}

static int tr_start(void *ctx, void *user, const grpc_slice *slices, size_t n, tfrec_err *err)
{
    grpc_tr *t = ctx;
    /* The least busy connection; ties go round robin, so every connection
     * stays warm and a slow one is not picked again and again. */
    int best = t->next % t->nch;
    for (int i = 1; i < t->nch; i++) {
        int j = (t->next + i) % t->nch;
        if (t->k[j].busy < t->k[best].busy)
            best = j;
    }
    t->next = best + 1;
    tr_call *tc = calloc(1, sizeof *tc);
    if (!tc)
        return tfrec_fail(err, TFREC_E_NOMEM, "out of memory starting MutateRows");
    tc->user = user;
    tc->ch = best;
    tc->next = t->live;
    lock(t);
    bt_call *call =
        tfrec_bt_call_start(t->k[best].ch, t->threaded ? t->k[best % t->npollers].cq : t->cq,
                            MUTATE_ROWS, t->params, slices, n, t->client->rpc_timeout_ms, tc, err);
    tc->call = call;
    unlock(t);
    /* Not tc->call: once unlocked, a poller may finish the call and clear it. */
    if (!call) {
        free(tc);
        return TFREC_E_NETWORK;
    }
    if (t->live)
        t->live->prev = tc;
    t->live = tc;
    t->k[best].busy++;
    return TFREC_OK;
}

/* The next ready event from the pollers, waiting until the deadline. */
static int take_ready(grpc_tr *t, int64_t deadline_ms, bt_event *ev)
{
    pthread_mutex_lock(&t->mu);
    while (!t->head) {
        /* A deadline of 0 (drain what is there, as after every row) needs
         * no clock: reading it per row was a measurable share of the CPU. */
        int64_t now = deadline_ms > 0 ? tfrec_bt_now_ms() : 0;
        if (now >= deadline_ms) {
            pthread_mutex_unlock(&t->mu);
            return 0;
        }
        /* The condition uses the default (realtime) clock: some thread
         * sanitizers ignore pthread_condattr_setclock. A clock step only
         * shortens or lengthens this one wait, capped at a second. */
        int64_t wait = deadline_ms - now > 1000 ? 1000 : deadline_ms - now;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        int64_t ns = (int64_t)ts.tv_nsec + wait * 1000000;
        ts.tv_sec += ns / 1000000000;
        ts.tv_nsec = ns % 1000000000;
        pthread_cond_timedwait(&t->ready_cv, &t->mu, &ts);
    }
    ev_node *n = t->head;
    t->head = n->next;
    if (!t->head)
        t->tail = NULL;
    pthread_mutex_unlock(&t->mu);
    *ev = n->ev;
    if (ev->kind == BT_EV_MESSAGE) {
        /* A small message is inlined in the slice itself: point at the copy. */
        ev->data = GRPC_SLICE_START_PTR(ev->slice);
        free(n);
    } /* a DONE's node lives in its tr_call */
    return 1;
}

static int tr_next(void *ctx, int64_t deadline_ms, bt_event *ev)
{
    grpc_tr *t = ctx;
    int rc = t->threaded ? take_ready(t, deadline_ms, ev)
                         : tfrec_bt_cq_poll(t->cq, deadline_ms, ev, &t->deferred, NULL);
    if (rc == 1) {
        tr_call *tc = ev->user;
        ev->user = tc->user;
        if (ev->kind == BT_EV_DONE) { /* the call is gone: forget it */
            t->k[tc->ch].busy--;
            if (tc->prev)
                tc->prev->next = tc->next;
            else
                t->live = tc->next;
            if (tc->next)
                tc->next->prev = tc->prev;
            free(tc);
        }
    }
    return rc;
}

static void tr_cancel_all(void *ctx)
{
    grpc_tr *t = ctx;
    lock(t);
    for (tr_call *tc = t->live; tc; tc = tc->next)
        if (tc->call)
            tfrec_bt_call_cancel(tc->call);
    unlock(t);
}

static void tr_destroy(void *ctx)
{
    grpc_tr *t = ctx;
    if (t->threaded) {
        /* Every call has delivered its DONE: each queue drains at once and
         * its poller returns on the shutdown. */
        for (int i = 0; i < t->npollers; i++) {
            grpc_completion_queue_shutdown(t->k[i].cq);
            pthread_join(t->k[i].poller, NULL);
            grpc_completion_queue_destroy(t->k[i].cq);
        }
        while (t->head) {
            ev_node *n = t->head;
            t->head = n->next;
            if (n->ev.kind != BT_EV_DONE) {
                tfrec_bt_event_release(&n->ev);
                free(n);
            }
        }
        pthread_cond_destroy(&t->ready_cv);
        pthread_mutex_destroy(&t->mu);
    } else {
        tfrec_bt_cq_destroy(t->cq);
    }
    for (int i = 1; i < t->nch; i++)
        grpc_channel_destroy(t->k[i].ch);
    while (t->live) { /* calls never completed: the queue is gone */
        tr_call *next = t->live->next;
        free(t->live);
        t->live = next;
    }
    free(t);
}

/* want queues, each with its poller thread (at most one per connection);
 * if fewer can be made, the connections share those there are, and with
 * none at all the writer's thread polls one queue itself. */
static void start_pollers(grpc_tr *t, int want)
{
    if (pthread_cond_init(&t->ready_cv, NULL))
        return;
    if (pthread_mutex_init(&t->mu, NULL)) {
        pthread_cond_destroy(&t->ready_cv);
        return;
    }
    int n = 0;
    for (; n < want && n < t->nch; n++) {
        conn *k = &t->k[n];
        k->t = t;
        if (!(k->cq = grpc_completion_queue_create_for_next(NULL)))
            break;
        if (pthread_create(&k->poller, NULL, poll_loop, k)) {
            grpc_completion_queue_destroy(k->cq);
            break;
        }
    }
    if (n == 0) {
        pthread_mutex_destroy(&t->mu);
        pthread_cond_destroy(&t->ready_cv);
        return;
    }
    t->npollers = n;
    t->threaded = 1;
}

static int tr_reauth(void *ctx, char *err, size_t errcap)
{
    return tfrec_bt_reauth(((grpc_tr *)ctx)->client, err, errcap);
}

static const char *tr_hint(void *ctx, int code, const char *details, char *buf, size_t cap)
{
    return tfrec_bt_auth_hint(((grpc_tr *)ctx)->client, code, details, buf, cap);
}

/* Polling threads: the TFREC_BT_POLLERS setting, else one. Against the
 * emulator a polling thread lets it work on two calls at once, for more
 * rows/s than the writer's thread polling alone (0) at little client CPU
 * (bench/RESULTS.md, "Bigtable writes: one polling thread"). */
static int pollers_wanted(void)
{
    long n = 1;
    if (tfrec_cfg_int(TFREC_CFG_BT_POLLERS, &n) < 0)
        n = 1; /* not a number: the default (the library never prints) */
    return n > 0 ? (int)(n < 1024 ? n : 1024) : 0;
}

/* Connections to use: the option, else TFREC_BT_CONNECTIONS, else one per
 * call in flight. */
static int connections_wanted(const tfrec_bt_writer_options *opts)
{
    tfrec_bt_writer_options o;
    if (TFREC_STRUCT_IN(tfrec_bt_writer_options, &o, opts, NULL))
        return 1; /* the writer reports the bad struct */
    int n = o.connections;
    if (n <= 0) {
        long env = 0;
        n = tfrec_cfg_int(TFREC_CFG_BT_CONNECTIONS, &env) > 0 && env > 0
                ? (int)(env < MAX_CONNECTIONS ? env : MAX_CONNECTIONS)
            : o.max_inflight > 0 ? o.max_inflight
                                 : 2;
    }
    return n > MAX_CONNECTIONS ? MAX_CONNECTIONS : n;
}

int tfrec_bt_writer_open(tfrec_bt_writer **out, tfrec_bt_client *c, const char *table,
                         const char *family, const tfrec_bt_writer_options *opts)
{
    if (out)
        *out = NULL;
    if (!out || !c || !table || !*table || !family || !*family)
        return tfrec_fail(NULL, TFREC_E_INVALID,
                          "tfrec_bt_writer_open needs a client, a table and a column family");
    char name[2 * BT_NAME_MAX], enc[3 * BT_NAME_MAX];
    if (tfrec_bt_table_name(c, table, name, sizeof name))
        return tfrec_fail(NULL, TFREC_E_INVALID, "table name too long");
    grpc_tr *t = calloc(1, sizeof *t);
    if (!t)
        return tfrec_fail(NULL, TFREC_E_NOMEM, "out of memory");
    t->client = c;
    tfrec_bt_url_encode(name, enc, sizeof enc);
    snprintf(t->params, sizeof t->params, "table_name=%s", enc);
    if (c->app_profile[0]) {
        tfrec_bt_url_encode(c->app_profile, enc, sizeof enc);
        size_t l = strlen(t->params);
        snprintf(t->params + l, sizeof t->params - l, "&app_profile_id=%s", enc);
    }
    t->k[0].ch = c->data;
    t->nch = 1;
    /* The extra channels connect lazily, on their first call; one that
     * cannot be created just leaves fewer connections. */
    for (int want = connections_wanted(opts); t->nch < want; t->nch++)
        if (!(t->k[t->nch].ch = tfrec_bt_data_channel_new(c)))
            break;
    int want = pollers_wanted();
    if (want > 0)
        start_pollers(t, want);
    if (!t->threaded)
        t->cq = grpc_completion_queue_create_for_next(NULL);
    bt_transport tr = { t, tr_start, tr_next, tr_destroy, tr_cancel_all, tr_reauth, tr_hint };
    int rc = tfrec_bt_writer_open_transport(out, &tr, name, c->app_profile, family, opts);
    if (rc)
        tr_destroy(t);
    return rc;
}

/* The bulk writer's transport over gRPC: MutateRows calls on one completion
 * queue, with the routing header for the table, spread over a few
 * connections.
 *
 * Why several connections: over one HTTP/2 connection every request byte
 * goes through the server's single reader for that connection (in gRPC-Go,
 * one goroutine per connection), and the requests in flight are interleaved
 * frame by frame, so they finish together and the server then parses them
 * while the connection idles. A connection per call in flight lets the
 * server read them in parallel and overlap one request's parsing with the
 * next one's transfer (see bench/RESULTS.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bigtable/client_internal.h"
#include "bigtable/transport.h"
#include "util/struct_size.h"

#define MUTATE_ROWS "/google.bigtable.v2.Bigtable/MutateRows"
#define MAX_CONNECTIONS 16

typedef struct grpc_tr {
    tfrec_bt_client *client;
    grpc_completion_queue *cq;
    grpc_channel *ch[MAX_CONNECTIONS]; /* [0] is the client's; the rest are ours */
    int busy[MAX_CONNECTIONS];         /* calls in flight on each */
    int nch, next;                     /* next: where the search for the least busy starts */
    char params[3 * BT_NAME_MAX + 64];
    struct tr_call *live; /* calls in flight, for tr_cancel_all */
} grpc_tr;

/* What a call's events carry: the writer's pointer and the connection; it
 * stays on the live list until the call's DONE event. */
typedef struct tr_call {
    void *user;
    int ch;
    bt_call *call;
    struct tr_call *prev, *next;
} tr_call;

static int tr_start(void *ctx, void *user, const grpc_slice *slices, size_t n, tfrec_err *err)
{
    grpc_tr *t = ctx;
    /* The least busy connection; ties go round robin, so every connection
     * stays warm and a slow one is not picked again and again. */
    int best = t->next % t->nch;
    for (int k = 1; k < t->nch; k++) {
        int i = (t->next + k) % t->nch;
        if (t->busy[i] < t->busy[best])
            best = i;
    }
    t->next = best + 1;
    tr_call *tc = malloc(sizeof *tc);
    if (!tc)
        return tfrec_fail(err, TFREC_E_NOMEM, "out of memory starting MutateRows");
    *tc = (tr_call){ user, best, NULL, NULL, t->live };
    tc->call = tfrec_bt_call_start(t->ch[best], t->cq, MUTATE_ROWS, t->params, slices, n,
                                   t->client->rpc_timeout_ms, tc, err);
    if (!tc->call) {
        free(tc);
        return TFREC_E_NETWORK;
    }
    if (t->live)
        t->live->prev = tc;
    t->live = tc;
    t->busy[best]++;
    return TFREC_OK;
}

static int tr_next(void *ctx, int64_t deadline_ms, bt_event *ev)
{
    grpc_tr *t = ctx;
    int rc = tfrec_bt_cq_next(t->cq, deadline_ms, ev);
    if (rc == 1) {
        tr_call *tc = ev->user;
        ev->user = tc->user;
        if (ev->kind == BT_EV_DONE) { /* the call is gone: forget it */
            t->busy[tc->ch]--;
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
    for (tr_call *tc = t->live; tc; tc = tc->next)
        tfrec_bt_call_cancel(tc->call);
}

static void tr_destroy(void *ctx)
{
    grpc_tr *t = ctx;
    tfrec_bt_cq_destroy(t->cq);
    for (int i = 1; i < t->nch; i++)
        grpc_channel_destroy(t->ch[i]);
    while (t->live) { /* calls never completed: the queue is gone */
        tr_call *next = t->live->next;
        free(t->live);
        t->live = next;
    }
    free(t);
}

/* Connections to use: the option, else $TFREC_BT_CONNECTIONS, else one per
 * call in flight. */
static int connections_wanted(const tfrec_bt_writer_options *opts)
{
    tfrec_bt_writer_options o;
    if (TFREC_STRUCT_IN(tfrec_bt_writer_options, &o, opts, NULL))
        return 1; /* the writer reports the bad struct */
    int n = o.connections;
    if (n <= 0) {
        const char *env = getenv("TFREC_BT_CONNECTIONS");
        n = env && atoi(env) > 0 ? atoi(env) : o.max_inflight > 0 ? o.max_inflight : 2;
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
    t->cq = grpc_completion_queue_create_for_next(NULL);
    t->ch[0] = c->data;
    t->nch = 1;
    /* The extra channels connect lazily, on their first call; one that
     * cannot be created just leaves fewer connections. */
    for (int want = connections_wanted(opts); t->nch < want; t->nch++)
        if (!(t->ch[t->nch] = tfrec_bt_data_channel_new(c)))
            break;
    bt_transport tr = { t, tr_start, tr_next, tr_destroy, tr_cancel_all };
    int rc = tfrec_bt_writer_open_transport(out, &tr, name, c->app_profile, family, opts);
    if (rc)
        tr_destroy(t);
    return rc;
}

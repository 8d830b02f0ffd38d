/* The bulk writer's transport over gRPC: MutateRows calls on one completion
 * queue, with the routing header for the table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bigtable/client_internal.h"
#include "bigtable/transport.h"
#include "util/vec.h"

#define MUTATE_ROWS "/google.bigtable.v2.Bigtable/MutateRows"

/* A call in flight: what cancel_all needs, until its DONE event. */
typedef struct live_call {
    void *user;
    bt_call *call;
} live_call;

typedef struct grpc_tr {
    tfrec_bt_client *client;
    grpc_completion_queue *cq;
    char params[3 * BT_NAME_MAX + 64];
    live_call *live;
    size_t nlive, live_cap;
} grpc_tr;

static int tr_start(void *ctx, void *user, const grpc_slice *slices, size_t n, tfrec_err *err)
{
    grpc_tr *t = ctx;
    if (tfrec_vec_reserve(&t->live, &t->live_cap, t->nlive + 1, 8))
        return tfrec_fail(err, TFREC_E_NOMEM, "out of memory starting a MutateRows call");
    bt_call *c = tfrec_bt_call_start(t->client->data, t->cq, MUTATE_ROWS, t->params, slices, n,
                                     t->client->rpc_timeout_ms, user, err);
    if (!c)
        return TFREC_E_NETWORK;
    t->live[t->nlive++] = (live_call){ user, c };
    return TFREC_OK;
}

static int tr_next(void *ctx, int64_t deadline_ms, bt_event *ev)
{
    grpc_tr *t = ctx;
    int rc = tfrec_bt_cq_next(t->cq, deadline_ms, ev);
    if (rc == 1 && ev->kind == BT_EV_DONE) /* the call is gone: forget it */
        for (size_t i = 0; i < t->nlive; i++)
            if (t->live[i].user == ev->user) {
                t->live[i] = t->live[--t->nlive];
                break;
            }
    return rc;
}

static void tr_cancel_all(void *ctx)
{
    grpc_tr *t = ctx;
    for (size_t i = 0; i < t->nlive; i++)
        tfrec_bt_call_cancel(t->live[i].call);
}

static void tr_destroy(void *ctx)
{
    grpc_tr *t = ctx;
    tfrec_bt_cq_destroy(t->cq);
    free(t->live);
    free(t);
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
    bt_transport tr = { t, tr_start, tr_next, tr_destroy, tr_cancel_all };
    int rc = tfrec_bt_writer_open_transport(out, &tr, name, c->app_profile, family, opts);
    if (rc)
        tr_destroy(t);
    return rc;
}

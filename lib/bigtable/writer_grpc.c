/* The bulk writer's transport over gRPC: MutateRows calls on one completion
 * queue, with the routing header for the table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bigtable/client_internal.h"
#include "bigtable/transport.h"

#define MUTATE_ROWS "/google.bigtable.v2.Bigtable/MutateRows"

typedef struct grpc_tr {
    tfrec_bt_client *client;
    grpc_completion_queue *cq;
    char params[3 * BT_NAME_MAX + 64];
} grpc_tr;

static int tr_start(void *ctx, void *user, const grpc_slice *slices, size_t n, tfrec_err *err)
{
    grpc_tr *t = ctx;
    bt_call *c = tfrec_bt_call_start(t->client->data, t->cq, MUTATE_ROWS, t->params, slices, n,
                                     t->client->rpc_timeout_ms, user, err);
    return c ? TFREC_OK : TFREC_E_NETWORK;
}

static int tr_next(void *ctx, int64_t deadline_ms, bt_event *ev)
{
    return tfrec_bt_cq_next(((grpc_tr *)ctx)->cq, deadline_ms, ev);
}

static void tr_destroy(void *ctx)
{
    grpc_tr *t = ctx;
    tfrec_bt_cq_destroy(t->cq);
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
    bt_transport tr = { t, tr_start, tr_next, tr_destroy };
    int rc = tfrec_bt_writer_open_transport(out, &tr, name, c->app_profile, family, opts);
    if (rc)
        tr_destroy(t);
    return rc;
}

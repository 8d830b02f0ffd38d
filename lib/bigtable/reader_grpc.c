/* The reader's gRPC transport: ReadRows calls on one completion queue,
 * spread over a few connections, and SampleRowKeys. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bigtable/client_internal.h"
#include "bigtable/read_transport.h"
#include "bigtable/retry.h"

#define READ_ROWS "/google.bigtable.v2.Bigtable/ReadRows"
#define SAMPLE_ROW_KEYS "/google.bigtable.v2.Bigtable/SampleRowKeys"
#define MAX_CONNECTIONS 16

typedef struct grpc_rt {
    tfrec_bt_client *c;
    grpc_completion_queue *cq;
    grpc_channel *ch[MAX_CONNECTIONS];
    int nch;
    char name[2 * BT_NAME_MAX];
    char params[3 * BT_NAME_MAX + 64];
} grpc_rt;

static grpc_channel *channel_for(grpc_rt *g, size_t stream)
{
    return g->nch ? g->ch[stream % (size_t)g->nch] : g->c->data;
}

static void *rt_start(void *ctx, void *user, size_t stream, const uint8_t *req, size_t len,
                      tfrec_err *err)
{
    grpc_rt *g = ctx;
    grpc_slice s = grpc_slice_from_copied_buffer((const char *)req, len);
    /* A scan may run long: its deadline is generous; a stall ends it
     * sooner, and DEADLINE_EXCEEDED resumes after the last row anyway. */
    bt_call *call = tfrec_bt_call_start(channel_for(g, stream), g->cq, READ_ROWS, g->params, &s, 1,
                                        g->c->rpc_timeout_ms * 30, user, err);
    grpc_slice_unref(s);
    return call;
}

static int rt_next(void *ctx, int64_t deadline_ms, bt_event *ev)
{
    grpc_rt *g = ctx;
    return tfrec_bt_cq_next(g->cq, deadline_ms, ev);
}

static void rt_cancel(void *ctx, void *call)
{
    (void)ctx;
    tfrec_bt_call_cancel(call);
}

static int rt_sample(void *ctx, bt_samples *out, tfrec_err *err)
{
    grpc_rt *g = ctx;
    memset(out, 0, sizeof *out);
    Google__Bigtable__V2__SampleRowKeysRequest req =
        GOOGLE__BIGTABLE__V2__SAMPLE_ROW_KEYS_REQUEST__INIT;
    req.table_name = g->name;
    req.app_profile_id = g->c->app_profile;
    size_t n = google__bigtable__v2__sample_row_keys_request__get_packed_size(&req);
    grpc_slice s = grpc_slice_malloc(n);
    google__bigtable__v2__sample_row_keys_request__pack(&req, GRPC_SLICE_START_PTR(s));
    grpc_completion_queue *cq = grpc_completion_queue_create_for_next(NULL);
    int64_t t0 = tfrec_bt_now_ms();
    bt_call *call = tfrec_bt_call_start(g->c->data, cq, SAMPLE_ROW_KEYS, g->params, &s, 1,
                                        g->c->rpc_timeout_ms, NULL, err);
    grpc_slice_unref(s);
    if (!call) {
        tfrec_bt_cq_destroy(cq);
        return err->code;
    }
    int rc = TFREC_OK, done = 0, answered = 0;
    size_t cap = 0;
    while (!done) {
        bt_event ev;
        /* The first call of a sharded reader: a server not reached (no
         * answer, no connection up) within the connect timeout is reported
         * then, as for ReadRows, not after the call's whole deadline. */
        int64_t deadline = tfrec_bt_now_ms() + g->c->rpc_timeout_ms + 5000;
        int reached = answered || tfrec_bt_channel_ready(g->c->data);
        if (!reached && !rc && deadline > t0 + BT_CONNECT_TIMEOUT_MS)
            deadline = t0 + BT_CONNECT_TIMEOUT_MS;
        if (tfrec_bt_cq_next(cq, deadline, &ev) != 1) {
            if (!answered && !tfrec_bt_channel_ready(g->c->data) && !rc) {
                if (tfrec_bt_now_ms() < t0 + BT_CONNECT_TIMEOUT_MS)
                    continue; /* it connected meanwhile, then dropped: look again */
                rc = tfrec_fail(err, TFREC_E_NETWORK,
                                "SampleRowKeys on %s: cannot reach Bigtable at %s: no connection "
                                "(tried for %.1f s)",
                                g->name, g->c->endpoint, (double)(tfrec_bt_now_ms() - t0) / 1000);
            } else if (!rc) {
                rc = tfrec_fail(err, TFREC_E_NETWORK, "SampleRowKeys on %s at %s stalled", g->name,
                                g->c->endpoint);
            }
            tfrec_bt_call_cancel(call); /* its DONE still comes */
            continue;
        }
        answered = 1;
        if (ev.kind == BT_EV_DONE) {
            done = 1;
            if (ev.code != BT_OK && !rc && tfrec_bt_unreachable(ev.code))
                rc = tfrec_fail(err, TFREC_E_NETWORK,
                                "SampleRowKeys on %s: cannot reach Bigtable at %s: %s: %s (tried "
                                "for %.1f s)",
                                g->name, g->c->endpoint, tfrec_bt_code_name(ev.code), ev.details,
                                (double)(tfrec_bt_now_ms() - t0) / 1000);
            else if (ev.code != BT_OK && !rc)
                rc = tfrec_fail(err, ev.code == BT_NOT_FOUND ? TFREC_E_NOT_FOUND : TFREC_E_NETWORK,
                                "SampleRowKeys on %s at %s: %s: %s", g->name, g->c->endpoint,
                                tfrec_bt_code_name(ev.code), ev.details);
            continue;
        }
        Google__Bigtable__V2__SampleRowKeysResponse *r =
            google__bigtable__v2__sample_row_keys_response__unpack(NULL, ev.len, ev.data);
        tfrec_bt_event_release(&ev);
        if (rc)
            ;
        else if (!r)
            rc = tfrec_fail(err, TFREC_E_PARSE, "unparsable SampleRowKeys response from %s",
                            g->c->endpoint);
        else if (out->n == cap &&
                 !(cap = cap ? 2 * cap : 64, out->v = realloc(out->v, cap * sizeof *out->v)))
            rc = tfrec_fail(err, TFREC_E_NOMEM, "out of memory");
        else {
            bt_sample *sm = &out->v[out->n];
            sm->offset_bytes = r->offset_bytes;
            sm->key.n = r->row_key.len;
            sm->key.p = r->row_key.len ? malloc(r->row_key.len) : NULL;
            if (r->row_key.len && !sm->key.p)
                rc = tfrec_fail(err, TFREC_E_NOMEM, "out of memory");
            else {
                if (r->row_key.len)
                    memcpy(sm->key.p, r->row_key.data, r->row_key.len);
                out->n++;
            }
        }
        if (rc)
            tfrec_bt_call_cancel(call);
        if (r)
            google__bigtable__v2__sample_row_keys_response__free_unpacked(r, NULL);
    }
    tfrec_bt_cq_destroy(cq);
    if (rc)
        tfrec_bt_samples_free(out);
    return rc;
}

static int rt_connected(void *ctx)
{
    grpc_rt *g = ctx;
    for (int i = 0; i < g->nch; i++)
        if (tfrec_bt_channel_ready(g->ch[i]))
            return 1;
    return 0;
}

static void rt_destroy(void *ctx)
{
    grpc_rt *g = ctx;
    tfrec_bt_cq_destroy(g->cq);
    for (int i = 0; i < g->nch; i++)
        grpc_channel_destroy(g->ch[i]);
    free(g);
}

static int rt_reauth(void *ctx, char *err, size_t errcap)
{
    return tfrec_bt_reauth(((grpc_rt *)ctx)->c, err, errcap);
}

static const char *rt_hint(void *ctx, int code, const char *details, char *buf, size_t cap)
{
    return tfrec_bt_auth_hint(((grpc_rt *)ctx)->c, code, details, buf, cap);
}

int tfrec_bt_read_transport_grpc(bt_read_transport *t, tfrec_bt_client *c, const char *table_name,
                                 int connections, tfrec_err *err)
{
    grpc_rt *g = calloc(1, sizeof *g);
    if (!g)
        return tfrec_fail(err, TFREC_E_NOMEM, "out of memory");
    g->c = c;
    snprintf(g->name, sizeof g->name, "%s", table_name);
    char enc[3 * BT_NAME_MAX];
    tfrec_bt_url_encode(g->name, enc, sizeof enc);
    snprintf(g->params, sizeof g->params, "table_name=%s", enc);
    if (connections > MAX_CONNECTIONS)
        connections = MAX_CONNECTIONS;
    /* Channels of their own, with the read window settings (client.c); each
     * connection has its own sender on the server side: several streams of
     * large rows over one connection queue behind each other. */
    for (int i = 0; i < connections; i++) {
        if (!(g->ch[i] = tfrec_bt_read_channel_new(c))) {
            rt_destroy(g);
            return tfrec_fail(err, TFREC_E_NETWORK, "%s", c->err.msg);
        }
        g->nch++;
    }
    g->cq = grpc_completion_queue_create_for_next(NULL);
    *t = (bt_read_transport){ g,          rt_start,    rt_next,      rt_cancel, rt_sample,
                              rt_destroy, c->endpoint, rt_connected, rt_reauth, rt_hint };
    return TFREC_OK;
}

/* One request, a stream of responses, a final status: the shape of every
 * Bigtable call we make, over the gRPC core completion-queue API. */
#include "bigtable/call.h"

#include "bigtable/retry_info.h"

#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { TAG_START, TAG_MESSAGE, TAG_STATUS };

#define BT_DATA_API "/google.bigtable.v2.Bigtable/"
/* google.bigtable.v2.FeatureFlags{retry_info: true} (bytes 0x38 0x01),
 * URL-safe base64 with padding as the bigtable-features key carries it. */
#define BT_FEATURES "OAE="

typedef struct bt_tag {
    bt_call *call;
    int kind;
} bt_tag;

struct bt_call {
    grpc_call *call;
    void *user;
    int pending; /* op batches not yet completed */
    grpc_metadata md[3];
    size_t nmd;
    grpc_byte_buffer *send;
    grpc_metadata_array initial_md, trailing_md;
    grpc_byte_buffer *recv;
    grpc_status_code status;
    grpc_slice status_details;
    const char *error_string;
    bt_tag t_start, t_message, t_status;
};

int64_t tfrec_bt_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static gpr_timespec in_ms(int64_t ms, gpr_clock_type clock)
{
    if (ms < 0)
        ms = 0;
    return gpr_time_add(gpr_now(clock), gpr_time_from_millis(ms, GPR_TIMESPAN));
}

void tfrec_bt_url_encode(const char *in, char *out, size_t cap)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;
    for (; *in && o + 4 < cap; in++) {
        unsigned char ch = (unsigned char)*in;
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
            ch == '-' || ch == '_' || ch == '.' || ch == '~' || ch == '=') {
            out[o++] = (char)ch;
        } else {
            out[o++] = '%';
            out[o++] = hex[ch >> 4];
            out[o++] = hex[ch & 15];
        }
    }
    out[o] = 0;
}

static void call_free(bt_call *c)
{
    if (c->send)
        grpc_byte_buffer_destroy(c->send);
    if (c->recv)
        grpc_byte_buffer_destroy(c->recv);
    grpc_metadata_array_destroy(&c->initial_md);
    grpc_metadata_array_destroy(&c->trailing_md);
    grpc_slice_unref(c->status_details);
    for (size_t i = 0; i < c->nmd; i++) {
        grpc_slice_unref(c->md[i].key);
        grpc_slice_unref(c->md[i].value);
    }
    gpr_free((void *)c->error_string);
    if (c->call)
        grpc_call_unref(c->call);
    free(c);
}

static int start_recv_message(bt_call *c)
{
    grpc_op op;
    memset(&op, 0, sizeof op);
    op.op = GRPC_OP_RECV_MESSAGE;
    op.data.recv_message.recv_message = &c->recv;
    return grpc_call_start_batch(c->call, &op, 1, &c->t_message, NULL) == GRPC_CALL_OK;
}

bt_call *tfrec_bt_call_start(grpc_channel *ch, grpc_completion_queue *cq, const char *method,
                             const char *params, const grpc_slice *slices, size_t nslices,
                             int64_t timeout_ms, void *user, tfrec_err *err)
{
    bt_call *c = calloc(1, sizeof *c);
    if (!c) {
        tfrec_fail(err, TFREC_E_NOMEM, "out of memory starting %s", method);
        return NULL;
    }
    c->user = user;
    c->t_start = (bt_tag){ c, TAG_START };
    c->t_message = (bt_tag){ c, TAG_MESSAGE };
    c->t_status = (bt_tag){ c, TAG_STATUS };
    c->status_details = grpc_empty_slice();
    grpc_metadata_array_init(&c->initial_md);
    grpc_metadata_array_init(&c->trailing_md);
    c->md[0].key = grpc_slice_from_static_string("x-goog-request-params");
    c->md[0].value = grpc_slice_from_copied_string(params ? params : "");
    c->md[1].key = grpc_slice_from_static_string("x-goog-api-client");
    char client[96];
    snprintf(client, sizeof client, "gl-c/11 grpc/%s tfrec/%s", grpc_version_string(),
             TFREC_VERSION_STRING);
    c->md[1].value = grpc_slice_from_copied_string(client);
    c->nmd = 2;
    if (!strncmp(method, BT_DATA_API, sizeof BT_DATA_API - 1)) {
        /* The data API sends RetryInfo only to clients that say they honour
         * it (FeatureFlags.retry_info, field 7), as Google's clients do. */
        c->md[2].key = grpc_slice_from_static_string("bigtable-features");
        c->md[2].value = grpc_slice_from_static_string(BT_FEATURES);
        c->nmd = 3;
    }
    c->send = grpc_raw_byte_buffer_create((grpc_slice *)slices, nslices);

    grpc_slice m = grpc_slice_from_copied_string(method);
    c->call = grpc_channel_create_call(ch, NULL, GRPC_PROPAGATE_DEFAULTS, cq, m, NULL,
                                       in_ms(timeout_ms, GPR_CLOCK_REALTIME), NULL);
    grpc_slice_unref(m);
    if (!c->call) {
        tfrec_fail(err, TFREC_E_NETWORK, "gRPC could not create a call to %s", method);
        call_free(c);
        return NULL;
    }

    grpc_op ops[4];
    memset(ops, 0, sizeof ops);
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[0].data.send_initial_metadata.count = c->nmd;
    ops[0].data.send_initial_metadata.metadata = c->md;
    ops[1].op = GRPC_OP_SEND_MESSAGE;
    ops[1].data.send_message.send_message = c->send;
    ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
    ops[3].data.recv_initial_metadata.recv_initial_metadata = &c->initial_md;
    if (grpc_call_start_batch(c->call, ops, 4, &c->t_start, NULL) != GRPC_CALL_OK) {
        tfrec_fail(err, TFREC_E_NETWORK, "gRPC refused to start %s", method);
        call_free(c);
        return NULL;
    }
    c->pending++;

    grpc_op st;
    memset(&st, 0, sizeof st);
    st.op = GRPC_OP_RECV_STATUS_ON_CLIENT;
    st.data.recv_status_on_client.trailing_metadata = &c->trailing_md;
    st.data.recv_status_on_client.status = &c->status;
    st.data.recv_status_on_client.status_details = &c->status_details;
    st.data.recv_status_on_client.error_string = &c->error_string;
    if (grpc_call_start_batch(c->call, &st, 1, &c->t_status, NULL) == GRPC_CALL_OK)
        c->pending++;
    if (start_recv_message(c))
        c->pending++;
    return c;
}

void tfrec_bt_call_cancel(bt_call *call)
{
    grpc_call_cancel(call->call, NULL);
}

/* The delay a failed call's trailers ask for: gRPC core hands -bin values
 * already base64-decoded. */
static int64_t trailer_retry_delay(const grpc_metadata_array *md)
{
    for (size_t i = 0; i < md->count; i++)
        if (grpc_slice_str_cmp(md->metadata[i].key, "grpc-status-details-bin") == 0)
            return tfrec_bt_retry_info_ms(GRPC_SLICE_START_PTR(md->metadata[i].value),
                                          GRPC_SLICE_LENGTH(md->metadata[i].value));
    return 0;
}

/* All op batches finished: turn the status into a DONE event, free the call. */
static void finish(bt_call *c, bt_event *ev)
{
    ev->kind = BT_EV_DONE;
    ev->user = c->user;
    ev->code = (int)c->status;
    size_t n = GRPC_SLICE_LENGTH(c->status_details);
    if (n >= sizeof ev->details)
        n = sizeof ev->details - 1;
    memcpy(ev->details, GRPC_SLICE_START_PTR(c->status_details), n);
    ev->details[n] = 0;
    if (n == 0 && c->error_string)
        snprintf(ev->details, sizeof ev->details, "%s", c->error_string);
    if (c->status != GRPC_STATUS_OK)
        ev->retry_delay_ms = trailer_retry_delay(&c->trailing_md);
    call_free(c);
}

/* Per-thread slot for tfrec_bt_cq_next's callers (the reader and admin
 * calls poll their queue from the thread that owns it). */
static _Thread_local struct {
    grpc_completion_queue *cq;
    bt_call *call;
} deferred;

int tfrec_bt_cq_next(grpc_completion_queue *cq, int64_t deadline_ms, bt_event *ev)
{
    bt_call *slot = deferred.cq == cq ? deferred.call : NULL;
    int rc = tfrec_bt_cq_poll(cq, deadline_ms, ev, &slot, NULL);
    deferred.cq = cq;
    deferred.call = slot;
    return rc;
}

static void lock(pthread_mutex_t *mu)
{
    if (mu)
        pthread_mutex_lock(mu);
}

int tfrec_bt_cq_poll(grpc_completion_queue *cq, int64_t deadline_ms, bt_event *ev,
                     bt_call **deferred_done, pthread_mutex_t *mu)
{
    memset(ev, 0, sizeof *ev);
    if (*deferred_done) {
        bt_call *c = *deferred_done;
        *deferred_done = NULL;
        lock(mu);
        finish(c, ev);
        return 1;
    }
    for (;;) {
        grpc_event e = grpc_completion_queue_next(
            cq, in_ms(deadline_ms - tfrec_bt_now_ms(), GPR_CLOCK_MONOTONIC), NULL);
        if (e.type == GRPC_QUEUE_TIMEOUT)
            return 0;
        if (e.type == GRPC_QUEUE_SHUTDOWN)
            return -1;
        /* From here on the call is touched only under the lock, so a thread
         * starting or cancelling calls under it never sees one half freed. */
        lock(mu);
        bt_tag *t = e.tag;
        bt_call *c = t->call;
        if (t->kind == TAG_MESSAGE && e.success && c->recv) {
            grpc_byte_buffer_reader rd;
            ev->kind = BT_EV_MESSAGE;
            ev->user = c->user;
            if (grpc_byte_buffer_reader_init(&rd, c->recv)) {
                ev->slice = grpc_byte_buffer_reader_readall(&rd);
                grpc_byte_buffer_reader_destroy(&rd);
            } else {
                ev->slice = grpc_empty_slice();
            }
            grpc_byte_buffer_destroy(c->recv);
            c->recv = NULL;
            ev->data = GRPC_SLICE_START_PTR(ev->slice);
            ev->len = GRPC_SLICE_LENGTH(ev->slice);
            if (!start_recv_message(c) && --c->pending == 0)
                *deferred_done = c; /* its DONE is the next event */
            return 1;
        }
        if (t->kind == TAG_START && c->send) {
            grpc_byte_buffer_destroy(c->send);
            c->send = NULL;
        }
        if (--c->pending == 0) {
            finish(c, ev);
            return 1;
        }
        if (mu)
            pthread_mutex_unlock(mu);
    }
}

void tfrec_bt_event_release(bt_event *ev)
{
    if (ev->kind == BT_EV_MESSAGE)
        grpc_slice_unref(ev->slice);
    ev->kind = 0;
}

void tfrec_bt_cq_destroy(grpc_completion_queue *cq)
{
    if (!cq)
        return;
    grpc_completion_queue_shutdown(cq);
    for (;;) {
        grpc_event e = grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
        if (e.type == GRPC_QUEUE_SHUTDOWN)
            break;
    }
    grpc_completion_queue_destroy(cq);
}

int tfrec_bt_channel_ready(grpc_channel *ch)
{
    return ch && grpc_channel_check_connectivity_state(ch, 0) == GRPC_CHANNEL_READY;
}

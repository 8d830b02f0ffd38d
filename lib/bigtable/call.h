/* Internal: one gRPC call over the core C API, driven by a completion queue.
 *
 * Every Bigtable call we make sends one request message and receives zero or
 * more response messages, so one shape serves unary and server-streaming
 * calls alike. The caller starts calls on its queue and pulls bt_events:
 * each response message, then exactly one DONE with the final status, after
 * which the call is released. Several calls may share a queue. */
#ifndef TFREC_BT_CALL_H
#define TFREC_BT_CALL_H

#include <grpc/grpc.h>
#include <grpc/slice.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "util/errors.h"

enum { BT_EV_MESSAGE = 1, BT_EV_DONE = 2 };

typedef struct bt_event {
    int kind;
    void *user; /* as given to tfrec_bt_call_start */
    /* BT_EV_MESSAGE: the message bytes, owned by the event */
    grpc_slice slice;
    const uint8_t *data; /* into slice, which holds a small message inline:
                            set it again after copying the event */
    size_t len;
    /* BT_EV_DONE: final status */
    int code; /* grpc_status_code */
    char details[384];
    /* The server's own wait before a retry (google.rpc.RetryInfo in the
     * grpc-status-details-bin trailer), in ms; 0: it named none. */
    int64_t retry_delay_ms;
} bt_event;

typedef struct bt_call bt_call;

/* Monotonic milliseconds (for backoff arithmetic and deadlines). */
int64_t tfrec_bt_now_ms(void);

/* Start method (e.g. "/google.bigtable.v2.Bigtable/MutateRows") on channel,
 * delivering events to cq. The request is the concatenation of slices (each
 * is referenced, not copied; the caller keeps its own references).
 * params is the x-goog-request-params value ("table_name=..." already
 * URL-encoded). Returns NULL (and err set) if gRPC refused to start. If
 * another thread polls cq, call this under the lock given to its
 * tfrec_bt_cq_poll. */
bt_call *tfrec_bt_call_start(grpc_channel *ch, grpc_completion_queue *cq, const char *method,
                             const char *params, const grpc_slice *slices, size_t nslices,
                             int64_t timeout_ms, void *user, tfrec_err *err);

/* Cancel a running call; its DONE event still arrives. If another thread
 * polls its queue, call this under that poller's lock and only for a call
 * whose DONE has not been returned yet. */
void tfrec_bt_call_cancel(bt_call *call);

/* Wait until an event is ready or the monotonic deadline (ms, from
 * tfrec_bt_now_ms) passes: 1 with *ev filled, 0 on timeout, -1 if the queue is
 * shut down. */
int tfrec_bt_cq_next(grpc_completion_queue *cq, int64_t deadline_ms, bt_event *ev);

/* tfrec_bt_cq_next for a queue that a dedicated thread polls while other
 * threads start and cancel calls on it. *deferred_done is the queue's slot
 * for a DONE that must follow the message just returned (NULL at first;
 * the poller keeps it between calls). If mu is not NULL it is taken before
 * an event's call is touched, and on 1 it is still held, so the caller can
 * record what the event means (e.g. that the call is gone) before a
 * canceller looks; the caller unlocks. */
int tfrec_bt_cq_poll(grpc_completion_queue *cq, int64_t deadline_ms, bt_event *ev,
                     bt_call **deferred_done, pthread_mutex_t *mu);

/* 1 when the channel has a connection up (READY) now; starts none. The
 * proof, before any answer, that a server is there (a scan may take long
 * before its first row). */
int tfrec_bt_channel_ready(grpc_channel *ch);

/* Release what an event owns (message bytes). */
void tfrec_bt_event_release(bt_event *ev);

/* Drain and destroy a queue whose calls have all delivered DONE. */
void tfrec_bt_cq_destroy(grpc_completion_queue *cq);

/* URL-encode a header value ("/" and other reserved characters). */
void tfrec_bt_url_encode(const char *in, char *out, size_t cap);

#endif

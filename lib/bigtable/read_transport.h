/* Internal: how the reader reaches a server. The gRPC implementation is in
 * reader_grpc.c; unit tests plug in an in-process fake that cuts streams and
 * answers SampleRowKeys deterministically. */
#ifndef TFREC_BT_READ_TRANSPORT_H
#define TFREC_BT_READ_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include "bigtable/call.h"
#include "bigtable/planner.h"
#include "tfrec/bigtable.h"
#include "util/errors.h"

typedef struct bt_read_transport {
    void *ctx;
    /* Start one ReadRows call with this serialized request; its events
     * carry `user`. Returns a handle for cancel, valid until its DONE
     * event, or NULL with err set. `stream` numbers the caller's ranges (a
     * transport may spread them over connections). */
    void *(*start)(void *ctx, void *user, size_t stream, const uint8_t *req, size_t len,
                   tfrec_err *err);
    /* Next event of any call before the monotonic deadline: 1, 0 timeout, -1 dead. */
    int (*next)(void *ctx, int64_t deadline_ms, bt_event *ev);
    /* Cancel one call; its DONE event still arrives. */
    void (*cancel)(void *ctx, void *call);
    /* SampleRowKeys of the table into *out. */
    int (*sample)(void *ctx, bt_samples *out, tfrec_err *err);
    /* Called once, after every started call has delivered its DONE. */
    void (*destroy)(void *ctx);
    /* For messages: the endpoint, "fake" in tests. */
    const char *endpoint;
    /* Optional: 1 when a connection to the server is up (the server is
     * there even before it answers); NULL: only answers tell. */
    int (*connected)(void *ctx);
    /* As in transport.h: a fresh token after UNAUTHENTICATED, and the
     * account and fix for a failure's message; NULL in tests. */
    int (*reauth)(void *ctx, char *err, size_t errcap);
    const char *(*hint)(void *ctx, int code, const char *details, char *buf, size_t cap);
} bt_read_transport;

/* Open a reader over any transport. table_name is the full
 * projects/.../tables/T name written into each request; the transport is
 * destroyed by tfrec_bt_reader_free (or here on failure). */
int tfrec_bt_reader_open_transport(tfrec_bt_reader **out, const bt_read_transport *t,
                                   const char *table_name, const char *app_profile,
                                   const tfrec_bt_read_options *opts);

/* The gRPC transport for table_name over client c: `connections` (1..16)
 * channels of its own, the streams spread over them. */
int tfrec_bt_read_transport_grpc(bt_read_transport *t, tfrec_bt_client *c, const char *table_name,
                                 int connections, tfrec_err *err);

#endif

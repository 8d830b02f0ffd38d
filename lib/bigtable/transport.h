/* Internal: how the bulk writer reaches a server. The gRPC implementation
 * lives in writer_grpc.c; unit tests plug in an in-process fake to inject
 * failures deterministically. */
#ifndef TFREC_BT_TRANSPORT_H
#define TFREC_BT_TRANSPORT_H

#include <grpc/slice.h>
#include <stddef.h>
#include <stdint.h>

#include "bigtable/call.h"
#include "tfrec/bigtable.h"
#include "util/errors.h"

typedef struct bt_transport {
    void *ctx;
    /* Start one MutateRows call whose request is the concatenation of the
     * slices; its events carry `user`. The slices are only borrowed for the
     * duration of the call (take a reference to keep them). */
    int (*start)(void *ctx, void *user, const grpc_slice *slices, size_t n, tfrec_err *err);
    /* Next event before the monotonic deadline: 1 event, 0 timeout, -1 dead. */
    int (*next)(void *ctx, int64_t deadline_ms, bt_event *ev);
    /* Called once, after every started call has delivered its DONE. */
    void (*destroy)(void *ctx);
    /* Cancel every call in flight (their DONE events still arrive); NULL:
     * the transport cannot cancel, calls end at their deadline. */
    void (*cancel_all)(void *ctx);
    /* After UNAUTHENTICATED: fetch a fresh access token for the calls that
     * follow (TFREC_OK), or say why not in err; NULL: no credentials. */
    int (*reauth)(void *ctx, char *err, size_t errcap);
    /* Words naming the account and the fix, appended to a failure's
     * message (credentials.c: tfrec_bt_auth_hint); NULL: none. */
    const char *(*hint)(void *ctx, int code, const char *details, char *buf, size_t cap);
} bt_transport;

/* Open a writer over any transport. table_name is the full
 * projects/.../tables/T name written into each request. */
int tfrec_bt_writer_open_transport(tfrec_bt_writer **out, const bt_transport *t,
                                   const char *table_name, const char *app_profile,
                                   const char *family, const tfrec_bt_writer_options *opts);

#endif

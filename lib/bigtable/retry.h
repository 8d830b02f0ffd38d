/* Internal: which failures are worth retrying, and how long to wait. */
#ifndef TFREC_BT_RETRY_H
#define TFREC_BT_RETRY_H

#include <stddef.h>
#include <stdint.h>

/* gRPC status codes we reason about (values fixed by the gRPC spec). */
enum {
    BT_OK = 0,
    BT_CANCELLED = 1,
    BT_UNKNOWN = 2,
    BT_INVALID_ARGUMENT = 3,
    BT_DEADLINE_EXCEEDED = 4,
    BT_NOT_FOUND = 5,
    BT_ALREADY_EXISTS = 6,
    BT_PERMISSION_DENIED = 7,
    BT_RESOURCE_EXHAUSTED = 8,
    BT_FAILED_PRECONDITION = 9,
    BT_ABORTED = 10,
    BT_OUT_OF_RANGE = 11,
    BT_UNIMPLEMENTED = 12,
    BT_INTERNAL = 13,
    BT_UNAVAILABLE = 14,
    BT_DATA_LOSS = 15,
    BT_UNAUTHENTICATED = 16
};

/* A per-entry or whole-call status that a later identical attempt may pass:
 * UNAVAILABLE, DEADLINE_EXCEEDED, ABORTED always; INTERNAL only for the
 * transport resets Bigtable documents as transient (RST_STREAM, "stream
 * terminated", "EOS"); RESOURCE_EXHAUSTED only when it is throttling, not a
 * message over the size limit (see tfrec_bt_is_too_large). */
int tfrec_bt_retryable(int code, const char *message);

/* The status of a call that never reached the server: nothing listening
 * (UNAVAILABLE, "failed to connect"), or no connection within the deadline
 * (DEADLINE_EXCEEDED). Admin calls report it at once, and a reader's calls
 * until they have reached the server once (after BT_CONNECT_TIMEOUT_MS), as
 * "cannot reach Bigtable at ENDPOINT", instead of retrying for minutes. */
int tfrec_bt_unreachable(int code);

/* How long a reader tries before a server it never reached is reported:
 * long enough for a slow TLS handshake or a restarting emulator, short
 * enough that a wrong address is said within seconds. */
#define BT_CONNECT_TIMEOUT_MS 10000

/* The request was refused for its size (gRPC's "larger than max" checks on
 * either side): splitting it, not waiting, is the cure. */
int tfrec_bt_is_too_large(int code, const char *message);

/* A connection that failed its TLS handshake (an untrusted certificate):
 * UNAVAILABLE, but waiting will not change the certificate. */
int tfrec_bt_is_tls_failure(const char *message);

/* One token refresh per run of UNAUTHENTICATED refusals. Calls record the
 * epoch they started in; a refusal of a call older than the last refresh
 * carried the old token and is simply re-sent. */
typedef struct bt_reauth {
    unsigned epoch; /* refreshes so far */
    int spent;      /* refreshed, and no call has passed since */
} bt_reauth;

/* After UNAUTHENTICATED on a call of epoch call_epoch: 1 to re-send it (a
 * fresh token is in place, fetched now through reauth(ctx) if needed);
 * 0 when the refusal stands: a fresh token was refused too, reauth is
 * NULL (no credentials), or the refresh failed (why says so). */
int tfrec_bt_reauth_decide(bt_reauth *ra, unsigned call_epoch,
                           int (*reauth)(void *ctx, char *err, size_t errcap), void *ctx, char *why,
                           size_t whycap);
/* A call passed: a later refusal may refresh again. */
static inline void tfrec_bt_reauth_passed(bt_reauth *ra)
{
    ra->spent = 0;
}

typedef struct bt_backoff {
    int64_t initial_ms, max_ms;
    double multiplier;
    uint64_t rng; /* xorshift state for jitter */
} bt_backoff;

/* Delay before attempt number `attempt` + 1 (attempt >= 1 failed so far):
 * min(max, initial * multiplier^(attempt-1)), jittered uniformly into
 * [delay/2, delay] so many writers do not retry in lock-step. */
int64_t tfrec_bt_backoff_delay(bt_backoff *b, unsigned attempt);

#endif

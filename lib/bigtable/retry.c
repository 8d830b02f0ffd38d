/* Retry classification and exponential backoff with jitter. */
#include <stdio.h>

#include "bigtable/retry.h"

#include <string.h>
#include <strings.h>

static int contains(const char *s, const char *needle)
{
    if (!s)
        return 0;
    size_t n = strlen(needle);
    for (; *s; s++)
        if (!strncasecmp(s, needle, n))
            return 1;
    return 0;
}

int tfrec_bt_is_too_large(int code, const char *message)
{
    return code == BT_RESOURCE_EXHAUSTED &&
           (contains(message, "larger than max") || contains(message, "too large") ||
            contains(message, "message size") || contains(message, "exceeds"));
}

int tfrec_bt_unreachable(int code)
{
    return code == BT_UNAVAILABLE || code == BT_DEADLINE_EXCEEDED;
}

int tfrec_bt_is_tls_failure(const char *message)
{
    return contains(message, "CERTIFICATE_VERIFY_FAILED") ||
           contains(message, "certificate verify failed") ||
           contains(message, "Ssl handshake failed") || contains(message, "Handshake failed");
}

int tfrec_bt_reauth_decide(bt_reauth *ra, unsigned call_epoch,
                           int (*reauth)(void *ctx, char *err, size_t errcap), void *ctx, char *why,
                           size_t whycap)
{
    if (whycap)
        why[0] = 0;
    if (!reauth)
        return 0;
    if (call_epoch != ra->epoch)
        return 1;
    if (ra->spent) {
        snprintf(why, whycap, "a freshly fetched token was refused too");
        return 0;
    }
    if (reauth(ctx, why, whycap) != 0)
        return 0;
    ra->epoch++;
    ra->spent = 1;
    return 1;
}

int tfrec_bt_retryable(int code, const char *message)
{
    switch (code) {
    case BT_UNAVAILABLE: return !tfrec_bt_is_tls_failure(message);
    case BT_DEADLINE_EXCEEDED:
    case BT_ABORTED: return 1;
    case BT_INTERNAL:
        return contains(message, "RST_STREAM") || contains(message, "stream terminated") ||
               contains(message, "EOS") || contains(message, "connection reset");
    case BT_RESOURCE_EXHAUSTED: return !tfrec_bt_is_too_large(code, message);
    default: return 0;
    }
}

int64_t tfrec_bt_backoff_delay(bt_backoff *b, unsigned attempt)
{
    double d = (double)(b->initial_ms > 0 ? b->initial_ms : 1);
    for (unsigned i = 1; i < attempt && d < (double)b->max_ms; i++)
        d *= b->multiplier;
    if (d > (double)b->max_ms)
        d = (double)b->max_ms;
    uint64_t x = b->rng ? b->rng : 0x9E3779B97F4A7C15ull;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    b->rng = x;
    double frac = (double)(x >> 11) / (double)(1ull << 53); /* [0,1) */
    return (int64_t)(d / 2 + frac * d / 2);
}

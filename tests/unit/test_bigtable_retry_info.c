/* The RetryInfo decoder against google.rpc.Status bytes built by hand
 * (field by field, as the wire format spells them): the delay comes out in
 * whole milliseconds, capped; other details, unknown fields and hostile bytes
 * yield no delay and never a read outside the buffer. */
#include <stdlib.h>
#include <string.h>

#include "bigtable/retry_info.h"
#include "harness.h"

typedef struct buf {
    uint8_t b[512];
    size_t n;
} buf;

static void put_varint(buf *o, uint64_t v)
{
    while (v >= 0x80) {
        o->b[o->n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    o->b[o->n++] = (uint8_t)v;
}

static void put_bytes(buf *o, unsigned field, const void *p, size_t n)
{
    put_varint(o, (uint64_t)field << 3 | 2);
    put_varint(o, n);
    memcpy(o->b + o->n, p, n);
    o->n += n;
}

static void put_int(buf *o, unsigned field, uint64_t v)
{
    put_varint(o, (uint64_t)field << 3);
    put_varint(o, v);
}

/* Status{code 8, message "slow down", details [Any{type, RetryInfo{Duration{s, ns}}}]},
 * after an optional other detail first. */
static buf status_with(const char *type, int64_t s, int32_t ns, int other_first)
{
    buf dur = { .n = 0 }, ri = { .n = 0 }, any = { .n = 0 }, st = { .n = 0 };
    if (s)
        put_int(&dur, 1, (uint64_t)s);
    if (ns)
        put_int(&dur, 2, (uint64_t)(int64_t)ns); /* int32: negative as 10 bytes */
    put_bytes(&ri, 1, dur.b, dur.n);
    put_bytes(&any, 1, type, strlen(type));
    put_bytes(&any, 2, ri.b, ri.n);
    put_int(&st, 1, 8);
    put_bytes(&st, 2, "slow down", 9);
    if (other_first) {
        buf o = { .n = 0 };
        put_bytes(&o, 1, "type.googleapis.com/google.rpc.ErrorInfo", 40);
        put_bytes(&o, 2, "\x0a\x03why", 5);
        put_bytes(&st, 3, o.b, o.n);
    }
    put_bytes(&st, 3, any.b, any.n);
    return st;
}

static const char RI[] = "type.googleapis.com/google.rpc.RetryInfo";

static void test_delays(void)
{
    buf b = status_with(RI, 1, 500000000, 0);
    CHECK_EQ(tfrec_bt_retry_info_ms(b.b, b.n), 1500);
    b = status_with(RI, 0, 1, 0); /* 1 ns rounds up to 1 ms */
    CHECK_EQ(tfrec_bt_retry_info_ms(b.b, b.n), 1);
    b = status_with(RI, 2, 0, 1); /* after another detail */
    CHECK_EQ(tfrec_bt_retry_info_ms(b.b, b.n), 2000);
    b = status_with(RI, 3600, 0, 0); /* capped */
    CHECK_EQ(tfrec_bt_retry_info_ms(b.b, b.n), BT_RETRY_INFO_MAX_MS);
    b = status_with(RI, INT64_MAX, 999999999, 0);
    CHECK_EQ(tfrec_bt_retry_info_ms(b.b, b.n), BT_RETRY_INFO_MAX_MS);
}

static void test_no_delay(void)
{
    buf b = status_with("type.googleapis.com/google.rpc.DebugInfo", 1, 0, 0);
    CHECK_EQ(tfrec_bt_retry_info_ms(b.b, b.n), 0);
    b = status_with("type.googleapis.com/google.rpc.RetryInfoX", 1, 0, 0);
    CHECK_EQ(tfrec_bt_retry_info_ms(b.b, b.n), 0);
    b = status_with(RI, 0, 0, 0); /* zero */
    CHECK_EQ(tfrec_bt_retry_info_ms(b.b, b.n), 0);
    b = status_with(RI, -5, 0, 0); /* negative */
    CHECK_EQ(tfrec_bt_retry_info_ms(b.b, b.n), 0);
    b = status_with(RI, 1, -1, 0);
    CHECK_EQ(tfrec_bt_retry_info_ms(b.b, b.n), 0);
    b = status_with(RI, 0, 1000000000, 0); /* nanos out of range */
    CHECK_EQ(tfrec_bt_retry_info_ms(b.b, b.n), 0);
    CHECK_EQ(tfrec_bt_retry_info_ms(NULL, 0), 0);
    CHECK_EQ(tfrec_bt_retry_info_ms((const uint8_t *)"", 0), 0);
    buf st = { .n = 0 };
    put_int(&st, 1, 8); /* a status without details */
    CHECK_EQ(tfrec_bt_retry_info_ms(st.b, st.n), 0);
}

/* Every truncation of a valid status, and every single-byte change, stays
 * inside the buffer (ASan builds check it) and yields 0 or a bounded delay. */
static void test_hostile(void)
{
    buf b = status_with(RI, 1, 500000000, 1);
    for (size_t n = 0; n < b.n; n++) {
        uint8_t *cut = malloc(n ? n : 1);
        memcpy(cut, b.b, n);
        int64_t ms = tfrec_bt_retry_info_ms(cut, n);
        CHECKF(ms == 0, "truncated to %zu bytes gave %lld", n, (long long)ms);
        free(cut);
    }
    for (size_t i = 0; i < b.n; i++)
        for (unsigned v = 0; v < 256; v += 7) {
            uint8_t *m = malloc(b.n);
            memcpy(m, b.b, b.n);
            m[i] = (uint8_t)v;
            int64_t ms = tfrec_bt_retry_info_ms(m, b.n);
            CHECK(ms >= 0 && ms <= BT_RETRY_INFO_MAX_MS);
            free(m);
        }
    uint8_t junk[4096];
    for (uint64_t seed = 1; seed < 200; seed++) {
        harness_random(junk, sizeof junk, seed);
        int64_t ms = tfrec_bt_retry_info_ms(junk, (size_t)(seed * 20) % sizeof junk);
        CHECK(ms >= 0 && ms <= BT_RETRY_INFO_MAX_MS);
    }
}

TESTS(TEST(test_delays), TEST(test_no_delay), TEST(test_hostile))

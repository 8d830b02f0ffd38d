/* The in-place MutateRowsResponse decoder against responses packed by
 * protobuf-c's generated code (an independent encoder): every entry's index,
 * code and message come out in order, with a failed entry's RetryInfo delay;
 * unknown fields and other status details are skipped; truncated or malformed messages yield no results at all. The
 * writer's own behaviour on these results is in test_bigtable_writer.c, and
 * fuzz_bigtable_mutate_response compares the two decoders on any bytes. */
#include <stdlib.h>
#include <string.h>

#include "bigtable/mutate_response.h"
#include "google/bigtable/v2/bigtable.pb-c.h"
#include "harness.h"

typedef struct got {
    int64_t index[64];
    int32_t code[64];
    char msg[64][32];
    int64_t delay[64];
    size_t n;
} got;

static void collect(void *ctx, int64_t index, int32_t code, const char *msg, size_t len,
                    int64_t delay)
{
    got *g = ctx;
    if (g->n == 64)
        return;
    g->index[g->n] = index;
    g->code[g->n] = code;
    g->delay[g->n] = delay;
    memcpy(g->msg[g->n], msg, len < 31 ? len : 31);
    g->msg[g->n][len < 31 ? len : 31] = '\0';
    g->n++;
}

/* entries: index i, status code codes[i] with message msgs[i] (NULL: no
 * status at all); entry 2 also carries a details Any: RetryInfo of 1 s. */
static uint8_t *pack(size_t n, const int32_t *codes, const char *const *msgs, size_t *len)
{
    Google__Bigtable__V2__MutateRowsResponse r = GOOGLE__BIGTABLE__V2__MUTATE_ROWS_RESPONSE__INIT;
    Google__Bigtable__V2__MutateRowsResponse__Entry e[16], *ep[16];
    Google__Rpc__Status s[16];
    Google__Protobuf__Any any = GOOGLE__PROTOBUF__ANY__INIT, *anyp = &any;
    any.type_url = "type.googleapis.com/google.rpc.RetryInfo";
    any.value.data = (uint8_t *)"\x0a\x02\x08\x01";
    any.value.len = 4;
    for (size_t i = 0; i < n; i++) {
        google__bigtable__v2__mutate_rows_response__entry__init(&e[i]);
        e[i].index = (int64_t)(n - 1 - i) * 1000; /* not in order, and wide */
        if (msgs[i]) {
            google__rpc__status__init(&s[i]);
            s[i].code = codes[i];
            s[i].message = (char *)msgs[i];
            if (i == 2) {
                s[i].n_details = 1;
                s[i].details = &anyp;
            }
            e[i].status = &s[i];
        }
        ep[i] = &e[i];
    }
    r.n_entries = n;
    r.entries = ep;
    *len = google__bigtable__v2__mutate_rows_response__get_packed_size(&r);
    uint8_t *buf = malloc(*len + 1);
    google__bigtable__v2__mutate_rows_response__pack(&r, buf);
    return buf;
}

static const int32_t codes[] = { 0, 14, 3, 0, -5 };
static const char *const msgs[] = { "", "unavailable", "bad mutation", NULL, "negative" };

static void test_entries_in_order(void)
{
    size_t len;
    uint8_t *buf = pack(5, codes, msgs, &len);
    got g = { 0 };
    CHECK_EQ(tfrec_bt_mutate_response_each(buf, len, collect, &g), 0);
    CHECK_EQ(g.n, 5);
    for (size_t i = 0; i < 5; i++) {
        CHECK_EQ(g.index[i], (int64_t)(4 - i) * 1000);
        CHECK_EQ(g.code[i], msgs[i] ? codes[i] : 0);
        CHECK(!strcmp(g.msg[i], msgs[i] ? msgs[i] : ""));
        CHECK_EQ(g.delay[i], i == 2 ? 1000 : 0);
    }
    free(buf);
}

static void test_empty_response(void)
{
    got g = { 0 };
    CHECK_EQ(tfrec_bt_mutate_response_each(NULL, 0, collect, &g), 0);
    CHECK_EQ(g.n, 0);
}

/* Unknown fields at every level are skipped, as protobuf-c skips them. */
static void test_unknown_fields(void)
{
    /* field 9 varint, entry {index 7, field 5 fixed32, status {code 4,
     * field 8 fixed64}}, field 3 bytes */
    static const uint8_t msg[] = { 0x48, 0x05, 0x0a, 0x14, 0x08, 0x07, 0x2d, 1,   2, 3,
                                   4,    0x12, 0x0b, 0x08, 0x04, 0x41, 1,    2,   3, 4,
                                   5,    6,    7,    8,    0x1a, 0x02, 0x08, 0x01 };
    got g = { 0 };
    CHECK_EQ(tfrec_bt_mutate_response_each(msg, sizeof msg, collect, &g), 0);
    CHECK_EQ(g.n, 1);
    CHECK_EQ(g.index[0], 7);
    CHECK_EQ(g.code[0], 4);
    Google__Bigtable__V2__MutateRowsResponse *pb =
        google__bigtable__v2__mutate_rows_response__unpack(NULL, sizeof msg, msg);
    CHECK(pb && pb->n_entries == 1 && pb->entries[0]->index == 7 &&
          pb->entries[0]->status->code == 4);
    google__bigtable__v2__mutate_rows_response__free_unpacked(pb, NULL);
}

/* Cut anywhere, a message either still parses as a shorter one (the cut
 * fell between entries: then protobuf-c agrees on the count) or is refused
 * with no result delivered. */
static void test_truncated_everywhere(void)
{
    size_t len;
    uint8_t *buf = pack(5, codes, msgs, &len);
    size_t refused = 0;
    for (size_t cut = 0; cut < len; cut++) {
        got g = { 0 };
        int rc = tfrec_bt_mutate_response_each(buf, cut, collect, &g);
        Google__Bigtable__V2__MutateRowsResponse *pb =
            google__bigtable__v2__mutate_rows_response__unpack(NULL, cut, buf);
        if (rc == 0) {
            CHECKF(pb && pb->n_entries == g.n, "cut at %zu: %zu entries", cut, g.n);
        } else {
            CHECKF(g.n == 0, "cut at %zu: %zu results from a refused message", cut, g.n);
            CHECKF(pb == NULL, "cut at %zu: refused, protobuf-c accepts", cut);
            refused++;
        }
        google__bigtable__v2__mutate_rows_response__free_unpacked(pb, NULL);
    }
    CHECK(refused > len / 2);
    free(buf);
}

static void test_malformed(void)
{
    static const struct {
        const char *what;
        uint8_t b[12];
        size_t n;
    } bad[] = {
        { "index as bytes", { 0x0a, 0x03, 0x0a, 0x01, 0x00 }, 5 },
        { "entries as a varint", { 0x08, 0x01 }, 2 },
        { "status as a varint", { 0x0a, 0x02, 0x10, 0x01 }, 4 },
        { "code as bytes", { 0x0a, 0x05, 0x12, 0x03, 0x0a, 0x01, 0x41 }, 7 },
        { "a group", { 0x0b, 0x0c }, 2 },
        { "field number 0", { 0x02, 0x00 }, 2 },
        { "tag padded to 6 bytes", { 0x8a, 0x80, 0x80, 0x80, 0x80, 0x00, 0x00 }, 7 },
        { "length past the end", { 0x0a, 0x05, 0x08, 0x01 }, 4 },
        { "varint of 11 bytes",
          { 0x0a, 0x0c, 0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
          12 },
        { "details not an Any", { 0x0a, 0x06, 0x12, 0x04, 0x1a, 0x02, 0x08, 0x01 }, 8 },
        { "two statuses in an entry", { 0x0a, 0x06, 0x12, 0x02, 0x08, 0x0c, 0x12, 0x00 }, 8 },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        got g = { 0 };
        CHECKF(tfrec_bt_mutate_response_each(bad[i].b, bad[i].n, collect, &g) == -1 && g.n == 0,
               "%s: accepted", bad[i].what);
    }
}

TESTS(TEST(test_entries_in_order), TEST(test_empty_response), TEST(test_unknown_fields),
      TEST(test_truncated_everywhere), TEST(test_malformed))

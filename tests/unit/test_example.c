/* tf.Example builder and parser. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "tensorflow/core/example/example.pb-c.h"
#include "tfrec/example.h"

/* ------------------------------------------------------------ helpers */

/* A tiny protobuf encoder for hand-made inputs the builder never produces
 * (unpacked scalars, split packed runs, repeated keys, malformed bytes). */
typedef struct pb {
    uint8_t b[4096];
    size_t n;
} pb;

static void pb_varint(pb *p, uint64_t v)
{
    while (v >= 0x80) {
        p->b[p->n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p->b[p->n++] = (uint8_t)v;
}

static void pb_raw(pb *p, const void *d, size_t n)
{
    memcpy(p->b + p->n, d, n);
    p->n += n;
}

/* field `f` as a length-delimited copy of sub */
static void pb_msg(pb *p, unsigned f, const pb *sub)
{
    pb_varint(p, (uint64_t)f << 3 | 2);
    pb_varint(p, sub->n);
    pb_raw(p, sub->b, sub->n);
}

static void pb_str(pb *p, unsigned f, const char *s)
{
    pb_varint(p, (uint64_t)f << 3 | 2);
    pb_varint(p, strlen(s));
    pb_raw(p, s, strlen(s));
}

/* Features map entry: key = 1, value (Feature) = 2 */
static void pb_entry(pb *features, const char *key, const pb *feature)
{
    pb e = { .n = 0 };
    pb_str(&e, 1, key);
    pb_msg(&e, 2, feature);
    pb_msg(features, 1, &e);
}

static int build(tfrec_example_builder *b, uint8_t **out, size_t *len)
{
    return tfrec_example_serialize_alloc(b, out, len);
}

/* ------------------------------------------------------------ exact bytes */

/* Features inserted in the order d, c, b, a:
 *   a: int64 [1, -1]   b: bytes ["x"]   c: float [1.5]   d: int64 []
 *
 * Derived by hand from the protobuf wire rules (tag = field << 3 | wire
 * type; 2 = length-delimited, lengths as varints; int64 as a varint of its
 * two's complement, so -1 takes ten bytes; float as 4 bytes little-endian;
 * repeated numbers packed into one length-delimited field):
 *
 *   Int64List{1,-1}   0a 0b 01 ff ff ff ff ff ff ff ff ff 01     13 bytes
 *   Feature           1a 0d <13>            (int64_list = 3)     15
 *   entry "a"         0a 01 61 12 0f <15>   (key = 1, value = 2) 20
 *   map item          0a 14 <20>            (feature = 1)        22
 *   BytesList{"x"}    0a 01 78                                    3
 *   Feature           0a 03 <3>             (bytes_list = 1)      5
 *   entry "b"         0a 01 62 12 05 <5>                         10
 *   map item          0a 0a <10>                                 12
 *   FloatList{1.5}    0a 04 00 00 c0 3f     (1.5f = 0x3fc00000)   6
 *   Feature           12 06 <6>             (float_list = 2)      8
 *   entry "c"         0a 01 63 12 08 <8>                         13
 *   map item          0a 0d <13>                                 15
 *   Int64List{}       (nothing)                                   0
 *   Feature           1a 00                                       2
 *   entry "d"         0a 01 64 12 02 <2>                          7
 *   map item          0a 07 <7>                                   9
 *   Features          22 + 12 + 15 + 9 = 58 = 0x3a bytes, keys in order
 *   Example           0a 3a <58>            (features = 1)       60
 */
static const uint8_t tiny_expected[60] = {
    0x0a, 0x3a, 0x0a, 0x14, 0x0a, 0x01, 'a',  0x12, 0x0f, 0x1a, 0x0d, 0x0a, 0x0b, 0x01, 0xff,
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x0a, 0x0a, 0x0a, 0x01, 'b',  0x12,
    0x05, 0x0a, 0x03, 0x0a, 0x01, 'x',  0x0a, 0x0d, 0x0a, 0x01, 'c',  0x12, 0x08, 0x12, 0x06,
    0x0a, 0x04, 0x00, 0x00, 0xc0, 0x3f, 0x0a, 0x07, 0x0a, 0x01, 'd',  0x12, 0x02, 0x1a, 0x00,
};

static void test_exact_bytes_hand_derived(void)
{
    tfrec_example_builder *b;
    CHECK_EQ(tfrec_example_builder_new(&b), TFREC_OK);
    CHECK_EQ(tfrec_example_add_empty(b, "d", TFREC_FEATURE_INT64), TFREC_OK);
    CHECK_EQ(tfrec_example_add_float(b, "c", 1.5f), TFREC_OK);
    CHECK_EQ(tfrec_example_add_string(b, "b", "x"), TFREC_OK);
    CHECK_EQ(tfrec_example_add_int64(b, "a", 1), TFREC_OK);
    CHECK_EQ(tfrec_example_add_int64(b, "a", -1), TFREC_OK);
    CHECK_EQ(tfrec_example_serialized_size(b), sizeof tiny_expected);
    uint8_t buf[128];
    size_t n = 0;
    CHECK_EQ(tfrec_example_serialize(b, buf, sizeof buf, &n), TFREC_OK);
    CHECK_EQ(n, sizeof tiny_expected);
    for (size_t i = 0; i < n; i++)
        CHECKF(buf[i] == tiny_expected[i], "byte %zu: got %02x, expected %02x", i, buf[i],
               tiny_expected[i]);
    tfrec_example_builder_free(b);
}

static void test_parse_hand_derived(void)
{
    tfrec_example *ex;
    CHECK_EQ(tfrec_example_parse(&ex, tiny_expected, sizeof tiny_expected), TFREC_OK);
    CHECK_EQ(tfrec_example_feature_count(ex), 4);
    const char *keys[] = { "a", "b", "c", "d" };
    for (size_t i = 0; i < 4; i++)
        CHECK(strcmp(tfrec_example_feature_key(ex, i), keys[i]) == 0);
    CHECK(tfrec_example_feature_key(ex, 4) == NULL);
    int64_t v;
    CHECK_EQ(tfrec_example_get_int64(ex, "a", 1, &v), TFREC_OK);
    CHECK_EQ(v, -1);
    const uint8_t *d;
    size_t len;
    CHECK_EQ(tfrec_example_get_bytes(ex, "b", 0, &d, &len), TFREC_OK);
    CHECK(len == 1 && d[0] == 'x');
    float f;
    CHECK_EQ(tfrec_example_get_float(ex, "c", 0, &f), TFREC_OK);
    CHECK(f == 1.5f);
    CHECK_EQ(tfrec_example_feature_type(ex, "d"), TFREC_FEATURE_INT64);
    CHECK_EQ(tfrec_example_value_count(ex, "d"), 0);
    const int64_t *vals = (const int64_t *)1;
    size_t nv = 99;
    CHECK_EQ(tfrec_example_get_int64_list(ex, "d", &vals, &nv), TFREC_OK);
    CHECK(vals == NULL && nv == 0);
    tfrec_example_free(ex);
}

static void test_empty_example(void)
{
    tfrec_example_builder *b;
    CHECK_EQ(tfrec_example_builder_new(&b), TFREC_OK);
    uint8_t *out;
    size_t len;
    CHECK_EQ(build(b, &out, &len), TFREC_OK);
    /* Example { features: {} } = field 1, length 0 */
    CHECK_EQ(len, 2);
    CHECK(out[0] == 0x0a && out[1] == 0x00);
    tfrec_example *ex;
    CHECK_EQ(tfrec_example_parse(&ex, out, len), TFREC_OK);
    CHECK_EQ(tfrec_example_feature_count(ex), 0);
    tfrec_example_free(ex);
    /* Zero bytes are a valid, empty Example too. */
    CHECK_EQ(tfrec_example_parse(&ex, NULL, 0), TFREC_OK);
    CHECK_EQ(tfrec_example_feature_count(ex), 0);
    CHECK_EQ(tfrec_example_feature_type(ex, "x"), TFREC_FEATURE_NONE);
    tfrec_example_free(ex);
    tfrec_free(out);
    tfrec_example_builder_free(b);
}

/* ------------------------------------------------------------ round trips */

static void test_roundtrip_every_type(void)
{
    tfrec_example_builder *b;
    CHECK_EQ(tfrec_example_builder_new(&b), TFREC_OK);
    const uint8_t bin[] = { 0, 1, 2, 0, 255, 0 };
    CHECK_EQ(tfrec_example_add_bytes(b, "bin", bin, sizeof bin), TFREC_OK);
    CHECK_EQ(tfrec_example_add_bytes(b, "bin", "", 0), TFREC_OK);   /* empty value */
    CHECK_EQ(tfrec_example_add_bytes(b, "bin", NULL, 0), TFREC_OK); /* empty value */
    CHECK_EQ(tfrec_example_add_string(b, "bin", "tail"), TFREC_OK);
    const int64_t ints[] = { 0, 1, -1, INT64_MAX, INT64_MIN, 127, 128, -129, 1LL << 40 };
    CHECK_EQ(tfrec_example_add_int64_list(b, "ints", ints, 4), TFREC_OK);
    CHECK_EQ(tfrec_example_add_int64_list(b, "ints", ints + 4, 5), TFREC_OK); /* appends */
    const float floats[] = { 0.0f, -0.0f, 1e-45f, -3.25f, INFINITY, -INFINITY, 3.4028235e38f };
    CHECK_EQ(tfrec_example_add_float_list(b, "floats", floats, 7), TFREC_OK);
    CHECK_EQ(tfrec_example_add_float(b, "floats", NAN), TFREC_OK);
    CHECK_EQ(tfrec_example_add_empty(b, "e_bytes", TFREC_FEATURE_BYTES), TFREC_OK);
    CHECK_EQ(tfrec_example_add_empty(b, "e_float", TFREC_FEATURE_FLOAT), TFREC_OK);
    CHECK_EQ(tfrec_example_add_empty(b, "e_int", TFREC_FEATURE_INT64), TFREC_OK);
    CHECK_EQ(tfrec_example_add_empty(b, "ints", TFREC_FEATURE_INT64), TFREC_OK); /* no-op */
    CHECK_EQ(tfrec_example_add_int64(b, "", 7), TFREC_OK);                       /* empty key */
    CHECK_EQ(tfrec_example_add_string(b, "utf8/\xc3\xa9t\xc3\xa9", "\xe2\x9c\x93"), TFREC_OK);

    uint8_t *out;
    size_t len;
    CHECK_EQ(build(b, &out, &len), TFREC_OK);
    CHECK_EQ(len, tfrec_example_serialized_size(b));
    tfrec_example *ex;
    CHECK_EQ(tfrec_example_parse(&ex, out, len), TFREC_OK);
    CHECK_EQ(tfrec_example_feature_count(ex), 8);
    CHECK(strcmp(tfrec_example_feature_key(ex, 0), "") == 0);

    CHECK_EQ(tfrec_example_feature_type(ex, "bin"), TFREC_FEATURE_BYTES);
    CHECK_EQ(tfrec_example_value_count(ex, "bin"), 4);
    const uint8_t *d;
    size_t dl;
    CHECK_EQ(tfrec_example_get_bytes(ex, "bin", 0, &d, &dl), TFREC_OK);
    CHECK(dl == sizeof bin && memcmp(d, bin, dl) == 0);
    CHECK_EQ(tfrec_example_get_bytes(ex, "bin", 1, &d, &dl), TFREC_OK);
    CHECK_EQ(dl, 0);
    CHECK_EQ(tfrec_example_get_bytes(ex, "bin", 2, &d, &dl), TFREC_OK);
    CHECK_EQ(dl, 0);
    CHECK_EQ(tfrec_example_get_bytes(ex, "bin", 3, &d, &dl), TFREC_OK);
    CHECK(dl == 4 && memcmp(d, "tail", 4) == 0);
    CHECK_EQ(tfrec_example_get_bytes(ex, "bin", 4, &d, &dl), TFREC_E_INVALID);

    const int64_t *iv;
    size_t n;
    CHECK_EQ(tfrec_example_get_int64_list(ex, "ints", &iv, &n), TFREC_OK);
    CHECK_EQ(n, 9);
    CHECK(memcmp(iv, ints, sizeof ints) == 0);
    int64_t one;
    CHECK_EQ(tfrec_example_get_int64(ex, "", 0, &one), TFREC_OK);
    CHECK_EQ(one, 7);

    const float *fv;
    CHECK_EQ(tfrec_example_get_float_list(ex, "floats", &fv, &n), TFREC_OK);
    CHECK_EQ(n, 8);
    CHECK(memcmp(fv, floats, sizeof floats) == 0); /* bitwise, so -0.0 counts */
    CHECK(isnan(fv[7]));

    CHECK_EQ(tfrec_example_feature_type(ex, "e_bytes"), TFREC_FEATURE_BYTES);
    CHECK_EQ(tfrec_example_feature_type(ex, "e_float"), TFREC_FEATURE_FLOAT);
    CHECK_EQ(tfrec_example_feature_type(ex, "e_int"), TFREC_FEATURE_INT64);
    CHECK_EQ(tfrec_example_value_count(ex, "e_bytes") + tfrec_example_value_count(ex, "e_float") +
                 tfrec_example_value_count(ex, "e_int"),
             0);
    CHECK_EQ(tfrec_example_get_float_list(ex, "e_float", &fv, &n), TFREC_OK);
    CHECK(fv == NULL && n == 0);
    CHECK_EQ(tfrec_example_get_bytes(ex, "utf8/\xc3\xa9t\xc3\xa9", 0, &d, &dl), TFREC_OK);
    CHECK(dl == 3 && memcmp(d, "\xe2\x9c\x93", 3) == 0);
    tfrec_example_free(ex);
    tfrec_free(out);
    tfrec_example_builder_free(b);
}

static void test_big_values(void)
{
    const size_t big = 3u << 20; /* 3 MiB: multi-byte length varints everywhere */
    uint8_t *blob = malloc(big);
    CHECK(blob);
    harness_random(blob, big, 42);
    int64_t *many = malloc(100000 * sizeof *many);
    CHECK(many);
    for (size_t i = 0; i < 100000; i++)
        many[i] = (int64_t)(i * 2654435761u) - 50000;

    tfrec_example_builder *b;
    CHECK_EQ(tfrec_example_builder_new(&b), TFREC_OK);
    CHECK_EQ(tfrec_example_add_bytes_ref(b, "image/encoded", blob, big), TFREC_OK);
    CHECK_EQ(tfrec_example_add_bytes(b, "copy", blob, big / 3), TFREC_OK);
    CHECK_EQ(tfrec_example_add_int64_list(b, "many", many, 100000), TFREC_OK);
    size_t need = tfrec_example_serialized_size(b);
    CHECK(need > big + big / 3 + 100000);

    uint8_t *buf = malloc(need);
    CHECK(buf);
    size_t written = 0;
    CHECK_EQ(tfrec_example_serialize(b, buf, need - 1, &written), TFREC_E_INVALID);
    CHECK_EQ(written, need); /* tells the size needed */
    CHECK(strstr(tfrec_example_builder_errmsg(b), "too small") != NULL);
    CHECK_EQ(tfrec_example_serialize(b, buf, need, &written), TFREC_OK);
    CHECK_EQ(written, need);

    tfrec_example *ex;
    CHECK_EQ(tfrec_example_parse(&ex, buf, written), TFREC_OK);
    const uint8_t *d;
    size_t dl;
    CHECK_EQ(tfrec_example_get_bytes(ex, "image/encoded", 0, &d, &dl), TFREC_OK);
    CHECK(dl == big && memcmp(d, blob, big) == 0);
    CHECK_EQ(tfrec_example_get_bytes(ex, "copy", 0, &d, &dl), TFREC_OK);
    CHECK(dl == big / 3 && memcmp(d, blob, big / 3) == 0);
    const int64_t *iv;
    size_t n;
    CHECK_EQ(tfrec_example_get_int64_list(ex, "many", &iv, &n), TFREC_OK);
    CHECK(n == 100000 && memcmp(iv, many, n * sizeof *iv) == 0);
    tfrec_example_free(ex);
    free(buf);
    tfrec_example_builder_free(b);
    free(many);
    free(blob);
}

/* The protobuf 2 GiB limit is enforced before anything is copied. */
static void test_size_limit(void)
{
    tfrec_example_builder *b;
    CHECK_EQ(tfrec_example_builder_new(&b), TFREC_OK);
    static const uint8_t dummy[1];
    /* A reference is never read before serialization, so no memory is needed. */
    size_t empty_size = tfrec_example_serialized_size(b);
    CHECK_EQ(tfrec_example_add_bytes_ref(b, "huge", dummy, (size_t)3 << 30), TFREC_E_INVALID);
    CHECK(strstr(tfrec_example_builder_errmsg(b), "2 GiB") != NULL);
    CHECK_EQ(tfrec_example_serialized_size(b), empty_size); /* no "huge" feature */
    CHECK_EQ(tfrec_example_add_int64_list(b, "many", (const int64_t *)dummy, (size_t)1 << 62),
             TFREC_E_INVALID);
    CHECK_EQ(tfrec_example_add_bytes_ref(b, "half", dummy, (size_t)1 << 30), TFREC_OK);
    CHECK_EQ(tfrec_example_add_bytes_ref(b, "half", dummy, (size_t)1 << 30), TFREC_E_INVALID);
    tfrec_example_builder_free(b);
}

static void test_bytes_ref_is_zero_copy(void)
{
    tfrec_example_builder *b;
    CHECK_EQ(tfrec_example_builder_new(&b), TFREC_OK);
    char refd[4] = "aaa", copied[4] = "bbb";
    CHECK_EQ(tfrec_example_add_bytes_ref(b, "r", refd, 3), TFREC_OK);
    CHECK_EQ(tfrec_example_add_bytes(b, "c", copied, 3), TFREC_OK);
    refd[0] = 'X';   /* seen: the builder holds a reference */
    copied[0] = 'Y'; /* not seen: the builder took a copy */
    uint8_t *out;
    size_t len;
    CHECK_EQ(build(b, &out, &len), TFREC_OK);
    tfrec_example *ex;
    CHECK_EQ(tfrec_example_parse(&ex, out, len), TFREC_OK);
    const uint8_t *d;
    size_t dl;
    CHECK_EQ(tfrec_example_get_bytes(ex, "r", 0, &d, &dl), TFREC_OK);
    CHECK(dl == 3 && memcmp(d, "Xaa", 3) == 0);
    CHECK_EQ(tfrec_example_get_bytes(ex, "c", 0, &d, &dl), TFREC_OK);
    CHECK(dl == 3 && memcmp(d, "bbb", 3) == 0);
    tfrec_example_free(ex);
    tfrec_free(out);
    tfrec_example_builder_free(b);
}

/* ------------------------------------------------------------ determinism */

static void add_numbered(tfrec_example_builder *b, int k)
{
    char key[32];
    snprintf(key, sizeof key, "key/%03d", k);
    switch (k % 3) {
    case 0: tfrec_example_add_int64(b, key, k * 1000003LL); break;
    case 1: tfrec_example_add_float(b, key, (float)k / 7.0f); break;
    default: tfrec_example_add_string(b, key, key); break;
    }
}

static void test_deterministic_regardless_of_order(void)
{
    enum { N = 200 };
    tfrec_example_builder *ref, *b;
    CHECK_EQ(tfrec_example_builder_new(&ref), TFREC_OK);
    CHECK_EQ(tfrec_example_builder_new(&b), TFREC_OK);
    for (int k = 0; k < N; k++)
        add_numbered(ref, k);
    uint8_t *want;
    size_t want_len;
    CHECK_EQ(build(ref, &want, &want_len), TFREC_OK);

    int order[N];
    uint64_t seed = 7;
    for (int round = 0; round < 20; round++) {
        for (int i = 0; i < N; i++)
            order[i] = i;
        if (round == 1) { /* reverse */
            for (int i = 0; i < N; i++)
                order[i] = N - 1 - i;
        } else if (round > 1) { /* Fisher-Yates with the harness PRNG */
            for (int i = N - 1; i > 0; i--) {
                uint32_t r;
                harness_random(&r, sizeof r, seed++);
                int j = (int)(r % (uint32_t)(i + 1)), t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
        }
        tfrec_example_builder_reset(b); /* reuse: slots change types between rounds */
        for (int i = 0; i < N; i++)
            add_numbered(b, order[i]);
        uint8_t buf[16384];
        size_t len;
        CHECK_EQ(tfrec_example_serialize(b, buf, sizeof buf, &len), TFREC_OK);
        CHECKF(len == want_len && memcmp(buf, want, len) == 0, "round %d differs", round);
    }
    /* Keys come out sorted. */
    tfrec_example *ex;
    CHECK_EQ(tfrec_example_parse(&ex, want, want_len), TFREC_OK);
    CHECK_EQ(tfrec_example_feature_count(ex), N);
    for (size_t i = 1; i < N; i++)
        CHECK(strcmp(tfrec_example_feature_key(ex, i - 1), tfrec_example_feature_key(ex, i)) < 0);
    tfrec_example_free(ex);
    tfrec_free(want);
    tfrec_example_builder_free(ref);
    tfrec_example_builder_free(b);
}

static void test_reset_forgets_everything(void)
{
    tfrec_example_builder *b, *fresh;
    CHECK_EQ(tfrec_example_builder_new(&b), TFREC_OK);
    CHECK_EQ(tfrec_example_builder_new(&fresh), TFREC_OK);
    CHECK_EQ(tfrec_example_add_int64(b, "x", 1), TFREC_OK);
    CHECK_EQ(tfrec_example_add_string(b, "y", "old"), TFREC_OK);
    tfrec_example_builder_reset(b);
    /* "x" now changes type: allowed after a reset. */
    CHECK_EQ(tfrec_example_add_string(b, "x", "new"), TFREC_OK);
    CHECK_EQ(tfrec_example_add_string(fresh, "x", "new"), TFREC_OK);
    uint8_t *o1, *o2;
    size_t l1, l2;
    CHECK_EQ(build(b, &o1, &l1), TFREC_OK);
    CHECK_EQ(build(fresh, &o2, &l2), TFREC_OK);
    CHECK(l1 == l2 && memcmp(o1, o2, l1) == 0);
    tfrec_free(o1);
    tfrec_free(o2);
    tfrec_example_builder_free(b);
    tfrec_example_builder_free(fresh);
}

/* The builder streams through pack_to_buffer; protobuf-c's flat pack of the
 * same message (unpacked from the output) must give the same bytes. */
static void test_same_bytes_as_protobuf_c_pack(void)
{
    tfrec_example_builder *b;
    CHECK_EQ(tfrec_example_builder_new(&b), TFREC_OK);
    static uint8_t blob[200000];
    harness_random(blob, sizeof blob, 11);
    for (int round = 0; round < 30; round++) {
        tfrec_example_builder_reset(b);
        uint8_t r[4];
        harness_random(r, sizeof r, (uint64_t)round + 100);
        /* value sizes around the 1/2/3-byte varint length boundaries */
        static const size_t sizes[] = { 0, 1, 127, 128, 16383, 16384, 70000, 200000 };
        tfrec_example_add_bytes_ref(b, "image/encoded", blob, sizes[r[0] % 8]);
        for (int k = 0; k < r[1] % 40; k++)
            add_numbered(b, k * 7 + round);
        int64_t many[300];
        for (int k = 0; k < 300; k++)
            many[k] = (int64_t)((uint64_t)((int64_t)k - 150) << (k % 60));
        tfrec_example_add_int64_list(b, "many", many, (size_t)(r[2] % 4) * 100);
        uint8_t *mine;
        size_t len;
        CHECK_EQ(build(b, &mine, &len), TFREC_OK);
        Tensorflow__Example *m = tensorflow__example__unpack(NULL, len, mine);
        CHECK(m != NULL);
        size_t n2 = tensorflow__example__get_packed_size(m);
        uint8_t *theirs = malloc(n2 ? n2 : 1);
        CHECK(theirs);
        CHECK_EQ(tensorflow__example__pack(m, theirs), n2);
        CHECKF(n2 == len && memcmp(theirs, mine, len) == 0, "round %d differs", round);
        free(theirs);
        tensorflow__example__free_unpacked(m, NULL);
        tfrec_free(mine);
    }
    tfrec_example_builder_free(b);
}

/* ------------------------------------------------------------ errors */

static void test_type_mismatch(void)
{
    tfrec_example_builder *b;
    CHECK_EQ(tfrec_example_builder_new(&b), TFREC_OK);
    CHECK_EQ(tfrec_example_add_int64(b, "label", 3), TFREC_OK);
    CHECK_EQ(tfrec_example_add_string(b, "label", "three"), TFREC_E_INVALID);
    CHECK(strstr(tfrec_example_builder_errmsg(b), "label") != NULL);
    CHECK_EQ(tfrec_example_add_float(b, "label", 3.0f), TFREC_E_INVALID);
    CHECK_EQ(tfrec_example_add_empty(b, "label", TFREC_FEATURE_BYTES), TFREC_E_INVALID);
    CHECK_EQ(tfrec_example_add_empty(b, "other", 0), TFREC_E_INVALID);
    CHECK_EQ(tfrec_example_add_empty(b, "other", 4), TFREC_E_INVALID);
    CHECK_EQ(tfrec_example_add_int64(b, NULL, 1), TFREC_E_INVALID);
    CHECK_EQ(tfrec_example_add_bytes(b, "k", NULL, 5), TFREC_E_INVALID);
    CHECK_EQ(tfrec_example_add_int64_list(b, "k2", NULL, 2), TFREC_E_INVALID);
    uint8_t *out;
    size_t len;
    CHECK_EQ(build(b, &out, &len), TFREC_OK);
    tfrec_example *ex;
    CHECK_EQ(tfrec_example_parse(&ex, out, len), TFREC_OK);
    /* The refused calls left no trace. */
    CHECK_EQ(tfrec_example_feature_count(ex), 1);
    CHECK_EQ(tfrec_example_value_count(ex, "label"), 1);
    CHECK_EQ(tfrec_example_feature_type(ex, "label"), TFREC_FEATURE_INT64);
    CHECK_EQ(tfrec_example_feature_type(ex, "other"), TFREC_FEATURE_NONE);
    const uint8_t *d;
    size_t dl;
    float f;
    int64_t v;
    const int64_t *iv;
    size_t n;
    CHECK_EQ(tfrec_example_get_bytes(ex, "label", 0, &d, &dl), TFREC_E_INVALID);
    CHECK(strstr(tfrec_last_errmsg(), "label") != NULL);
    CHECK_EQ(tfrec_example_get_float(ex, "label", 0, &f), TFREC_E_INVALID);
    CHECK_EQ(tfrec_example_get_int64(ex, "label", 1, &v), TFREC_E_INVALID); /* out of range */
    CHECK_EQ(tfrec_example_get_int64(ex, "nope", 0, &v), TFREC_E_NOT_FOUND);
    CHECK(strstr(tfrec_last_errmsg(), "nope") != NULL);
    CHECK_EQ(tfrec_example_get_int64_list(ex, "nope", &iv, &n), TFREC_E_NOT_FOUND);
    CHECK_EQ(tfrec_example_value_count(ex, "nope"), 0);
    tfrec_example_free(ex);
    tfrec_free(out);
    tfrec_example_builder_free(b);
}

/* Every index a caller can pass is checked, SIZE_MAX and its neighbours
 * included: an out-of-range index is TFREC_E_INVALID naming the feature,
 * and the outputs are left alone (never value[-1] or past the end). */
static void test_accessor_index_bounds(void)
{
    tfrec_example_builder *b;
    CHECK_EQ(tfrec_example_builder_new(&b), TFREC_OK);
    const int64_t iv[2] = { 7, 8 };
    const float fv[2] = { 1.5f, 2.5f };
    CHECK_EQ(tfrec_example_add_int64_list(b, "i", iv, 2), TFREC_OK);
    CHECK_EQ(tfrec_example_add_float_list(b, "f", fv, 2), TFREC_OK);
    CHECK_EQ(tfrec_example_add_string(b, "b", "x"), TFREC_OK);
    CHECK_EQ(tfrec_example_add_string(b, "b", "yz"), TFREC_OK);
    CHECK_EQ(tfrec_example_add_empty(b, "ei", TFREC_FEATURE_INT64), TFREC_OK);
    CHECK_EQ(tfrec_example_add_empty(b, "ef", TFREC_FEATURE_FLOAT), TFREC_OK);
    CHECK_EQ(tfrec_example_add_empty(b, "eb", TFREC_FEATURE_BYTES), TFREC_OK);
    uint8_t *out;
    size_t len;
    CHECK_EQ(build(b, &out, &len), TFREC_OK);
    tfrec_example *ex;
    CHECK_EQ(tfrec_example_parse(&ex, out, len), TFREC_OK);
    /* in range first, so the failures below are about the index alone */
    int64_t v = 0;
    float f = 0;
    const uint8_t *d = NULL;
    size_t dl = 0;
    CHECK(tfrec_example_get_int64(ex, "i", 1, &v) == TFREC_OK && v == 8);
    CHECK(tfrec_example_get_float(ex, "f", 1, &f) == TFREC_OK && f == 2.5f);
    CHECK(tfrec_example_get_bytes(ex, "b", 1, &d, &dl) == TFREC_OK && dl == 2);
    const size_t bad[] = { 2, 3, SIZE_MAX, SIZE_MAX - 1, SIZE_MAX / 2, (size_t)1 << 40 };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        size_t i = bad[k];
        v = -99;
        f = -99.0f;
        d = (const uint8_t *)"sentinel";
        dl = 12345;
        CHECKF(tfrec_example_get_int64(ex, "i", i, &v) == TFREC_E_INVALID, "int64 index %zu", i);
        CHECK(strstr(tfrec_last_errmsg(), "'i'") && strstr(tfrec_last_errmsg(), "no index"));
        CHECKF(tfrec_example_get_float(ex, "f", i, &f) == TFREC_E_INVALID, "float index %zu", i);
        CHECK(strstr(tfrec_last_errmsg(), "'f'") && strstr(tfrec_last_errmsg(), "no index"));
        CHECKF(tfrec_example_get_bytes(ex, "b", i, &d, &dl) == TFREC_E_INVALID, "bytes index %zu",
               i);
        CHECK(strstr(tfrec_last_errmsg(), "'b'") && strstr(tfrec_last_errmsg(), "no index"));
        CHECK(v == -99 && f == -99.0f && dl == 12345 && strcmp((const char *)d, "sentinel") == 0);
        /* the same with NULL outputs (only the check is wanted) */
        CHECK_EQ(tfrec_example_get_int64(ex, "i", i, NULL), TFREC_E_INVALID);
        CHECK_EQ(tfrec_example_get_float(ex, "f", i, NULL), TFREC_E_INVALID);
        CHECK_EQ(tfrec_example_get_bytes(ex, "b", i, NULL, NULL), TFREC_E_INVALID);
        if (i >= tfrec_example_feature_count(ex))
            CHECK(tfrec_example_feature_key(ex, i) == NULL);
    }
    /* empty lists have no index at all, not even 0 or SIZE_MAX */
    const size_t empty_bad[] = { 0, 1, SIZE_MAX };
    for (size_t k = 0; k < 3; k++) {
        size_t i = empty_bad[k];
        CHECKF(tfrec_example_get_int64(ex, "ei", i, &v) == TFREC_E_INVALID, "index %zu", i);
        CHECKF(tfrec_example_get_float(ex, "ef", i, &f) == TFREC_E_INVALID, "index %zu", i);
        CHECKF(tfrec_example_get_bytes(ex, "eb", i, &d, &dl) == TFREC_E_INVALID, "index %zu", i);
    }
    CHECK(tfrec_example_feature_key(ex, SIZE_MAX) == NULL);
    CHECK(tfrec_example_feature_key(ex, tfrec_example_feature_count(ex)) == NULL);
    /* the list accessors take no index and still work */
    const int64_t *il;
    const float *fl;
    size_t n;
    CHECK(tfrec_example_get_int64_list(ex, "i", &il, &n) == TFREC_OK && n == 2 && il[1] == 8);
    CHECK(tfrec_example_get_float_list(ex, "f", &fl, &n) == TFREC_OK && n == 2 && fl[0] == 1.5f);
    CHECK(tfrec_example_get_int64_list(ex, "ei", &il, &n) == TFREC_OK && n == 0 && il == NULL);
    tfrec_example_free(ex);
    tfrec_free(out);
    tfrec_example_builder_free(b);
}

/* ------------------------------------------------------------ protobuf merge rules */

static void test_unpacked_and_split_runs(void)
{
    /* Int64List: unpacked 5, packed run [1], unpacked 7, packed run [2, 3] */
    pb il = { .n = 0 };
    uint8_t run1[] = { 0x01 }, run2[] = { 0x02, 0x03 };
    pb_varint(&il, 1 << 3 | 0);
    pb_varint(&il, 5);
    pb_varint(&il, 1 << 3 | 2);
    pb_varint(&il, 1);
    pb_raw(&il, run1, 1);
    pb_varint(&il, 1 << 3 | 0);
    pb_varint(&il, 7);
    pb_varint(&il, 1 << 3 | 2);
    pb_varint(&il, 2);
    pb_raw(&il, run2, 2);
    pb fi = { .n = 0 };
    pb_msg(&fi, 3, &il);
    /* FloatList: unpacked 2.5 (wire type 5) then a packed run [-1] */
    pb fl = { .n = 0 };
    float a = 2.5f, m1 = -1.0f;
    pb_varint(&fl, 1 << 3 | 5);
    pb_raw(&fl, &a, 4);
    pb_varint(&fl, 1 << 3 | 2);
    pb_varint(&fl, 4);
    pb_raw(&fl, &m1, 4);
    pb ff = { .n = 0 };
    pb_msg(&ff, 2, &fl);

    pb fs = { .n = 0 };
    pb_entry(&fs, "i", &fi);
    pb_entry(&fs, "f", &ff);
    pb exb = { .n = 0 };
    pb_msg(&exb, 1, &fs);

    tfrec_example *ex;
    CHECK_EQ(tfrec_example_parse(&ex, exb.b, exb.n), TFREC_OK);
    const int64_t *iv;
    size_t n;
    CHECK_EQ(tfrec_example_get_int64_list(ex, "i", &iv, &n), TFREC_OK);
    CHECK_EQ(n, 5);
    const int64_t want[] = { 5, 1, 7, 2, 3 }; /* wire order */
    CHECK(memcmp(iv, want, sizeof want) == 0);
    const float *fv;
    CHECK_EQ(tfrec_example_get_float_list(ex, "f", &fv, &n), TFREC_OK);
    CHECK(n == 2 && fv[0] == 2.5f && fv[1] == -1.0f);
    tfrec_example_free(ex);
}

static void test_unpacked_runs_order(void)
{
    /* Packed first, then unpacked, then packed again. */
    pb il = { .n = 0 };
    pb_varint(&il, 1 << 3 | 2);
    pb_varint(&il, 2);
    pb_varint(&il, 10);
    pb_varint(&il, 11);
    pb_varint(&il, 1 << 3 | 0);
    pb_varint(&il, 12);
    pb_varint(&il, 1 << 3 | 2);
    pb_varint(&il, 1);
    pb_varint(&il, 13);
    pb fi = { .n = 0 };
    pb_msg(&fi, 3, &il);
    pb fs = { .n = 0 };
    pb_entry(&fs, "i", &fi);
    pb exb = { .n = 0 };
    pb_msg(&exb, 1, &fs);
    tfrec_example *ex;
    CHECK_EQ(tfrec_example_parse(&ex, exb.b, exb.n), TFREC_OK);
    const int64_t *iv;
    size_t n;
    CHECK_EQ(tfrec_example_get_int64_list(ex, "i", &iv, &n), TFREC_OK);
    CHECK_EQ(n, 4);
    for (size_t i = 0; i < 4; i++)
        CHECK_EQ(iv[i], 10 + (int64_t)i);
    tfrec_example_free(ex);
}

static void test_repeated_key_last_wins_and_split_features(void)
{
    pb f1 = { .n = 0 }, l1 = { .n = 0 }, f2 = { .n = 0 }, l2 = { .n = 0 }, f3 = { .n = 0 },
       l3 = { .n = 0 };
    pb_str(&l1, 1, "first");
    pb_msg(&f1, 1, &l1);
    pb_varint(&l2, 1 << 3 | 0);
    pb_varint(&l2, 99);
    pb_msg(&f2, 3, &l2);
    pb_str(&l3, 1, "other");
    pb_msg(&f3, 1, &l3);
    pb fsa = { .n = 0 }, fsb = { .n = 0 };
    pb_entry(&fsa, "k", &f1);
    pb_entry(&fsa, "z", &f3);
    pb_entry(&fsb, "k", &f2); /* same key again, now int64 */
    pb exb = { .n = 0 };
    pb_msg(&exb, 1, &fsa);
    pb_msg(&exb, 1, &fsb); /* a second Features message: merged */

    tfrec_example *ex;
    CHECK_EQ(tfrec_example_parse(&ex, exb.b, exb.n), TFREC_OK);
    CHECK_EQ(tfrec_example_feature_count(ex), 2);
    CHECK_EQ(tfrec_example_feature_type(ex, "k"), TFREC_FEATURE_INT64);
    int64_t v;
    CHECK_EQ(tfrec_example_get_int64(ex, "k", 0, &v), TFREC_OK);
    CHECK_EQ(v, 99);
    CHECK_EQ(tfrec_example_feature_type(ex, "z"), TFREC_FEATURE_BYTES);
    tfrec_example_free(ex);
}

static void test_feature_without_kind_and_unknown_fields(void)
{
    pb empty = { .n = 0 }, fs = { .n = 0 }, exb = { .n = 0 };
    pb_entry(&fs, "nokind", &empty);
    pb_msg(&exb, 1, &fs);
    /* unknown field 7 (varint) and 9 (bytes) must be skipped */
    pb_varint(&exb, 7 << 3 | 0);
    pb_varint(&exb, 300);
    pb_str(&exb, 9, "ignored");
    tfrec_example *ex;
    CHECK_EQ(tfrec_example_parse(&ex, exb.b, exb.n), TFREC_OK);
    CHECK_EQ(tfrec_example_feature_count(ex), 1);
    CHECK_EQ(tfrec_example_feature_type(ex, "nokind"), TFREC_FEATURE_NONE);
    CHECK_EQ(tfrec_example_value_count(ex, "nokind"), 0);
    int64_t v;
    CHECK_EQ(tfrec_example_get_int64(ex, "nokind", 0, &v), TFREC_E_INVALID);
    tfrec_example_free(ex);
}

/* ------------------------------------------------------------ malformed input */

static void test_malformed_inputs(void)
{
    static const struct {
        const char *what;
        uint8_t b[16];
        size_t n;
    } cases[] = {
        { "lone tag", { 0x0a }, 1 },
        { "length past end", { 0x0a, 0x05, 0x00 }, 3 },
        { "varint never ends", { 0x08, 0xff, 0xff, 0xff }, 4 },
        { "features as varint", { 0x08, 0x01 }, 2 },
        { "field number 0", { 0x02, 0x00 }, 2 },
        { "wire type 7", { 0x0f }, 1 },
        { "bad map entry", { 0x0a, 0x02, 0x0a, 0x05 }, 4 },
        { "entry key past end", { 0x0a, 0x04, 0x0a, 0x02, 0x0a, 0x09 }, 6 },
        { "int64 list truncated varint",
          { 0x0a, 0x0a, 0x0a, 0x08, 0x12, 0x06, 0x1a, 0x04, 0x0a, 0x02, 0x01, 0xff },
          12 },
        { "float run not multiple of 4",
          { 0x0a, 0x0b, 0x0a, 0x09, 0x12, 0x07, 0x12, 0x05, 0x0a, 0x03, 0, 0, 0 },
          13 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tfrec_example *ex = (tfrec_example *)1;
        int rc = tfrec_example_parse(&ex, cases[i].b, cases[i].n);
        CHECKF(rc == TFREC_E_PARSE, "%s: rc %d", cases[i].what, rc);
        CHECKF(ex == NULL, "%s: handle not NULL", cases[i].what);
        CHECK(strstr(tfrec_last_errmsg(), "malformed") != NULL);
    }
}

/* Walk everything a parsed example offers, to catch bad pointers. */
static size_t touch_all(const tfrec_example *ex)
{
    size_t sum = 0;
    for (size_t i = 0; i < tfrec_example_feature_count(ex); i++) {
        const char *k = tfrec_example_feature_key(ex, i);
        size_t n = tfrec_example_value_count(ex, k);
        for (size_t j = 0; j < n; j++) {
            const uint8_t *d;
            size_t len;
            int64_t v;
            float f;
            switch (tfrec_example_feature_type(ex, k)) {
            case TFREC_FEATURE_BYTES:
                if (tfrec_example_get_bytes(ex, k, j, &d, &len) == 0)
                    for (size_t q = 0; q < len; q++)
                        sum += d[q];
                break;
            case TFREC_FEATURE_INT64:
                if (tfrec_example_get_int64(ex, k, j, &v) == 0)
                    sum += (size_t)v;
                break;
            case TFREC_FEATURE_FLOAT:
                if (tfrec_example_get_float(ex, k, j, &f) == 0)
                    sum += f > 0;
                break;
            }
        }
    }
    return sum;
}

static void test_truncations_and_random_bytes(void)
{
    tfrec_example_builder *b;
    CHECK_EQ(tfrec_example_builder_new(&b), TFREC_OK);
    CHECK_EQ(tfrec_example_add_string(b, "image/format", "JPEG"), TFREC_OK);
    CHECK_EQ(tfrec_example_add_int64(b, "image/height", 375), TFREC_OK);
    CHECK_EQ(tfrec_example_add_int64(b, "image/class/label", -7), TFREC_OK);
    const float fl[] = { 0.25f, 0.5f, 0.75f };
    CHECK_EQ(tfrec_example_add_float_list(b, "bbox", fl, 3), TFREC_OK);
    uint8_t blob[300];
    harness_random(blob, sizeof blob, 3);
    CHECK_EQ(tfrec_example_add_bytes(b, "image/encoded", blob, sizeof blob), TFREC_OK);
    uint8_t *good;
    size_t n;
    CHECK_EQ(build(b, &good, &n), TFREC_OK);

    /* The Example is one length-delimited field, so every proper prefix
     * except the empty one is malformed. Each is parsed from its own exact
     * allocation so a read past the end shows under AddressSanitizer. */
    for (size_t cut = 0; cut < n; cut++) {
        uint8_t *p = malloc(cut ? cut : 1);
        CHECK(p);
        memcpy(p, good, cut);
        tfrec_example *ex;
        int rc = tfrec_example_parse(&ex, p, cut);
        free(p);
        if (cut == 0) {
            CHECK_EQ(rc, TFREC_OK);
            tfrec_example_free(ex);
        } else {
            CHECKF(rc == TFREC_E_PARSE, "prefix of %zu/%zu bytes gave %d", cut, n, rc);
        }
    }

    /* Random bytes and random mutations of the good encoding: never a
     * crash, always OK or PARSE, and whatever parses is fully readable. */
    size_t ok = 0, bad = 0;
    for (uint64_t seed = 1; seed <= 20000; seed++) {
        uint8_t rnd[2];
        harness_random(rnd, sizeof rnd, seed * 31);
        uint8_t *p = malloc(n);
        CHECK(p);
        size_t len;
        if (seed % 2) {
            len = rnd[0] % 64;
            harness_random(p, len, seed);
        } else {
            len = n;
            memcpy(p, good, n);
            for (int k = 0; k <= rnd[1] % 4; k++) {
                uint32_t r;
                harness_random(&r, sizeof r, seed * 7 + (uint64_t)k);
                p[r % n] ^= (uint8_t)(1u << (r >> 29));
            }
        }
        tfrec_example *ex;
        int rc = tfrec_example_parse(&ex, p, len);
        CHECKF(rc == TFREC_OK || rc == TFREC_E_PARSE, "seed %llu: rc %d", (unsigned long long)seed,
               rc);
        if (rc == TFREC_OK) {
            touch_all(ex);
            tfrec_example_free(ex);
            ok++;
        } else {
            CHECK(ex == NULL);
            bad++;
        }
        free(p);
    }
    CHECK(ok > 0 && bad > 0); /* both paths were exercised */
    tfrec_free(good);
    tfrec_example_builder_free(b);
}

TESTS(TEST(test_exact_bytes_hand_derived), TEST(test_parse_hand_derived), TEST(test_empty_example),
      TEST(test_roundtrip_every_type), TEST(test_big_values), TEST(test_size_limit),
      TEST(test_bytes_ref_is_zero_copy), TEST(test_deterministic_regardless_of_order),
      TEST(test_reset_forgets_everything), TEST(test_same_bytes_as_protobuf_c_pack),
      TEST(test_type_mismatch), TEST(test_accessor_index_bounds),
      TEST(test_unpacked_and_split_runs), TEST(test_unpacked_runs_order),
      TEST(test_repeated_key_last_wins_and_split_features),
      TEST(test_feature_without_kind_and_unknown_fields), TEST(test_malformed_inputs),
      TEST(test_truncations_and_random_bytes))

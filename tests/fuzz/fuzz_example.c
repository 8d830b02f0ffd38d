/* The tf.Example parser and every accessor: each feature read through the
 * indexed getters (and refused past its end, SIZE_MAX included) and the
 * list getters; a parsed example rebuilt with the builder must parse back
 * to the same features. Input: a serialized Example. */
#include <string.h>

#include "fuzz.h"
#include "tfrec/tfrec.h"

static void check_feature(const tfrec_example *ex, const char *key, tfrec_example_builder *b)
{
    int type = tfrec_example_feature_type(ex, key);
    size_t n = tfrec_example_value_count(ex, key);
    const size_t past[3] = { n, n + 1, SIZE_MAX };
    int64_t iv;
    float fv;
    const uint8_t *d;
    size_t len;
    for (int k = 0; k < 3; k++) {
        FUZZ_ASSERT(tfrec_example_get_int64(ex, key, past[k], &iv) != TFREC_OK);
        FUZZ_ASSERT(tfrec_example_get_float(ex, key, past[k], &fv) != TFREC_OK);
        FUZZ_ASSERT(tfrec_example_get_bytes(ex, key, past[k], &d, &len) != TFREC_OK);
    }
    if (type == TFREC_FEATURE_NONE) {
        FUZZ_ASSERT(n == 0);
        return;
    }
    if (n == 0) {
        FUZZ_ASSERT(tfrec_example_add_empty(b, key, type) == TFREC_OK);
        return;
    }
    if (type == TFREC_FEATURE_BYTES) {
        for (size_t i = 0; i < n; i++) {
            FUZZ_ASSERT(tfrec_example_get_bytes(ex, key, i, &d, &len) == TFREC_OK);
            fuzz_touch(d, len);
            FUZZ_ASSERT(tfrec_example_add_bytes(b, key, d, len) == TFREC_OK);
        }
        FUZZ_ASSERT(tfrec_example_get_int64(ex, key, 0, &iv) == TFREC_E_INVALID);
    } else if (type == TFREC_FEATURE_INT64) {
        const int64_t *v;
        size_t m;
        FUZZ_ASSERT(tfrec_example_get_int64_list(ex, key, &v, &m) == TFREC_OK && m == n);
        for (size_t i = 0; i < n; i++)
            FUZZ_ASSERT(tfrec_example_get_int64(ex, key, i, &iv) == TFREC_OK && iv == v[i]);
        FUZZ_ASSERT(tfrec_example_add_int64_list(b, key, v, n) == TFREC_OK);
        FUZZ_ASSERT(tfrec_example_get_float_list(ex, key, (const float **)&v, &m) != TFREC_OK);
    } else {
        const float *v;
        size_t m;
        FUZZ_ASSERT(tfrec_example_get_float_list(ex, key, &v, &m) == TFREC_OK && m == n);
        for (size_t i = 0; i < n; i++)
            FUZZ_ASSERT(tfrec_example_get_float(ex, key, i, &fv) == TFREC_OK &&
                        memcmp(&fv, &v[i], sizeof fv) == 0);
        FUZZ_ASSERT(tfrec_example_add_float_list(b, key, v, n) == TFREC_OK);
    }
}

/* Same keys, types and values (floats bit for bit). */
static void check_same(const tfrec_example *a, const tfrec_example *b)
{
    size_t n = tfrec_example_feature_count(a);
    for (size_t i = 0; i < n; i++) {
        const char *key = tfrec_example_feature_key(a, i);
        int type = tfrec_example_feature_type(a, key);
        size_t count = tfrec_example_value_count(a, key);
        if (type == TFREC_FEATURE_NONE)
            continue; /* a feature without a kind is not rebuilt */
        FUZZ_ASSERT(tfrec_example_feature_type(b, key) == type);
        FUZZ_ASSERT(tfrec_example_value_count(b, key) == count);
        for (size_t j = 0; j < count; j++) {
            const uint8_t *d1, *d2;
            size_t l1, l2;
            int64_t i1, i2;
            float f1, f2;
            if (type == TFREC_FEATURE_BYTES) {
                FUZZ_ASSERT(tfrec_example_get_bytes(a, key, j, &d1, &l1) == TFREC_OK);
                FUZZ_ASSERT(tfrec_example_get_bytes(b, key, j, &d2, &l2) == TFREC_OK);
                FUZZ_ASSERT(l1 == l2 && (l1 == 0 || memcmp(d1, d2, l1) == 0));
            } else if (type == TFREC_FEATURE_INT64) {
                FUZZ_ASSERT(tfrec_example_get_int64(a, key, j, &i1) == TFREC_OK);
                FUZZ_ASSERT(tfrec_example_get_int64(b, key, j, &i2) == TFREC_OK && i1 == i2);
            } else {
                FUZZ_ASSERT(tfrec_example_get_float(a, key, j, &f1) == TFREC_OK);
                FUZZ_ASSERT(tfrec_example_get_float(b, key, j, &f2) == TFREC_OK);
                FUZZ_ASSERT(memcmp(&f1, &f2, sizeof f1) == 0);
            }
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tfrec_example *ex;
    if (tfrec_example_parse(&ex, data, size) != TFREC_OK) {
        FUZZ_ASSERT(ex == NULL);
        return 0;
    }
    size_t n = tfrec_example_feature_count(ex);
    FUZZ_ASSERT(tfrec_example_feature_key(ex, n) == NULL);
    FUZZ_ASSERT(tfrec_example_feature_key(ex, SIZE_MAX) == NULL);
    tfrec_example_builder *b;
    FUZZ_ASSERT(tfrec_example_builder_new(&b) == TFREC_OK);
    const char *prev = NULL;
    for (size_t i = 0; i < n; i++) {
        const char *key = tfrec_example_feature_key(ex, i);
        FUZZ_ASSERT(key != NULL);
        FUZZ_ASSERT(!prev || strcmp(prev, key) < 0); /* sorted, one entry per key */
        prev = key;
        check_feature(ex, key, b);
    }
    FUZZ_ASSERT(tfrec_example_get_int64(ex, NULL, 0, NULL) != TFREC_OK);
    uint8_t *out;
    size_t len;
    FUZZ_ASSERT(tfrec_example_serialize_alloc(b, &out, &len) == TFREC_OK);
    tfrec_example *back;
    FUZZ_ASSERT(tfrec_example_parse(&back, out, len) == TFREC_OK);
    check_same(ex, back);
    tfrec_example_free(back);
    tfrec_free(out);
    tfrec_example_builder_free(b);
    tfrec_example_free(ex);
    return 0;
}

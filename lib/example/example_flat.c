/* A parsed tf.Example flattened into a record batch, so a binding reads all
 * of it with one call instead of several per feature. */
#include <string.h>

#include "tfrec/batch.h"
#include "tfrec/example.h"
#include "util/errors.h"

/* An item of a flattened Example: no file offset. */
static int append(tfrec_record_batch *b, const void *data, size_t len)
{
    return tfrec_record_batch_append(b, data, len, 0);
}

/* Feature header item: kind (1 byte) and value count (8 bytes, little-endian). */
static int append_header(tfrec_record_batch *b, int kind, uint64_t count)
{
    uint8_t h[9];
    h[0] = (uint8_t)kind;
    for (int i = 0; i < 8; i++)
        h[1 + i] = (uint8_t)(count >> (8 * i));
    return append(b, h, sizeof h);
}

static int append_feature(tfrec_record_batch *b, const tfrec_example *ex, const char *key)
{
    int kind = tfrec_example_feature_type(ex, key);
    size_t n = tfrec_example_value_count(ex, key);
    int rc = append(b, key, strlen(key));
    if (rc == TFREC_OK)
        rc = append_header(b, kind, n);
    if (rc < 0 || kind == TFREC_FEATURE_NONE)
        return rc;
    if (kind == TFREC_FEATURE_BYTES) {
        for (size_t i = 0; i < n && rc == TFREC_OK; i++) {
            const uint8_t *v;
            size_t len;
            rc = tfrec_example_get_bytes(ex, key, i, &v, &len);
            if (rc == TFREC_OK)
                rc = append(b, v, len);
        }
        return rc;
    }
    const void *values;
    size_t count;
    if (kind == TFREC_FEATURE_INT64)
        rc = tfrec_example_get_int64_list(ex, key, (const int64_t **)&values, &count);
    else
        rc = tfrec_example_get_float_list(ex, key, (const float **)&values, &count);
    if (rc == TFREC_OK)
        rc = append(b, values, count * (kind == TFREC_FEATURE_INT64 ? 8 : 4));
    return rc;
}

int tfrec_example_to_batch(const tfrec_example *ex, tfrec_record_batch *b)
{
    if (!ex || !b)
        return tfrec_fail(NULL, TFREC_E_INVALID, "example_to_batch: NULL argument");
    tfrec_record_batch_clear(b);
    size_t nfeatures = tfrec_example_feature_count(ex);
    for (size_t i = 0; i < nfeatures; i++) {
        int rc = append_feature(b, ex, tfrec_example_feature_key(ex, i));
        if (rc < 0) {
            tfrec_record_batch_clear(b);
            return tfrec_fail(NULL, rc, "example_to_batch: %s", tfrec_strerror(rc));
        }
    }
    return TFREC_OK;
}

/* Record header item: the record's feature count (8 bytes, little-endian). */
static int append_count(tfrec_record_batch *b, uint64_t count)
{
    uint8_t h[8];
    for (int i = 0; i < 8; i++)
        h[i] = (uint8_t)(count >> (8 * i));
    return append(b, h, sizeof h);
}

int tfrec_examples_to_batch(const void *const *records, const size_t *lens, size_t n,
                            tfrec_record_batch *b)
{
    if (!b || (n && (!records || !lens)))
        return tfrec_fail(NULL, TFREC_E_INVALID, "examples_to_batch: NULL argument");
    tfrec_record_batch_clear(b);
    int rc = TFREC_OK;
    for (size_t r = 0; r < n && rc == TFREC_OK; r++) {
        tfrec_example *ex = NULL;
        rc = tfrec_example_parse(&ex, records[r], lens[r]);
        if (rc < 0) {
            tfrec_record_batch_clear(b);
            return tfrec_fail(NULL, rc, "record %zu of %zu: %s", r, n, tfrec_last_errmsg());
        }
        size_t nfeatures = tfrec_example_feature_count(ex);
        rc = append_count(b, nfeatures);
        for (size_t i = 0; i < nfeatures && rc == TFREC_OK; i++)
            rc = append_feature(b, ex, tfrec_example_feature_key(ex, i));
        tfrec_example_free(ex);
    }
    if (rc < 0) {
        tfrec_record_batch_clear(b);
        return tfrec_fail(NULL, rc, "examples_to_batch: %s", tfrec_strerror(rc));
    }
    return TFREC_OK;
}

/* tf.Example parser: protobuf-c unpack plus a key index.
 *
 * protobuf-c applies the protobuf merge rules while unpacking (unpacked and
 * packed repeated scalars, several packed runs, a Features message split in
 * two), so this file only has to index the map. A map may legally repeat a
 * key; as in every protobuf implementation the last occurrence wins.
 *
 * All memory of a parsed example comes from one arena given to protobuf-c as
 * its allocator; freeing the example releases the arena in one go.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tensorflow/core/example/example.pb-c.h"
#include "tfrec/example.h"
#include "example/arena.h"
#include "util/errors.h"

typedef struct key_index {
    const char *key;
    const Tensorflow__Feature *feature; /* NULL when the entry has no value */
    size_t order;                       /* position in the message, for last-wins */
} key_index;

struct tfrec_example {
    ex_arena arena;
    int out_of_memory;
    Tensorflow__Example *msg;
    key_index *index;
    size_t n;
};

static void *arena_alloc(void *data, size_t size)
{
    tfrec_example *ex = data;
    void *p = tfrec_ex_arena_alloc(&ex->arena, size);
    if (!p)
        ex->out_of_memory = 1;
    return p;
}

static void arena_free(void *data, void *p)
{
    (void)data;
    (void)p; /* released with the whole arena */
}

static int by_key_then_order(const void *a, const void *b)
{
    const key_index *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    if (c)
        return c;
    return x->order < y->order ? -1 : x->order > y->order;
}

static int build_index(tfrec_example *ex)
{
    const Tensorflow__Features *fs = ex->msg->features;
    size_t n = fs ? fs->n_feature : 0;
    if (!n)
        return TFREC_OK;
    ex->index = tfrec_ex_arena_alloc(&ex->arena, n * sizeof *ex->index);
    if (!ex->index)
        return TFREC_E_NOMEM;
    for (size_t i = 0; i < n; i++) {
        ex->index[i].key = fs->feature[i]->key;
        ex->index[i].feature = fs->feature[i]->value;
        ex->index[i].order = i;
    }
    qsort(ex->index, n, sizeof *ex->index, by_key_then_order);
    /* Keep the last of each run of equal keys. */
    size_t out = 0;
    for (size_t i = 0; i < n; i++) {
        if (i + 1 < n && strcmp(ex->index[i].key, ex->index[i + 1].key) == 0)
            continue;
        ex->index[out++] = ex->index[i];
    }
    ex->n = out;
    return TFREC_OK;
}

int tfrec_example_parse(tfrec_example **out, const void *data, size_t len)
{
    if (!out)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_example_parse: out is NULL");
    *out = NULL;
    if (!data && len)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_example_parse: NULL data with length %zu",
                          len);
    tfrec_example *ex = calloc(1, sizeof *ex);
    if (!ex)
        return tfrec_fail(NULL, TFREC_E_NOMEM, "out of memory parsing an example");
    /* Small examples fit one 4 KiB chunk; big values get their own. */
    ex->arena.chunk_min = 4096;
    ProtobufCAllocator alloc = { arena_alloc, arena_free, ex };
    static const uint8_t empty[1];
    ex->msg = tensorflow__example__unpack(&alloc, len, len ? data : empty);
    int rc = TFREC_OK;
    if (!ex->msg) {
        if (ex->out_of_memory)
            rc = tfrec_fail(NULL, TFREC_E_NOMEM, "out of memory parsing a %zu-byte example", len);
        else
            rc = tfrec_fail(NULL, TFREC_E_PARSE,
                            "malformed tf.Example: %zu bytes are not a valid protobuf encoding "
                            "of tensorflow.Example (truncated, or not an Example)",
                            len);
    } else if (build_index(ex)) {
        rc = tfrec_fail(NULL, TFREC_E_NOMEM, "out of memory indexing a %zu-byte example", len);
    }
    if (rc) {
        tfrec_example_free(ex);
        return rc;
    }
    *out = ex;
    return TFREC_OK;
}

void tfrec_example_free(tfrec_example *ex)
{
    if (!ex)
        return;
    tfrec_ex_arena_release(&ex->arena);
    free(ex);
}

size_t tfrec_example_feature_count(const tfrec_example *ex)
{
    return ex ? ex->n : 0;
}

const char *tfrec_example_feature_key(const tfrec_example *ex, size_t i)
{
    return ex && i < ex->n ? ex->index[i].key : NULL;
}

/* The index entry for key, or NULL. */
static const key_index *lookup(const tfrec_example *ex, const char *key)
{
    if (!ex || !key)
        return NULL;
    size_t lo = 0, hi = ex->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(ex->index[mid].key, key);
        if (c == 0)
            return &ex->index[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static int kind_type(const Tensorflow__Feature *f)
{
    if (!f)
        return TFREC_FEATURE_NONE;
    switch (f->kind_case) {
    case TENSORFLOW__FEATURE__KIND_BYTES_LIST: return TFREC_FEATURE_BYTES;
    case TENSORFLOW__FEATURE__KIND_FLOAT_LIST: return TFREC_FEATURE_FLOAT;
    case TENSORFLOW__FEATURE__KIND_INT64_LIST: return TFREC_FEATURE_INT64;
    default: return TFREC_FEATURE_NONE;
    }
}

static size_t kind_count(const Tensorflow__Feature *f)
{
    switch (kind_type(f)) {
    case TFREC_FEATURE_BYTES: return f->bytes_list->n_value;
    case TFREC_FEATURE_FLOAT: return f->float_list->n_value;
    case TFREC_FEATURE_INT64: return f->int64_list->n_value;
    }
    return 0;
}

int tfrec_example_feature_type(const tfrec_example *ex, const char *key)
{
    const key_index *k = lookup(ex, key);
    return k ? kind_type(k->feature) : TFREC_FEATURE_NONE;
}

size_t tfrec_example_value_count(const tfrec_example *ex, const char *key)
{
    const key_index *k = lookup(ex, key);
    return k ? kind_count(k->feature) : 0;
}

static const char *type_name(int type)
{
    switch (type) {
    case TFREC_FEATURE_BYTES: return "bytes";
    case TFREC_FEATURE_FLOAT: return "float";
    case TFREC_FEATURE_INT64: return "int64";
    }
    return "empty";
}

/* The feature named key if it has the wanted type; otherwise the error
 * code, with a message. */
static int typed(const tfrec_example *ex, const char *key, int want, const Tensorflow__Feature **f)
{
    if (!ex || !key)
        return tfrec_fail(NULL, TFREC_E_INVALID, "example or key is NULL");
    const key_index *k = lookup(ex, key);
    if (!k)
        return tfrec_fail(NULL, TFREC_E_NOT_FOUND, "example has no feature '%s'", key);
    int t = kind_type(k->feature);
    if (t != want)
        return tfrec_fail(NULL, TFREC_E_INVALID, "feature '%s' is %s, not %s", key, type_name(t),
                          type_name(want));
    *f = k->feature;
    return TFREC_OK;
}

/* typed(), and value i must exist: every index a caller passes is checked,
 * SIZE_MAX included (no value is reserved as "no index"). */
static int indexed(const tfrec_example *ex, const char *key, int want, size_t i,
                   const Tensorflow__Feature **f)
{
    int rc = typed(ex, key, want, f);
    if (rc)
        return rc;
    size_t n = kind_count(*f);
    if (i >= n)
        return tfrec_fail(NULL, TFREC_E_INVALID, "feature '%s' has %zu values, no index %zu", key,
                          n, i);
    return TFREC_OK;
}

int tfrec_example_get_bytes(const tfrec_example *ex, const char *key, size_t i,
                            const uint8_t **data, size_t *len)
{
    const Tensorflow__Feature *f;
    int rc = indexed(ex, key, TFREC_FEATURE_BYTES, i, &f);
    if (rc)
        return rc;
    if (data)
        *data = f->bytes_list->value[i].data;
    if (len)
        *len = f->bytes_list->value[i].len;
    return TFREC_OK;
}

int tfrec_example_get_int64(const tfrec_example *ex, const char *key, size_t i, int64_t *value)
{
    const Tensorflow__Feature *f;
    int rc = indexed(ex, key, TFREC_FEATURE_INT64, i, &f);
    if (rc == TFREC_OK && value)
        *value = f->int64_list->value[i];
    return rc;
}

int tfrec_example_get_float(const tfrec_example *ex, const char *key, size_t i, float *value)
{
    const Tensorflow__Feature *f;
    int rc = indexed(ex, key, TFREC_FEATURE_FLOAT, i, &f);
    if (rc == TFREC_OK && value)
        *value = f->float_list->value[i];
    return rc;
}

int tfrec_example_get_int64_list(const tfrec_example *ex, const char *key, const int64_t **values,
                                 size_t *n)
{
    const Tensorflow__Feature *f;
    if (!values || !n)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_example_get_int64_list: NULL output");
    int rc = typed(ex, key, TFREC_FEATURE_INT64, &f);
    if (rc)
        return rc;
    *n = f->int64_list->n_value;
    *values = *n ? f->int64_list->value : NULL;
    return TFREC_OK;
}

int tfrec_example_get_float_list(const tfrec_example *ex, const char *key, const float **values,
                                 size_t *n)
{
    const Tensorflow__Feature *f;
    if (!values || !n)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_example_get_float_list: NULL output");
    int rc = typed(ex, key, TFREC_FEATURE_FLOAT, &f);
    if (rc)
        return rc;
    *n = f->float_list->n_value;
    *values = *n ? f->float_list->value : NULL;
    return TFREC_OK;
}

/* tf.Example builder.
 *
 * The builder keeps the protobuf-c message tree itself, ready to pack at any
 * time: every feature slot embeds its map entry, Feature and value list, and
 * the Features map is an array of entry pointers kept sorted by key. Sorted
 * entries make the output deterministic (protobuf-c packs repeated fields in
 * array order) and give the key lookup a binary search. Serializing is then
 * a single protobuf-c pack straight into the destination, so a referenced
 * value (add_bytes_ref) is copied exactly once, into the output.
 *
 * reset() keeps slots, value arrays and the value arena, so building one
 * example per image reaches a steady state without allocations.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tensorflow/core/example/example.pb-c.h"
#include "tfrec/example.h"
#include "example/arena.h"
#include "util/errors.h"
#include "util/vec.h"

/* protobuf-c encodes lengths as 32-bit varints and protobuf itself caps
 * messages at 2 GiB, so refuse to build anything that could exceed that. */
#define EX_MAX_ENCODED ((uint64_t)INT32_MAX)

typedef struct bfeature {
    char *key;
    size_t key_cap;
    int type;
    Tensorflow__Features__FeatureEntry entry;
    Tensorflow__Feature feature;
    /* One list per type so a reused slot keeps each array's capacity. */
    Tensorflow__BytesList bytes;
    Tensorflow__FloatList floats;
    Tensorflow__Int64List ints;
    size_t bytes_cap, floats_cap, ints_cap;
} bfeature;

struct tfrec_example_builder {
    tfrec_err err;
    bfeature **slots; /* slots[0..n_used) are live, the rest recycled */
    size_t n_slots, slots_cap;
    size_t n_used;
    Tensorflow__Features__FeatureEntry **sorted; /* live entries by key */
    size_t sorted_cap;
    Tensorflow__Features features;
    Tensorflow__Example example;
    ex_arena arena;
    uint64_t encoded_bound; /* upper bound of the serialized size */
};

static const char *type_name(int type)
{
    switch (type) {
    case TFREC_FEATURE_BYTES: return "bytes";
    case TFREC_FEATURE_FLOAT: return "float";
    case TFREC_FEATURE_INT64: return "int64";
    }
    return "none";
}

static bfeature *slot_of(Tensorflow__Features__FeatureEntry *e)
{
    return (bfeature *)((char *)e - offsetof(bfeature, entry));
}

int tfrec_example_builder_new(tfrec_example_builder **out)
{
    if (!out)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_example_builder_new: out is NULL");
    *out = NULL;
    tfrec_example_builder *b = calloc(1, sizeof *b);
    if (!b)
        return tfrec_fail(NULL, TFREC_E_NOMEM, "out of memory allocating an example builder");
    tensorflow__features__init(&b->features);
    tensorflow__example__init(&b->example);
    /* Always present, so an example without features still encodes its
     * (empty) Features message, as tf.train.Example(features=...) does. */
    b->example.features = &b->features;
    *out = b;
    return TFREC_OK;
}

void tfrec_example_builder_reset(tfrec_example_builder *b)
{
    if (!b)
        return;
    for (size_t i = 0; i < b->n_used; i++) {
        bfeature *f = b->slots[i];
        f->bytes.n_value = f->floats.n_value = f->ints.n_value = 0;
    }
    b->n_used = 0;
    b->features.n_feature = 0;
    b->encoded_bound = 0;
    b->err.code = 0;
    b->err.msg[0] = '\0';
    tfrec_ex_arena_rewind(&b->arena);
}

void tfrec_example_builder_free(tfrec_example_builder *b)
{
    if (!b)
        return;
    for (size_t i = 0; i < b->n_slots; i++) {
        bfeature *f = b->slots[i];
        free(f->key);
        free(f->bytes.value);
        free(f->floats.value);
        free(f->ints.value);
        free(f);
    }
    free(b->slots);
    free(b->sorted);
    tfrec_ex_arena_release(&b->arena);
    free(b);
}

/* Binary search over the sorted entries: index of key, or where it goes. */
static size_t lower_bound(const tfrec_example_builder *b, const char *key, int *found)
{
    size_t lo = 0, hi = b->n_used;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(b->sorted[mid]->key, key);
        if (c == 0) {
            *found = 1;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = 0;
    return lo;
}

static bfeature *new_slot(tfrec_example_builder *b)
{
    if (b->n_used < b->n_slots)
        return b->slots[b->n_used];
    if (tfrec_vec_reserve(&b->slots, &b->slots_cap, b->n_slots + 1, 4))
        return NULL;
    bfeature *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    tensorflow__features__feature_entry__init(&f->entry);
    tensorflow__feature__init(&f->feature);
    tensorflow__bytes_list__init(&f->bytes);
    tensorflow__float_list__init(&f->floats);
    tensorflow__int64_list__init(&f->ints);
    f->entry.value = &f->feature;
    b->slots[b->n_slots++] = f;
    return f;
}

/* Check a value's contribution against the protobuf size limit. */
static int charge(tfrec_example_builder *b, const char *key, uint64_t bytes)
{
    if (bytes > EX_MAX_ENCODED || b->encoded_bound + bytes > EX_MAX_ENCODED)
        return tfrec_fail(&b->err, TFREC_E_INVALID,
                          "feature '%s': example would exceed the 2 GiB protobuf limit", key);
    b->encoded_bound += bytes;
    return TFREC_OK;
}

/* The feature named key, created with `type` on first use, after checking
 * that `cost` more encoded bytes stay within the protobuf limit (so a
 * refused call leaves no trace). */
static int find_feature(tfrec_example_builder *b, const char *key, int type, uint64_t cost,
                        bfeature **out)
{
    if (!b)
        return tfrec_fail(NULL, TFREC_E_INVALID, "example builder is NULL");
    if (!key)
        return tfrec_fail(&b->err, TFREC_E_INVALID, "feature key is NULL");
    int found;
    size_t pos = lower_bound(b, key, &found);
    if (found) {
        bfeature *f = slot_of(b->sorted[pos]);
        if (f->type != type)
            return tfrec_fail(&b->err, TFREC_E_INVALID,
                              "feature '%s' holds %s values, cannot add %s", key,
                              type_name(f->type), type_name(type));
        *out = f;
        return charge(b, key, cost);
    }

    size_t klen = strlen(key);
    /* Map entry tag + length, key field, value field tag + length, the
     * Feature's list field tag + length: 32 bytes covers the varints. */
    int rc = charge(b, key, (uint64_t)klen + 32 + cost);
    if (rc)
        return rc;
    bfeature *f = new_slot(b);
    if (!f || tfrec_vec_reserve(&f->key, &f->key_cap, klen + 1, 4) ||
        tfrec_vec_reserve(&b->sorted, &b->sorted_cap, b->n_used + 1, 4))
        return tfrec_fail(&b->err, TFREC_E_NOMEM, "out of memory adding feature '%s'", key);
    memcpy(f->key, key, klen + 1);
    f->entry.key = f->key;
    f->type = type;
    switch (type) {
    case TFREC_FEATURE_BYTES:
        f->feature.kind_case = TENSORFLOW__FEATURE__KIND_BYTES_LIST;
        f->feature.bytes_list = &f->bytes;
        break;
    case TFREC_FEATURE_FLOAT:
        f->feature.kind_case = TENSORFLOW__FEATURE__KIND_FLOAT_LIST;
        f->feature.float_list = &f->floats;
        break;
    default:
        f->feature.kind_case = TENSORFLOW__FEATURE__KIND_INT64_LIST;
        f->feature.int64_list = &f->ints;
        break;
    }
    memmove(b->sorted + pos + 1, b->sorted + pos, (b->n_used - pos) * sizeof *b->sorted);
    b->sorted[pos] = &f->entry;
    b->n_used++;
    b->features.feature = b->sorted;
    b->features.n_feature = b->n_used;
    *out = f;
    return TFREC_OK;
}

static int add_bytes(tfrec_example_builder *b, const char *key, const void *data, size_t len,
                     int copy)
{
    if (b && !data && len)
        return tfrec_fail(&b->err, TFREC_E_INVALID, "feature '%s': NULL data with length %zu",
                          key ? key : "(null)", len);
    bfeature *f;
    /* tag + up to 5 bytes of length varint */
    int rc = find_feature(b, key, TFREC_FEATURE_BYTES, (uint64_t)len + 6, &f);
    if (rc)
        return rc;
    if (tfrec_vec_reserve(&f->bytes.value, &f->bytes_cap, f->bytes.n_value + 1, 4))
        return tfrec_fail(&b->err, TFREC_E_NOMEM, "out of memory adding to feature '%s'", key);
    const void *stored = data;
    if (copy && len) {
        stored = tfrec_ex_arena_copy(&b->arena, data, len);
        if (!stored)
            return tfrec_fail(&b->err, TFREC_E_NOMEM,
                              "out of memory copying %zu bytes for feature '%s'", len, key);
    }
    ProtobufCBinaryData *v = &f->bytes.value[f->bytes.n_value++];
    v->data = (uint8_t *)stored;
    v->len = len;
    return TFREC_OK;
}

int tfrec_example_add_bytes(tfrec_example_builder *b, const char *key, const void *data, size_t len)
{
    return add_bytes(b, key, data, len, 1);
}

int tfrec_example_add_bytes_ref(tfrec_example_builder *b, const char *key, const void *data,
                                size_t len)
{
    return add_bytes(b, key, data, len, 0);
}

int tfrec_example_add_string(tfrec_example_builder *b, const char *key, const char *s)
{
    if (!s)
        return tfrec_fail(b ? &b->err : NULL, TFREC_E_INVALID, "feature '%s': NULL string",
                          key ? key : "(null)");
    return add_bytes(b, key, s, strlen(s), 1);
}

int tfrec_example_add_int64_list(tfrec_example_builder *b, const char *key, const int64_t *values,
                                 size_t n)
{
    if (b && !values && n)
        return tfrec_fail(&b->err, TFREC_E_INVALID, "feature '%s': NULL values",
                          key ? key : "(null)");
    bfeature *f;
    /* at most 10 varint bytes per value; n is bounded before multiplying */
    uint64_t cost = n > EX_MAX_ENCODED ? EX_MAX_ENCODED + 1 : (uint64_t)n * 10;
    int rc = find_feature(b, key, TFREC_FEATURE_INT64, cost, &f);
    if (rc)
        return rc;
    if (tfrec_vec_reserve(&f->ints.value, &f->ints_cap, f->ints.n_value + n, 4))
        return tfrec_fail(&b->err, TFREC_E_NOMEM, "out of memory adding to feature '%s'", key);
    if (n)
        memcpy(f->ints.value + f->ints.n_value, values, n * sizeof *values);
    f->ints.n_value += n;
    return TFREC_OK;
}

int tfrec_example_add_float_list(tfrec_example_builder *b, const char *key, const float *values,
                                 size_t n)
{
    if (b && !values && n)
        return tfrec_fail(&b->err, TFREC_E_INVALID, "feature '%s': NULL values",
                          key ? key : "(null)");
    bfeature *f;
    uint64_t cost = n > EX_MAX_ENCODED ? EX_MAX_ENCODED + 1 : (uint64_t)n * 4;
    int rc = find_feature(b, key, TFREC_FEATURE_FLOAT, cost, &f);
    if (rc)
        return rc;
    if (tfrec_vec_reserve(&f->floats.value, &f->floats_cap, f->floats.n_value + n, 4))
        return tfrec_fail(&b->err, TFREC_E_NOMEM, "out of memory adding to feature '%s'", key);
    if (n)
        memcpy(f->floats.value + f->floats.n_value, values, n * sizeof *values);
    f->floats.n_value += n;
    return TFREC_OK;
}

int tfrec_example_add_int64(tfrec_example_builder *b, const char *key, int64_t value)
{
    return tfrec_example_add_int64_list(b, key, &value, 1);
}

int tfrec_example_add_float(tfrec_example_builder *b, const char *key, float value)
{
    return tfrec_example_add_float_list(b, key, &value, 1);
}

int tfrec_example_add_empty(tfrec_example_builder *b, const char *key, int type)
{
    if (type != TFREC_FEATURE_BYTES && type != TFREC_FEATURE_FLOAT && type != TFREC_FEATURE_INT64)
        return tfrec_fail(b ? &b->err : NULL, TFREC_E_INVALID,
                          "feature '%s': unknown feature type %d", key ? key : "(null)", type);
    bfeature *f;
    return find_feature(b, key, type, 0, &f);
}

size_t tfrec_example_serialized_size(const tfrec_example_builder *b)
{
    return b ? tensorflow__example__get_packed_size(&b->example) : 0;
}

/* protobuf-c's flat pack() encodes a sub-message after a one-byte length
 * guess and memmoves it when the length needs more bytes, so a large image
 * nested five messages deep would be moved four times. pack_to_buffer()
 * writes each length first (from get_packed_size) and appends the payload
 * after it; this sink appends straight into the caller's memory, so every
 * byte is copied exactly once. */
typedef struct direct_sink {
    ProtobufCBuffer base;
    uint8_t *p;
} direct_sink;

static void direct_append(ProtobufCBuffer *buf, size_t len, const uint8_t *data)
{
    direct_sink *s = (direct_sink *)buf;
    if (len) /* an empty bytes value may have data == NULL */
        memcpy(s->p, data, len);
    s->p += len;
}

static size_t pack_into(const tfrec_example_builder *b, uint8_t *out)
{
    direct_sink s = { { direct_append }, out };
    tensorflow__example__pack_to_buffer(&b->example, &s.base);
    return (size_t)(s.p - out);
}

int tfrec_example_serialize(const tfrec_example_builder *b, void *buf, size_t cap, size_t *written)
{
    if (!b || !written || (!buf && cap))
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_example_serialize: NULL argument");
    size_t need = tensorflow__example__get_packed_size(&b->example);
    *written = need;
    if (cap < need)
        return tfrec_fail((tfrec_err *)&b->err, TFREC_E_INVALID,
                          "buffer of %zu bytes too small for a %zu-byte example", cap, need);
    *written = pack_into(b, buf);
    return TFREC_OK;
}

int tfrec_example_serialize_alloc(const tfrec_example_builder *b, uint8_t **out, size_t *len)
{
    if (!b || !out || !len)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_example_serialize_alloc: NULL argument");
    *out = NULL;
    *len = 0;
    size_t need = tensorflow__example__get_packed_size(&b->example);
    uint8_t *p = malloc(need ? need : 1);
    if (!p)
        return tfrec_fail((tfrec_err *)&b->err, TFREC_E_NOMEM,
                          "out of memory allocating %zu bytes for an example", need);
    *len = pack_into(b, p);
    *out = p;
    return TFREC_OK;
}

const char *tfrec_example_builder_errmsg(const tfrec_example_builder *b)
{
    return b ? b->err.msg : tfrec_last_errmsg();
}

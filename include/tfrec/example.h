/* libtfrec: tf.train.Example build and parse (tensorflow/core/example/example.proto, feature.proto).
 *
 * Builder and parsed examples are plain handles; not thread-safe, use one
 * per thread.
 */
#ifndef TFREC_EXAMPLE_H
#define TFREC_EXAMPLE_H

#include "common.h"

#include <stddef.h>
#include <stdint.h>

#include "error.h"

TFREC_BEGIN_DECLS

enum tfrec_feature_type {
    TFREC_FEATURE_NONE = 0, /* key absent, or a Feature with no kind set */
    TFREC_FEATURE_BYTES = 1,
    TFREC_FEATURE_FLOAT = 2,
    TFREC_FEATURE_INT64 = 3
};

/* ---------------------------------------------------------------- builder */

typedef struct tfrec_example_builder tfrec_example_builder;

int tfrec_example_builder_new(tfrec_example_builder **out);
/* Forget all features but keep the memory, for building the next example. */
void tfrec_example_builder_reset(tfrec_example_builder *b);
void tfrec_example_builder_free(tfrec_example_builder *b);

/* Append values to feature `key`, creating it on first use. Mixing types
 * under one key is TFREC_E_INVALID. Values are copied, except with
 * tfrec_example_add_bytes_ref whose data must stay valid until the example
 * is serialized or the builder reset. */
int tfrec_example_add_bytes(tfrec_example_builder *b, const char *key, const void *data,
                            size_t len);
int tfrec_example_add_bytes_ref(tfrec_example_builder *b, const char *key, const void *data,
                                size_t len);
int tfrec_example_add_string(tfrec_example_builder *b, const char *key, const char *s);
int tfrec_example_add_int64(tfrec_example_builder *b, const char *key, int64_t value);
int tfrec_example_add_float(tfrec_example_builder *b, const char *key, float value);
int tfrec_example_add_int64_list(tfrec_example_builder *b, const char *key, const int64_t *values,
                                 size_t n);
int tfrec_example_add_float_list(tfrec_example_builder *b, const char *key, const float *values,
                                 size_t n);
/* An empty list of the given type (a feature with zero values). */
int tfrec_example_add_empty(tfrec_example_builder *b, const char *key, int type);

/* Serialized size of the example as built so far. Serialization is
 * deterministic: features sorted by key, packed numeric lists. */
size_t tfrec_example_serialized_size(const tfrec_example_builder *b);

/* Serialize into buf (cap bytes); *written gets the size. TFREC_E_INVALID if
 * cap is too small (then *written gets the size needed). */
int tfrec_example_serialize(const tfrec_example_builder *b, void *buf, size_t cap, size_t *written);

/* Serialize into one new allocation released with tfrec_free(). */
int tfrec_example_serialize_alloc(const tfrec_example_builder *b, uint8_t **out, size_t *len);

const char *tfrec_example_builder_errmsg(const tfrec_example_builder *b);

/* ---------------------------------------------------------------- parser */

typedef struct tfrec_example tfrec_example;

/* Parse a serialized Example. On failure *out is NULL and
 * tfrec_last_errmsg() says why (TFREC_E_PARSE for malformed input). */
int tfrec_example_parse(tfrec_example **out, const void *data, size_t len);
void tfrec_example_free(tfrec_example *ex);

/* Features in key order. */
size_t tfrec_example_feature_count(const tfrec_example *ex);
const char *tfrec_example_feature_key(const tfrec_example *ex, size_t i);

/* Type and value count of feature `key` (TFREC_FEATURE_NONE / 0 if absent). */
int tfrec_example_feature_type(const tfrec_example *ex, const char *key);
size_t tfrec_example_value_count(const tfrec_example *ex, const char *key);

/* Value access. TFREC_E_NOT_FOUND if the key is absent, TFREC_E_INVALID on a
 * type mismatch or index out of range. Pointers stay valid until the example
 * is freed. */
int tfrec_example_get_bytes(const tfrec_example *ex, const char *key, size_t i,
                            const uint8_t **data, size_t *len);
int tfrec_example_get_int64(const tfrec_example *ex, const char *key, size_t i, int64_t *value);
int tfrec_example_get_float(const tfrec_example *ex, const char *key, size_t i, float *value);
/* Whole numeric lists (NULL with *n = 0 for an empty list). */
int tfrec_example_get_int64_list(const tfrec_example *ex, const char *key, const int64_t **values,
                                 size_t *n);
int tfrec_example_get_float_list(const tfrec_example *ex, const char *key, const float **values,
                                 size_t *n);

TFREC_END_DECLS
#endif

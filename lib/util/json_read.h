/* Internal: the one JSON reader (Cloud Storage replies and key files, the
 * imagenet converter's manifest parts). Strict RFC 8259: no comments, no
 * trailing commas, valid escapes and surrogate pairs, \u0000 refused (the
 * decoded strings are C strings). Bounded by the caller's limits (input
 * size, nesting, value count), so hostile text cannot make it use more than
 * a small multiple of its own size. Every error names its byte offset.
 *
 *   tfrec_json_value *doc;
 *   char why[128];
 *   if (tfrec_json_parse(text, len, &limits, &doc, why, sizeof why) == TFREC_OK) {
 *       const char *s = tfrec_json_member_str(doc, "name");
 *       ...
 *       tfrec_json_value_free(doc);
 *   }
 *
 * Exported to the other parts (TFREC_PRIVATE_API): the image and storage
 * parts both read JSON with it. */
#ifndef TFREC_UTIL_JSON_READ_H
#define TFREC_UTIL_JSON_READ_H

#include <stddef.h>
#include <stdint.h>

#include "util/json_writer.h"
#include "util/private_api.h"

typedef enum {
    TFREC_JSON_NULL,
    TFREC_JSON_BOOL,
    TFREC_JSON_NUM,
    TFREC_JSON_STR,
    TFREC_JSON_ARR,
    TFREC_JSON_OBJ
} tfrec_json_type;

typedef struct tfrec_json_value {
    tfrec_json_type type;
    char *key;   /* member name inside an object, else NULL */
    char *str;   /* STR: the decoded bytes; NUM: the number's text (NUL-terminated) */
    size_t slen; /* length of str */
    double num;  /* NUM: its value */
    int boolean;
    struct tfrec_json_value *child, *next; /* ARR, OBJ: first element; siblings */
} tfrec_json_value;

typedef struct tfrec_json_limits {
    size_t max_bytes;   /* longest text accepted */
    unsigned max_depth; /* arrays and objects nested at most this deep */
    size_t max_values;  /* values in the whole document */
    /* 1: \udc80..\udcff decode to the byte 80..ff, the json_writer.h
     * convention for bytes that are not UTF-8 (only for text we wrote);
     * 0: refused like any lone low surrogate. */
    int byte_escapes;
} tfrec_json_limits;

/* One JSON document (nothing after it but whitespace). TFREC_OK with *out
 * set, or TFREC_E_PARSE / TFREC_E_NOMEM with *out NULL and the reason (and
 * byte offset) in why. */
TFREC_PRIVATE_API int tfrec_json_parse(const char *text, size_t len,
                                       const tfrec_json_limits *limits, tfrec_json_value **out,
                                       char *why, size_t whycap);
TFREC_PRIVATE_API void tfrec_json_value_free(tfrec_json_value *v);
/* Member key of object o (NULL if absent or o is not an object). */
TFREC_PRIVATE_API const tfrec_json_value *tfrec_json_member(const tfrec_json_value *o,
                                                            const char *key);
/* String member, or NULL. */
TFREC_PRIVATE_API const char *tfrec_json_member_str(const tfrec_json_value *o, const char *key);
/* Integer member as an unsigned / signed 64-bit value: a JSON number that
 * is an exact integer (doubles are exact up to 2^53 only), or a decimal
 * string (Cloud Storage sends 64-bit values as strings). 0 on success, -1
 * if absent or not such an integer. */
TFREC_PRIVATE_API int tfrec_json_member_u64(const tfrec_json_value *o, const char *key,
                                            uint64_t *v);
TFREC_PRIVATE_API int tfrec_json_member_i64(const tfrec_json_value *o, const char *key, int64_t *v);
/* Write v (its key inside an object, and its subtree) with the writer, as
 * it was read; numbers keep their text when they are integers, fractions
 * get 3 decimals. */
TFREC_PRIVATE_API void tfrec_json_emit(tfrec_json *j, const tfrec_json_value *v);

#endif

/* Internal: the one JSON writer (the imagenet manifest, the tools' JSON
 * output). Compact output, no whitespace; the writer places the commas.
 *
 *   tfrec_json j;
 *   tfrec_json_init(&j, NULL);            // NULL: into memory; or a FILE *
 *   tfrec_json_object_begin(&j);
 *   tfrec_json_key(&j, "n"); tfrec_json_uint(&j, 3);
 *   tfrec_json_object_end(&j);
 *   char *text = tfrec_json_take(&j);     // {"n":3}, or NULL if memory ran out
 *
 * Errors (out of memory, a failed write to the stream) are sticky: later
 * calls do nothing and tfrec_json_failed() says so, so callers check once
 * at the end.
 *
 * Strings are byte strings, and every one of them becomes valid JSON:
 * - '"' and '\\' are escaped; so are the control characters U+0000..U+001F
 *   (as \b \f \n \r \t, or \u00XX) and DEL (\u007f);
 * - valid UTF-8 is copied unchanged (shortest form, no surrogates, at most
 *   U+10FFFF);
 * - every other byte XX (a stray continuation byte, a sequence that is
 *   overlong, encodes a surrogate, goes past U+10FFFF or is cut short) is
 *   written as the escape \udcXX: a lone low surrogate, which no valid
 *   UTF-8 text can produce. This is Python's "surrogateescape" convention,
 *   so nothing is lost: json.loads(text) gives the same str that
 *   os.fsdecode() gives for the original bytes, and
 *   s.encode("utf-8", "surrogateescape") gives the bytes back. Parsers that
 *   refuse lone surrogates are rare; most read them as U+FFFD.
 *
 * Only the functions the image part calls are exported from libtfrec.so
 * (TFREC_PRIVATE_API); the rest serve the tools, which link libtfrec.a. */
#ifndef TFREC_UTIL_JSON_WRITER_H
#define TFREC_UTIL_JSON_WRITER_H

#include "util/private_api.h"
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct tfrec_json {
    FILE *out; /* the stream written to, or NULL: into buf */
    char *buf; /* NUL-terminated text so far (memory mode) */
    size_t len, cap;
    int failed;     /* sticky: out of memory or a write error */
    int need_comma; /* a value was written at the current level */
} tfrec_json;

/* Write to out, or into memory when out is NULL. */
TFREC_PRIVATE_API void tfrec_json_init(tfrec_json *j, FILE *out);
/* Memory mode: the text (malloc'ed, NUL-terminated; the caller frees it),
 * or NULL if anything failed or nothing was written. The writer is left
 * empty and ready for reuse. */
TFREC_PRIVATE_API char *tfrec_json_take(tfrec_json *j);
/* Release the memory buffer (if any); the writer is left empty. */
void tfrec_json_reset(tfrec_json *j);
int tfrec_json_failed(const tfrec_json *j);

TFREC_PRIVATE_API void tfrec_json_object_begin(tfrec_json *j);
TFREC_PRIVATE_API void tfrec_json_object_end(tfrec_json *j);
TFREC_PRIVATE_API void tfrec_json_array_begin(tfrec_json *j);
TFREC_PRIVATE_API void tfrec_json_array_end(tfrec_json *j);
/* Inside an object, before each value. */
TFREC_PRIVATE_API void tfrec_json_key(tfrec_json *j, const char *key);

void tfrec_json_str(tfrec_json *j, const char *s); /* NULL writes null */
void tfrec_json_str_n(tfrec_json *j, const char *s, size_t len);
void tfrec_json_int(tfrec_json *j, int64_t v);
void tfrec_json_uint(tfrec_json *j, uint64_t v);
/* v with a fixed number of decimals ("%.*f"); null when not finite. */
TFREC_PRIVATE_API void tfrec_json_fixed(tfrec_json *j, double v, int decimals);
/* The shortest decimal that reads back as the same float32 (0.1f is 0.1);
 * NaN and the infinities as the strings "NaN", "Infinity", "-Infinity"
 * (the protobuf JSON mapping), since JSON numbers cannot hold them. */
void tfrec_json_float32(tfrec_json *j, float v);
void tfrec_json_bool(tfrec_json *j, int v);
void tfrec_json_null(tfrec_json *j);
/* A key and its value in one call, inside objects. */
TFREC_PRIVATE_API void tfrec_json_field_str(tfrec_json *j, const char *key, const char *s);
TFREC_PRIVATE_API void tfrec_json_field_int(tfrec_json *j, const char *key, int64_t v);
TFREC_PRIVATE_API void tfrec_json_field_uint(tfrec_json *j, const char *key, uint64_t v);
TFREC_PRIVATE_API void tfrec_json_field_bool(tfrec_json *j, const char *key, int v);
/* Base64 (RFC 4648, padded) of data, as a string. */
void tfrec_json_base64(tfrec_json *j, const void *data, size_t len);
/* End a top-level value with a newline (JSON Lines): the next value starts
 * a new document, without a comma. */
TFREC_PRIVATE_API void tfrec_json_newline(tfrec_json *j);

/* 1 if data is valid UTF-8 (as above) without control characters or DEL:
 * text a person can read as it is. */
int tfrec_json_is_text(const void *data, size_t len);

#endif

/* A minimal JSON writer for the tool's line-oriented output. The caller
 * places commas and braces; these helpers get the escaping right. */
#ifndef TFREC_TOOL_JSON_H
#define TFREC_TOOL_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* A JSON string literal; bytes that are not valid UTF-8 become U+FFFD. */
void json_string(FILE *out, const char *s, size_t len);
static inline void json_cstr(FILE *out, const char *s) { json_string(out, s, strlen(s)); }
/* "key": */
void json_key(FILE *out, const char *key);
/* Base64 (RFC 4648, padded) of data, as a JSON string. */
void json_base64(FILE *out, const uint8_t *data, size_t len);
/* A float32 that reads back exactly; NaN and infinities as the strings
 * "NaN", "Infinity", "-Infinity" (the protobuf JSON convention). */
void json_float(FILE *out, float v);
/* 1 if data is valid UTF-8 without control characters (shown as text). */
int json_is_text(const uint8_t *data, size_t len);

#endif

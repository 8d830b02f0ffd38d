/* Internal: reading back the JSON the converter writes (manifest parts),
 * strictly, into a small tree, and writing a subtree out again unchanged. */
#ifndef TFREC_IMAGENET_JSON_READ_H
#define TFREC_IMAGENET_JSON_READ_H

#include <stddef.h>
#include <stdint.h>

#include "util/json_writer.h"

typedef enum { IJ_NULL, IJ_BOOL, IJ_NUM, IJ_STR, IJ_ARR, IJ_OBJ } ij_type;

typedef struct ij {
    ij_type type;
    char *key;   /* member name inside an object, else NULL */
    char *str;   /* IJ_STR: the decoded bytes; IJ_NUM: the number's text */
    size_t slen; /* length of str */
    int boolean;
    struct ij *child, *next; /* IJ_ARR, IJ_OBJ: first element; siblings */
} ij;

/* One JSON document (nothing after it but whitespace); \udcXX escapes
 * (json_writer.h's bytes that are not UTF-8) decode to the byte XX. On
 * failure -1 with the reason and byte offset in why. */
int tfrec_ij_parse(const char *text, size_t len, ij **out, char *why, size_t whycap);
void tfrec_ij_free(ij *v);
const ij *tfrec_ij_get(const ij *o, const char *key);
/* String member, or NULL. */
const char *tfrec_ij_str(const ij *o, const char *key);
/* Unsigned integer member: 0, or -1 if absent or not one. */
int tfrec_ij_u64(const ij *o, const char *key, uint64_t *v);
/* Write v (and its subtree) with the writer, as it was read. */
void tfrec_ij_emit(tfrec_json *j, const ij *v);

#endif

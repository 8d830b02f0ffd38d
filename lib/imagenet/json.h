/* Internal: a tiny append-only JSON text builder for the manifest. Errors
 * (out of memory) are sticky and reported once at the end. */
#ifndef TFREC_IMAGENET_JSON_H
#define TFREC_IMAGENET_JSON_H

#include <stddef.h>
#include <stdint.h>

typedef struct jbuf {
    char *s;
    size_t len, cap;
    int oom;
    int need_comma; /* a value was written at the current nesting level */
} jbuf;

void tfrec_jb_raw(jbuf *b, const char *s);
void tfrec_jb_open(jbuf *b, char bracket);  /* '{' or '[' */
void tfrec_jb_close(jbuf *b, char bracket); /* '}' or ']' */
void tfrec_jb_key(jbuf *b, const char *key); /* inside objects, before each value */
void tfrec_jb_str(jbuf *b, const char *s);   /* NULL writes null */
void tfrec_jb_int(jbuf *b, int64_t v);
void tfrec_jb_uint(jbuf *b, uint64_t v);
void tfrec_jb_num(jbuf *b, double v);
void tfrec_jb_bool(jbuf *b, int v);

#endif

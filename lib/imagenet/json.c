#include "imagenet/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put(jbuf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t ncap = b->cap ? b->cap : 4096;
        while (b->len + n + 1 > ncap)
            ncap *= 2;
        char *ns = realloc(b->s, ncap);
        if (!ns) {
            b->oom = 1;
            return;
        }
        b->s = ns;
        b->cap = ncap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

void tfrec_jb_raw(jbuf *b, const char *s)
{
    put(b, s, strlen(s));
}

/* A value starts: separate it from the previous one unless a key was just
 * written (tfrec_jb_key clears need_comma after writing its own comma). */
static void value_start(jbuf *b)
{
    if (b->need_comma)
        put(b, ",", 1);
    b->need_comma = 1;
}

void tfrec_jb_open(jbuf *b, char bracket)
{
    value_start(b);
    put(b, &bracket, 1);
    b->need_comma = 0;
}

void tfrec_jb_close(jbuf *b, char bracket)
{
    put(b, &bracket, 1);
    b->need_comma = 1;
}

static void put_escaped(jbuf *b, const char *s)
{
    put(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char esc[8];
        if (*p == '"' || *p == '\\') {
            esc[0] = '\\';
            esc[1] = (char)*p;
            put(b, esc, 2);
        } else if (*p < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", *p);
            put(b, esc, 6);
        } else {
            put(b, (const char *)p, 1);
        }
    }
    put(b, "\"", 1);
}

void tfrec_jb_key(jbuf *b, const char *key)
{
    value_start(b);
    put_escaped(b, key);
    put(b, ":", 1);
    b->need_comma = 0;
}

void tfrec_jb_str(jbuf *b, const char *s)
{
    value_start(b);
    if (s)
        put_escaped(b, s);
    else
        put(b, "null", 4);
}

void tfrec_jb_int(jbuf *b, int64_t v)
{
    char t[32];
    value_start(b);
    put(b, t, (size_t)snprintf(t, sizeof t, "%lld", (long long)v));
}

void tfrec_jb_uint(jbuf *b, uint64_t v)
{
    char t[32];
    value_start(b);
    put(b, t, (size_t)snprintf(t, sizeof t, "%llu", (unsigned long long)v));
}

void tfrec_jb_num(jbuf *b, double v)
{
    char t[64];
    value_start(b);
    put(b, t, (size_t)snprintf(t, sizeof t, "%.3f", v));
}

void tfrec_jb_bool(jbuf *b, int v)
{
    value_start(b);
    tfrec_jb_raw(b, v ? "true" : "false");
}

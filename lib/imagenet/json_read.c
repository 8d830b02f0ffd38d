/* A strict recursive-descent JSON reader for manifest parts: RFC 8259
 * syntax, bounded depth, every error reported with its byte offset. */
#include "imagenet/json_read.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IJ_MAX_DEPTH 64
/* A part lists a task's shards and its fixed and rejected images: far
 * below this, which bounds the memory a hostile file can make us use. */
#define IJ_MAX_NODES 4000000

typedef struct rd {
    const char *s, *start, *end;
    char *why;
    size_t whycap;
    size_t nodes;
} rd;

static int bad(rd *r, const char *what)
{
    snprintf(r->why, r->whycap, "%s at byte %zu", what, (size_t)(r->s - r->start));
    return -1;
}

static void ws(rd *r)
{
    while (r->s < r->end && (*r->s == ' ' || *r->s == '\t' || *r->s == '\n' || *r->s == '\r'))
        r->s++;
}

typedef struct sbuf {
    char *v;
    size_t n, cap;
} sbuf;

static int put(sbuf *b, const void *data, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 32;
        while (cap < b->n + n + 1)
            cap *= 2;
        char *v = realloc(b->v, cap);
        if (!v)
            return -1;
        b->v = v;
        b->cap = cap;
    }
    memcpy(b->v + b->n, data, n);
    b->n += n;
    b->v[b->n] = '\0';
    return 0;
}

static int hex4(rd *r, unsigned *out)
{
    if (r->end - r->s < 4)
        return bad(r, "short \\u escape");
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = *r->s++;
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return bad(r, "bad \\u escape");
    }
    *out = v;
    return 0;
}

static int utf8(sbuf *b, unsigned cp)
{
    unsigned char u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (unsigned char)cp;
        n = 1;
    } else if (cp < 0x800) {
        u[0] = (unsigned char)(0xC0 | cp >> 6);
        u[1] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        u[0] = (unsigned char)(0xE0 | cp >> 12);
        u[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
        u[2] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        u[0] = (unsigned char)(0xF0 | cp >> 18);
        u[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3F));
        u[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
        u[3] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    return put(b, u, n);
}

/* After the opening quote. */
static int string(rd *r, char **out, size_t *len)
{
    sbuf b = { 0 };
    if (put(&b, "", 0))
        return bad(r, "out of memory");
    for (;;) {
        if (r->s >= r->end) {
            free(b.v);
            return bad(r, "unterminated string");
        }
        unsigned char c = (unsigned char)*r->s++;
        int rc = 0;
        if (c == '"')
            break;
        if (c < 0x20) {
            free(b.v);
            return bad(r, "control character in string");
        }
        if (c != '\\') {
            rc = put(&b, &c, 1);
        } else {
            if (r->s >= r->end) {
                free(b.v);
                return bad(r, "unterminated escape");
            }
            char e = *r->s++;
            const char *simple = strchr("\"\\/bfnrt", e);
            if (e && simple) {
                static const char val[] = "\"\\/\b\f\n\r\t";
                rc = put(&b, &val[simple - "\"\\/bfnrt"], 1);
            } else if (e == 'u') {
                unsigned cp, lo;
                if (hex4(r, &cp)) {
                    free(b.v);
                    return -1;
                }
                if (cp >= 0xDC80 && cp <= 0xDCFF) { /* a byte that was not UTF-8 */
                    unsigned char byte = (unsigned char)(cp & 0xFF);
                    rc = put(&b, &byte, 1);
                } else if (cp >= 0xD800 && cp <= 0xDBFF) {
                    if (r->end - r->s < 6 || r->s[0] != '\\' || r->s[1] != 'u') {
                        free(b.v);
                        return bad(r, "lone high surrogate");
                    }
                    r->s += 2;
                    if (hex4(r, &lo) || lo < 0xDC00 || lo > 0xDFFF) {
                        free(b.v);
                        return bad(r, "bad surrogate pair");
                    }
                    rc = utf8(&b, 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00));
                } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                    free(b.v);
                    return bad(r, "lone low surrogate");
                } else {
                    rc = utf8(&b, cp);
                }
            } else {
                free(b.v);
                return bad(r, "bad escape");
            }
        }
        if (rc) {
            free(b.v);
            return bad(r, "out of memory");
        }
    }
    *out = b.v;
    *len = b.n;
    return 0;
}

static int number(rd *r, ij *v)
{
    const char *p = r->s;
    if (p < r->end && *p == '-')
        p++;
    if (p >= r->end || *p < '0' || *p > '9')
        return bad(r, "bad value");
    if (*p == '0')
        p++;
    else
        while (p < r->end && *p >= '0' && *p <= '9')
            p++;
    if (p < r->end && *p == '.') {
        p++;
        if (p >= r->end || *p < '0' || *p > '9')
            return bad(r, "bad number");
        while (p < r->end && *p >= '0' && *p <= '9')
            p++;
    }
    if (p < r->end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < r->end && (*p == '+' || *p == '-'))
            p++;
        if (p >= r->end || *p < '0' || *p > '9')
            return bad(r, "bad number");
        while (p < r->end && *p >= '0' && *p <= '9')
            p++;
    }
    v->type = IJ_NUM;
    v->slen = (size_t)(p - r->s);
    v->str = malloc(v->slen + 1);
    if (!v->str)
        return bad(r, "out of memory");
    memcpy(v->str, r->s, v->slen);
    v->str[v->slen] = '\0';
    r->s = p;
    return 0;
}

static int literal(rd *r, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(r->end - r->s) < n || memcmp(r->s, word, n) != 0)
        return bad(r, "bad value");
    r->s += n;
    return 0;
}

static int value(rd *r, ij *v, int depth);

/* Elements (or members) after the opening bracket, up to close. */
static int items(rd *r, ij *v, int depth, char close)
{
    ij **tail = &v->child;
    ws(r);
    if (r->s < r->end && *r->s == close) {
        r->s++;
        return 0;
    }
    for (;;) {
        if (++r->nodes > IJ_MAX_NODES)
            return bad(r, "too many values");
        ij *c = calloc(1, sizeof *c);
        if (!c)
            return bad(r, "out of memory");
        *tail = c;
        tail = &c->next;
        ws(r);
        if (close == '}') {
            size_t klen;
            if (r->s >= r->end || *r->s != '"')
                return bad(r, "expected a member name");
            r->s++;
            if (string(r, &c->key, &klen))
                return -1;
            ws(r);
            if (r->s >= r->end || *r->s != ':')
                return bad(r, "expected ':'");
            r->s++;
        }
        if (value(r, c, depth + 1))
            return -1;
        ws(r);
        if (r->s < r->end && *r->s == ',') {
            r->s++;
            continue;
        }
        if (r->s < r->end && *r->s == close) {
            r->s++;
            return 0;
        }
        return bad(r, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static int value(rd *r, ij *v, int depth)
{
    if (depth > IJ_MAX_DEPTH)
        return bad(r, "nested too deeply");
    ws(r);
    if (r->s >= r->end)
        return bad(r, "unexpected end");
    switch (*r->s) {
    case '{':
        r->s++;
        v->type = IJ_OBJ;
        return items(r, v, depth, '}');
    case '[':
        r->s++;
        v->type = IJ_ARR;
        return items(r, v, depth, ']');
    case '"':
        r->s++;
        v->type = IJ_STR;
        return string(r, &v->str, &v->slen);
    case 't':
        v->type = IJ_BOOL;
        v->boolean = 1;
        return literal(r, "true");
    case 'f': v->type = IJ_BOOL; return literal(r, "false");
    case 'n': v->type = IJ_NULL; return literal(r, "null");
    default: return number(r, v);
    }
}

int tfrec_ij_parse(const char *text, size_t len, ij **out, char *why, size_t whycap)
{
    rd r = { text, text, text + len, why, whycap, 0 };
    ij *v = calloc(1, sizeof *v);
    *out = NULL;
    if (!v) {
        snprintf(why, whycap, "out of memory");
        return -1;
    }
    int rc = value(&r, v, 0);
    if (!rc) {
        ws(&r);
        if (r.s != r.end)
            rc = bad(&r, "text after the JSON value");
    }
    if (rc) {
        tfrec_ij_free(v);
        return -1;
    }
    *out = v;
    return 0;
}

void tfrec_ij_free(ij *v)
{
    while (v) {
        ij *next = v->next;
        tfrec_ij_free(v->child);
        free(v->key);
        free(v->str);
        free(v);
        v = next;
    }
}

const ij *tfrec_ij_get(const ij *o, const char *key)
{
    if (!o || o->type != IJ_OBJ)
        return NULL;
    for (const ij *c = o->child; c; c = c->next)
        if (!strcmp(c->key, key))
            return c;
    return NULL;
}

const char *tfrec_ij_str(const ij *o, const char *key)
{
    const ij *v = tfrec_ij_get(o, key);
    return v && v->type == IJ_STR ? v->str : NULL;
}

int tfrec_ij_u64(const ij *o, const char *key, uint64_t *out)
{
    const ij *v = tfrec_ij_get(o, key);
    if (!v || v->type != IJ_NUM || v->str[0] < '0' || v->str[0] > '9')
        return -1;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v->str, &end, 10);
    if (errno || *end)
        return -1;
    *out = x;
    return 0;
}

void tfrec_ij_emit(tfrec_json *j, const ij *v)
{
    if (v->key)
        tfrec_json_key(j, v->key);
    switch (v->type) {
    case IJ_NULL: tfrec_json_null(j); break;
    case IJ_BOOL: tfrec_json_bool(j, v->boolean); break;
    case IJ_STR: tfrec_json_str_n(j, v->str, v->slen); break;
    case IJ_NUM:
        if (strspn(v->str, "0123456789") == v->slen)
            tfrec_json_uint(j, strtoull(v->str, NULL, 10));
        else if (v->str[0] == '-' && strspn(v->str + 1, "0123456789") == v->slen - 1)
            tfrec_json_int(j, strtoll(v->str, NULL, 10));
        else
            tfrec_json_fixed(j, strtod(v->str, NULL), 3); /* the converter's only fractions */
        break;
    case IJ_ARR:
    case IJ_OBJ:
        if (v->type == IJ_OBJ)
            tfrec_json_object_begin(j);
        else
            tfrec_json_array_begin(j);
        for (const ij *c = v->child; c; c = c->next)
            tfrec_ij_emit(j, c);
        if (v->type == IJ_OBJ)
            tfrec_json_object_end(j);
        else
            tfrec_json_array_end(j);
        break;
    }
}

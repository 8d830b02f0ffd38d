/* The one JSON reader of lib/storage: replies of the JSON API (object
 * metadata, listing pages, error bodies) and, through auth_json.c, key
 * files and token replies. Strict (RFC 8259, no comments, no
 * trailing commas, valid escapes and UTF-8 surrogates) so a garbled reply is
 * an error instead of a wrong listing, and bounded (depth, element count,
 * input size) so a hostile server cannot make it use more than a small
 * multiple of the bytes it sent. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/storage_internal.h"

#define GJ_MAX_DEPTH 32
#define GJ_MAX_NODES 200000

typedef struct jp {
    const char *s, *end;
    size_t nodes;
    char *why;
    size_t whycap;
    const char *start;
} jp;

static int bad(jp *p, const char *what)
{
    snprintf(p->why, p->whycap, "%s at byte %zu", what, (size_t)(p->s - p->start));
    return -1;
}

static void ws(jp *p)
{
    while (p->s < p->end && (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r'))
        p->s++;
}

static int hex4(jp *p, unsigned *out)
{
    if (p->end - p->s < 4)
        return bad(p, "short \\u escape");
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = *p->s++;
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return bad(p, "bad \\u escape");
    }
    *out = v;
    return 0;
}

static size_t put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | cp >> 6);
        o[1] = (char)(0x80 | (cp & 63));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | cp >> 12);
        o[1] = (char)(0x80 | ((cp >> 6) & 63));
        o[2] = (char)(0x80 | (cp & 63));
        return 3;
    }
    o[0] = (char)(0xF0 | cp >> 18);
    o[1] = (char)(0x80 | ((cp >> 12) & 63));
    o[2] = (char)(0x80 | ((cp >> 6) & 63));
    o[3] = (char)(0x80 | (cp & 63));
    return 4;
}

/* A string starting at the opening quote; decoded into a malloc'd buffer
 * (never longer than the encoded form). */
static int string(jp *p, char **out, size_t *outlen)
{
    p->s++; /* " */
    const char *q = p->s;
    while (q < p->end && *q != '"')
        q += (*q == '\\' && q + 1 < p->end) ? 2 : 1;
    if (q >= p->end)
        return bad(p, "unterminated string");
    char *o = malloc((size_t)(q - p->s) + 1);
    if (!o)
        return bad(p, "out of memory");
    size_t n = 0;
    while (*p->s != '"') {
        unsigned char c = (unsigned char)*p->s;
        if (c < 0x20) {
            free(o);
            return bad(p, "control character in string");
        }
        if (c != '\\') {
            o[n++] = (char)c;
            p->s++;
            continue;
        }
        p->s++;
        char e = *p->s++;
        switch (e) {
        case '"': o[n++] = '"'; break;
        case '\\': o[n++] = '\\'; break;
        case '/': o[n++] = '/'; break;
        case 'b': o[n++] = '\b'; break;
        case 'f': o[n++] = '\f'; break;
        case 'n': o[n++] = '\n'; break;
        case 'r': o[n++] = '\r'; break;
        case 't': o[n++] = '\t'; break;
        case 'u': {
            unsigned cp, lo;
            if (hex4(p, &cp)) {
                free(o);
                return -1;
            }
            if (cp >= 0xDC00 && cp <= 0xDFFF) {
                free(o);
                return bad(p, "lone low surrogate");
            }
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                if (p->end - p->s < 6 || p->s[0] != '\\' || p->s[1] != 'u') {
                    free(o);
                    return bad(p, "lone high surrogate");
                }
                p->s += 2;
                if (hex4(p, &lo) || lo < 0xDC00 || lo > 0xDFFF) {
                    free(o);
                    return bad(p, "bad surrogate pair");
                }
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            }
            /* Decoded strings end up in C strings: a NUL would cut them. */
            if (cp == 0) {
                free(o);
                return bad(p, "NUL character in string");
            }
            /* 6 or 12 escaped bytes always cover the 1-4 decoded ones. */
            n += put_utf8(o + n, cp);
            break;
        }
        default: free(o); return bad(p, "bad escape");
        }
    }
    p->s++;
    o[n] = 0;
    *out = o;
    *outlen = n;
    return 0;
}

static int number(jp *p, double *out)
{
    const char *b = p->s;
    if (p->s < p->end && *p->s == '-')
        p->s++;
    if (p->s >= p->end || *p->s < '0' || *p->s > '9')
        return bad(p, "bad number");
    if (*p->s == '0')
        p->s++;
    else
        while (p->s < p->end && *p->s >= '0' && *p->s <= '9')
            p->s++;
    if (p->s < p->end && *p->s == '.') {
        p->s++;
        if (p->s >= p->end || *p->s < '0' || *p->s > '9')
            return bad(p, "bad number");
        while (p->s < p->end && *p->s >= '0' && *p->s <= '9')
            p->s++;
    }
    if (p->s < p->end && (*p->s == 'e' || *p->s == 'E')) {
        p->s++;
        if (p->s < p->end && (*p->s == '+' || *p->s == '-'))
            p->s++;
        if (p->s >= p->end || *p->s < '0' || *p->s > '9')
            return bad(p, "bad number");
        while (p->s < p->end && *p->s >= '0' && *p->s <= '9')
            p->s++;
    }
    char tmp[64];
    size_t n = (size_t)(p->s - b);
    if (n >= sizeof tmp)
        return bad(p, "number too long");
    memcpy(tmp, b, n);
    tmp[n] = 0;
    *out = strtod(tmp, NULL);
    return 0;
}

static int literal(jp *p, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(p->end - p->s) < n || memcmp(p->s, word, n) != 0)
        return bad(p, "unexpected character");
    p->s += n;
    return 0;
}

static int value(jp *p, gj *v, int depth)
{
    if (++p->nodes > GJ_MAX_NODES)
        return bad(p, "too many elements");
    ws(p);
    if (p->s >= p->end)
        return bad(p, "unexpected end");
    char c = *p->s;
    if (c == '{' || c == '[') {
        if (depth >= GJ_MAX_DEPTH)
            return bad(p, "nested too deeply");
        char close = c == '{' ? '}' : ']';
        v->type = c == '{' ? GJ_OBJ : GJ_ARR;
        p->s++;
        ws(p);
        if (p->s < p->end && *p->s == close) {
            p->s++;
            return 0;
        }
        gj **tail = &v->child;
        for (;;) {
            gj *e = calloc(1, sizeof *e);
            if (!e)
                return bad(p, "out of memory");
            *tail = e;
            tail = &e->next;
            ws(p);
            if (v->type == GJ_OBJ) {
                size_t kl;
                if (p->s >= p->end || *p->s != '"')
                    return bad(p, "expected a member name");
                if (string(p, &e->key, &kl))
                    return -1;
                ws(p);
                if (p->s >= p->end || *p->s != ':')
                    return bad(p, "expected ':'");
                p->s++;
            }
            if (value(p, e, depth + 1))
                return -1;
            ws(p);
            if (p->s < p->end && *p->s == ',') {
                p->s++;
                continue;
            }
            if (p->s < p->end && *p->s == close) {
                p->s++;
                return 0;
            }
            return bad(p, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
        }
    }
    if (c == '"') {
        v->type = GJ_STR;
        return string(p, &v->str, &v->slen);
    }
    if (c == 't') {
        v->type = GJ_BOOL;
        v->boolean = 1;
        return literal(p, "true");
    }
    if (c == 'f') {
        v->type = GJ_BOOL;
        return literal(p, "false");
    }
    if (c == 'n') {
        v->type = GJ_NULL;
        return literal(p, "null");
    }
    v->type = GJ_NUM;
    return number(p, &v->num);
}

int tfrec_gj_parse(const char *text, size_t len, gj **out, char *why, size_t whycap)
{
    *out = NULL;
    if (len > GCS_MAX_JSON_BODY) {
        snprintf(why, whycap, "reply of %zu bytes is over the %u-byte limit", len,
                 GCS_MAX_JSON_BODY);
        return TFREC_E_PARSE;
    }
    jp p = { text, text + len, 0, why, whycap, text };
    gj *root = calloc(1, sizeof *root);
    if (!root) {
        snprintf(why, whycap, "out of memory");
        return TFREC_E_NOMEM;
    }
    if (value(&p, root, 0) == 0) {
        ws(&p);
        if (p.s == p.end) {
            *out = root;
            return TFREC_OK;
        }
        bad(&p, root->type == GJ_OBJ ? "text after the object" : "text after the value");
    }
    tfrec_gj_free(root);
    return TFREC_E_PARSE;
}

void tfrec_gj_free(gj *v)
{
    /* Siblings iteratively, children recursively (depth is bounded). */
    while (v) {
        gj *next = v->next;
        tfrec_gj_free(v->child);
        free(v->key);
        free(v->str);
        free(v);
        v = next;
    }
}

const gj *tfrec_gj_get(const gj *o, const char *key)
{
    if (!o || o->type != GJ_OBJ)
        return NULL;
    for (const gj *e = o->child; e; e = e->next)
        if (strcmp(e->key, key) == 0)
            return e;
    return NULL;
}

const char *tfrec_gj_str(const gj *o, const char *key)
{
    const gj *v = tfrec_gj_get(o, key);
    return v && v->type == GJ_STR ? v->str : NULL;
}

/* A member holding an integer: a JSON number, or a decimal string (the
 * JSON API sends 64-bit values as strings). *neg and *mag get its sign and
 * magnitude; -1 when absent or not an integer. */
static int integer(const gj *o, const char *key, int *neg, uint64_t *mag)
{
    const gj *v = tfrec_gj_get(o, key);
    if (!v)
        return -1;
    if (v->type == GJ_NUM) {
        /* Doubles are exact integers up to 2^53 only. */
        double a = v->num < 0 ? -v->num : v->num;
        if (a > 9007199254740992.0 || a != (double)(uint64_t)a)
            return -1;
        *neg = v->num < 0;
        *mag = (uint64_t)a;
        return 0;
    }
    if (v->type != GJ_STR)
        return -1;
    const char *s = v->str;
    size_t len = v->slen;
    *neg = len > 0 && s[0] == '-';
    if (*neg) {
        s++;
        len--;
    }
    if (len == 0 || len > 20)
        return -1;
    uint64_t n = 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c < '0' || c > '9')
            return -1;
        unsigned d = (unsigned)(c - '0');
        if (n > (UINT64_MAX - d) / 10)
            return -1;
        n = n * 10 + d;
    }
    *mag = n;
    return 0;
}

int tfrec_gj_u64(const gj *o, const char *key, uint64_t *out)
{
    int neg;
    uint64_t mag;
    if (integer(o, key, &neg, &mag) || neg)
        return -1;
    *out = mag;
    return 0;
}

int tfrec_gj_i64(const gj *o, const char *key, int64_t *out)
{
    int neg;
    uint64_t mag;
    if (integer(o, key, &neg, &mag) || mag > (uint64_t)INT64_MAX + neg)
        return -1;
    /* -2^63 has no positive counterpart: negate in unsigned arithmetic. */
    *out = neg ? (int64_t)(0 - mag) : (int64_t)mag;
    return 0;
}

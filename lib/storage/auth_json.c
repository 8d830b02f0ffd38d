/* The JSON of key files and token replies: one object whose members of
 * interest are strings and numbers. Nested values are validated and
 * skipped (a bounded depth keeps hostile input from exhausting the stack);
 * strings are unescaped to UTF-8, and a NUL inside one is refused because
 * the values end up in C strings. */
#include <errno.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/auth_internal.h"
#include "tfrec/error.h"

#define MAX_DEPTH 32

typedef struct member {
    char *key;
    char kind; /* 's' string, 'n' number, 'o' anything else */
    char *text;
} member;

struct tfrec_gcs_json {
    member *m;
    size_t n, cap;
};

typedef struct cursor {
    const char *p, *end, *start;
    const char *why;
} cursor;

static void ws(cursor *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static int fail(cursor *c, const char *why)
{
    if (!c->why)
        c->why = why;
    return -1;
}

static int hex4(cursor *c, unsigned *v)
{
    if (c->end - c->p < 4)
        return fail(c, "cut short \\u escape");
    *v = 0;
    for (int i = 0; i < 4; i++) {
        char h = *c->p++;
        unsigned d = h >= '0' && h <= '9'   ? (unsigned)(h - '0')
                     : h >= 'a' && h <= 'f' ? (unsigned)(h - 'a' + 10)
                     : h >= 'A' && h <= 'F' ? (unsigned)(h - 'A' + 10)
                                            : 16u;
        if (d == 16)
            return fail(c, "bad \\u escape");
        *v = *v << 4 | d;
    }
    return 0;
}

static size_t put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xc0 | cp >> 6);
        o[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xe0 | cp >> 12);
        o[1] = (char)(0x80 | (cp >> 6 & 0x3f));
        o[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    o[0] = (char)(0xf0 | cp >> 18);
    o[1] = (char)(0x80 | (cp >> 12 & 0x3f));
    o[2] = (char)(0x80 | (cp >> 6 & 0x3f));
    o[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* A string at c->p (the opening quote); *out (NULL: skip) gets it
 * unescaped. The unescaped form is never longer than the escaped one. */
static int string(cursor *c, char **out)
{
    c->p++;
    const char *s = c->p;
    while (c->p < c->end && *c->p != '"')
        c->p += *c->p == '\\' ? 2 : 1;
    if (c->p >= c->end)
        return fail(c, "unterminated string");
    size_t raw = (size_t)(c->p - s);
    c->p = s;
    char *buf = out ? malloc(raw + 1) : NULL;
    if (out && !buf)
        return fail(c, "out of memory");
    size_t n = 0;
    char tmp[4];
    while (*c->p != '"') {
        unsigned char ch = (unsigned char)*c->p++;
        size_t k = 1;
        if (ch < 0x20) {
            free(buf);
            return fail(c, "control character in string");
        }
        tmp[0] = (char)ch;
        if (ch == '\\') {
            char e = *c->p++;
            unsigned cp;
            switch (e) {
            case '"': tmp[0] = '"'; break;
            case '\\': tmp[0] = '\\'; break;
            case '/': tmp[0] = '/'; break;
            case 'b': tmp[0] = '\b'; break;
            case 'f': tmp[0] = '\f'; break;
            case 'n': tmp[0] = '\n'; break;
            case 'r': tmp[0] = '\r'; break;
            case 't': tmp[0] = '\t'; break;
            case 'u':
                if (hex4(c, &cp) < 0) {
                    free(buf);
                    return -1;
                }
                if (cp >= 0xd800 && cp < 0xdc00 && c->end - c->p >= 6 && c->p[0] == '\\' &&
                    c->p[1] == 'u') {
                    unsigned lo;
                    c->p += 2;
                    if (hex4(c, &lo) < 0) {
                        free(buf);
                        return -1;
                    }
                    cp = lo >= 0xdc00 && lo < 0xe000
                             ? 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00)
                             : 0xfffd;
                } else if (cp >= 0xd800 && cp < 0xe000) {
                    cp = 0xfffd; /* a lone surrogate */
                }
                if (cp == 0) {
                    free(buf);
                    return fail(c, "NUL character in string");
                }
                k = put_utf8(tmp, cp);
                break;
            default: free(buf); return fail(c, "bad escape in string");
            }
        }
        if (buf)
            memcpy(buf + n, tmp, k);
        n += k;
    }
    c->p++;
    if (buf) {
        buf[n] = 0;
        *out = buf;
    }
    return 0;
}

static int number(cursor *c, char **out)
{
    const char *s = c->p;
    if (c->p < c->end && *c->p == '-')
        c->p++;
    size_t digits = 0;
    while (c->p < c->end && ((*c->p >= '0' && *c->p <= '9') || *c->p == '.' || *c->p == 'e' ||
                             *c->p == 'E' || *c->p == '+' || *c->p == '-')) {
        digits += *c->p >= '0' && *c->p <= '9';
        c->p++;
    }
    if (!digits)
        return fail(c, "bad number");
    if (out) {
        *out = strndup(s, (size_t)(c->p - s));
        if (!*out)
            return fail(c, "out of memory");
    }
    return 0;
}

static int literal(cursor *c, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n) != 0)
        return fail(c, "unexpected character");
    c->p += n;
    return 0;
}

static int value(cursor *c, int depth);

/* An object or array at c->p, skipped. */
static int container(cursor *c, int depth)
{
    char close = *c->p == '{' ? '}' : ']';
    int is_object = close == '}';
    if (depth >= MAX_DEPTH)
        return fail(c, "nested too deeply");
    c->p++;
    ws(c);
    if (c->p < c->end && *c->p == close) {
        c->p++;
        return 0;
    }
    for (;;) {
        ws(c);
        if (is_object) {
            if (c->p >= c->end || *c->p != '"' || string(c, NULL) < 0)
                return fail(c, "expected a member name");
            ws(c);
            if (c->p >= c->end || *c->p++ != ':')
                return fail(c, "expected ':'");
        }
        if (value(c, depth + 1) < 0)
            return -1;
        ws(c);
        if (c->p < c->end && *c->p == ',') {
            c->p++;
            continue;
        }
        if (c->p < c->end && *c->p == close) {
            c->p++;
            return 0;
        }
        return fail(c, "expected ',' or a closing bracket");
    }
}

static int value(cursor *c, int depth)
{
    ws(c);
    if (c->p >= c->end)
        return fail(c, "unexpected end");
    switch (*c->p) {
    case '"': return string(c, NULL);
    case '{':
    case '[': return container(c, depth);
    case 't': return literal(c, "true");
    case 'f': return literal(c, "false");
    case 'n': return literal(c, "null");
    default: return number(c, NULL);
    }
}

static int add(tfrec_gcs_json *j, cursor *c, char *key)
{
    if (j->n == j->cap) {
        size_t cap = j->cap ? j->cap * 2 : 16;
        member *m = realloc(j->m, cap * sizeof *m);
        if (!m) {
            free(key);
            return fail(c, "out of memory");
        }
        j->m = m;
        j->cap = cap;
    }
    member *m = &j->m[j->n++];
    m->key = key;
    m->kind = 'o';
    m->text = NULL;
    ws(c);
    if (c->p < c->end && *c->p == '"') {
        m->kind = 's';
        return string(c, &m->text);
    }
    if (c->p < c->end && (*c->p == '-' || (*c->p >= '0' && *c->p <= '9'))) {
        m->kind = 'n';
        return number(c, &m->text);
    }
    return value(c, 1);
}

static int object(tfrec_gcs_json *j, cursor *c)
{
    ws(c);
    if (c->p >= c->end || *c->p != '{')
        return fail(c, "not a JSON object");
    c->p++;
    ws(c);
    if (c->p < c->end && *c->p == '}') {
        c->p++;
    } else {
        for (;;) {
            char *key = NULL;
            ws(c);
            if (c->p >= c->end || *c->p != '"' || string(c, &key) < 0)
                return fail(c, "expected a member name");
            ws(c);
            if (c->p >= c->end || *c->p++ != ':') {
                free(key);
                return fail(c, "expected ':'");
            }
            if (add(j, c, key) < 0)
                return -1;
            ws(c);
            if (c->p < c->end && *c->p == ',') {
                c->p++;
                continue;
            }
            if (c->p < c->end && *c->p == '}') {
                c->p++;
                break;
            }
            return fail(c, "expected ',' or '}'");
        }
    }
    ws(c);
    return c->p == c->end ? 0 : fail(c, "text after the object");
}

int tfrec_gcs_json_parse(tfrec_gcs_json **out, const char *text, size_t len, char *why,
                         size_t whycap)
{
    tfrec_gcs_json *j = calloc(1, sizeof *j);
    if (!j) {
        snprintf(why, whycap, "out of memory");
        return TFREC_E_NOMEM;
    }
    cursor c = { text, text + len, text, NULL };
    if (object(j, &c) < 0) {
        snprintf(why, whycap, "%s at byte %zu", c.why, (size_t)(c.p - c.start));
        tfrec_gcs_json_free(j);
        return TFREC_E_PARSE;
    }
    *out = j;
    return TFREC_OK;
}

void tfrec_gcs_json_free(tfrec_gcs_json *j)
{
    if (!j)
        return;
    /* Values may be secrets (private keys, refresh tokens, access tokens). */
    for (size_t i = 0; i < j->n; i++) {
        free(j->m[i].key);
        if (j->m[i].text)
            OPENSSL_cleanse(j->m[i].text, strlen(j->m[i].text));
        free(j->m[i].text);
    }
    free(j->m);
    free(j);
}

static const member *find(const tfrec_gcs_json *j, const char *key)
{
    for (size_t i = 0; i < j->n; i++)
        if (strcmp(j->m[i].key, key) == 0)
            return &j->m[i];
    return NULL;
}

const char *tfrec_gcs_json_string(const tfrec_gcs_json *j, const char *key)
{
    const member *m = find(j, key);
    return m && m->kind == 's' ? m->text : NULL;
}

int tfrec_gcs_json_int(const tfrec_gcs_json *j, const char *key, int64_t *v)
{
    const member *m = find(j, key);
    if (!m || m->kind == 'o' || !*m->text)
        return 0;
    char *end;
    errno = 0;
    long long x = strtoll(m->text, &end, 10);
    if (errno || *end)
        return 0;
    *v = x;
    return 1;
}

int tfrec_gcs_json_has(const tfrec_gcs_json *j, const char *key)
{
    return find(j, key) != NULL;
}

/* The strict recursive-descent JSON reader of json_read.h. Errors say what
 * was wrong at which byte; an input cut short inside an array or object
 * also names where that bracket opened. */
#include "util/json_read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfrec/error.h"

typedef struct reader {
    const char *s, *start, *end;
    const tfrec_json_limits *lim;
    size_t values;
    int nomem; /* the failure was an allocation */
    char *why;
    size_t whycap;
} reader;

static int bad(reader *r, const char *what)
{
    snprintf(r->why, r->whycap, "%s at byte %zu", what, (size_t)(r->s - r->start));
    return -1;
}

static int out_of_memory(reader *r)
{
    r->nomem = 1;
    return bad(r, "out of memory");
}

static void skip_ws(reader *r)
{
    while (r->s < r->end && (*r->s == ' ' || *r->s == '\t' || *r->s == '\n' || *r->s == '\r'))
        r->s++;
}

static int hex4(reader *r, unsigned *out)
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

/* The code point of a \u escape (after the "\u"), a surrogate pair taken
 * whole; or, with byte_escapes, 0x110000 + the byte of a \udcXX. */
static int escaped_code_point(reader *r, unsigned *out)
{
    unsigned cp, lo;
    if (hex4(r, &cp))
        return -1;
    if (r->lim->byte_escapes && cp >= 0xDC80 && cp <= 0xDCFF) {
        *out = 0x110000 + (cp & 0xFF);
        return 0;
    }
    if (cp >= 0xDC00 && cp <= 0xDFFF)
        return bad(r, "lone low surrogate");
    if (cp >= 0xD800 && cp <= 0xDBFF) {
        if (r->end - r->s < 6 || r->s[0] != '\\' || r->s[1] != 'u')
            return bad(r, "lone high surrogate");
        r->s += 2;
        if (hex4(r, &lo) || lo < 0xDC00 || lo > 0xDFFF)
            return bad(r, "bad surrogate pair");
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    }
    /* Decoded strings are C strings: a NUL would cut them short. */
    if (cp == 0)
        return bad(r, "NUL character in string");
    *out = cp;
    return 0;
}

/* A string starting at the opening quote, decoded into a malloc'ed buffer
 * (never longer than the encoded form: 6 or 12 escaped bytes always cover
 * the 1-4 decoded ones). */
static int string(reader *r, char **out, size_t *outlen)
{
    r->s++; /* " */
    const char *q = r->s;
    while (q < r->end && *q != '"')
        q += (*q == '\\' && q + 1 < r->end) ? 2 : 1;
    if (q >= r->end)
        return bad(r, "unterminated string");
    char *o = malloc((size_t)(q - r->s) + 1);
    if (!o)
        return out_of_memory(r);
    size_t n = 0;
    while (*r->s != '"') {
        unsigned char c = (unsigned char)*r->s;
        if (c < 0x20) {
            free(o);
            return bad(r, "control character in string");
        }
        r->s++;
        if (c != '\\') {
            o[n++] = (char)c;
            continue;
        }
        char e = *r->s++;
        const char *simple = strchr("\"\\/bfnrt", e);
        if (e && simple) {
            o[n++] = "\"\\/\b\f\n\r\t"[simple - "\"\\/bfnrt"];
        } else if (e == 'u') {
            unsigned cp;
            if (escaped_code_point(r, &cp)) {
                free(o);
                return -1;
            }
            if (cp >= 0x110000)
                o[n++] = (char)(cp - 0x110000);
            else
                n += put_utf8(o + n, cp);
        } else {
            r->s--;
            free(o);
            return bad(r, "bad escape");
        }
    }
    r->s++;
    o[n] = '\0';
    *out = o;
    *outlen = n;
    return 0;
}

static void digits(reader *r)
{
    while (r->s < r->end && *r->s >= '0' && *r->s <= '9')
        r->s++;
}

static int number(reader *r, tfrec_json_value *v)
{
    const char *b = r->s;
    if (r->s < r->end && *r->s == '-')
        r->s++;
    if (r->s >= r->end || *r->s < '0' || *r->s > '9')
        return bad(r, r->s == b ? "unexpected character" : "bad number");
    if (*r->s == '0')
        r->s++;
    else
        digits(r);
    if (r->s < r->end && *r->s == '.') {
        r->s++;
        if (r->s >= r->end || *r->s < '0' || *r->s > '9')
            return bad(r, "bad number");
        digits(r);
    }
    if (r->s < r->end && (*r->s == 'e' || *r->s == 'E')) {
        r->s++;
        if (r->s < r->end && (*r->s == '+' || *r->s == '-'))
            r->s++;
        if (r->s >= r->end || *r->s < '0' || *r->s > '9')
            return bad(r, "bad number");
        digits(r);
    }
    size_t n = (size_t)(r->s - b);
    if (n > 64) {
        r->s = b;
        return bad(r, "number too long");
    }
    v->type = TFREC_JSON_NUM;
    v->str = malloc(n + 1);
    if (!v->str)
        return out_of_memory(r);
    memcpy(v->str, b, n);
    v->str[n] = '\0';
    v->slen = n;
    v->num = strtod(v->str, NULL);
    return 0;
}

static int literal(reader *r, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(r->end - r->s) < n || memcmp(r->s, word, n) != 0)
        return bad(r, "unexpected character");
    r->s += n;
    return 0;
}

static int value(reader *r, tfrec_json_value *v, unsigned depth);

/* The elements or members after an opening bracket at open. */
static int container(reader *r, tfrec_json_value *v, unsigned depth)
{
    const char *open = r->s;
    char close = *open == '{' ? '}' : ']';
    if (depth >= r->lim->max_depth)
        return bad(r, "nested too deeply");
    v->type = close == '}' ? TFREC_JSON_OBJ : TFREC_JSON_ARR;
    r->s++;
    skip_ws(r);
    if (r->s < r->end && *r->s == close) {
        r->s++;
        return 0;
    }
    tfrec_json_value **tail = &v->child;
    for (;;) {
        if (r->s >= r->end) {
            char what[64];
            snprintf(what, sizeof what, "unexpected end in the '%c' of byte %zu", *open,
                     (size_t)(open - r->start));
            return bad(r, what);
        }
        tfrec_json_value *e = calloc(1, sizeof *e);
        if (!e)
            return out_of_memory(r);
        *tail = e;
        tail = &e->next;
        if (close == '}') {
            size_t klen;
            if (r->s >= r->end || *r->s != '"')
                return bad(r, "expected a member name");
            if (string(r, &e->key, &klen))
                return -1;
            skip_ws(r);
            if (r->s >= r->end || *r->s != ':')
                return bad(r, "expected ':'");
            r->s++;
        }
        if (value(r, e, depth + 1))
            return -1;
        skip_ws(r);
        if (r->s < r->end && *r->s == ',') {
            r->s++;
            skip_ws(r);
            continue;
        }
        if (r->s < r->end && *r->s == close) {
            r->s++;
            return 0;
        }
        char what[80];
        snprintf(what, sizeof what, "expected ',' or '%c' (for the '%c' of byte %zu)", close, *open,
                 (size_t)(open - r->start));
        return bad(r, what);
    }
}

static int value(reader *r, tfrec_json_value *v, unsigned depth)
{
    if (++r->values > r->lim->max_values)
        return bad(r, "too many values");
    skip_ws(r);
    if (r->s >= r->end)
        return bad(r, "unexpected end");
    switch (*r->s) {
    case '{':
    case '[': return container(r, v, depth);
    case '"': v->type = TFREC_JSON_STR; return string(r, &v->str, &v->slen);
    case 't':
        v->type = TFREC_JSON_BOOL;
        v->boolean = 1;
        return literal(r, "true");
    case 'f': v->type = TFREC_JSON_BOOL; return literal(r, "false");
    case 'n': v->type = TFREC_JSON_NULL; return literal(r, "null");
    default: return number(r, v);
    }
}

int tfrec_json_parse(const char *text, size_t len, const tfrec_json_limits *limits,
                     tfrec_json_value **out, char *why, size_t whycap)
{
    *out = NULL;
    if (len > limits->max_bytes) {
        snprintf(why, whycap, "%zu bytes of JSON is over the %zu-byte limit", len,
                 limits->max_bytes);
        return TFREC_E_PARSE;
    }
    reader r = { text, text, text + len, limits, 0, 0, why, whycap };
    tfrec_json_value *root = calloc(1, sizeof *root);
    if (!root) {
        snprintf(why, whycap, "out of memory");
        return TFREC_E_NOMEM;
    }
    if (value(&r, root, 0) == 0) {
        skip_ws(&r);
        if (r.s == r.end) {
            *out = root;
            return TFREC_OK;
        }
        bad(&r, root->type == TFREC_JSON_OBJ ? "text after the object" : "text after the value");
    }
    tfrec_json_value_free(root);
    return r.nomem ? TFREC_E_NOMEM : TFREC_E_PARSE;
}

void tfrec_json_value_free(tfrec_json_value *v)
{
    /* Siblings iteratively, children recursively (the depth is bounded). */
    while (v) {
        tfrec_json_value *next = v->next;
        tfrec_json_value_free(v->child);
        free(v->key);
        free(v->str);
        free(v);
        v = next;
    }
}

const tfrec_json_value *tfrec_json_member(const tfrec_json_value *o, const char *key)
{
    if (!o || o->type != TFREC_JSON_OBJ)
        return NULL;
    for (const tfrec_json_value *e = o->child; e; e = e->next)
        if (strcmp(e->key, key) == 0)
            return e;
    return NULL;
}

const char *tfrec_json_member_str(const tfrec_json_value *o, const char *key)
{
    const tfrec_json_value *v = tfrec_json_member(o, key);
    return v && v->type == TFREC_JSON_STR ? v->str : NULL;
}

/* Sign and magnitude of an integer member; -1 when absent or not one. */
static int integer(const tfrec_json_value *o, const char *key, int *neg, uint64_t *mag)
{
    const tfrec_json_value *v = tfrec_json_member(o, key);
    if (!v)
        return -1;
    if (v->type == TFREC_JSON_NUM) {
        double a = v->num < 0 ? -v->num : v->num;
        if (a > 9007199254740992.0 || a != (double)(uint64_t)a)
            return -1;
        *neg = v->num < 0;
        *mag = (uint64_t)a;
        return 0;
    }
    if (v->type != TFREC_JSON_STR)
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
        if (s[i] < '0' || s[i] > '9')
            return -1;
        unsigned d = (unsigned)(s[i] - '0');
        if (n > (UINT64_MAX - d) / 10)
            return -1;
        n = n * 10 + d;
    }
    *mag = n;
    return 0;
}

int tfrec_json_member_u64(const tfrec_json_value *o, const char *key, uint64_t *out)
{
    int neg;
    uint64_t mag;
    if (integer(o, key, &neg, &mag) || neg)
        return -1;
    *out = mag;
    return 0;
}

int tfrec_json_member_i64(const tfrec_json_value *o, const char *key, int64_t *out)
{
    int neg;
    uint64_t mag;
    if (integer(o, key, &neg, &mag) || mag > (uint64_t)INT64_MAX + (uint64_t)neg)
        return -1;
    /* -2^63 has no positive counterpart: negate in unsigned arithmetic. */
    *out = neg ? (int64_t)(0 - mag) : (int64_t)mag;
    return 0;
}

void tfrec_json_emit(tfrec_json *j, const tfrec_json_value *v)
{
    if (v->key)
        tfrec_json_key(j, v->key);
    switch (v->type) {
    case TFREC_JSON_NULL: tfrec_json_null(j); break;
    case TFREC_JSON_BOOL: tfrec_json_bool(j, v->boolean); break;
    case TFREC_JSON_STR: tfrec_json_str_n(j, v->str, v->slen); break;
    case TFREC_JSON_NUM:
        if (strspn(v->str, "0123456789") == v->slen)
            tfrec_json_uint(j, strtoull(v->str, NULL, 10));
        else if (v->str[0] == '-' && strspn(v->str + 1, "0123456789") == v->slen - 1)
            tfrec_json_int(j, strtoll(v->str, NULL, 10));
        else
            tfrec_json_fixed(j, v->num, 3); /* the converter's only fractions */
        break;
    case TFREC_JSON_ARR:
    case TFREC_JSON_OBJ:
        if (v->type == TFREC_JSON_OBJ)
            tfrec_json_object_begin(j);
        else
            tfrec_json_array_begin(j);
        for (const tfrec_json_value *c = v->child; c; c = c->next)
            tfrec_json_emit(j, c);
        if (v->type == TFREC_JSON_OBJ)
            tfrec_json_object_end(j);
        else
            tfrec_json_array_end(j);
        break;
    }
}

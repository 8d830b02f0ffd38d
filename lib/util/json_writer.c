#include "util/json_writer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/vec.h"

void tfrec_json_init(tfrec_json *j, FILE *out)
{
    memset(j, 0, sizeof *j);
    j->out = out;
}

void tfrec_json_reset(tfrec_json *j)
{
    FILE *out = j->out;
    free(j->buf);
    tfrec_json_init(j, out);
}

char *tfrec_json_take(tfrec_json *j)
{
    char *s = j->failed ? NULL : j->buf;
    if (s)
        j->buf = NULL;
    tfrec_json_reset(j);
    return s;
}

int tfrec_json_failed(const tfrec_json *j)
{
    return j->failed;
}

static void put(tfrec_json *j, const char *s, size_t n)
{
    if (j->failed || n == 0)
        return;
    if (j->out) {
        if (fwrite(s, 1, n, j->out) != n)
            j->failed = 1;
        return;
    }
    if (n > SIZE_MAX - 1 - j->len || tfrec_vec_reserve(&j->buf, &j->cap, j->len + n + 1, 4096)) {
        j->failed = 1;
        return;
    }
    memcpy(j->buf + j->len, s, n);
    j->len += n;
    j->buf[j->len] = '\0';
}

static void put_c(tfrec_json *j, char c)
{
    put(j, &c, 1);
}

/* A value starts: separate it from the previous one at its level. */
static void value_start(tfrec_json *j)
{
    if (j->need_comma)
        put_c(j, ',');
    j->need_comma = 1;
}

static void open_level(tfrec_json *j, char bracket)
{
    value_start(j);
    put_c(j, bracket);
    j->need_comma = 0;
}

static void close_level(tfrec_json *j, char bracket)
{
    put_c(j, bracket);
    j->need_comma = 1;
}

void tfrec_json_object_begin(tfrec_json *j)
{
    open_level(j, '{');
}

void tfrec_json_object_end(tfrec_json *j)
{
    close_level(j, '}');
}

void tfrec_json_array_begin(tfrec_json *j)
{
    open_level(j, '[');
}

void tfrec_json_array_end(tfrec_json *j)
{
    close_level(j, ']');
}

void tfrec_json_newline(tfrec_json *j)
{
    put_c(j, '\n');
    j->need_comma = 0;
}

/* Length of the valid UTF-8 sequence at p (1..4), or 0 when the byte at p
 * does not start one. */
static size_t utf8_seq(const uint8_t *p, size_t left)
{
    uint8_t c = p[0];
    size_t n;
    uint32_t cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
        cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0; /* continuation byte, C0/C1 (always overlong), F5..FF */
    }
    if (left < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (p[i] & 0x3f);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

static void put_escaped(tfrec_json *j, const uint8_t *p, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    put_c(j, '"');
    size_t run = 0; /* bytes before i that go out unchanged */
    for (size_t i = 0; i < len;) {
        uint8_t c = p[i];
        size_t n = c >= 0x20 && c != '"' && c != '\\' && c != 0x7f ? utf8_seq(p + i, len - i) : 0;
        if (n) {
            i += n;
            run += n;
            continue;
        }
        put(j, (const char *)p + i - run, run);
        run = 0;
        char esc[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
        switch (c) {
        case '"': put(j, "\\\"", 2); break;
        case '\\': put(j, "\\\\", 2); break;
        case '\b': put(j, "\\b", 2); break;
        case '\f': put(j, "\\f", 2); break;
        case '\n': put(j, "\\n", 2); break;
        case '\r': put(j, "\\r", 2); break;
        case '\t': put(j, "\\t", 2); break;
        default:
            if (c >= 0x80) { /* not valid UTF-8: U+DC00 + byte */
                esc[2] = 'd';
                esc[3] = 'c';
            }
            put(j, esc, 6);
        }
        i++;
    }
    put(j, (const char *)p + len - run, run);
    put_c(j, '"');
}

void tfrec_json_key(tfrec_json *j, const char *key)
{
    value_start(j);
    put_escaped(j, (const uint8_t *)key, strlen(key));
    put_c(j, ':');
    j->need_comma = 0;
}

void tfrec_json_str_n(tfrec_json *j, const char *s, size_t len)
{
    value_start(j);
    put_escaped(j, (const uint8_t *)s, len);
}

void tfrec_json_str(tfrec_json *j, const char *s)
{
    if (s)
        tfrec_json_str_n(j, s, strlen(s));
    else
        tfrec_json_null(j);
}

static void put_number(tfrec_json *j, const char *t, int n)
{
    value_start(j);
    if (n > 0)
        put(j, t, (size_t)n);
}

void tfrec_json_int(tfrec_json *j, int64_t v)
{
    char t[32];
    put_number(j, t, snprintf(t, sizeof t, "%lld", (long long)v));
}

void tfrec_json_uint(tfrec_json *j, uint64_t v)
{
    char t[32];
    put_number(j, t, snprintf(t, sizeof t, "%llu", (unsigned long long)v));
}

void tfrec_json_fixed(tfrec_json *j, double v, int decimals)
{
    char t[384]; /* DBL_MAX has 309 digits before the point */
    if (!isfinite(v) || decimals < 0 || decimals > 17) {
        tfrec_json_null(j);
        return;
    }
    /* Beyond 1e15 the fixed form is a long run of digits that are not
     * significant (and past the 64 characters the reader takes for a
     * number): the shortest exact exponent form instead. */
    int n = fabs(v) < 1e15 ? snprintf(t, sizeof t, "%.*f", decimals, v)
                           : snprintf(t, sizeof t, "%.17g", v);
    put_number(j, t, n < (int)sizeof t ? n : (int)sizeof t - 1);
}

void tfrec_json_float32(tfrec_json *j, float v)
{
    if (isnan(v)) {
        tfrec_json_str(j, "NaN");
    } else if (isinf(v)) {
        tfrec_json_str(j, v > 0 ? "Infinity" : "-Infinity");
    } else {
        /* The shortest text that reads back as the same float: 1e-45, not
         * 1.4013e-45; 0.1, not 0.100000001; 100, not 1e+02. Some %.Ng with
         * N <= 9 always does; the first of the shortest is kept. */
        char t[32], c[32];
        int n = 0;
        for (int prec = 1; prec <= 9; prec++) {
            int k = snprintf(c, sizeof c, "%.*g", prec, (double)v);
            if ((n == 0 || k < n) && strtof(c, NULL) == v) {
                memcpy(t, c, (size_t)k + 1);
                n = k;
            }
        }
        put_number(j, t, n);
    }
}

void tfrec_json_bool(tfrec_json *j, int v)
{
    value_start(j);
    put(j, v ? "true" : "false", v ? 4 : 5);
}

void tfrec_json_null(tfrec_json *j)
{
    value_start(j);
    put(j, "null", 4);
}

void tfrec_json_field_str(tfrec_json *j, const char *key, const char *s)
{
    tfrec_json_key(j, key);
    tfrec_json_str(j, s);
}

void tfrec_json_field_int(tfrec_json *j, const char *key, int64_t v)
{
    tfrec_json_key(j, key);
    tfrec_json_int(j, v);
}

void tfrec_json_field_uint(tfrec_json *j, const char *key, uint64_t v)
{
    tfrec_json_key(j, key);
    tfrec_json_uint(j, v);
}

void tfrec_json_field_bool(tfrec_json *j, const char *key, int v)
{
    tfrec_json_key(j, key);
    tfrec_json_bool(j, v);
}

void tfrec_json_base64(tfrec_json *j, const void *data, size_t len)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const uint8_t *d = data;
    char buf[1024];
    size_t o = 0;
    value_start(j);
    put_c(j, '"');
    for (size_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t)d[i] << 16;
        if (i + 1 < len)
            v |= (uint32_t)d[i + 1] << 8;
        if (i + 2 < len)
            v |= d[i + 2];
        buf[o++] = tab[v >> 18];
        buf[o++] = tab[(v >> 12) & 63];
        buf[o++] = i + 1 < len ? tab[(v >> 6) & 63] : '=';
        buf[o++] = i + 2 < len ? tab[v & 63] : '=';
        if (o > sizeof buf - 4) {
            put(j, buf, o);
            o = 0;
        }
    }
    put(j, buf, o);
    put_c(j, '"');
}

int tfrec_json_is_text(const void *data, size_t len)
{
    const uint8_t *d = data;
    for (size_t i = 0; i < len;) {
        if (d[i] < 0x20 || d[i] == 0x7f)
            return 0;
        size_t n = utf8_seq(d + i, len - i);
        if (!n)
            return 0;
        i += n;
    }
    return 1;
}

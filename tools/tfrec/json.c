#include "json.h"

#include <math.h>
#include <stdlib.h>

/* Length of the valid UTF-8 sequence at p (1..4), or 0 if invalid. */
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
        return 0;
    }
    if (left < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (p[i] & 0x3f);
    }
    /* Overlong forms, surrogates and values past U+10FFFF are invalid. */
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

void json_string(FILE *out, const char *s, size_t len)
{
    const uint8_t *p = (const uint8_t *)s;
    putc('"', out);
    for (size_t i = 0; i < len;) {
        uint8_t c = p[i];
        if (c == '"' || c == '\\') {
            putc('\\', out);
            putc(c, out);
            i++;
        } else if (c < 0x20 || c == 0x7f) {
            switch (c) {
            case '\n': fputs("\\n", out); break;
            case '\t': fputs("\\t", out); break;
            case '\r': fputs("\\r", out); break;
            default: fprintf(out, "\\u%04x", c); break;
            }
            i++;
        } else {
            size_t n = utf8_seq(p + i, len - i);
            if (n == 0) {
                fputs("\\ufffd", out);
                i++;
            } else {
                fwrite(p + i, 1, n, out);
                i += n;
            }
        }
    }
    putc('"', out);
}

void json_key(FILE *out, const char *key)
{
    json_cstr(out, key);
    putc(':', out);
}

void json_base64(FILE *out, const uint8_t *d, size_t len)
{
    static const char tab[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char buf[4 * 256 + 4];
    size_t o = 0;
    putc('"', out);
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
        if (o >= sizeof buf - 4) {
            fwrite(buf, 1, o, out);
            o = 0;
        }
    }
    fwrite(buf, 1, o, out);
    putc('"', out);
}

void json_float(FILE *out, float v)
{
    if (isnan(v))
        fputs("\"NaN\"", out);
    else if (isinf(v))
        fputs(v > 0 ? "\"Infinity\"" : "\"-Infinity\"", out);
    else {
        /* The shortest form that reads back as the same float32 (0.1f is
         * "0.1", not 0.100000001); 9 digits always suffice. */
        char buf[32];
        for (int prec = 6; prec <= 9; prec++) {
            snprintf(buf, sizeof buf, "%.*g", prec, (double)v);
            if (strtof(buf, NULL) == v)
                break;
        }
        fputs(buf, out);
    }
}

int json_is_text(const uint8_t *d, size_t len)
{
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

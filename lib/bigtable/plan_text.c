/* The line format of split plans and part files: escaped words, a magic
 * line and a CRC32C trailer. */
#include "bigtable/plan_text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfrec/crc32c.h"
#include "util/errors.h"

#define CRC_LINE_LEN 16 /* "crc32c " + 8 hex + "\n" */

static int reserve(bt_text *t, size_t more)
{
    if (t->failed)
        return -1;
    if (more > SIZE_MAX / 2 - t->n || tfrec_vec_fit(&t->p, &t->cap, t->n + more + 1)) {
        t->failed = 1;
        return -1;
    }
    return 0;
}

void tfrec_bt_text_printf(bt_text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || reserve(t, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(t->p + t->n, (size_t)n + 1, fmt, ap);
    va_end(ap);
    t->n += (size_t)n;
}

void tfrec_bt_text_word(bt_text *t, const void *p, size_t n)
{
    const unsigned char *s = p;
    if (reserve(t, 3 * n + 1))
        return;
    if (!n) {
        t->p[t->n++] = '-';
    } else if (n == 1 && s[0] == '-') {
        memcpy(t->p + t->n, "%2D", 3);
        t->n += 3;
    } else {
        static const char hex[] = "0123456789ABCDEF";
        for (size_t i = 0; i < n; i++) {
            if (s[i] > ' ' && s[i] < 0x7f && s[i] != '%') {
                t->p[t->n++] = (char)s[i];
            } else {
                t->p[t->n++] = '%';
                t->p[t->n++] = hex[s[i] >> 4];
                t->p[t->n++] = hex[s[i] & 15];
            }
        }
    }
    t->p[t->n] = 0;
}

void tfrec_bt_text_seal(bt_text *t)
{
    if (t->failed)
        return;
    uint32_t crc = tfrec_crc32c(t->p, t->n);
    tfrec_bt_text_printf(t, "crc32c %08x\n", (unsigned)crc);
}

void tfrec_bt_text_free(bt_text *t)
{
    free(t->p);
    memset(t, 0, sizeof *t);
}

static int unhex(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int tfrec_bt_lines_open(bt_lines *l, const void *text, size_t len, const char *magic,
                        unsigned max_version, unsigned *version, char *why, size_t whycap)
{
    memset(l, 0, sizeof *l);
    const char *s = text;
    if (!s || len < CRC_LINE_LEN || s[len - 1] != '\n') {
        snprintf(why, whycap, "truncated (%zu bytes, no final line)", len);
        return TFREC_E_PARSE;
    }
    if (memchr(s, 0, len)) {
        snprintf(why, whycap, "a NUL byte in the text");
        return TFREC_E_PARSE;
    }
    /* the checksum line is the last one and covers everything before it */
    size_t body = len - CRC_LINE_LEN;
    if ((body && s[body - 1] != '\n') || memcmp(s + body, "crc32c ", 7) != 0) {
        snprintf(why, whycap, "truncated: the last line is not \"crc32c XXXXXXXX\"");
        return TFREC_E_PARSE;
    }
    uint32_t want = 0;
    for (size_t i = 0; i < 8; i++) {
        int h = unhex((unsigned char)s[body + 7 + i]);
        if (h < 0 || (s[body + 7 + i] >= 'A' && s[body + 7 + i] <= 'F')) {
            snprintf(why, whycap, "the crc32c line is not 8 lower-case hex digits");
            return TFREC_E_PARSE;
        }
        want = want << 4 | (uint32_t)h;
    }
    uint32_t got = tfrec_crc32c(s, body);
    if (got != want) {
        snprintf(why, whycap,
                 "checksum mismatch (crc32c %08x recorded, %08x computed): the file "
                 "was changed or cut short",
                 (unsigned)want, (unsigned)got);
        return TFREC_E_PARSE;
    }
    l->buf = malloc(body + 1);
    if (!l->buf) {
        snprintf(why, whycap, "out of memory");
        return TFREC_E_NOMEM;
    }
    memcpy(l->buf, s, body);
    l->buf[body] = 0;
    l->len = body;
    int rc = tfrec_bt_lines_next(l, why, whycap);
    if (rc != 1 || l->nwords != 2 || strcmp(l->words[0], magic) != 0) {
        if (rc >= 0)
            snprintf(why, whycap, "not a %s file (first line)", magic);
        tfrec_bt_lines_close(l);
        return TFREC_E_PARSE;
    }
    uint64_t v;
    if (tfrec_bt_word_u64(l->words[1], max_version, &v) || v < 1) {
        snprintf(why, whycap, "%s version %.20s: this library reads versions 1 to %u", magic,
                 l->words[1], max_version);
        tfrec_bt_lines_close(l);
        return TFREC_E_PARSE;
    }
    *version = (unsigned)v;
    return TFREC_OK;
}

int tfrec_bt_lines_next(bt_lines *l, char *why, size_t whycap)
{
    l->nwords = 0;
    if (l->pos >= l->len)
        return 0;
    char *line = l->buf + l->pos;
    char *nl = memchr(line, '\n', l->len - l->pos);
    if (!nl) { /* cannot happen: the body ends with a newline */
        snprintf(why, whycap, "line %zu: no end", l->lineno + 1);
        return TFREC_E_PARSE;
    }
    *nl = 0;
    l->pos = (size_t)(nl - l->buf) + 1;
    l->lineno++;
    char *p = line;
    while (*p) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        if (l->nwords == sizeof l->words / sizeof l->words[0]) {
            snprintf(why, whycap, "line %zu: too many words", l->lineno);
            return TFREC_E_PARSE;
        }
        l->words[l->nwords++] = p;
        while (*p && *p != ' ')
            p++;
        if (*p)
            *p++ = 0;
    }
    if (!l->nwords) {
        snprintf(why, whycap, "line %zu is empty", l->lineno);
        return TFREC_E_PARSE;
    }
    return 1;
}

void tfrec_bt_lines_close(bt_lines *l)
{
    free(l->buf);
    memset(l, 0, sizeof *l);
}

int tfrec_bt_word_key(const char *w, size_t max, bt_key *k)
{
    k->p = NULL;
    k->n = 0;
    if (!strcmp(w, "-"))
        return TFREC_OK;
    size_t n = 0;
    for (const char *s = w; *s; n++) {
        if (*s == '%') {
            if (unhex((unsigned char)s[1]) < 0 || unhex((unsigned char)s[2]) < 0)
                return TFREC_E_PARSE;
            s += 3;
        } else if ((unsigned char)*s <= ' ' || (unsigned char)*s >= 0x7f) {
            return TFREC_E_PARSE;
        } else {
            s++;
        }
    }
    if (n > max)
        return TFREC_E_PARSE;
    k->p = malloc(n ? n : 1);
    if (!k->p)
        return TFREC_E_NOMEM;
    k->n = n;
    size_t i = 0;
    for (const char *s = w; *s; i++) {
        if (*s == '%') {
            k->p[i] = (uint8_t)(unhex((unsigned char)s[1]) << 4 | unhex((unsigned char)s[2]));
            s += 3;
        } else {
            k->p[i] = (uint8_t)*s++;
        }
    }
    return TFREC_OK;
}

int tfrec_bt_word_u64(const char *w, uint64_t max, uint64_t *v)
{
    if (!*w || strlen(w) > 20)
        return TFREC_E_PARSE;
    uint64_t x = 0;
    for (const char *s = w; *s; s++) {
        if (*s < '0' || *s > '9')
            return TFREC_E_PARSE;
        unsigned d = (unsigned)(*s - '0');
        if (x > (UINT64_MAX - d) / 10)
            return TFREC_E_PARSE;
        x = x * 10 + d;
    }
    if (x > max)
        return TFREC_E_PARSE;
    *v = x;
    return TFREC_OK;
}

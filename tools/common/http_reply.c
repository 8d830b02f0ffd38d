#include "http_reply.h"

#include <limits.h>
#include <strings.h>

/* p[0..len) without its line end and surrounding blanks. */
static void trim(const char **p, size_t *len)
{
    while (*len && ((*p)[*len - 1] == '\r' || (*p)[*len - 1] == '\n' || (*p)[*len - 1] == ' ' ||
                    (*p)[*len - 1] == '\t'))
        (*len)--;
    while (*len && (**p == ' ' || **p == '\t')) {
        (*p)++;
        (*len)--;
    }
}

/* Decimal digits at p[0..len) from *i on into *v (no overflow); the count. */
static size_t digits(const char *p, size_t len, size_t *i, long long *v)
{
    size_t n = 0;
    *v = 0;
    for (; *i < len && p[*i] >= '0' && p[*i] <= '9'; (*i)++, n++) {
        if (*v > (LLONG_MAX - 9) / 10)
            return 0;
        *v = *v * 10 + (p[*i] - '0');
    }
    return n;
}

int http_status_code(const char *p, size_t len)
{
    /* "HTTP/" version SP 3DIGIT [SP reason] */
    if (len < 5 || strncasecmp(p, "HTTP/", 5) != 0)
        return -1;
    size_t i = 5;
    while (i < len && p[i] != ' ')
        i++;
    while (i < len && p[i] == ' ')
        i++;
    long long code;
    if (digits(p, len, &i, &code) != 3 || (i < len && p[i] != ' ' && p[i] != '\r'))
        return -1;
    return (int)code;
}

int http_header_value(const char *p, size_t len, const char *name, const char **value, size_t *vlen)
{
    size_t n = 0;
    while (name[n])
        n++;
    if (len <= n || p[n] != ':' || strncasecmp(p, name, n) != 0)
        return 0;
    *value = p + n + 1;
    *vlen = len - n - 1;
    trim(value, vlen);
    return 1;
}

int http_content_range_total(const char *v, size_t vlen, long long *total)
{
    trim(&v, &vlen);
    if (vlen < 6 || strncasecmp(v, "bytes", 5) != 0 || (v[5] != ' ' && v[5] != '\t'))
        return -1;
    size_t i = 6;
    while (i < vlen && (v[i] == ' ' || v[i] == '\t'))
        i++;
    long long a, b;
    if (i < vlen && v[i] == '*') {
        i++;
    } else {
        if (!digits(v, vlen, &i, &a) || i >= vlen || v[i++] != '-' || !digits(v, vlen, &i, &b) ||
            b < a)
            return -1;
    }
    if (i >= vlen || v[i++] != '/')
        return -1;
    long long t;
    if (!digits(v, vlen, &i, &t) || i != vlen)
        return -1;
    *total = t;
    return 0;
}

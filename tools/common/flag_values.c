/* Parsing flag values: booleans, integers, sizes, floating point. Every
 * parser rejects trailing junk, empty strings and overflow. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "flags.h"

int cli_parse_bool(const char *s, int *out, char *err, size_t errcap)
{
    static const char *const yes[] = { "true", "t", "1", "yes", "y", NULL };
    static const char *const no[] = { "false", "f", "0", "no", "n", NULL };
    for (int i = 0; yes[i]; i++) {
        if (!strcasecmp(s, yes[i])) {
            *out = 1;
            return 0;
        }
        if (!strcasecmp(s, no[i])) {
            *out = 0;
            return 0;
        }
    }
    snprintf(err, errcap, "'%s' is not a boolean (true/false, t/f, 1/0, yes/no)", s);
    return -1;
}

int cli_parse_int64(const char *s, int64_t *out, char *err, size_t errcap)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    /* strtoll skips leading spaces; a value with them is a typo, not a number */
    if (!*s || isspace((unsigned char)*s) || end == s || *end) {
        snprintf(err, errcap, "'%s' is not an integer", s);
        return -1;
    }
    if (errno == ERANGE) {
        snprintf(err, errcap, "'%s' is out of the 64-bit integer range", s);
        return -1;
    }
    *out = v;
    return 0;
}

/* The digits of an unsigned value; *end points after them. strtoull would
 * accept "-1" (as 2^64-1) and leading spaces, so digits are checked first. */
static int parse_digits(const char *s, uint64_t *out, const char **end)
{
    if (!isdigit((unsigned char)*s))
        return -1;
    uint64_t v = 0;
    for (; isdigit((unsigned char)*s); s++) {
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -2;
        v = v * 10 + d;
    }
    *out = v;
    *end = s;
    return 0;
}

int cli_parse_uint64(const char *s, uint64_t *out, char *err, size_t errcap)
{
    const char *end;
    uint64_t v;
    int rc = parse_digits(s, &v, &end);
    if (rc == -2) {
        snprintf(err, errcap, "'%s' is too large (at most %llu)", s,
                 (unsigned long long)UINT64_MAX);
        return -1;
    }
    if (rc || *end) {
        snprintf(err, errcap, "'%s' is not a non-negative integer", s);
        return -1;
    }
    *out = v;
    return 0;
}

int cli_parse_size(const char *s, uint64_t *out, char *err, size_t errcap)
{
    const char *end;
    uint64_t v;
    int rc = parse_digits(s, &v, &end);
    unsigned shift = 0;
    if (rc == 0) {
        switch (*end) {
        case 'k':
        case 'K': shift = 10; break;
        case 'm':
        case 'M': shift = 20; break;
        case 'g':
        case 'G': shift = 30; break;
        case 't':
        case 'T': shift = 40; break;
        }
        if (shift) {
            end++;
            /* "1Ki", "1KiB" and "1KB" all mean 1024 bytes */
            if (!strcmp(end, "i") || !strcmp(end, "iB") || !strcmp(end, "B"))
                end += strlen(end);
        }
    }
    if (rc == -2 || (rc == 0 && !*end && shift && v > (UINT64_MAX >> shift))) {
        snprintf(err, errcap, "'%s' is too large (at most %llu bytes)", s,
                 (unsigned long long)UINT64_MAX);
        return -1;
    }
    if (rc || *end) {
        snprintf(err, errcap, "'%s' is not a size (a number with an optional K, M, G or T suffix)",
                 s);
        return -1;
    }
    *out = v << shift;
    return 0;
}

int cli_parse_double(const char *s, double *out, char *err, size_t errcap)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || isspace((unsigned char)*s) || end == s || *end || isnan(v)) {
        snprintf(err, errcap, "'%s' is not a number", s);
        return -1;
    }
    if (errno == ERANGE || isinf(v)) {
        snprintf(err, errcap, "'%s' is out of range", s);
        return -1;
    }
    *out = v;
    return 0;
}

size_t cli_edit_distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > 64 || m > 64) /* names are short; long input is not a typo of one */
        return (size_t)-1;
    size_t d[65][65];
    for (size_t i = 0; i <= n; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= m; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= n; i++) {
        for (size_t j = 1; j <= m; j++) {
            size_t cost = a[i - 1] != b[j - 1];
            size_t best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < best)
                best = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    }
    return d[n][m];
}

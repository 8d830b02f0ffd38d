/* The `.idx` file's name, its parser and its freshness rule (the format is
 * described in index_format.h). */
#include <stdlib.h>
#include <string.h>

#include "record/index_format.h"
#include "tfrec/dataset.h"

char *tfrec_idx_name(const char *name)
{
    size_t n = strlen(name);
    char *s = malloc(n + 5);
    if (s)
        memcpy(s, name, n), memcpy(s + n, ".idx", 5);
    return s;
}

/* Order name[0..len) against s as strcmp would order that prefix as a
 * string of its own. */
static int cmp_prefix(const char *name, size_t len, const char *s)
{
    int c = strncmp(name, s, len);
    return c ? c : s[len] ? -1 : 0;
}

int tfrec_index_beside_match(const char *name, const char *const *matches, size_t n)
{
    size_t len = name ? strlen(name) : 0;
    if (len <= 4 || strcmp(name + len - 4, ".idx") != 0 || !matches)
        return 0;
    len -= 4; /* X of "X.idx", looked for by bisection */
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = matches[mid] ? cmp_prefix(name, len, matches[mid]) : 1;
        if (c == 0)
            return 1;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return 0;
}

/* ------------------------------------------------------------- parsing */

enum { CHUNK = 64 * 1024 };

static int parse_u64(const char **p, const char *end, uint64_t *v)
{
    const char *s = *p;
    uint64_t x = 0;
    if (s == end || *s < '0' || *s > '9')
        return -1;
    for (; s < end && *s >= '0' && *s <= '9'; s++) {
        unsigned d = (unsigned)(*s - '0');
        if (x > (UINT64_MAX - d) / 10)
            return -1;
        x = x * 10 + d;
    }
    *p = s;
    *v = x;
    return 0;
}

static const char *skip_blanks(const char *s, const char *end)
{
    while (s < end && (*s == ' ' || *s == '\t'))
        s++;
    return s;
}

/* One line of n bytes without its newline: 1 with an entry, 0 when blank,
 * a failure when it is not "OFFSET LENGTH". */
static int parse_line(const char *s, size_t n, const char *name, uint64_t line, uint64_t *off,
                      uint64_t *len, tfrec_err *err)
{
    if (n > TFREC_IDX_LINE_MAX)
        return tfrec_fail(err, TFREC_E_PARSE, "%s: line %llu is longer than %d bytes", name,
                          (unsigned long long)line, TFREC_IDX_LINE_MAX);
    const char *end = s + n;
    if (n && end[-1] == '\r')
        end--;
    s = skip_blanks(s, end);
    if (s == end)
        return 0; /* blank lines are harmless */
    if (parse_u64(&s, end, off) < 0 || s == end || (*s != ' ' && *s != '\t'))
        goto bad;
    s = skip_blanks(s, end);
    if (parse_u64(&s, end, len) < 0)
        goto bad;
    if (skip_blanks(s, end) != end)
        goto bad;
    return 1;
bad:
    return tfrec_fail(err, TFREC_E_PARSE,
                      "%s: line %llu: expected 'OFFSET LENGTH' (two decimal numbers)", name,
                      (unsigned long long)line);
}

/* Read in chunks, keeping an unfinished line for the next one: a line
 * longer than TFREC_IDX_LINE_MAX is an error, so the carry stays small. */
int tfrec_idx_parse(const tfrec_io *src, const char *name, tfrec_idx_entry_fn fn, void *ctx,
                    tfrec_err *err)
{
    char *buf = malloc(CHUNK + TFREC_IDX_LINE_MAX);
    int rc = buf ? TFREC_OK : tfrec_fail(err, TFREC_E_NOMEM, "%s: out of memory", name);
    size_t have = 0; /* bytes of an unfinished line at buf[0] */
    uint64_t line = 0;
    while (rc == TFREC_OK) {
        ptrdiff_t got = src->read(src->ctx, buf + have, CHUNK);
        if (got < 0) {
            const char *why = src->errmsg ? src->errmsg(src->ctx) : NULL;
            rc = tfrec_fail(err, (int)got, "%s: %s", name,
                            why && *why ? why : tfrec_strerror((int)got));
            break;
        }
        size_t n = have + (size_t)got, pos = 0;
        if (got == 0 && have) /* a last line without its newline */
            buf[n++] = '\n';
        for (;;) {
            char *nl = memchr(buf + pos, '\n', n - pos);
            if (!nl)
                break;
            line++;
            uint64_t off, len;
            rc = parse_line(buf + pos, (size_t)(nl - (buf + pos)), name, line, &off, &len, err);
            if (rc > 0)
                rc = fn(ctx, off, len, line, err);
            if (rc < 0)
                break;
            pos = (size_t)(nl - buf) + 1;
        }
        if (rc < 0 || got == 0)
            break;
        have = n - pos;
        if (have > TFREC_IDX_LINE_MAX) {
            rc = tfrec_fail(err, TFREC_E_PARSE, "%s: line %llu is longer than %d bytes", name,
                            (unsigned long long)line + 1, TFREC_IDX_LINE_MAX);
            break;
        }
        memmove(buf, buf + pos, have);
    }
    free(buf);
    return rc < 0 ? rc : TFREC_OK;
}

/* ------------------------------------------------------------ freshness */

int tfrec_idx_fresh_by_time(const char *iname, const char *path, int64_t index_mtime_ns,
                            int64_t data_mtime_ns)
{
    if (index_mtime_ns && data_mtime_ns && index_mtime_ns < data_mtime_ns)
        return tfrec_fail(NULL, TFREC_E_STATE, "%s: stale: older than %s (modified after indexing)",
                          iname, path);
    return TFREC_OK;
}

int tfrec_idx_fresh_by_end(const char *iname, const char *path, uint64_t records_end,
                           uint64_t data_size)
{
    if (records_end != data_size)
        return tfrec_fail(NULL, TFREC_E_STATE,
                          "%s: stale: its records end at %llu but %s has %llu bytes", iname,
                          (unsigned long long)records_end, path, (unsigned long long)data_size);
    return TFREC_OK;
}

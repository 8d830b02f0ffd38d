#include "log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char *cli_log_name = "tfrec";

int cli_log_prefix(char *buf, int size, const char *name, int tty)
{
    char ts[32] = "";
    if (!tty) {
        time_t now = time(NULL);
        struct tm tm;
        gmtime_r(&now, &tm);
        strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ ", &tm);
    }
    int n = snprintf(buf, (size_t)size, "%s%s: ", ts, name);
    return n < 0 ? 0 : n >= size ? size - 1 : n;
}

/* Appends to a growing buffer; on allocation failure the line is cut short
 * rather than lost. */
typedef struct line_buf {
    char *p;
    size_t len, cap;
} line_buf;

static void put(line_buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = (b->len + n + 1) * 2;
        char *p = realloc(b->p, cap);
        if (!p)
            return;
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void cli_vlog_as(const char *name, const char *fmt, va_list ap)
{
    char msg[2048];
    char *text = msg;
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(msg, sizeof msg, fmt, ap);
    if (n >= (int)sizeof msg && (text = malloc((size_t)n + 1)) != NULL)
        vsnprintf(text, (size_t)n + 1, fmt, again);
    else if (!text)
        text = msg; /* out of memory: the cut message */
    va_end(again);

    char prefix[160];
    int plen = cli_log_prefix(prefix, sizeof prefix, name, isatty(STDERR_FILENO));
    line_buf b = { 0 };
    for (const char *line = text;;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        put(&b, prefix, (size_t)plen);
        put(&b, line, len);
        put(&b, "\n", 1);
        if (!nl || !nl[1])
            break;
        line = nl + 1;
    }
    if (b.p)
        fputs(b.p, stderr);
    else
        fprintf(stderr, "%s%s\n", prefix, text);
    fflush(stderr);
    free(b.p);
    if (text != msg)
        free(text);
}

void cli_log_as(const char *name, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cli_vlog_as(name, fmt, ap);
    va_end(ap);
}

void cli_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cli_vlog_as(cli_log_name, fmt, ap);
    va_end(ap);
}

void cli_warn(const char *fmt, ...)
{
    char name[160];
    snprintf(name, sizeof name, "%s: warning", cli_log_name);
    va_list ap;
    va_start(ap, fmt);
    cli_vlog_as(name, fmt, ap);
    va_end(ap);
}

/* The flag parser: argument forms, flagfiles, values into destinations.
 * See flags.h for the accepted forms. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "flags.h"

#include "files.h"
#include "progress.h"
#include "tfrec/version.h"

/* Parser results besides 0 (go on) and exit statuses. */
enum { REQ_HELP = -10, REQ_HELPFULL = -11, REQ_VERSION = -12 };

typedef struct parser {
    cli_cmdline *cl;
    const char *file; /* flagfile being read, NULL for the command line */
    int line;
} parser;

static void verror(const parser *p, const char *fmt, va_list ap)
{
    char msg[1024], where[512] = "";
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (p->file)
        snprintf(where, sizeof where, "%s:%d: ", p->file, p->line);
    cli_log_as(p->cl->prog, "%s%s\nTry '%s --help' for more information.", where, msg, p->cl->prog);
}

static int error(const parser *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    verror(p, fmt, ap);
    va_end(ap);
    return EXIT_USAGE;
}

void cli_usage_error(const cli_cmdline *cl, const char *fmt, ...)
{
    parser p = { (cli_cmdline *)cl, NULL, 0 };
    va_list ap;
    va_start(ap, fmt);
    verror(&p, fmt, ap);
    va_end(ap);
}

/* name[0..len) equals want, '-' and '_' being the same character. */
static int name_eq(const char *name, size_t len, const char *want)
{
    size_t i = 0;
    for (; i < len && want[i]; i++) {
        char a = name[i] == '-' ? '_' : name[i], b = want[i] == '-' ? '_' : want[i];
        if (a != b)
            return 0;
    }
    return i == len && !want[i];
}

static cli_flag *find_long(const cli_cmdline *cl, const char *name, size_t len)
{
    for (cli_flag *f = cl->flags; f && f->name; f++)
        if (name_eq(name, len, f->name))
            return f;
    return NULL;
}

static cli_flag *find_short(const cli_cmdline *cl, char c)
{
    for (cli_flag *f = cl->flags; f && f->name; f++)
        if (f->short_name && f->short_name == c)
            return f;
    return NULL;
}

cli_flag *cli_flag_get(const cli_cmdline *cl, const char *name)
{
    return find_long(cl, name, strlen(name));
}

int cli_flag_seen(const cli_cmdline *cl, const char *name)
{
    const cli_flag *f = cli_flag_get(cl, name);
    return f && f->seen;
}

static int keep(cli_cmdline *cl, char *s)
{
    if (cl->nowned_ == cl->owned_cap_) {
        size_t cap = cl->owned_cap_ ? cl->owned_cap_ * 2 : 16;
        char **n = realloc(cl->owned_, cap * sizeof *n);
        if (!n)
            return -1;
        cl->owned_ = n;
        cl->owned_cap_ = cap;
    }
    cl->owned_[cl->nowned_++] = s;
    return 0;
}

/* Store value (not NULL) into f; shown is how the user named the flag. */
static int set_value(parser *p, cli_flag *f, const char *shown, const char *value)
{
    char err[256] = "";
    int bad = 0;
    switch (f->type) {
    case CLI_BOOL: bad = cli_parse_bool(value, (int *)f->dest, err, sizeof err); break;
    case CLI_STRING: *(const char **)f->dest = value; break;
    case CLI_PATH:
    case CLI_LOCAL_PATH:
        bad = cli_path_check(value, f->type == CLI_LOCAL_PATH, err, sizeof err) != 0;
        if (!bad)
            *(const char **)f->dest = value;
        break;
    case CLI_INT:
    case CLI_INT64: {
        int64_t v, lo = f->min, hi = f->max;
        if (f->type == CLI_INT && lo >= hi) {
            lo = -2147483647 - 1;
            hi = 2147483647;
        }
        if (!(bad = cli_parse_int64(value, &v, err, sizeof err))) {
            if (lo < hi && (v < lo || v > hi)) {
                snprintf(err, sizeof err, "%lld is out of range %lld..%lld", (long long)v,
                         (long long)lo, (long long)hi);
                bad = 1;
            } else if (f->type == CLI_INT) {
                *(int *)f->dest = (int)v;
            } else {
                *(int64_t *)f->dest = v;
            }
        }
        break;
    }
    case CLI_UINT64:
    case CLI_SIZE: {
        uint64_t v;
        bad = f->type == CLI_SIZE ? cli_parse_size(value, &v, err, sizeof err)
                                  : cli_parse_uint64(value, &v, err, sizeof err);
        if (!bad && f->umin < f->umax && (v < f->umin || v > f->umax)) {
            snprintf(err, sizeof err, "%s is out of range %llu..%llu", value,
                     (unsigned long long)f->umin, (unsigned long long)f->umax);
            bad = 1;
        } else if (!bad) {
            *(uint64_t *)f->dest = v;
        }
        break;
    }
    case CLI_DOUBLE: {
        double v;
        if (!(bad = cli_parse_double(value, &v, err, sizeof err))) {
            if (f->dmin < f->dmax && (v < f->dmin || v > f->dmax)) {
                snprintf(err, sizeof err, "%s is out of range %g..%g", value, f->dmin, f->dmax);
                bad = 1;
            } else {
                *(double *)f->dest = v;
            }
        }
        break;
    }
    case CLI_CHOICE: {
        bad = 1;
        for (int i = 0; f->choices[i]; i++)
            if (!strcasecmp(value, f->choices[i])) {
                *(int *)f->dest = i;
                bad = 0;
            }
        if (bad) {
            size_t o = (size_t)snprintf(err, sizeof err, "'%s' is not one of ", value);
            for (int i = 0; f->choices[i] && o < sizeof err; i++)
                o +=
                    (size_t)snprintf(err + o, sizeof err - o, "%s%s", i ? ", " : "", f->choices[i]);
        }
        break;
    }
    case CLI_CUSTOM: bad = f->parse(value, f->dest, err, sizeof err) != 0; break;
    }
    if (bad)
        return error(p, "%s: %s", shown, err[0] ? err : "bad value");
    f->seen++;
    return 0;
}

/* Suggest the declared name nearest to an unknown one, if it is close. */
static const char *suggest(const cli_cmdline *cl, const char *name, size_t len, char *buf,
                           size_t cap)
{
    static const char *const builtin[] = { "help", "helpfull", "version", "flagfile", NULL };
    char typed[80];
    if (len < 3 || len >= sizeof typed)
        return NULL;
    for (size_t i = 0; i < len; i++)
        typed[i] = name[i] == '-' ? '_' : name[i];
    typed[len] = '\0';
    size_t best = (size_t)-1;
    const char *best_name = NULL;
    int best_neg = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (const cli_flag *f = cl->flags; f && f->name; f++) {
            char cand[80];
            if (pass == 1 && f->type != CLI_BOOL)
                continue;
            snprintf(cand, sizeof cand, "%s%s", pass ? "no" : "", f->name);
            for (char *c = cand; *c; c++)
                if (*c == '-')
                    *c = '_';
            size_t d = cli_edit_distance(typed, cand);
            if (d < best) {
                best = d;
                best_name = f->name;
                best_neg = pass;
            }
        }
    }
    for (int i = 0; builtin[i]; i++) {
        size_t d = cli_edit_distance(typed, builtin[i]);
        if (d < best) {
            best = d;
            best_name = builtin[i];
            best_neg = 0;
        }
    }
    if (!best_name || best > (len >= 5 ? 2u : 1u))
        return NULL;
    snprintf(buf, cap, "%s%s", best_neg ? "no" : "", best_name);
    return buf;
}

static int unknown(parser *p, const char *arg, const char *name, size_t len)
{
    char buf[96];
    const char *s = suggest(p->cl, name, len, buf, sizeof buf);
    size_t shown = (size_t)(name - arg) + len;
    if (s)
        return error(p, "unknown flag %.*s (did you mean --%s?)", (int)shown, arg, s);
    return error(p, "unknown flag %.*s", (int)shown, arg);
}

static int parse_list(parser *p, char **args, const int *lines, int n, int depth);

/* Lines of a flagfile, each one argument; "--name value" becomes
 * "--name=value" so a value may follow the name after a space. */
static int read_flagfile(parser *p, const char *path, int depth)
{
    if (depth >= CLI_FLAGFILE_DEPTH)
        return error(p,
                     "--flagfile=%s: flagfiles nested more than %d deep (does one include "
                     "itself?)",
                     path, CLI_FLAGFILE_DEPTH);
    FILE *fp = fopen(path, "r");
    if (!fp)
        return error(p, "--flagfile=%s: cannot open: %s", path, strerror(errno));
    char **args = NULL, *line = NULL;
    int *lines = NULL, n = 0, cap = 0, lineno = 0, rc = 0;
    size_t lcap = 0;
    ssize_t len;
    while ((len = getline(&line, &lcap, fp)) >= 0) {
        lineno++;
        char *s = line, *e = line + len;
        while (s < e && strchr(" \t\r\n", *s))
            s++;
        while (e > s && strchr(" \t\r\n", e[-1]))
            e--;
        *e = '\0';
        if (!*s || *s == '#' || (s[0] == '/' && s[1] == '/'))
            continue;
        if (*s != '-' || !s[1]) {
            parser at = { p->cl, path, lineno };
            rc = error(&at, "'%s' is not a flag (one --name=value per line)", s);
            break;
        }
        size_t ws = strcspn(s, " \t"), eq = strcspn(s, "=");
        char *arg;
        if (s[ws] && ws < eq) { /* "--name value" */
            char *v = s + ws;
            while (*v == ' ' || *v == '\t')
                v++;
            arg = malloc(ws + strlen(v) + 2);
            if (arg)
                sprintf(arg, "%.*s=%s", (int)ws, s, v);
        } else {
            arg = strdup(s);
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            char **na = realloc(args, (size_t)cap * sizeof *na);
            int *nl = realloc(lines, (size_t)cap * sizeof *nl);
            if (na)
                args = na;
            if (nl)
                lines = nl;
            if (!na || !nl) {
                free(arg);
                arg = NULL;
            }
        }
        if (!arg || keep(p->cl, arg)) {
            free(arg);
            rc = error(p, "out of memory reading --flagfile=%s", path);
            break;
        }
        args[n] = arg;
        lines[n++] = lineno;
    }
    if (!rc && ferror(fp))
        rc = error(p, "--flagfile=%s: read error: %s", path, strerror(errno));
    fclose(fp);
    free(line);
    if (!rc) {
        parser sub = { p->cl, path, 0 };
        rc = parse_list(&sub, args, lines, n, depth + 1);
    }
    free(args);
    free(lines);
    return rc;
}

/* Value of a flag given without "=value": the next argument, if the list
 * is the command line (a flagfile line stands alone). */
static const char *next_value(parser *p, char **args, int n, int *i)
{
    if (p->file || *i + 1 >= n)
        return NULL;
    return args[++*i];
}

/* "-x", "-xVALUE", "-x VALUE", "-abc" (bundled booleans). */
static int parse_short(parser *p, char **args, int n, int *i, const char *arg)
{
    for (const char *c = arg + 1; *c; c++) {
        cli_flag *f = find_short(p->cl, *c);
        if (!f && *c == 'h')
            return REQ_HELP;
        if (!f) {
            if (c == arg + 1)
                return error(p, "unknown flag -%c", *c);
            return error(p, "unknown flag -%c (in %s)", *c, arg);
        }
        char shown[3] = { '-', *c, '\0' };
        if (f->type == CLI_BOOL && c[1] == '=')
            return set_value(p, f, shown, c + 2);
        if (f->type == CLI_BOOL) {
            *(int *)f->dest = 1;
            f->seen++;
            continue;
        }
        const char *v = c[1] == '=' ? c + 2 : c[1] ? c + 1 : next_value(p, args, n, i);
        if (!v)
            return error(p, "%s needs a value", shown);
        return set_value(p, f, shown, v);
    }
    return 0;
}

static int parse_flag(parser *p, char **args, int n, int *i, int depth)
{
    const char *arg = args[*i];
    int single = arg[1] != '-';
    const char *name = arg + (single ? 1 : 2);
    const char *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    const char *value = eq ? eq + 1 : NULL;

    if (single && len == 1)
        return parse_short(p, args, n, i, arg);
    if (name_eq(name, len, "help") || name_eq(name, len, "helpshort"))
        return REQ_HELP;
    if (name_eq(name, len, "helpfull"))
        return REQ_HELPFULL;
    if (name_eq(name, len, "version"))
        return REQ_VERSION;
    if (name_eq(name, len, "flagfile")) {
        if (!value && !(value = next_value(p, args, n, i)))
            return error(p, "--flagfile needs a value");
        return read_flagfile(p, value, depth);
    }
    char shown[96];
    snprintf(shown, sizeof shown, "--%.*s", (int)(len < 80 ? len : 80), name);
    cli_flag *f = find_long(p->cl, name, len);
    if (f) {
        if (f->type == CLI_BOOL && !value)
            value = "true";
        if (!value && !(value = next_value(p, args, n, i)))
            return error(p, "%s needs a value", shown);
        return set_value(p, f, shown, value);
    }
    if (len > 2 && !strncmp(name, "no", 2) && (f = find_long(p->cl, name + 2, len - 2)) &&
        f->type == CLI_BOOL) {
        if (value)
            return error(p, "%s takes no value (it is --%s=false)", shown, f->name);
        *(int *)f->dest = 0;
        f->seen++;
        return 0;
    }
    if (single && find_short(p->cl, name[0]))
        return parse_short(p, args, n, i, arg);
    return unknown(p, arg, name, len);
}

static int parse_list(parser *p, char **args, const int *lines, int n, int depth)
{
    cli_cmdline *cl = p->cl;
    int flags_done = 0;
    for (int i = 0; i < n; i++) {
        const char *a = args[i];
        if (lines)
            p->line = lines[i];
        if (!flags_done && !p->file && !strcmp(a, "--")) {
            flags_done = 1;
            continue;
        }
        if (flags_done || a[0] != '-' || !a[1]) { /* "-" alone is a file name: stdin */
            if (cl->max_args >= 0 && cl->nargs >= cl->max_args)
                return error(p,
                             cl->max_args ? "unexpected argument '%s'"
                                          : "unexpected argument '%s' (flags are --name=value)",
                             a);
            cl->args[cl->nargs++] = args[i];
            continue;
        }
        int rc = parse_flag(p, args, n, &i, depth);
        if (rc)
            return rc;
    }
    return 0;
}

int cli_parse(cli_cmdline *cl, int argc, char **argv)
{
    cli_log_name = cl->prog; /* log lines name the tool */
    /* Past the file-size limit (ulimit -f) a write fails with EFBIG and
     * the tool's usual cleanup and message run, instead of SIGXFSZ killing
     * it (exit 153) with its temporary files left behind. Every tool
     * parses its command line first. */
    signal(SIGXFSZ, SIG_IGN);
    cl->nargs = 0;
    cl->args = calloc((size_t)(argc > 0 ? argc : 1), sizeof *cl->args);
    if (!cl->args) {
        cli_log("out of memory");
        return EXIT_IO;
    }
    parser p = { cl, NULL, 0 };
    int rc = argc > 1 ? parse_list(&p, argv + 1, NULL, argc - 1, 0) : 0;
    switch (rc) {
    case 0: return CLI_PARSED;
    case REQ_HELP:
    case REQ_HELPFULL: cli_print_help(cl, stdout, rc == REQ_HELPFULL); return EXIT_OK;
    case REQ_VERSION: {
        size_t w = strcspn(cl->prog, " ");
        printf("%.*s (libtfrec) %s\n", (int)w, cl->prog, tfrec_version());
        return EXIT_OK;
    }
    default: return rc;
    }
}

void cli_cmdline_free(cli_cmdline *cl)
{
    for (size_t i = 0; i < cl->nowned_; i++)
        free(cl->owned_[i]);
    free(cl->owned_);
    free(cl->args);
    cl->owned_ = NULL;
    cl->args = NULL;
    cl->nowned_ = cl->owned_cap_ = 0;
    cl->nargs = 0;
}

size_t cli_flags_copy(cli_flag *out, size_t cap, const cli_flag *flags, size_t n)
{
    if (n > cap)
        return 0;
    memcpy(out, flags, n * sizeof *flags);
    return n;
}

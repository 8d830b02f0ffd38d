/* Command-line helpers: file lists, sizes, the shared read options. */
#include <errno.h>
#include <getopt.h>
#include <glob.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "util/vec.h"

int cli_exit_for(int rc)
{
    switch (rc) {
    case TFREC_OK:
    case TFREC_END:
        return EXIT_OK;
    case TFREC_E_TRUNCATED:
    case TFREC_E_BAD_LENGTH_CRC:
    case TFREC_E_BAD_DATA_CRC:
    case TFREC_E_RECORD_TOO_LARGE:
    case TFREC_E_TRAILING_GARBAGE:
    case TFREC_E_COMPRESSION:
    case TFREC_E_PARSE:
        return EXIT_DATA;
    case TFREC_E_INVALID:
        return EXIT_USAGE;
    default:
        return EXIT_IO;
    }
}

void cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "tfrec%s%s: ", cmd ? " " : "", cmd ? cmd : "");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'tfrec %s%s--help' for more information.\n", cmd ? cmd : "",
            cmd ? " " : "");
}

void cli_bad_option(char **argv)
{
    cli_usage_error(argv[0], "unknown option or missing value: '%s'", argv[optind - 1]);
}

static int push(cli_files *f, const char *p)
{
    if (tfrec_vec_reserve(&f->paths, &f->cap, f->n + 1, 16))
        return -1;
    if (!(f->paths[f->n] = strdup(p)))
        return -1;
    f->n++;
    return 0;
}

int cli_expand_files(cli_files *out, char **args, int n, const char *cmd)
{
    memset(out, 0, sizeof *out);
    for (int i = 0; i < n; i++) {
        const char *a = args[i];
        struct stat st;
        /* The shell normally expands patterns; quoted ones (or too many
         * files for one command line) arrive here and go through glob(3).
         * A name that exists is taken literally even if it has a '*'. */
        if (strpbrk(a, "*?[") && stat(a, &st) != 0) {
            glob_t g;
            int rc = glob(a, 0, NULL, &g);
            if (rc == GLOB_NOMATCH) {
                fprintf(stderr, "tfrec: no files match '%s'\n", a);
                cli_files_free(out);
                return EXIT_IO;
            }
            if (rc != 0) {
                fprintf(stderr, "tfrec: cannot expand '%s': %s\n", a,
                        rc == GLOB_NOSPACE ? "out of memory" : "read error");
                cli_files_free(out);
                return EXIT_IO;
            }
            for (size_t k = 0; k < g.gl_pathc; k++) { /* glob sorts them */
                if (push(out, g.gl_pathv[k])) {
                    globfree(&g);
                    cli_files_free(out);
                    return EXIT_IO;
                }
            }
            globfree(&g);
        } else if (push(out, a)) {
            cli_files_free(out);
            return EXIT_IO;
        }
    }
    if (out->n == 0) {
        cli_usage_error(cmd, "no input files");
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

void cli_files_free(cli_files *f)
{
    for (size_t i = 0; i < f->n; i++)
        free(f->paths[i]);
    free(f->paths);
    memset(f, 0, sizeof *f);
}

int cli_parse_size(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    if (!s || !*s || *s == '-')
        return -1;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return -1;
    unsigned shift = 0;
    switch (*end) {
    case '\0': break;
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: return -1;
    }
    if (shift && (!strcmp(end, "iB") || !strcmp(end, "B")))
        end += strlen(end);
    if (*end || (shift && v > (UINT64_MAX >> shift)))
        return -1;
    *out = (uint64_t)v << shift;
    return 0;
}

int cli_read_option(int opt, const char *arg, cli_read_opts *o)
{
    switch (opt) {
    case 'c': {
        int c = tfrec_compression_from_name(arg);
        if (c < 0 || !*arg) {
            fprintf(stderr, "tfrec: unknown compression '%s' (AUTO, NONE, ZLIB or GZIP)\n", arg);
            return -1;
        }
        o->compression = c;
        return 1;
    }
    case 'S':
        o->skip_corrupt = 1;
        return 1;
    case 'M':
        if (cli_parse_size(arg, &o->max_record_size) || o->max_record_size == 0) {
            fprintf(stderr, "tfrec: bad size '%s' for --max-record-size\n", arg);
            return -1;
        }
        return 1;
    }
    return 0;
}

int cli_next_option(int argc, char **argv, const char *shortopts,
                    const struct option *longopts, cli_read_opts *o)
{
    int opt;
    while ((opt = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
        int r = cli_read_option(opt, optarg, o);
        if (r < 0)
            return CLI_OPT_BAD;
        if (r == 0)
            return opt;
    }
    return -1;
}

int cli_flush_stdout(void)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "tfrec: error writing to standard output: %s\n", strerror(errno));
        return EXIT_IO;
    }
    return EXIT_OK;
}

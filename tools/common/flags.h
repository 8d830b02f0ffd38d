/* Command-line flags for every tool, in the forms absl (and so the Python
 * scripts the tools replace) accepts:
 *
 *   --name=value   --name value   -name=value   -name value
 *   --flag --noflag --flag=true|false|t|f|1|0|yes|no   (booleans; a boolean
 *                   never takes the next argument as its value)
 *   --flagfile=FILE  one flag per line ("--name=value" or "--name value"),
 *                   blank lines and lines starting with # or // ignored,
 *                   nested flagfiles allowed up to CLI_FLAGFILE_DEPTH
 *   --help (-h, --helpshort)  this tool's flags;  --helpfull  with the
 *                   common ones;  --version
 *   --             ends the flags; later arguments are positional
 *
 * Beyond absl: '-' and '_' are the same inside names (--skip-corrupt is
 * --skip_corrupt), and flags may have a one-letter short form (-c GZIP,
 * -cGZIP, -Sq), as tfrec's documented options do. Flags and positional
 * arguments may be interleaved. Numbers are range-checked; sizes take
 * K/M/G/T suffixes (powers of 1024; "KiB", "KB" too) and overflow is an
 * error, never a wrap-around. Any error is printed on stderr with the
 * program name and a pointer to --help, and parsing returns EXIT_USAGE. */
#ifndef TFREC_TOOLS_FLAGS_H
#define TFREC_TOOLS_FLAGS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "exit_codes.h"

#define CLI_FLAGFILE_DEPTH 8 /* nested --flagfile levels (a loop is an error) */

typedef enum cli_flag_type {
    CLI_BOOL,       /* int *: 0 or 1 */
    CLI_STRING,     /* const char **: valid until cli_cmdline_free() */
    CLI_PATH,       /* like CLI_STRING, for a file or directory that may be gs://
                 * when the storage part is built (refused otherwise, see
                 * cli_path_check, instead of becoming a local "gs:") */
    CLI_LOCAL_PATH, /* like CLI_PATH, for what must be local (a progress file):
                     * a gs:// value is always refused */
    CLI_INT,        /* int *, within [min, max] when min < max, else any int */
    CLI_INT64,      /* int64_t *, within [min, max] when min < max */
    CLI_UINT64,     /* uint64_t *, within [umin, umax] when umin < umax */
    CLI_SIZE,       /* uint64_t *: like UINT64 with an optional K/M/G/T suffix */
    CLI_DOUBLE,     /* double *, within [dmin, dmax] when dmin < dmax */
    CLI_CHOICE,     /* int *: index of the value in choices (case-insensitive) */
    CLI_CUSTOM      /* parse() interprets the value */
} cli_flag_type;

typedef struct cli_flag {
    const char *name; /* long name; NULL ends a table */
    char short_name;  /* one-letter form, 0 for none */
    cli_flag_type type;
    void *dest;
    const char *value_name; /* placeholder in --help ("N", "FILE") [by type] */
    const char *help;       /* may span lines ('\n') */
    const char *section;    /* set: --help prints this heading before the flag */
    int64_t min, max;
    uint64_t umin, umax;
    double dmin, dmax;
    const char *const *choices; /* CLI_CHOICE: NULL-terminated */
    /* CLI_CUSTOM: store the value; on error return -1 with a message in err
     * (printed after "--name: "). */
    int (*parse)(const char *value, void *dest, char *err, size_t errcap);
    int hidden; /* parsed but not listed by --help (a retired name that explains itself) */
    int seen;   /* set by the parser: times the flag was given */
} cli_flag;

typedef struct cli_cmdline {
    const char *prog;   /* "tfrec2bt", "tfrec count": prefix of every message */
    const char *usage;  /* synopsis and description: the start of --help */
    const char *footer; /* printed after the flags by --help [nothing] */
    cli_flag *flags;    /* table ending with an entry whose name is NULL */
    int max_args;       /* positional arguments allowed: 0 none, -1 any number */
    /* Filled by cli_parse: positional arguments in order (pointers into argv). */
    char **args;
    int nargs;
    /* private: flagfile text that string flags point into */
    char **owned_;
    size_t nowned_, owned_cap_;
} cli_cmdline;

#define CLI_PARSED (-1)

/* Parse argv[1..argc-1] into the flags' destinations. Returns CLI_PARSED to
 * go on, or an exit status to return at once: EXIT_OK after --help,
 * --helpfull or --version (printed on stdout), EXIT_USAGE after an error
 * (printed on stderr). */
int cli_parse(cli_cmdline *cl, int argc, char **argv);
void cli_cmdline_free(cli_cmdline *cl);

/* The flag called name (as declared), or NULL. */
cli_flag *cli_flag_get(const cli_cmdline *cl, const char *name);
/* Whether the flag was given (on the command line or in a flagfile). */
int cli_flag_seen(const cli_cmdline *cl, const char *name);
/* Copy a tool's flag table (n entries, its zeroed end included) into out,
 * the array the tool parses with: n, or 0 when cap is too small. */
size_t cli_flags_copy(cli_flag *out, size_t cap, const cli_flag *flags, size_t n);

/* "PROG: <message>" and "Try 'PROG --help' ..." on stderr. */
void cli_usage_error(const cli_cmdline *cl, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* --help text (full: with the common flags), ending with the exit statuses. */
void cli_print_help(const cli_cmdline *cl, FILE *out, int full);

/* Value parsers, also used on their own. Return 0, or -1 with the reason
 * in err (e.g. "'abc' is not an integer"). */
int cli_parse_bool(const char *s, int *out, char *err, size_t errcap);
int cli_parse_int64(const char *s, int64_t *out, char *err, size_t errcap);
int cli_parse_uint64(const char *s, uint64_t *out, char *err, size_t errcap);
int cli_parse_size(const char *s, uint64_t *out, char *err, size_t errcap);
int cli_parse_double(const char *s, double *out, char *err, size_t errcap);

/* Edit distance (adjacent transpositions count as one), for "did you mean". */
size_t cli_edit_distance(const char *a, const char *b);

#endif

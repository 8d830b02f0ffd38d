/* The tfrec tool: pieces shared by the subcommands. */
#ifndef TFREC_TOOL_CLI_H
#define TFREC_TOOL_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <getopt.h>
#include <stdio.h>

#include "tfrec/tfrec.h"

/* Exit statuses; documented in `tfrec --help` and docs/tfrec-tool.md.
 * When several problems occur the highest status wins. */
enum {
    EXIT_OK = 0,
    EXIT_DATA = 1,  /* corrupt, truncated or undecodable data */
    EXIT_USAGE = 2, /* bad command line */
    EXIT_IO = 3     /* missing file, read/write failure, out of memory */
};

#define EXIT_STATUS_HELP                                                                \
    "Exit status: 0 success; 1 data error (corrupt or truncated record, bad\n"          \
    "compressed stream, ...); 2 usage error; 3 I/O error (missing file, read or\n"      \
    "write failure). With several problems the highest status is returned.\n"

/* Options every reading subcommand understands. */
typedef struct cli_read_opts {
    int compression;          /* TFREC_COMPRESSION_*, AUTO by default */
    int skip_corrupt;         /* skip corrupt regions instead of stopping */
    uint64_t max_record_size; /* 0 = library default */
    /* Called for every skipped corrupt region; NULL prints a warning. */
    void (*on_skip)(void *ctx, const char *file, uint64_t offset, uint64_t bytes,
                    const char *why);
    int keep_errors;          /* leave the error in the result, print nothing */
} cli_read_opts;

typedef struct cli_record {
    const char *file;
    uint64_t index;  /* position in its file, from 0 */
    uint64_t offset; /* of the header, in the uncompressed stream */
    const uint8_t *data;
    size_t len;
} cli_record;

/* Return CLI_CONTINUE, CLI_STOP (finish early, success) or an exit status. */
#define CLI_CONTINUE 0
#define CLI_STOP (-1)
typedef int (*cli_record_fn)(void *ctx, const cli_record *rec);

typedef struct cli_file_result {
    uint64_t records, bytes;
    uint64_t skipped_regions, skipped_bytes;
    int compression; /* detected or forced */
    int status;      /* EXIT_* for this file */
    int stopped;     /* the callback asked to stop */
    char error[512]; /* message of the error that ended reading, if any */
} cli_file_result;

/* Read every record of one file (or "-"), calling fn for each. Errors are
 * printed on stderr with the file and offset; the status is in res. */
void cli_read_file(const char *path, const cli_read_opts *o, cli_record_fn fn, void *ctx,
                   cli_file_result *res);

/* The library's messages start with the file name; where we print the
 * name ourselves this drops the repetition. */
const char *cli_strip_file(const char *msg, const char *file);

/* Map a library status to an exit status. */
int cli_exit_for(int rc);
static inline int cli_worst(int a, int b) { return a > b ? a : b; }

/* Expand arguments into a file list: patterns with * ? [ that name no
 * existing file go through glob(3). Returns EXIT_OK, or prints why and
 * returns EXIT_IO (no match) / EXIT_USAGE (no files; cmd names the
 * subcommand in the usage message). */
typedef struct cli_files {
    char **paths;
    size_t n, cap;
} cli_files;
int cli_expand_files(cli_files *out, char **args, int n, const char *cmd);
void cli_files_free(cli_files *f);

/* Parse "1024", "64K", "1M", "2G". Returns 0 on success. */
int cli_parse_size(const char *s, uint64_t *out);

/* Common option handling for the reading subcommands. Returns 1 if opt was
 * one of them (consumed), 0 if not, or -1 after printing a usage error. */
int cli_read_option(int opt, const char *arg, cli_read_opts *o);

/* getopt_long() that also consumes the common reading options into o:
 * returns the next other option, -1 at the end, or CLI_OPT_BAD after
 * printing why a common option's value is wrong. */
#define CLI_OPT_BAD (-2)
int cli_next_option(int argc, char **argv, const char *shortopts,
                    const struct option *longopts, cli_read_opts *o);
#define CLI_READ_LONGOPTS                                      \
    { "compression", required_argument, NULL, 'c' },           \
    { "skip-corrupt", no_argument, NULL, 'S' },                \
    { "max-record-size", required_argument, NULL, 'M' }
#define CLI_READ_HELP                                                                   \
    "  -c, --compression C   input compression: AUTO (default, detected), NONE,\n"      \
    "                        ZLIB or GZIP\n"                                            \
    "  -M, --max-record-size SIZE  refuse longer records (default 1G; K/M/G suffixes)\n"

void cli_usage_error(const char *cmd, const char *fmt, ...);
/* After getopt_long returned '?' (main sets opterr = 0 so getopt is quiet). */
void cli_bad_option(char **argv);

/* Buffered stdout for bulk output; flush errors become EXIT_IO. */
int cli_flush_stdout(void);

/* Subcommands: argc/argv start at the subcommand name. */
int cmd_count(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_cat(int argc, char **argv);
int cmd_head(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_convert(int argc, char **argv);

/* dump's per-record JSON line, shared with head. */
typedef struct dump_opts {
    int full;      /* whole bytes values, not a prefix */
    int raw;       /* never decode as tf.Example */
} dump_opts;
void dump_record_json(FILE *out, const cli_record *rec, const dump_opts *d);

#endif

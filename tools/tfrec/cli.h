/* The tfrec tool: pieces shared by the subcommands. */
#ifndef TFREC_TOOL_CLI_H
#define TFREC_TOOL_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../common/exit_codes.h"
#include "../common/files.h"
#include "../common/flag_types.h"
#include "../common/flags.h"
#include "../common/log.h"
#include "../common/gcs_conn.h"
#include "../common/signals.h"
#include "tfrec/tfrec.h"

/* Options every reading subcommand understands. */
typedef struct cli_read_opts {
    int compression;          /* TFREC_COMPRESSION_*, AUTO by default */
    int skip_corrupt;         /* skip corrupt regions instead of stopping */
    uint64_t max_record_size; /* 0 = library default */
    /* Called for every skipped corrupt region; NULL prints a warning. */
    void (*on_skip)(void *ctx, const char *file, uint64_t offset, uint64_t bytes, const char *why);
    int keep_errors; /* leave the error in the result, print nothing */
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

/* The input files of a subcommand: its positional arguments expanded
 * (quoted patterns through glob). Returns EXIT_OK, or prints why and
 * returns EXIT_IO (no match) / EXIT_USAGE (no files at all). */
int cli_input_files(cli_files *out, const cli_cmdline *cl);

/* Parse a subcommand's flags (argv[0] is the subcommand's name). Returns
 * CLI_PARSED or an exit status; free cl with cli_cmdline_free() either way. */
int cli_cmd_parse(cli_cmdline *cl, const char *prog, const char *usage, cli_flag *flags, int argc,
                  char **argv);

/* The usual subcommand: parse, expand the input files, run fn over them
 * (fn returns the exit status). */
typedef int (*cli_cmd_fn)(void *ctx, const cli_files *files);
int cli_cmd_run(const char *prog, const char *usage, cli_flag *flags, int argc, char **argv,
                cli_cmd_fn fn, void *ctx);

/* Flags shared by the reading subcommands, as cli_flag table entries. The
 * compression flags read the same in every subcommand: -c is always how
 * the input is compressed, -C always the output (convert), and the bare
 * --compression, which meant the input in some subcommands and the output
 * in convert, is refused with a message naming both. */
#define CLI_INPUT_COMPRESSION_FLAG(dst)                                                            \
    { .name = "input-compression",                                                                 \
      .short_name = 'c',                                                                           \
      .type = CLI_CUSTOM,                                                                          \
      .dest = (dst),                                                                               \
      .parse = cli_parse_compression,                                                              \
      .value_name = "C",                                                                           \
      .help = "input compression: AUTO (default: detected from the\n"                              \
              "first bytes), NONE, ZLIB or GZIP" },                                                \
    {                                                                                              \
        .name = "compression", .type = CLI_CUSTOM, .dest = (dst), .parse = cli_refuse_compression, \
        .hidden = 1                                                                                \
    }
#define CLI_OUTPUT_COMPRESSION_FLAG(dst)                                                    \
    {                                                                                       \
        .name = "output-compression", .short_name = 'C', .type = CLI_CUSTOM, .dest = (dst), \
        .parse = cli_parse_output_compression, .value_name = "C",                           \
        .help = "output compression: NONE (default), ZLIB or GZIP"                          \
    }
/* Every reading subcommand's: how the input is read, and the gs://
 * connection its names may need. */
#define CLI_READ_FLAGS(o)                                                 \
    CLI_INPUT_COMPRESSION_FLAG(&(o)->compression),                        \
        { .name = "max-record-size",                                      \
          .short_name = 'M',                                              \
          .type = CLI_SIZE,                                               \
          .dest = &(o)->max_record_size,                                  \
          .umin = 1,                                                      \
          .umax = UINT64_MAX,                                             \
          .help = "refuse longer records (default 1G; K/M/G suffixes)" }, \
        CLI_GCS_CONN_FLAGS, CLI_GCS_AUTH_FLAGS
#define CLI_SKIP_FLAG(o)                                                                         \
    {                                                                                            \
        .name = "skip-corrupt", .short_name = 'S', .type = CLI_BOOL, .dest = &(o)->skip_corrupt, \
        .help = "skip corrupt regions (reported on stderr) and go on"                            \
    }

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
int cmd_index(int argc, char **argv);
int cmd_ls(int argc, char **argv);

/* The count of a file from its fresh FILE.idx: 1 with *count set, 0 when
 * there is none (or it is stale, or the options need the data read), or
 * -EXIT_DATA after printing why a present index is unusable. */
int cli_count_from_index(const char *path, const cli_read_opts *o, uint64_t *count);

/* dump's per-record JSON line, shared with head. */
typedef struct dump_opts {
    int full; /* whole bytes values, not a prefix */
    int raw;  /* never decode as tf.Example */
} dump_opts;
void dump_record_json(FILE *out, const cli_record *rec, const dump_opts *d);

#endif

/* tfrec convert: re-write records with another compression. */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../common/progress.h"
#include "cli.h"

static const char convert_help[] =
    "Usage: tfrec convert [OPTIONS] INPUT... OUTPUT\n"
    "       tfrec convert [OPTIONS] -o OUTPUT INPUT...\n"
    "Copy the records of the inputs, in order, into one new TFRecord file with\n"
    "the chosen compression. The output appears only when everything was read\n"
    "and written (it is written under a temporary name and renamed), so on any\n"
    "error no partial file is left. OUTPUT may be '-' for standard output.\n\n"
    "Options:\n"
    "  -C, --compression C   output compression: NONE (default), ZLIB or GZIP\n"
    "  -l, --level N         compression level 1..9 (default 6, as TensorFlow)\n"
    "  -o, --output FILE     output file (otherwise the last argument)\n"
    "  -c, --input-compression C  input compression: AUTO (default), NONE, ZLIB, GZIP\n"
    "  -M, --max-record-size SIZE  refuse longer input records (default 1G)\n"
    "  -S, --skip-corrupt    skip corrupt input regions (reported on stderr)\n"
    "  -q, --quiet           no progress or summary on stderr\n"
    "  -h, --help            this help\n\n" EXIT_STATUS_HELP;

typedef struct convert_state {
    tfrec_writer *w;
    cli_progress progress;
    uint64_t records, bytes;
} convert_state;

static int convert_one(void *ctx, const cli_record *rec)
{
    convert_state *s = ctx;
    int rc = tfrec_writer_write(s->w, rec->data, rec->len);
    if (rc) {
        fprintf(stderr, "tfrec: %s\n", tfrec_writer_errmsg(s->w));
        return cli_worst(cli_exit_for(rc), EXIT_IO);
    }
    s->records++;
    s->bytes += rec->len;
    if ((s->records & 255) == 0)
        cli_progress_update(&s->progress, s->records, s->bytes);
    return CLI_CONTINUE;
}

int cmd_convert(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "compression", required_argument, NULL, 'C' },
        { "level", required_argument, NULL, 'l' },
        { "output", required_argument, NULL, 'o' },
        { "input-compression", required_argument, NULL, 'c' },
        { "max-record-size", required_argument, NULL, 'M' },
        { "skip-corrupt", no_argument, NULL, 'S' },
        { "quiet", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 }
    };
    cli_read_opts o = { 0 };
    tfrec_writer_options wo = TFREC_WRITER_OPTIONS_INIT;
    wo.compression = TFREC_COMPRESSION_NONE;
    const char *output = NULL;
    int quiet = 0, opt;
    while ((opt = cli_next_option(argc, argv, "C:l:o:c:M:Sqh", longopts, &o)) != -1) {
        switch (opt) {
        case CLI_OPT_BAD: return EXIT_USAGE;
        case 'C':
            wo.compression = tfrec_compression_from_name(optarg);
            if (wo.compression < 0 || wo.compression == TFREC_COMPRESSION_AUTO) {
                cli_usage_error(argv[0], "output compression must be NONE, ZLIB or GZIP, not '%s'",
                                optarg);
                return EXIT_USAGE;
            }
            break;
        case 'l': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*end || v < 1 || v > 9) {
                cli_usage_error(argv[0], "level must be 1..9, not '%s'", optarg);
                return EXIT_USAGE;
            }
            wo.level = (int)v;
            break;
        }
        case 'o': output = optarg; break;
        case 'q': quiet = 1; break;
        case 'h': fputs(convert_help, stdout); return EXIT_OK;
        default: cli_bad_option(argv); return EXIT_USAGE;
        }
    }
    int n_in = argc - optind;
    if (!output) {
        if (n_in < 2) {
            cli_usage_error(argv[0], "need at least one input and an output");
            return EXIT_USAGE;
        }
        output = argv[argc - 1];
        n_in--;
    }
    cli_files files;
    int status = cli_expand_files(&files, argv + optind, n_in, argv[0]);
    if (status != EXIT_OK)
        return status;

    convert_state s = { 0 };
    int rc = tfrec_writer_open(&s.w, output, &wo);
    if (rc) {
        fprintf(stderr, "tfrec: %s\n", tfrec_last_errmsg());
        cli_files_free(&files);
        return cli_worst(cli_exit_for(rc), EXIT_IO);
    }
    cli_progress_start(&s.progress, "records", 0, quiet);
    for (size_t i = 0; i < files.n && status == EXIT_OK; i++) {
        cli_file_result res;
        cli_read_file(files.paths[i], &o, convert_one, &s, &res);
        status = cli_worst(status, res.status);
    }
    cli_progress_update(&s.progress, s.records, s.bytes);
    cli_progress_finish(&s.progress);
    if (status != EXIT_OK) {
        tfrec_writer_abort(s.w);
        fprintf(stderr, "tfrec: %s not written\n", output);
    } else if ((rc = tfrec_writer_close(s.w)) != TFREC_OK) {
        fprintf(stderr, "tfrec: %s\n", tfrec_writer_errmsg(s.w));
        status = cli_worst(cli_exit_for(rc), EXIT_IO);
    } else if (!quiet) {
        fprintf(stderr, "tfrec: %" PRIu64 " records (%" PRIu64 " bytes) from %zu file%s -> %s, "
                "%s, %" PRIu64 " bytes\n", s.records, s.bytes, files.n, files.n == 1 ? "" : "s",
                output, tfrec_compression_name(wo.compression), tfrec_writer_bytes_out(s.w));
    }
    tfrec_writer_free(s.w);
    cli_files_free(&files);
    return status;
}

/* tfrec cat, tfrec head: records to stdout as raw bytes, TFRecord frames or
 * JSON lines. */
#include <getopt.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "cli.h"

enum { OUT_RAW, OUT_FRAMED, OUT_JSON };

typedef struct emit_state {
    int mode;
    dump_opts d;
    tfrec_writer *w; /* OUT_FRAMED: an uncompressed TFRecord stream on stdout */
    uint64_t limit;  /* records to emit; UINT64_MAX for all */
    uint64_t done;
} emit_state;

static int emit_one(void *ctx, const cli_record *rec)
{
    emit_state *s = ctx;
    switch (s->mode) {
    case OUT_RAW:
        if (rec->len && fwrite(rec->data, 1, rec->len, stdout) != rec->len)
            return EXIT_IO;
        break;
    case OUT_FRAMED: {
        int rc = tfrec_writer_write(s->w, rec->data, rec->len);
        if (rc) {
            fprintf(stderr, "tfrec: %s\n", tfrec_writer_errmsg(s->w));
            return EXIT_IO;
        }
        break;
    }
    default:
        dump_record_json(stdout, rec, &s->d);
        if (ferror(stdout))
            return EXIT_IO;
    }
    s->done++;
    return s->done >= s->limit ? CLI_STOP : CLI_CONTINUE;
}

/* Read the files in order into s; stops at the first error. */
static int run(emit_state *s, const cli_read_opts *o, char **args, int n, const char *cmd)
{
    cli_files files;
    int st = cli_expand_files(&files, args, n, cmd);
    if (st != EXIT_OK)
        return st;
    if (s->mode == OUT_FRAMED) {
        tfrec_writer_options wo = TFREC_WRITER_OPTIONS_INIT;
        wo.compression = TFREC_COMPRESSION_NONE;
        int rc = tfrec_writer_open(&s->w, "-", &wo);
        if (rc) {
            fprintf(stderr, "tfrec: %s\n", tfrec_last_errmsg());
            cli_files_free(&files);
            return EXIT_IO;
        }
    }
    int status = EXIT_OK;
    for (size_t i = 0; i < files.n && s->done < s->limit; i++) {
        cli_file_result res;
        cli_read_file(files.paths[i], o, emit_one, s, &res);
        status = cli_worst(status, res.status);
        if (res.status != EXIT_OK)
            break;
    }
    if (s->w) {
        /* Standard output cannot be taken back, so close (not abort) even
         * after an input error: what was written stays well-formed. */
        if (tfrec_writer_close(s->w)) {
            fprintf(stderr, "tfrec: %s\n", tfrec_writer_errmsg(s->w));
            status = cli_worst(status, EXIT_IO);
        }
        tfrec_writer_free(s->w);
    }
    cli_files_free(&files);
    return cli_worst(status, cli_flush_stdout());
}

static const char cat_help[] =
    "Usage: tfrec cat [OPTIONS] FILE...\n"
    "Write the records of the files, in order, to standard output: by default\n"
    "the payload bytes back to back (no separators); with --framed as one\n"
    "uncompressed TFRecord stream (so 'tfrec cat --framed a.gz b > c' joins and\n"
    "decompresses files).\n\n"
    "Options:\n" CLI_READ_HELP
    "  -S, --skip-corrupt    skip corrupt regions (reported on stderr) and go on\n"
    "      --framed          TFRecord framing (length, CRCs) around each record\n"
    "  -h, --help            this help\n\n" EXIT_STATUS_HELP;

static const char head_help[] =
    "Usage: tfrec head [-n N] [OPTIONS] FILE...\n"
    "The first N records (default 10) of the files taken in order, as JSON lines\n"
    "like 'tfrec dump', or raw / framed like 'tfrec cat'.\n\n"
    "Options:\n"
    "  -n, --records N       how many records (default 10)\n" CLI_READ_HELP
    "  -S, --skip-corrupt    skip corrupt regions (reported on stderr) and go on\n"
    "  -f, --full            bytes values in full in the JSON\n"
    "      --raw             payload bytes back to back instead of JSON\n"
    "      --framed          an uncompressed TFRecord stream instead of JSON\n"
    "  -h, --help            this help\n\n" EXIT_STATUS_HELP;

enum { OPT_FRAMED = 1000, OPT_RAW };

int cmd_cat(int argc, char **argv)
{
    static const struct option longopts[] = {
        CLI_READ_LONGOPTS, { "framed", no_argument, NULL, OPT_FRAMED },
        { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 }
    };
    cli_read_opts o = { 0 };
    emit_state s = { 0 };
    s.mode = OUT_RAW;
    s.limit = UINT64_MAX;
    int opt;
    while ((opt = cli_next_option(argc, argv, "c:SM:h", longopts, &o)) != -1) {
        switch (opt) {
        case CLI_OPT_BAD: return EXIT_USAGE;
        case OPT_FRAMED: s.mode = OUT_FRAMED; break;
        case 'h': fputs(cat_help, stdout); return EXIT_OK;
        default: cli_bad_option(argv); return EXIT_USAGE;
        }
    }
    return run(&s, &o, argv + optind, argc - optind, argv[0]);
}

int cmd_head(int argc, char **argv)
{
    static const struct option longopts[] = {
        CLI_READ_LONGOPTS, { "records", required_argument, NULL, 'n' },
        { "full", no_argument, NULL, 'f' }, { "raw", no_argument, NULL, OPT_RAW },
        { "framed", no_argument, NULL, OPT_FRAMED }, { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 }
    };
    cli_read_opts o = { 0 };
    emit_state s = { 0 };
    s.mode = OUT_JSON;
    s.limit = 10;
    int opt;
    while ((opt = cli_next_option(argc, argv, "c:SM:n:fh", longopts, &o)) != -1) {
        switch (opt) {
        case CLI_OPT_BAD: return EXIT_USAGE;
        case 'n': {
            char *end;
            unsigned long long v = strtoull(optarg, &end, 10);
            if (!*optarg || *end || optarg[0] == '-') {
                cli_usage_error(argv[0], "bad record count '%s'", optarg);
                return EXIT_USAGE;
            }
            s.limit = v;
            break;
        }
        case 'f': s.d.full = 1; break;
        case OPT_RAW: s.mode = OUT_RAW; break;
        case OPT_FRAMED: s.mode = OUT_FRAMED; break;
        case 'h': fputs(head_help, stdout); return EXIT_OK;
        default: cli_bad_option(argv); return EXIT_USAGE;
        }
    }
    return run(&s, &o, argv + optind, argc - optind, argv[0]);
}

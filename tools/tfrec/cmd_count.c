/* tfrec count, tfrec verify */
#include <getopt.h>
#include <inttypes.h>
#include <string.h>

#include "cli.h"

static const char count_help[] =
    "Usage: tfrec count [OPTIONS] FILE...\n"
    "Print the number of records: a bare number for one file; for several, one\n"
    "'COUNT<TAB>FILE' line each and a 'COUNT<TAB>total' line.\n\n"
    "Options:\n" CLI_READ_HELP
    "  -S, --skip-corrupt    skip corrupt regions (reported on stderr) and go on\n"
    "  -h, --help            this help\n\n" EXIT_STATUS_HELP;

static const char verify_help[] =
    "Usage: tfrec verify [OPTIONS] FILE...\n"
    "Read every record, checking both CRCs of each, and report every bad region\n"
    "(corrupt header, bad data CRC, truncated record, trailing garbage) with its\n"
    "file and byte offset, resynchronising after each one. One line per file:\n"
    "'OK FILE: N records' or 'BAD FILE: ...'. Exits 1 if anything is wrong.\n\n"
    "Options:\n" CLI_READ_HELP
    "  -q, --quiet           print only the problems\n"
    "  -h, --help            this help\n\n" EXIT_STATUS_HELP;

static const struct option count_longopts[] = {
    CLI_READ_LONGOPTS, { "help", no_argument, NULL, 'h' }, { "quiet", no_argument, NULL, 'q' },
    { NULL, 0, NULL, 0 }
};

/* Options shared by count and verify; returns -2 to go on, else an exit status. */
static int parse(int argc, char **argv, const char *help, const char *shortopts,
                 cli_read_opts *o, int *quiet, cli_files *files)
{
    int opt;
    while ((opt = getopt_long(argc, argv, shortopts, count_longopts, NULL)) != -1) {
        /* The long table is shared: refuse what this command's short list lacks
         * (count has no --quiet; --skip-corrupt is verify's normal mode). */
        if (opt != '?' && !strchr(shortopts, opt)) {
            if (opt == 'S')
                continue;
            opt = '?';
        }
        int r = cli_read_option(opt, optarg, o);
        if (r > 0)
            continue;
        if (r < 0)
            return EXIT_USAGE;
        if (opt == 'h') {
            fputs(help, stdout);
            return EXIT_OK;
        }
        if (opt == 'q') {
            *quiet = 1;
            continue;
        }
        cli_bad_option(argv);
        return EXIT_USAGE;
    }
    int st = cli_expand_files(files, argv + optind, argc - optind, argv[0]);
    return st == EXIT_OK ? -2 : st;
}

int cmd_count(int argc, char **argv)
{
    cli_read_opts o = { 0 };
    cli_files files;
    int quiet = 0;
    int st = parse(argc, argv, count_help, "c:SM:h", &o, &quiet, &files);
    if (st != -2)
        return st;
    uint64_t total = 0;
    int status = EXIT_OK;
    for (size_t i = 0; i < files.n; i++) {
        cli_file_result res;
        cli_read_file(files.paths[i], &o, NULL, NULL, &res);
        status = cli_worst(status, res.status);
        if (res.status != EXIT_OK)
            continue; /* the error was printed; a partial count would mislead */
        total += res.records;
        if (files.n > 1)
            printf("%" PRIu64 "\t%s\n", res.records, files.paths[i]);
    }
    if (files.n == 1 && status == EXIT_OK)
        printf("%" PRIu64 "\n", total);
    else if (files.n > 1 && status == EXIT_OK)
        printf("%" PRIu64 "\ttotal\n", total);
    cli_files_free(&files);
    return cli_worst(status, cli_flush_stdout());
}

typedef struct verify_state {
    uint64_t regions;
} verify_state;

static void report_region(void *ctx, const char *file, uint64_t offset, uint64_t bytes,
                          const char *why)
{
    verify_state *v = ctx;
    v->regions++;
    why = cli_strip_file(why, file);
    printf("%s: bad region at offset %" PRIu64 " (%" PRIu64 " bytes)%s%s\n", file, offset, bytes,
           why && *why ? ": " : "", why ? why : "");
}

int cmd_verify(int argc, char **argv)
{
    cli_read_opts o = { 0 };
    cli_files files;
    int quiet = 0;
    int st = parse(argc, argv, verify_help, "c:M:qh", &o, &quiet, &files);
    if (st != -2)
        return st;
    o.skip_corrupt = 1; /* report every region, not just the first */
    o.on_skip = report_region;
    o.keep_errors = 1; /* part of the report, on stdout */
    int status = EXIT_OK;
    size_t bad_files = 0;
    for (size_t i = 0; i < files.n; i++) {
        verify_state v = { 0 };
        cli_file_result res;
        cli_read_file(files.paths[i], &o, NULL, &v, &res);
        int file_status = res.status;
        if (res.skipped_regions)
            file_status = cli_worst(file_status, EXIT_DATA);
        status = cli_worst(status, file_status);
        if (file_status == EXIT_OK) {
            if (!quiet)
                printf("OK %s: %" PRIu64 " records, %s\n", files.paths[i], res.records,
                       tfrec_compression_name(res.compression));
        } else {
            bad_files++;
            printf("BAD %s: %" PRIu64 " good records, %" PRIu64 " bad regions (%" PRIu64
                   " bytes)%s%s\n", files.paths[i], res.records, res.skipped_regions,
                   res.skipped_bytes, res.status ? "; stopped: " : "",
                   res.status ? cli_strip_file(res.error, files.paths[i]) : "");
        }
    }
    if (files.n > 1 && (!quiet || bad_files))
        printf("%zu files: %zu ok, %zu bad\n", files.n, files.n - bad_files, bad_files);
    cli_files_free(&files);
    return cli_worst(status, cli_flush_stdout());
}

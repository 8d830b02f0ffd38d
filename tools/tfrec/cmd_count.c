/* tfrec count, tfrec verify */
#include <inttypes.h>
#include <string.h>

#include "cli.h"

static const char count_help[] =
    "Usage: tfrec count [FLAGS] FILE...\n"
    "Print the number of records: a bare number for one file; for several, one\n"
    "'COUNT<TAB>FILE' line each and a 'COUNT<TAB>total' line. A fresh FILE.idx\n"
    "(see 'tfrec index') gives the count without reading FILE; --noindex reads it.\n";

typedef struct count_cmd {
    cli_read_opts o;
    int use_index;
} count_cmd;

static const char verify_help[] =
    "Usage: tfrec verify [FLAGS] FILE...\n"
    "Read every record, checking both CRCs of each, and report every bad region\n"
    "(corrupt header, bad data CRC, truncated record, trailing garbage) with its\n"
    "file and byte offset, resynchronising after each one. One line per file:\n"
    "'OK FILE: N records' or 'BAD FILE: ...'. Exits 1 if anything is wrong.\n";

static int count_files(void *ctx, const cli_files *files)
{
    const count_cmd *c = ctx;
    const cli_read_opts *o = &c->o;
    uint64_t total = 0;
    int status = EXIT_OK;
    for (size_t i = 0; i < files->n; i++) {
        cli_file_result res = { 0 };
        int by_index = !c->use_index ? 0 : cli_count_from_index(files->paths[i], o, &res.records);
        if (by_index < 0)
            res.status = -by_index;
        else if (!by_index)
            cli_read_file(files->paths[i], o, NULL, NULL, &res);
        status = cli_worst(status, res.status);
        if (res.status == EXIT_INTERRUPTED)
            break;
        if (res.status != EXIT_OK)
            continue; /* the error was printed; a partial count would mislead */
        total += res.records;
        if (files->n > 1)
            printf("%" PRIu64 "\t%s\n", res.records, files->paths[i]);
    }
    if (files->n == 1 && status == EXIT_OK)
        printf("%" PRIu64 "\n", total);
    else if (files->n > 1 && status == EXIT_OK)
        printf("%" PRIu64 "\ttotal\n", total);
    return cli_worst(status, cli_flush_stdout());
}

int cmd_count(int argc, char **argv)
{
    count_cmd c = { { 0 }, 1 };
    cli_flag flags[] = { CLI_READ_FLAGS(&c.o),
                         CLI_SKIP_FLAG(&c.o),
                         { .name = "index",
                           .type = CLI_BOOL,
                           .dest = &c.use_index,
                           .help = "use a fresh FILE.idx when there is one (default; --noindex\n"
                                   "reads every record)" },
                         { 0 } };
    return cli_cmd_run("tfrec count", count_help, flags, argc, argv, count_files, &c);
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

typedef struct verify_cmd {
    cli_read_opts o;
    int quiet, skip;
} verify_cmd;

static int verify_files(void *ctx, const cli_files *files)
{
    verify_cmd *c = ctx;
    cli_read_opts *o = &c->o;
    int quiet = c->quiet;
    o->skip_corrupt = 1; /* report every region, not just the first */
    o->on_skip = report_region;
    o->keep_errors = 1; /* part of the report, on stdout */
    int status = EXIT_OK;
    size_t bad_files = 0;
    for (size_t i = 0; i < files->n; i++) {
        verify_state v = { 0 };
        cli_file_result res;
        cli_read_file(files->paths[i], o, NULL, &v, &res);
        int file_status = res.status;
        if (file_status == EXIT_INTERRUPTED) {
            status = file_status;
            break;
        }
        if (res.skipped_regions)
            file_status = cli_worst(file_status, EXIT_DATA);
        status = cli_worst(status, file_status);
        if (file_status == EXIT_OK) {
            if (!quiet)
                printf("OK %s: %" PRIu64 " records, %s\n", files->paths[i], res.records,
                       tfrec_compression_name(res.compression));
        } else {
            bad_files++;
            printf("BAD %s: %" PRIu64 " good records, %" PRIu64 " bad regions (%" PRIu64
                   " bytes)%s%s\n",
                   files->paths[i], res.records, res.skipped_regions, res.skipped_bytes,
                   res.status ? "; stopped: " : "",
                   res.status ? cli_strip_file(res.error, files->paths[i]) : "");
        }
    }
    if (files->n > 1 && (!quiet || bad_files))
        printf("%zu files: %zu ok, %zu bad\n", files->n, files->n - bad_files, bad_files);
    return cli_worst(status, cli_flush_stdout());
}

int cmd_verify(int argc, char **argv)
{
    verify_cmd c = { { 0 }, 0, 0 };
    cli_flag flags[] = { CLI_READ_FLAGS(&c.o),
                         { .name = "quiet",
                           .short_name = 'q',
                           .type = CLI_BOOL,
                           .dest = &c.quiet,
                           .help = "print only the problems" },
                         { .name = "skip-corrupt",
                           .short_name = 'S',
                           .type = CLI_BOOL,
                           .dest = &c.skip,
                           .help = "accepted: verify always reports every region" },
                         { 0 } };
    return cli_cmd_run("tfrec verify", verify_help, flags, argc, argv, verify_files, &c);
}

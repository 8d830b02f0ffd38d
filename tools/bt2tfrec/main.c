/* bt2tfrec: read rows by prefix back out of Bigtable into a TFRecord file,
 * one record per row (the value of column_family:column), in key order.
 * The way back for verification, and for moving a table to files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/exit_codes.h"
#include "../common/files.h"
#include "../common/flags.h"
#include "../common/progress.h"
#include "../common/signals.h"
#include "tfrec/tfrec.h"

static const char usage[] =
    "usage: bt2tfrec --bigtable_instance=I --bigtable_table=T --output=FILE [flags]\n"
    "\n"
    "Read the rows whose key starts with --row_prefix, in key order, into one\n"
    "TFRecord file: one record per row, the value of <column_family>:<column>.\n"
    "The output appears only when every row was read (written under a\n"
    "temporary name and renamed); SIGINT/SIGTERM removes the partial output\n"
    "and exits with status 130.\n";

static const char *const compressions[] = { "none", "zlib", "gzip", NULL };

typedef struct bt2_flags {
    const char *instance, *table, *project, *prefix, *family, *column, *output, *keys_path;
    int64_t max_rows;
    int quiet;
    int compression; /* index in compressions[] */
} bt2_flags;

static int run(const bt2_flags *f);

int main(int argc, char **argv)
{
    bt2_flags f = { 0 };
    f.prefix = "train_";
    f.family = "tfexample";
    f.column = "example";
    cli_flag flags[] = {
        { .name = "bigtable_instance",
          .type = CLI_STRING,
          .dest = &f.instance,
          .value_name = "I",
          .help = "Cloud Bigtable instance (required)" },
        { .name = "bigtable_table",
          .type = CLI_STRING,
          .dest = &f.table,
          .value_name = "T",
          .help = "table to read (required)" },
        { .name = "output",
          .type = CLI_PATH,
          .dest = &f.output,
          .value_name = "FILE",
          .help = "TFRecord file to write (required); gs://BUCKET/OBJECT\n"
                  "uploads it (the object appears only when complete)" },
        { .name = "project",
          .type = CLI_STRING,
          .dest = &f.project,
          .value_name = "P",
          .help = "project [from the GCE metadata server]" },
        { .name = "row_prefix",
          .type = CLI_STRING,
          .dest = &f.prefix,
          .value_name = "P",
          .help = "rows whose key starts with P [train_]; '' for all rows" },
        { .name = "column_family",
          .type = CLI_STRING,
          .dest = &f.family,
          .value_name = "F",
          .help = "[tfexample]" },
        { .name = "column",
          .type = CLI_STRING,
          .dest = &f.column,
          .value_name = "C",
          .help = "[example]" },
        { .name = "max_rows",
          .type = CLI_INT64,
          .dest = &f.max_rows,
          .min = 0,
          .max = INT64_MAX,
          .help = "stop after N rows [all]" },
        { .name = "keys_file",
          .type = CLI_LOCAL_PATH,
          .dest = &f.keys_path,
          .value_name = "FILE",
          .help = "also write each row key on its own line" },
        { .name = "compression",
          .type = CLI_CHOICE,
          .dest = &f.compression,
          .choices = compressions,
          .help = "of the output, as TFRecordOptions [none]" },
        { .name = "quiet", .type = CLI_BOOL, .dest = &f.quiet, .help = "no progress display" },
        { 0 }
    };
    cli_cmdline cl = { .prog = "bt2tfrec",
                       .usage = usage,
                       .flags = flags,
                       .max_args = 0,
                       .footer = "BIGTABLE_EMULATOR_HOST=host:port selects the emulator.\n" };
    int st = cli_parse(&cl, argc, argv);
    if (st == CLI_PARSED) {
        if (!f.instance || !f.table || !f.output) {
            cli_usage_error(&cl, "--bigtable_instance, --bigtable_table and --output are required");
            st = EXIT_USAGE;
        } else {
            cli_catch_interrupts();
            st = run(&f);
        }
    }
    cli_cmdline_free(&cl);
    return st;
}

/* Copy the rows the reader yields into w (and their keys into keys). */
static int copy_rows(const bt2_flags *f, tfrec_bt_reader *rd, tfrec_writer *w, FILE *keys,
                     uint64_t *rows, uint64_t *bytes)
{
    cli_progress prog;
    cli_progress_start(&prog, "rows", (uint64_t)f->max_rows, f->quiet);
    size_t clen = strlen(f->column);
    int status = EXIT_OK, rc;
    tfrec_bt_row row = TFREC_BT_ROW_INIT;
    while (!cli_interrupted && (rc = tfrec_bt_reader_next(rd, &row)) == TFREC_OK) {
        const tfrec_bt_cell *cell = NULL;
        for (size_t i = 0; i < row.ncells; i++)
            if (!strcmp(row.cells[i]->family, f->family) && row.cells[i]->qualifier_len == clen &&
                !memcmp(row.cells[i]->qualifier, f->column, clen))
                cell = row.cells[i];
        if (!cell) {
            fprintf(stderr, "bt2tfrec: row %.*s has no %s:%s cell\n", (int)row.key_len,
                    (const char *)row.key, f->family, f->column);
            status = EXIT_DATA;
            break;
        }
        if ((rc = tfrec_writer_write(w, cell->value, cell->value_len))) {
            fprintf(stderr, "bt2tfrec: %s\n", tfrec_writer_errmsg(w));
            status = cli_worst(cli_exit_for(rc), EXIT_IO);
            break;
        }
        if (keys)
            fprintf(keys, "%.*s\n", (int)row.key_len, (const char *)row.key);
        (*rows)++;
        *bytes += cell->value_len;
        cli_progress_update(&prog, *rows, *bytes);
    }
    if (cli_interrupted) {
        fprintf(stderr, "bt2tfrec: interrupted after %llu rows\n", (unsigned long long)*rows);
        status = EXIT_INTERRUPTED;
    } else if (status == EXIT_OK && rc < 0) {
        fprintf(stderr, "bt2tfrec: %s\n", tfrec_bt_reader_errmsg(rd));
        status = cli_exit_for(rc);
    }
    cli_progress_finish(&prog);
    return status;
}

/* --output must be a file name: a directory would only be found out when
 * the finished file is renamed, after reading the whole table. */
static int check_output(const char *path)
{
    struct stat sb;
    if (strcmp(path, "-") != 0 && !cli_is_remote(path) && stat(path, &sb) == 0 &&
        S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "bt2tfrec: --output=%s is a directory; name the file to write\n", path);
        return EXIT_IO;
    }
    return EXIT_OK;
}

static void summary(const bt2_flags *f, uint64_t rows, uint64_t bytes, double secs)
{
    /* the same figures and units as tfrec2bt's summary */
    fprintf(stderr,
            "bt2tfrec: %llu rows (%.1f MB) read from %s into %s in %.2f s: %.0f rows/s, "
            "%.1f MB/s\n",
            (unsigned long long)rows, (double)bytes / 1e6, f->table, f->output, secs,
            secs > 0 ? (double)rows / secs : 0, secs > 0 ? (double)bytes / 1e6 / secs : 0);
}

static int run(const bt2_flags *f)
{
    int status = check_output(f->output);
    if (status)
        return status;
    double t0 = cli_now();
    tfrec_bt_client *cl;
    tfrec_bt_client_options co = TFREC_BT_CLIENT_OPTIONS_INIT;
    co.project = f->project;
    co.instance = f->instance;
    int rc = tfrec_bt_client_open(&cl, &co);
    if (rc) {
        fprintf(stderr, "bt2tfrec: %s%s\n", tfrec_last_errmsg(),
                rc == TFREC_E_INVALID && (!co.project || !*co.project) ? "; pass --project" : "");
        return cli_exit_for(rc);
    }
    tfrec_bt_read_options ro = TFREC_BT_READ_OPTIONS_INIT;
    if (*f->prefix)
        ro.prefix = f->prefix;
    ro.rows_limit = f->max_rows;
    ro.family = f->family;
    tfrec_bt_reader *rd = NULL;
    tfrec_writer *w = NULL;
    FILE *keys = NULL;
    uint64_t rows = 0, bytes = 0;
    tfrec_writer_options wo = TFREC_WRITER_OPTIONS_INIT;
    wo.compression = TFREC_COMPRESSION_NONE + f->compression;
    /* the output first: a file that cannot be created fails before reading */
    if ((rc = cli_writer_open(&w, f->output, &wo)) ||
        (rc = tfrec_bt_reader_open(&rd, cl, f->table, &ro))) {
        fprintf(stderr, "bt2tfrec: %s\n", tfrec_last_errmsg());
        status = cli_exit_for(rc);
    } else if (f->keys_path && !(keys = fopen(f->keys_path, "w"))) {
        perror(f->keys_path);
        status = EXIT_IO;
    } else {
        status = copy_rows(f, rd, w, keys, &rows, &bytes);
    }
    if (keys && fclose(keys) != 0)
        status = cli_worst(status, EXIT_IO);
    if (w && status) {
        tfrec_writer_abort(w); /* no partial output file */
        if (status == EXIT_INTERRUPTED)
            fprintf(stderr, "bt2tfrec: removed the partial output; %s was not written\n",
                    f->output);
    } else if (w && (rc = tfrec_writer_close(w))) {
        fprintf(stderr, "bt2tfrec: %s\n", tfrec_writer_errmsg(w));
        status = cli_worst(cli_exit_for(rc), EXIT_IO);
    }
    tfrec_writer_free(w);
    tfrec_bt_reader_free(rd);
    tfrec_bt_client_free(cl);
    if (!status && rows == 0)
        fprintf(stderr, "bt2tfrec: warning: no row of table %s %s%s%s; %s holds no records\n",
                f->table, *f->prefix ? "has a key starting with '" : "was found",
                *f->prefix ? f->prefix : "", *f->prefix ? "'" : "", f->output);
    if (!status && !f->quiet)
        summary(f, rows, bytes, cli_now() - t0);
    return status;
}

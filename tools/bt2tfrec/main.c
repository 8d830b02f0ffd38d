/* bt2tfrec: read rows by prefix back out of Bigtable into a TFRecord file,
 * one record per row (the value of column_family:column), in key order.
 * The way back for verification, and for moving a table to files. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/progress.h"
#include "tfrec/tfrec.h"

static void usage(FILE *out)
{
    fputs("usage: bt2tfrec --bigtable_instance=I --bigtable_table=T --output=FILE [flags]\n"
          "  --project=P          project (default: from the GCE metadata server)\n"
          "  --row_prefix=P       rows whose key starts with P [train_]; '' for all rows\n"
          "  --column_family=F    [tfexample]\n"
          "  --column=C           [example]\n"
          "  --max_rows=N         stop after N rows [all]\n"
          "  --keys_file=FILE     also write each row key on its own line\n"
          "  --quiet              no progress display\n"
          "BIGTABLE_EMULATOR_HOST=host:port selects the emulator.\n",
          out);
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"bigtable_instance", required_argument, 0, 'i'}, {"bigtable_table", required_argument, 0, 't'},
        {"project", required_argument, 0, 'p'},           {"row_prefix", required_argument, 0, 'x'},
        {"column_family", required_argument, 0, 'f'},     {"column", required_argument, 0, 'c'},
        {"output", required_argument, 0, 'o'},            {"max_rows", required_argument, 0, 'n'},
        {"keys_file", required_argument, 0, 'k'},         {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'},                    {0, 0, 0, 0}};
    const char *instance = NULL, *table = NULL, *project = NULL, *prefix = "train_";
    const char *family = "tfexample", *column = "example", *output = NULL, *keys_path = NULL;
    long long max_rows = 0;
    int quiet = 0, c;
    opterr = 0;
    while ((c = getopt_long_only(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'i': instance = optarg; break;
        case 't': table = optarg; break;
        case 'p': project = optarg; break;
        case 'x': prefix = optarg; break;
        case 'f': family = optarg; break;
        case 'c': column = optarg; break;
        case 'o': output = optarg; break;
        case 'k': keys_path = optarg; break;
        case 'n': {
            char *end;
            max_rows = strtoll(optarg, &end, 10);
            if (*end || max_rows < 0) {
                fprintf(stderr, "bt2tfrec: --max_rows: '%s' is not a count\n", optarg);
                return 2;
            }
            break;
        }
        case 'q': quiet = 1; break;
        case 'h': usage(stdout); return 0;
        default:
            fprintf(stderr, "bt2tfrec: unknown or incomplete flag '%s'\n", argv[optind - 1]);
            usage(stderr);
            return 2;
        }
    }
    if (!instance || !table || !output) {
        fprintf(stderr, "bt2tfrec: --bigtable_instance, --bigtable_table and --output are required\n");
        return 2;
    }

    tfrec_bt_client *cl;
    tfrec_bt_client_options co = TFREC_BT_CLIENT_OPTIONS_INIT;
    co.project = project;
    co.instance = instance;
    if (tfrec_bt_client_open(&cl, &co)) {
        fprintf(stderr, "bt2tfrec: %s\n", tfrec_last_errmsg());
        return 1;
    }
    tfrec_bt_read_options ro = TFREC_BT_READ_OPTIONS_INIT;
    if (*prefix) ro.prefix = prefix;
    ro.rows_limit = max_rows;
    ro.family = family;
    tfrec_bt_reader *rd;
    if (tfrec_bt_reader_open(&rd, cl, table, &ro)) {
        fprintf(stderr, "bt2tfrec: %s\n", tfrec_last_errmsg());
        tfrec_bt_client_free(cl);
        return 1;
    }
    tfrec_writer *w;
    if (tfrec_writer_open(&w, output, NULL)) {
        fprintf(stderr, "bt2tfrec: %s\n", tfrec_last_errmsg());
        tfrec_bt_reader_free(rd);
        tfrec_bt_client_free(cl);
        return 1;
    }
    FILE *keys = keys_path ? fopen(keys_path, "w") : NULL;
    if (keys_path && !keys) {
        perror(keys_path);
        tfrec_writer_free(w);
        tfrec_bt_reader_free(rd);
        tfrec_bt_client_free(cl);
        return 1;
    }
    cli_progress prog;
    cli_progress_start(&prog, "rows", (uint64_t)max_rows, quiet);
    size_t clen = strlen(column);
    uint64_t rows = 0, bytes = 0;
    int status = 0, rc;
    tfrec_bt_row row = TFREC_BT_ROW_INIT;
    while ((rc = tfrec_bt_reader_next(rd, &row)) == TFREC_OK) {
        const tfrec_bt_cell *cell = NULL;
        for (size_t i = 0; i < row.ncells; i++)
            if (!strcmp(row.cells[i]->family, family) && row.cells[i]->qualifier_len == clen &&
                !memcmp(row.cells[i]->qualifier, column, clen))
                cell = row.cells[i];
        if (!cell) {
            fprintf(stderr, "bt2tfrec: row %.*s has no %s:%s cell\n", (int)row.key_len,
                    (const char *)row.key, family, column);
            status = 1;
            break;
        }
        if (tfrec_writer_write(w, cell->value, cell->value_len)) {
            fprintf(stderr, "bt2tfrec: %s\n", tfrec_writer_errmsg(w));
            status = 1;
            break;
        }
        if (keys) fprintf(keys, "%.*s\n", (int)row.key_len, (const char *)row.key);
        rows++;
        bytes += cell->value_len;
        cli_progress_update(&prog, rows, bytes);
    }
    if (rc < 0) {
        fprintf(stderr, "bt2tfrec: %s\n", tfrec_bt_reader_errmsg(rd));
        status = 1;
    }
    cli_progress_finish(&prog);
    if (keys && fclose(keys) != 0) status = 1;
    if (status) {
        tfrec_writer_abort(w);
    } else if (tfrec_writer_close(w)) {
        fprintf(stderr, "bt2tfrec: %s\n", tfrec_writer_errmsg(w));
        status = 1;
    }
    tfrec_writer_free(w);
    tfrec_bt_reader_free(rd);
    tfrec_bt_client_free(cl);
    if (!status && !quiet)
        fprintf(stderr, "bt2tfrec: %llu rows (%llu bytes) written to %s\n",
                (unsigned long long)rows, (unsigned long long)bytes, output);
    return status;
}

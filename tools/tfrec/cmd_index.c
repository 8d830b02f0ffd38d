/* tfrec index, and the index side of tfrec count. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char index_help[] =
    "Usage: tfrec index [FLAGS] FILE...\n"
    "Write FILE.idx next to each (uncompressed) FILE: one 'OFFSET LENGTH' line per\n"
    "record, the format of NVIDIA DALI's tfrecord2idx and the Python tfrecord\n"
    "package. Every record's CRCs are checked on the way; a corrupt file gets no\n"
    "index. Prints 'COUNT<TAB>FILE.idx' per file. Compressed files cannot be\n"
    "indexed (convert them with 'tfrec convert -C NONE').\n";

static int index_files(void *ctx, const cli_files *files)
{
    (void)ctx;
    int status = EXIT_OK;
    for (size_t i = 0; i < files->n; i++) {
        uint64_t n = 0;
        int rc = tfrec_index_file(files->paths[i], &n);
        if (rc < 0) {
            cli_log_as("tfrec index", "%s", tfrec_last_errmsg());
            status = cli_worst(status, rc == TFREC_E_UNSUPPORTED ? EXIT_DATA : cli_exit_for(rc));
            continue;
        }
        printf("%" PRIu64 "\t%s.idx\n", n, files->paths[i]);
    }
    return cli_worst(status, cli_flush_stdout());
}

int cmd_index(int argc, char **argv)
{
    cli_flag flags[] = { CLI_GCS_CONN_FLAGS, CLI_GCS_AUTH_FLAGS, { 0 } };
    return cli_cmd_run("tfrec index", index_help, flags, argc, argv, index_files, NULL);
}

int cli_count_from_index(const char *path, const cli_read_opts *o, uint64_t *count)
{
    if (!strcmp(path, "-") || o->skip_corrupt || o->compression > TFREC_COMPRESSION_NONE)
        return 0;
    tfrec_index *ix;
    int rc = tfrec_index_load_fresh(&ix, path);
    if (rc == TFREC_E_NOT_FOUND || rc == TFREC_E_STATE)
        return 0; /* no index, or a stale one: read the file */
    if (rc < 0) {
        cli_log_as("tfrec count", "%s (rebuild it with 'tfrec index', or pass --noindex)",
                   tfrec_last_errmsg());
        return -EXIT_DATA;
    }
    *count = tfrec_index_records(ix);
    tfrec_index_free(ix);
    return 1;
}

/* tfrec ls: the files or objects a pattern matches, with their sizes and,
 * where known, their record counts, so a bucket can be looked at without
 * another tool. */
#include <inttypes.h>
#include <string.h>

#include "cli.h"
#include "tfrec/fs.h"

static const char ls_help[] =
    "Usage: tfrec ls [FLAGS] PATTERN...\n"
    "List the files (or gs:// objects) the patterns match, sorted by name, one\n"
    "'SIZE<TAB>RECORDS<TAB>FROM<TAB>NAME' line each, then a\n"
    "'SIZE<TAB>RECORDS<TAB>-<TAB>total' line. FROM says where RECORDS comes from:\n"
    "'index' (a fresh NAME.idx, the file is not read), 'counted' (read through,\n"
    "with --count), or '-' (not known: RECORDS is '-'; pass --count, or write\n"
    "indexes with 'tfrec index'). With --count a file that is not TFRecord data\n"
    "(a manifest.json, an .idx) shows 'error' and the reason on stderr. The total's\n"
    "RECORDS is '-' unless every file's count is known.\n";

typedef struct ls_cmd {
    cli_read_opts o;
    int count; /* read files without a fresh index to count them */
} ls_cmd;

/* The records of one name and where the number came from. */
static const char *records_of(const ls_cmd *c, const char *name, uint64_t *records, int *status)
{
    tfrec_index *ix;
    if (tfrec_index_load_fresh(&ix, name) == TFREC_OK) {
        *records = tfrec_index_records(ix);
        tfrec_index_free(ix);
        return "index";
    }
    if (!c->count)
        return "-";
    cli_file_result res;
    cli_read_file(name, &c->o, NULL, NULL, &res);
    if (res.status == EXIT_INTERRUPTED)
        *status = EXIT_INTERRUPTED;
    if (res.status != EXIT_OK)
        return "error"; /* the reason is on stderr */
    *records = res.records;
    return "counted";
}

static int list_files(void *ctx, const cli_files *files)
{
    const ls_cmd *c = ctx;
    uint64_t total_size = 0, total_records = 0;
    int all_counted = 1, status = EXIT_OK;
    for (size_t i = 0; i < files->n && status != EXIT_INTERRUPTED; i++) {
        const char *name = files->paths[i];
        tfrec_fs_info info = TFREC_FS_INFO_INIT;
        int rc = tfrec_fs_stat(NULL, name, &info);
        if (rc) {
            cli_log("%s", tfrec_last_errmsg());
            status = cli_worst(status, cli_worst(cli_exit_for(rc), EXIT_IO));
            continue;
        }
        uint64_t records = 0;
        const char *from = records_of(c, name, &records, &status);
        int known = !strcmp(from, "index") || !strcmp(from, "counted");
        char rec[32] = "-";
        if (known)
            snprintf(rec, sizeof rec, "%" PRIu64, records);
        printf("%" PRIu64 "\t%s\t%s\t%s\n", info.size, rec, from, name);
        total_size += info.size;
        total_records += records;
        all_counted &= known;
    }
    if (all_counted)
        printf("%" PRIu64 "\t%" PRIu64 "\t-\ttotal\n", total_size, total_records);
    else
        printf("%" PRIu64 "\t-\t-\ttotal\n", total_size);
    return cli_worst(status, cli_flush_stdout());
}

int cmd_ls(int argc, char **argv)
{
    ls_cmd c;
    memset(&c, 0, sizeof c);
    c.o.keep_errors = 0;
    cli_flag flags[] = { { .name = "count",
                           .type = CLI_BOOL,
                           .dest = &c.count,
                           .help = "read the files without a fresh index to count their records" },
                         CLI_READ_FLAGS(&c.o),
                         { 0 } };
    cli_cmdline cl;
    cli_files files = { 0 };
    int st = cli_cmd_parse(&cl, "tfrec ls", ls_help, flags, argc, argv);
    if (st == CLI_PARSED) {
        /* every match is listed, FILE.idx beside FILE too (unlike the
         * reading commands, which drop it) */
        const char *unmatched = NULL;
        int rc = cli_files_list(&files, cl.args, (size_t)cl.nargs, &unmatched);
        if (cl.nargs == 0) {
            cli_usage_error(&cl, "no pattern: give the files or objects to list");
            st = EXIT_USAGE;
        } else if (rc == TFREC_E_NOT_FOUND && !cli_is_remote(unmatched)) {
            cli_log("no files match '%s'", unmatched);
            st = EXIT_IO;
        } else if (rc) {
            cli_log("%s", tfrec_last_errmsg());
            st = EXIT_IO;
        } else {
            st = list_files(&c, &files);
        }
    }
    cli_files_free(&files);
    cli_cmdline_free(&cl);
    return st;
}

/* tfrec convert: re-write records with another compression. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/progress.h"
#include "cli.h"

static const char convert_help[] =
    "Usage: tfrec convert [FLAGS] INPUT... OUTPUT\n"
    "       tfrec convert [FLAGS] -o OUTPUT INPUT...\n"
    "Copy the records of the inputs, in order, into one new TFRecord file with\n"
    "the chosen compression. The output appears only when everything was read\n"
    "and written (it is written under a temporary name and renamed), so on any\n"
    "error or interruption no partial file is left. OUTPUT may be '-' for\n"
    "standard output, or gs://BUCKET/OBJECT when built with Cloud Storage support\n"
    "(uploaded as it is written; the object appears only when complete).\n";

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
        cli_log("%s", tfrec_writer_errmsg(s->w));
        return cli_worst(cli_exit_for(rc), EXIT_IO);
    }
    s->records++;
    s->bytes += rec->len;
    if ((s->records & 255) == 0)
        cli_progress_update(&s->progress, s->records, s->bytes);
    return CLI_CONTINUE;
}

/* The writer's temporary files are "<output>.tmp-<pid>-<n>" beside the
 * output (lib/io/file_sink.c). One whose process is gone was left by a run
 * killed outright (SIGKILL, a second Ctrl-C): remove it and say so. */
/* mine: this process's own temporary files (a stuck run's cleanup);
 * otherwise those of processes that are gone. */
static void remove_temps(const char *output, int mine)
{
    /* A gs:// upload left unfinished never becomes an object. */
    if (!strcmp(output, "-") || cli_is_remote(output))
        return;
    const char *slash = strrchr(output, '/');
    char dir[4096];
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - output) : 1, slash ? output : ".");
    if (slash == output)
        snprintf(dir, sizeof dir, "/");
    const char *base = slash ? slash + 1 : output;
    size_t blen = strlen(base);
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, base, blen) != 0 || strncmp(e->d_name + blen, ".tmp-", 5) != 0)
            continue;
        char *end;
        long pid = strtol(e->d_name + blen + 5, &end, 10);
        if (pid <= 0 || *end != '-')
            continue;
        if (mine ? pid != (long)getpid()
                 : pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (unlink(path) == 0 && !mine)
            cli_log("removed %s: the temporary file of an interrupted run whose process (%ld) is "
                    "no longer running",
                    path, pid);
    }
    closedir(d);
}

static void remove_own_temps(void *output)
{
    remove_temps(output, 1);
}

static int convert(const cli_read_opts *o, const tfrec_writer_options *wo, const char *output,
                   const cli_files *files, int quiet)
{
    convert_state s = { 0 };
    int status = EXIT_OK;
    remove_temps(output, 0);
    int rc = cli_writer_open(&s.w, output, wo);
    if (rc) {
        cli_log("%s", tfrec_last_errmsg());
        return cli_worst(cli_exit_for(rc), EXIT_IO);
    }
    cli_progress_start(&s.progress, "records", 0, quiet);
    for (size_t i = 0; i < files->n && status == EXIT_OK; i++) {
        cli_file_result res;
        cli_read_file(files->paths[i], o, convert_one, &s, &res);
        status = cli_worst(status, res.status);
    }
    cli_progress_update(&s.progress, s.records, s.bytes);
    cli_progress_finish(&s.progress);
    if (cli_interrupted) /* also when the signal came during the last read */
        status = cli_worst(status, EXIT_INTERRUPTED);
    if (status != EXIT_OK) {
        tfrec_writer_abort(s.w);
        if (cli_interrupted)
            cli_log("interrupted by %s after %" PRIu64 " records: %s not written and its "
                    "%s; run the same command again to convert from the start",
                    cli_interrupted == SIGINT ? "SIGINT" : "SIGTERM", s.records, output,
                    cli_is_remote(output) ? "its upload cancelled" : "its temporary file removed");
        else
            cli_log("%s not written", output);
    } else if ((rc = tfrec_writer_close(s.w)) != TFREC_OK) {
        cli_log("%s", tfrec_writer_errmsg(s.w));
        status = cli_worst(cli_exit_for(rc), EXIT_IO);
    } else if (!quiet) {
        cli_log("%" PRIu64 " records (%" PRIu64 " bytes) from %zu file%s -> %s, "
                "%s, %" PRIu64 " bytes",
                s.records, s.bytes, files->n, files->n == 1 ? "" : "s", output,
                tfrec_compression_name(wo->compression), tfrec_writer_bytes_out(s.w));
    }
    tfrec_writer_free(s.w);
    return status;
}

int cmd_convert(int argc, char **argv)
{
    cli_read_opts o = { 0 };
    tfrec_writer_options wo = TFREC_WRITER_OPTIONS_INIT;
    wo.compression = TFREC_COMPRESSION_NONE;
    const char *output = NULL;
    int quiet = 0;
    cli_flag flags[] = { CLI_OUTPUT_COMPRESSION_FLAG(&wo.compression),
                         { .name = "level",
                           .short_name = 'l',
                           .type = CLI_INT,
                           .dest = &wo.level,
                           .min = 1,
                           .max = 9,
                           .help = "compression level 1..9 (default 6, as TensorFlow)" },
                         { .name = "output",
                           .short_name = 'o',
                           .type = CLI_PATH,
                           .dest = &output,
                           .value_name = "FILE",
                           .help = "output file (otherwise the last argument)" },
                         CLI_READ_FLAGS(&o),
                         CLI_SKIP_FLAG(&o),
                         { .name = "quiet",
                           .short_name = 'q',
                           .type = CLI_BOOL,
                           .dest = &quiet,
                           .help = "no progress or summary on stderr" },
                         { 0 } };
    cli_cmdline cl;
    cli_files files = { 0 };
    int st = cli_cmd_parse(&cl, "tfrec convert", convert_help, flags, argc, argv);
    if (st == CLI_PARSED && !output) {
        /* the last argument is the output */
        if (cl.nargs < 2) {
            cli_usage_error(&cl, "need at least one input and an output");
            st = EXIT_USAGE;
        } else {
            output = cl.args[--cl.nargs];
            st = cli_require_local(cl.prog, "output", output) == EXIT_OK ? st : EXIT_USAGE;
        }
    }
    if (st == CLI_PARSED && (st = cli_input_files(&files, &cl)) == EXIT_OK) {
        /* A read blocked on a pipe cannot see the signal: after 2 s the
         * signal thread removes the temporary output and exits. */
        cli_catch_interrupts_cleanup(remove_own_temps, (void *)output, 2.0);
        st = convert(&o, &wo, output, &files, quiet);
    }
    cli_files_free(&files);
    cli_cmdline_free(&cl);
    return st;
}

/* Command-line pieces shared by the subcommands: flag parsing, input
 * files, stdout. */
#include <errno.h>
#include <string.h>

#include "cli.h"

int cli_cmd_parse(cli_cmdline *cl, const char *prog, const char *usage, cli_flag *flags, int argc,
                  char **argv)
{
    memset(cl, 0, sizeof *cl);
    cl->prog = prog;
    cl->usage = usage;
    cl->flags = flags;
    cl->max_args = -1;
    cl->footer = cli_have_storage()
                     ? "FILE may be '-' for standard input or gs://BUCKET/OBJECT; a quoted glob\n"
                       "pattern (also gs://BUCKET/train-*) is expanded by tfrec (sorted by name).\n"
                     : "FILE may be '-' for standard input; a quoted glob pattern is expanded by\n"
                       "tfrec (sorted by name).\n";
    int st = cli_parse(cl, argc, argv);
    cli_log_name = "tfrec"; /* messages say "tfrec: ", usage errors the subcommand */
    if (st == CLI_PARSED) {
        int g = cli_gcs_conn_apply(prog);
        if (g != EXIT_OK)
            return g;
    }
    return st;
}

int cli_cmd_run(const char *prog, const char *usage, cli_flag *flags, int argc, char **argv,
                cli_cmd_fn fn, void *ctx)
{
    cli_cmdline cl;
    cli_files files = { 0 };
    int st = cli_cmd_parse(&cl, prog, usage, flags, argc, argv);
    if (st == CLI_PARSED && (st = cli_input_files(&files, &cl)) == EXIT_OK)
        st = fn(ctx, &files);
    cli_files_free(&files);
    cli_cmdline_free(&cl);
    return st;
}

int cli_input_files(cli_files *out, const cli_cmdline *cl)
{
    const char *unmatched = NULL;
    memset(out, 0, sizeof *out);
    for (int i = 0; i < cl->nargs; i++)
        if (cli_require_local(cl->prog, "input", cl->args[i]) != EXIT_OK)
            return EXIT_USAGE;
    int rc = cli_files_expand(out, cl->args, (size_t)cl->nargs, &unmatched);
    if (rc == TFREC_E_NOT_FOUND && !cli_is_remote(unmatched))
        cli_log("no files match '%s'", unmatched);
    else if (rc && cli_is_remote(unmatched)) {
        const char *m = tfrec_last_errmsg(); /* the client's: names the bucket or object */
        if (m && strstr(m, unmatched))
            cli_log("%s", m);
        else
            cli_log("%s: %s", unmatched, m && *m ? m : tfrec_strerror(rc));
    } else if (rc)
        cli_log("cannot expand the file names: %s", tfrec_strerror(rc));
    if (rc) {
        cli_files_free(out);
        return EXIT_IO;
    }
    if (out->n == 0) {
        cli_usage_error(cl, "no input files");
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

int cli_flush_stdout(void)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_log("error writing to standard output: %s", strerror(errno));
        return EXIT_IO;
    }
    return EXIT_OK;
}

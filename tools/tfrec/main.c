/* tfrec: inspect, verify and convert TFRecord files. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct {
    const char *name;
    int (*run)(int, char **);
    const char *summary;
} commands[] = {
    { "count", cmd_count, "number of records per file" },
    { "verify", cmd_verify, "check every CRC; report each bad region with its offset" },
    { "cat", cmd_cat, "write the records' raw bytes (or re-framed; --raw: any file) to stdout" },
    { "head", cmd_head, "the first N records, as JSON lines (or raw)" },
    { "dump", cmd_dump, "every record as a JSON line, decoded as tf.Example" },
    { "stats", cmd_stats, "record sizes and the features' keys, types and counts" },
    { "convert", cmd_convert, "re-write with another compression (NONE, ZLIB, GZIP)" },
    { "index", cmd_index, "write FILE.idx (offset and length of every record)" },
    { "ls", cmd_ls, "files or objects with sizes and record counts (from indexes)" },
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *out, int full)
{
    fprintf(out, "Usage: tfrec COMMAND [FLAGS] FILE...\n"
                 "Inspect, verify and convert TFRecord files (NONE, ZLIB or GZIP).\n\n"
                 "Commands:\n");
    for (size_t i = 0; i < N_COMMANDS; i++)
        fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\nFILE may be '-' for standard input, and a quoted glob pattern such as\n"
                 "'data/train-*' is expanded by tfrec itself. The input's compression is\n"
                 "detected unless -c/--input-compression says otherwise\n"
                 "(-C/--output-compression: convert's output). Offsets are byte offsets\n"
                 "of record headers in the uncompressed stream.\n\n"
                 "'tfrec COMMAND --help' describes each command's flags. Flags are written\n"
                 "--name=value or --name value, booleans --name / --noname; every command\n"
                 "also takes --flagfile=FILE (one flag per line, # comments).\n");
    if (full)
        fprintf(out, "'tfrec COMMAND --helpfull' lists the common flags too; 'tfrec --version'\n"
                     "prints the version.\n");
    fprintf(out, "\n%s", EXIT_STATUS_HELP);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr, 0);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "-help") ||
        !strcmp(cmd, "--helpshort") || !strcmp(cmd, "--helpfull") || !strcmp(cmd, "help")) {
        if (argc > 2 && strcmp(cmd, "help") == 0) {
            for (size_t i = 0; i < N_COMMANDS; i++)
                if (!strcmp(argv[2], commands[i].name)) {
                    char *args[] = { argv[2], "--help", NULL };
                    return commands[i].run(2, args);
                }
        }
        usage(stdout, !strcmp(cmd, "--helpfull"));
        return EXIT_OK;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "-version")) {
        printf("tfrec (libtfrec) %s\n", tfrec_version());
        return EXIT_OK;
    }
    /* Only convert has something to clean up (its temporary output): it
     * sets up its own handling once it knows the output's name. */
    if (strcmp(cmd, "convert") != 0)
        cli_exit_on_interrupt();
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (!strcmp(cmd, commands[i].name))
            return commands[i].run(argc - 1, argv + 1);
    const char *near = NULL;
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (cli_edit_distance(cmd, commands[i].name) <= 2)
            near = commands[i].name;
    if (cmd[0] == '-')
        cli_log("%s before the command: flags go after it (tfrec COMMAND [FLAGS] FILE...)\n"
                "Try 'tfrec --help' for more information.",
                cmd);
    else if (near)
        cli_log("unknown command '%s' (did you mean '%s'?)\n"
                "Try 'tfrec --help' for more information.",
                cmd, near);
    else
        cli_log("unknown command '%s'\nTry 'tfrec --help' for more information.", cmd);
    return EXIT_USAGE;
}

/* Input file lists for the tools: arguments or a --source_glob expanded
 * into file names, patterns matched in byte order (not the locale's), so
 * the same files are read in the same order everywhere. */
#ifndef TFREC_TOOLS_FILES_H
#define TFREC_TOOLS_FILES_H

#include <stddef.h>

typedef struct cli_files {
    char **paths;
    size_t n, cap;
} cli_files;

/* Append the files named by args[0..n): an argument with * ? or [ that
 * names no existing file is a glob(3) pattern, its matches sorted
 * bytewise; any other argument is taken literally ("-" too). Returns 0;
 * TFREC_E_NOT_FOUND with *unmatched set to the pattern that matched
 * nothing; TFREC_E_IO if the directory could not be read; TFREC_E_NOMEM.
 * out must be zeroed (or freed) before the first call. */
int cli_files_expand(cli_files *out, char *const *args, size_t n, const char **unmatched);
void cli_files_free(cli_files *f);

/* Cloud Storage is not built yet: a gs:// path (any case) given to any
 * tool, as a flag or an argument, is refused instead of being taken as a
 * local directory called "gs:". cli_path_check returns 0 for a local path,
 * -1 with the reason in err; cli_require_local prints
 * "PROG: WHAT: reason" and returns EXIT_USAGE, or returns EXIT_OK. */
#define CLI_GS_UNSUPPORTED "gs:// paths are not supported yet in this build"
int cli_path_check(const char *path, char *err, size_t errcap);
int cli_require_local(const char *prog, const char *what, const char *path);

#endif

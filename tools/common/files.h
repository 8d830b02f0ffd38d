/* The names the tools take: input file lists (arguments or a --source_glob
 * expanded into file names, patterns matched in byte order, not the
 * locale's, so the same files are read in the same order everywhere), and
 * opening them. Every name goes through the core's file system layer
 * (include/tfrec/fs.h), so it may be of any scheme registered there; the
 * tools know no scheme themselves. open.c registers those of the optional
 * parts linked in (see the Makefile's TOOLS_OPTIONAL_PARTS); a name whose
 * scheme nobody serves is refused by name, with the layer's reason,
 * instead of being taken as a local directory "gs:". */
#ifndef TFREC_TOOLS_FILES_H
#define TFREC_TOOLS_FILES_H

#include <stddef.h>
#include <stdio.h>

#include "tfrec/io.h"
#include "tfrec/record.h"

typedef struct cli_files {
    char **paths;
    size_t n, cap;
} cli_files;

/* Append the data files named by args[0..n): an argument with * ? or [
 * that names no existing file is a pattern (glob(3), or tfrec_fs_list for
 * a name with a scheme), its matches sorted bytewise, less each X.idx
 * whose X it matched too (tfrec_index_beside_match: the index, not data);
 * any other argument is taken literally ("-" too), less a local X.idx
 * given with X (the shell's expansion of such a pattern; an X.idx named
 * alone is read). Every tool's input files and --source_glob come through here,
 * so the rule is the same everywhere. Returns 0; TFREC_E_NOT_FOUND when a pattern
 * matched nothing; TFREC_E_IO if a directory or bucket could not be
 * listed; TFREC_E_UNSUPPORTED for a scheme nobody registered;
 * TFREC_E_NOMEM. On failure *unmatched (if not NULL) is the argument at
 * fault, and for one with a scheme tfrec_last_errmsg() says why. out must be zeroed (or freed)
 * before the first call. */
int cli_files_expand(cli_files *out, char *const *args, size_t n, const char **unmatched);
/* The same keeping every match, the indexes too (tfrec ls). */
int cli_files_list(cli_files *out, char *const *args, size_t n, const char **unmatched);
void cli_files_free(cli_files *f);

/* Nonzero for a name outside the local file system: one with a scheme
 * (include/tfrec/fs.h) other than file://. */
int cli_is_remote(const char *name);
/* Nonzero when this build's tools hold the storage part (open.c; for the
 * help text). */
int cli_have_storage(void);

/* cli_path_check returns 0 for a name the tool can use, -1 with the reason
 * in err for one it cannot: a name with a scheme where the flag needs a
 * local file (local_only: "must be a local path (S:// is not accepted
 * here)"), or whose scheme no linked part serves ("S:// paths are not
 * supported yet in this build (the layer's reason)"). cli_require_local
 * prints "PROG: WHAT: reason" and returns EXIT_USAGE, or returns EXIT_OK. */
int cli_path_check(const char *path, int local_only, char *err, size_t errcap);
int cli_require_local(const char *prog, const char *what, const char *path);

/* Register the schemes of the parts this build holds (gs:// with the
 * storage part) in the core's file system registry; done before main and
 * by every call below, so calling it is only needed before opening names
 * through the library directly. */
void cli_fs_setup(void);

/* Open a name (a local path, "-", or of any scheme the layer routes) as a
 * record reader / writer. A writer's output appears only when it is closed
 * successfully (local: temp-then-rename; gs://: the upload's commit).
 * Failures leave the message (naming the file or object) in
 * tfrec_last_errmsg(). Everything else the tools open by name goes to the
 * library with the default file system (option fields fs NULL). */
int cli_reader_open(tfrec_reader **out, const char *name, const tfrec_reader_options *o);
int cli_writer_open(tfrec_writer **out, const char *name, const tfrec_writer_options *o);
/* A name of the layer as a read-only stdio stream (a flag's text file,
 * e.g. bt2tfrec --split_keys_file); NULL with errno set (ENOENT: missing)
 * and the layer's message in tfrec_last_errmsg(). */
FILE *cli_fopen_read(const char *name);

#endif

/* The names the tools take: input file lists (arguments or a --source_glob
 * expanded into file names, patterns matched in byte order, not the
 * locale's, so the same files are read in the same order everywhere), and
 * opening them. Built with the storage part (TFREC_CLI_HAVE_STORAGE, see
 * the Makefile's TOOLS_OPTIONAL_PARTS) every name may be gs://BUCKET/OBJECT
 * and goes through include/tfrec/storage.h; without it a gs:// name is
 * refused by name instead of being taken as a local directory "gs:". */
#ifndef TFREC_TOOLS_FILES_H
#define TFREC_TOOLS_FILES_H

#include <stddef.h>

#include "tfrec/io.h"
#include "tfrec/record.h"

typedef struct cli_files {
    char **paths;
    size_t n, cap;
} cli_files;

/* Append the files named by args[0..n): an argument with * ? or [ that
 * names no existing file is a pattern (glob(3), or tfrec_storage_glob for
 * gs://), its matches sorted bytewise; any other argument is taken
 * literally ("-" too). Returns 0; TFREC_E_NOT_FOUND when a pattern matched
 * nothing; TFREC_E_IO if a directory or bucket could not be listed;
 * TFREC_E_UNSUPPORTED for gs:// without the storage part; TFREC_E_NOMEM.
 * On failure *unmatched (if not NULL) is the argument at fault, and for a
 * gs:// one tfrec_last_errmsg() says why. out must be zeroed (or freed)
 * before the first call. */
int cli_files_expand(cli_files *out, char *const *args, size_t n, const char **unmatched);
void cli_files_free(cli_files *f);

/* Nonzero for a gs:// name (any case of the scheme). */
int cli_is_remote(const char *name);
/* Nonzero when this build's tools take gs:// names. */
int cli_have_storage(void);

/* cli_path_check returns 0 for a name the tool can use, -1 with the reason
 * in err for a gs:// one it cannot (local_only: the flag needs a local
 * file; or the storage part is not built). cli_require_local prints
 * "PROG: WHAT: reason" and returns EXIT_USAGE, or returns EXIT_OK. */
#define CLI_GS_UNSUPPORTED "gs:// paths are not supported yet in this build"
#define CLI_GS_LOCAL_ONLY "must be a local path (gs:// is not accepted here)"
int cli_path_check(const char *path, int local_only, char *err, size_t errcap);
int cli_require_local(const char *prog, const char *what, const char *path);

/* Register the schemes of the parts this build holds (gs:// with the
 * storage part) in the core's file system registry; done before main and
 * by every call below, so calling it is only needed before opening names
 * through the library directly. */
void cli_fs_setup(void);

/* Open a name (local path, "-" or gs://) as a record reader / writer, or
 * as a byte source / sink (io set up with TFREC_IO_INIT). The ctx argument
 * is unused: the signatures fit the library's open callbacks
 * (tfrec_bt_load_options.open_source, tfrec_imagenet_options.open_sink).
 * A writer or sink of a gs:// name makes its object appear only when
 * closed with commit, like the local temp-then-rename. Failures leave the
 * message (naming the file or object) in tfrec_last_errmsg(). */
int cli_reader_open(tfrec_reader **out, const char *name, const tfrec_reader_options *o);
int cli_writer_open(tfrec_writer **out, const char *name, const tfrec_writer_options *o);
int cli_open_source(void *ctx, tfrec_io *io, const char *name);
int cli_open_sink(void *ctx, tfrec_io *io, const char *name);
/* Remove a file or object; a missing one is not an error. */
int cli_remove(void *ctx, const char *name);
/* Every file or object matching pattern (tfrec_storage_glob) to add, as
 * tfrec_imagenet_options.list_input wants; no match is no call. */
/* Bytes [offset, offset + length) of a file or object as a source
 * (tfrec_imagenet_options.open_input_range). */
int cli_open_source_range(void *ctx, tfrec_io *io, const char *name, uint64_t offset,
                          uint64_t length);
int cli_list_input(void *ctx, const char *pattern,
                   int (*add)(void *add_ctx, const char *name, uint64_t size), void *add_ctx);

#endif

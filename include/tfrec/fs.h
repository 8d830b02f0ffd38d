/* libtfrec: file systems. Every name the library opens goes through one.
 *
 * A tfrec_fs is a table of operations on names: open a byte source (whole,
 * or a range), open a sink that commits or aborts, stat, list a pattern,
 * remove. Three are known to the core:
 *
 *   tfrec_fs_local()    local paths, "-" (stdin for a source, stdout for a
 *                       sink) and file:///absolute/path;
 *   "mem://"            a process-wide in-memory object store (thread-safe;
 *                       a sink's object appears when it is committed), for
 *                       tests and for passing data between threads without
 *                       touching a disk;
 *   tfrec_fs_default()  routes each name by its scheme: no scheme, "-" and
 *                       file:// to the local file system, any other scheme
 *                       to the file system registered for it.
 *
 * Other parts register their schemes: libtfrec-storage registers "gs" when
 * it is loaded as a shared library, and a statically linked program calls
 * tfrec_storage_register() (include/tfrec/storage.h). A name whose scheme
 * nobody registered is an error (TFREC_E_UNSUPPORTED, "gs:// names need
 * libtfrec-storage, which is not linked"), never a local path.
 *
 * Schemes. A name has a scheme when it starts with an RFC 3986 scheme (a
 * letter, then letters, digits, '+', '-' or '.') followed by "://"; the
 * scheme is compared without regard to case. So "gs://b/o" and
 * "MEM://x" have one, "./gs://x", "/tmp/a://b" and "C:/x" do not. A local
 * file whose relative name looks like a URL is reached as "./name".
 *
 * Every function of a tfrec_fs takes its ctx first and the name second,
 * and fills a tfrec_io (set up with TFREC_IO_INIT) last; names are passed
 * whole, scheme included. Failures return a negative TFREC_E_* code with
 * the message in tfrec_last_errmsg(); a missing name is TFREC_E_NOT_FOUND.
 *
 * Writing a file system: fill a tfrec_fs (TFREC_FS_INIT) and register it:
 *
 *     static const tfrec_fs my_fs = { .struct_size = sizeof my_fs,
 *         .scheme = "my", .open_source = my_open, ... };
 *     tfrec_fs_register(&my_fs);
 *
 * open_source and stat are required; open_range falls back to open_source
 * and seek (or reading forward); a missing open_sink, list or remove makes
 * those calls TFREC_E_UNSUPPORTED. docs/fs.md has the details.
 */
#ifndef TFREC_FS_H
#define TFREC_FS_H

#include "common.h"

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "io.h"
#include "record.h"

TFREC_BEGIN_DECLS

/* What is known about one name. An output struct (see common.h); in a list
 * callback it is the library's, so check info->struct_size before reading
 * members newer than your headers. */
typedef struct tfrec_fs_info {
    size_t struct_size; /* TFREC_FS_INFO_INIT / tfrec_fs_info_init() */
    uint64_t size;
    /* Version of the object (gs://: its generation; mem://: a counter
     * raised by every commit); 0 when the file system has none. */
    int64_t generation;
    /* Modification time in ns since the epoch (local files, mem://); 0 when
     * unknown. */
    int64_t mtime_ns;
    int has_crc32c;
    uint32_t crc32c; /* CRC32C (unmasked) of the whole content, when has_crc32c */
} tfrec_fs_info;

#define TFREC_FS_INFO_INIT TFREC_STRUCT_INIT(tfrec_fs_info)
void tfrec_fs_info_init(tfrec_fs_info *info);

/* Called once per listed name, in bytewise order; nonzero stops the
 * listing (a negative value is then returned by the list call). */
typedef int (*tfrec_fs_list_fn)(void *fn_ctx, const char *name, const tfrec_fs_info *info);

typedef struct tfrec_fs {
    size_t struct_size; /* TFREC_FS_INIT / tfrec_fs_init() */
    /* The scheme it serves, without "://" ("gs" serves gs://...); NULL for
     * the local file system. */
    const char *scheme;
    void *ctx;
    /* A source over the whole of name. */
    int (*open_source)(void *ctx, const char *name, tfrec_io *io);
    /* Optional: a source over bytes [offset, offset + length) of name
     * (length UINT64_MAX: to the end); its offsets (seek, size) are
     * relative to offset. A range past the end is TFREC_E_INVALID. */
    int (*open_range)(void *ctx, const char *name, uint64_t offset, uint64_t length, tfrec_io *io);
    /* Optional: a sink creating or replacing name. io->close(ctx, 1)
     * commits (name appears whole, or not at all), io->close(ctx, 0)
     * aborts (nothing appears, a previous version stays). */
    int (*open_sink)(void *ctx, const char *name, tfrec_io *io);
    int (*stat)(void *ctx, const char *name, tfrec_fs_info *info);
    /* Optional: every name matching pattern, sorted bytewise. Patterns use
     * * ? and [...] with glob(3) meaning ("*" does not cross "/", nor
     * match a leading "."); a pattern without them names itself. No match
     * is TFREC_E_NOT_FOUND. */
    int (*list)(void *ctx, const char *pattern, tfrec_fs_list_fn fn, void *fn_ctx);
    /* Optional: delete name (missing: TFREC_E_NOT_FOUND). */
    int (*remove)(void *ctx, const char *name);
} tfrec_fs;

#define TFREC_FS_INIT TFREC_STRUCT_INIT(tfrec_fs)
void tfrec_fs_init(tfrec_fs *fs);

/* The local file system (scheme NULL). */
const tfrec_fs *tfrec_fs_local(void);
/* Routes each name by its scheme over the registry (see above). */
const tfrec_fs *tfrec_fs_default(void);

/* Register fs for names starting with fs->scheme "://" (the table is
 * copied, the scheme string too; ctx and the functions must stay valid
 * while registered). Registering a scheme again replaces the entry; the
 * "file" scheme and scheme NULL are the local file system's and cannot be
 * taken. Thread-safe, also against concurrent calls through
 * tfrec_fs_default(). */
int tfrec_fs_register(const tfrec_fs *fs);
/* Remove the entry of scheme (TFREC_E_NOT_FOUND if none). A call already
 * running through it finishes. */
int tfrec_fs_unregister(const char *scheme);
/* The file system a name goes to through tfrec_fs_default(): the local
 * one, or the registered one (valid until it is replaced or unregistered);
 * NULL with the reason in tfrec_last_errmsg() for an unregistered scheme. */
const tfrec_fs *tfrec_fs_for(const char *name);
/* Length of name's scheme ("gs://x" -> 2), 0 when it has none. */
size_t tfrec_fs_scheme_length(const char *name);

/* One call per operation; fs NULL means tfrec_fs_default(). io must be set
 * up with TFREC_IO_INIT; info with TFREC_FS_INFO_INIT. */
int tfrec_fs_open_source(const tfrec_fs *fs, const char *name, tfrec_io *io);
int tfrec_fs_open_range(const tfrec_fs *fs, const char *name, uint64_t offset, uint64_t length,
                        tfrec_io *io);
int tfrec_fs_open_sink(const tfrec_fs *fs, const char *name, tfrec_io *io);
int tfrec_fs_stat(const tfrec_fs *fs, const char *name, tfrec_fs_info *info);
int tfrec_fs_list(const tfrec_fs *fs, const char *pattern, tfrec_fs_list_fn fn, void *fn_ctx);
int tfrec_fs_remove(const tfrec_fs *fs, const char *name);
/* All of a small object or file (a plan, a listing, a manifest part): at
 * most max_bytes, into a malloc'd buffer with a NUL after the data (free()
 * it). More than max_bytes is TFREC_E_PARSE; every failure names the
 * object in tfrec_last_errmsg(). */
int tfrec_fs_read_all(const tfrec_fs *fs, const char *name, size_t max_bytes, char **data,
                      size_t *len);

/* A record reader / writer over a name of fs (NULL: the default). The
 * writer's output appears when tfrec_writer_close() succeeds; with
 * write_index, NAME.idx is written through the same file system. */
int tfrec_fs_reader_open(const tfrec_fs *fs, tfrec_reader **out, const char *name,
                         const tfrec_reader_options *opts);
int tfrec_fs_writer_open(const tfrec_fs *fs, tfrec_writer **out, const char *name,
                         const tfrec_writer_options *opts);

TFREC_END_DECLS
#endif

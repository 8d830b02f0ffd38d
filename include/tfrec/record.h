/* libtfrec: TFRecord files, byte-compatible with TensorFlow.
 *
 * Each record: uint64 length (LE) | uint32 masked crc32c(length bytes)
 *              | data | uint32 masked crc32c(data)
 * Compression (ZLIB or GZIP) is one stream over the whole file.
 *
 * Handles are not thread-safe; use one per thread. Different handles may be
 * used concurrently.
 */
#ifndef TFREC_RECORD_H
#define TFREC_RECORD_H

#include "common.h"

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "io.h"

TFREC_BEGIN_DECLS

struct tfrec_fs; /* include/tfrec/fs.h */

enum tfrec_compression {
    TFREC_COMPRESSION_AUTO = 0, /* reader: detect from the first bytes; writer: NONE */
    TFREC_COMPRESSION_NONE = 1,
    TFREC_COMPRESSION_ZLIB = 2, /* zlib wrapper, like TFRecordOptions("ZLIB") */
    TFREC_COMPRESSION_GZIP = 3  /* gzip wrapper, like TFRecordOptions("GZIP") */
};

/* "NONE"/"ZLIB"/"GZIP"/"AUTO" (also "" and lower case) to the enum; -1 if unknown. */
int tfrec_compression_from_name(const char *name);
const char *tfrec_compression_name(int compression);

/* ---------------------------------------------------------------- reader */

typedef struct tfrec_reader tfrec_reader;

/* Options: TFREC_READER_OPTIONS_INIT, then set what differs from the
 * defaults in brackets (see common.h for struct_size). */
typedef struct tfrec_reader_options {
    size_t struct_size;
    int compression;          /* [AUTO] */
    size_t buffer_size;       /* read buffer [1 MiB uncompressed, 256 KiB compressed] */
    uint64_t max_record_size; /* larger length fields are TFREC_E_RECORD_TOO_LARGE [1 GiB] */
    int skip_corrupt;         /* [0] stop at the first problem; 1: skip corrupt regions,
                                 resynchronise on the next valid record and count them */
    /* How a local regular file is read: [0] read() into the buffer, or a
     * mapping when TFREC_MMAP=1 was set in the environment at the first open
     * of the process; 1: map the file (local disk file systems only, else
     * read()); -1: read() whatever the environment says. A mapped file that
     * another process truncates makes later reads fault (SIGBUS), and page
     * faults can cost more than read()'s copy: see docs/format.md. */
    int use_mmap;
    /* (since 1.1) The file system names are opened through, by
     * tfrec_reader_open() and tfrec_reader_count() [NULL: tfrec_fs_default(),
     * local paths, "-" and every registered scheme; include/tfrec/fs.h]. */
    const struct tfrec_fs *fs;
} tfrec_reader_options;

#define TFREC_READER_OPTIONS_INIT TFREC_STRUCT_INIT(tfrec_reader_options)
void tfrec_reader_options_init(tfrec_reader_options *opts);

typedef struct tfrec_reader_stats {
    size_t struct_size;
    uint64_t records;         /* records returned */
    uint64_t bytes;           /* payload bytes returned */
    uint64_t skipped_regions; /* corrupt regions skipped (skip_corrupt only) */
    uint64_t skipped_bytes;   /* bytes in them */
} tfrec_reader_stats;

#define TFREC_READER_STATS_INIT TFREC_STRUCT_INIT(tfrec_reader_stats)
void tfrec_reader_stats_init(tfrec_reader_stats *stats);

/* Open a name: a local path, "-" (stdin), or any scheme of opts->fs (the
 * default file system routes gs:// to libtfrec-storage, mem:// to memory;
 * include/tfrec/fs.h). opts may be NULL. On failure *out is NULL
 * and tfrec_last_errmsg() says why. */
int tfrec_reader_open(tfrec_reader **out, const char *path, const tfrec_reader_options *opts);

/* Read through a caller transport; the reader owns io from now on (also when
 * this fails) and calls io->close(ctx, 0) when freed. name is used in
 * messages. (An io whose struct_size is unusable cannot be read, so it is
 * left alone: TFREC_E_INVALID.) */
int tfrec_reader_open_io(tfrec_reader **out, const tfrec_io *io, const char *name,
                         const tfrec_reader_options *opts);

/* Next record: TFREC_OK with *data and *len set (valid until the next call on this
 * reader), TFREC_END at a clean end of file, or a negative code whose message
 * names the file and byte offset. After an error (without skip_corrupt) the
 * reader stays in error and returns the same code, until a successful
 * tfrec_reader_seek(). */
int tfrec_reader_next(tfrec_reader *r, const uint8_t **data, size_t *len);

/* Byte offset of the header of the record last returned, counted in the
 * uncompressed stream (equal to the file offset when not compressed). */
uint64_t tfrec_reader_offset(const tfrec_reader *r);

/* Continue reading at a record offset previously reported by
 * tfrec_reader_offset(). Seeks the source when it can, otherwise (compressed
 * or pipe) re-reads forward; seeking backwards on a pipe is TFREC_E_UNSUPPORTED. */
int tfrec_reader_seek(tfrec_reader *r, uint64_t offset);

/* Compression in effect (the detected one when opened with AUTO). */
int tfrec_reader_compression(const tfrec_reader *r);

/* Copy the counts into *stats (struct_size set by the caller). */
int tfrec_reader_stats_get(const tfrec_reader *r, tfrec_reader_stats *stats);

/* With skip_corrupt: the region skipped most recently (check for growth of
 * stats.skipped_regions after each tfrec_reader_next call). Returns the code
 * of the problem found at its start (0 if nothing was skipped yet) and sets
 * its stream offset and length; tfrec_reader_errmsg() describes the problem. */
int tfrec_reader_last_skip(const tfrec_reader *r, uint64_t *offset, uint64_t *bytes);
const char *tfrec_reader_errmsg(const tfrec_reader *r);
/* Release the reader (and its source). NULL is a no-op. */
void tfrec_reader_free(tfrec_reader *r);

/* ---------------------------------------------------------------- writer */

typedef struct tfrec_writer tfrec_writer;

typedef struct tfrec_writer_options {
    size_t struct_size;
    int compression;    /* [NONE] */
    int level;          /* 1..9 on zlib's scale (ISA-L builds map it: docs/format.md),
                           0 = default [6, TensorFlow's Z_DEFAULT_COMPRESSION] */
    size_t buffer_size; /* output buffer [1 MiB uncompressed, 256 KiB compressed] */
    /* Index the records as they are written (NONE compression only;
     * include/tfrec/dataset.h describes the format). write_index = 1 with
     * tfrec_writer_open(): PATH.idx, committed right after PATH. With
     * tfrec_writer_open_io(): index_sink (owned by the writer from the
     * open on, committed after the data sink). [0 / NULL: no index] */
    int write_index;
    const tfrec_io *index_sink;
    /* (since 1.1) The file system tfrec_writer_open() creates path (and
     * PATH.idx) in [NULL: tfrec_fs_default(); include/tfrec/fs.h]. */
    const struct tfrec_fs *fs;
} tfrec_writer_options;

#define TFREC_WRITER_OPTIONS_INIT TFREC_STRUCT_INIT(tfrec_writer_options)
void tfrec_writer_options_init(tfrec_writer_options *opts);

/* Create path (or "-" for stdout; any name of opts->fs, see
 * include/tfrec/fs.h). Output goes to a temporary name in the same
 * directory (gs://: a resumable upload) and appears under path only when
 * tfrec_writer_close() succeeds. On failure *out is NULL and tfrec_last_errmsg() says why. */
int tfrec_writer_open(tfrec_writer **out, const char *path, const tfrec_writer_options *opts);
/* Write through a caller transport, owned by the writer from now on (also
 * when this fails): close() commits it with io->close(ctx, 1), abort()
 * discards it with io->close(ctx, 0). */
int tfrec_writer_open_io(tfrec_writer **out, const tfrec_io *io, const char *name,
                         const tfrec_writer_options *opts);

int tfrec_writer_write(tfrec_writer *w, const void *data, size_t len);

/* Push buffered bytes to the sink; when compressed, flush the deflate stream
 * (a zlib sync flush, or the end of an ISA-L chunk) so that everything
 * written so far can be decoded from the sink. */
int tfrec_writer_flush(tfrec_writer *w);

/* Finish the stream and commit the output (rename into place). The handle
 * stays valid for tfrec_writer_errmsg() until tfrec_writer_free(). */
int tfrec_writer_close(tfrec_writer *w);

/* Discard the output (the temporary file is removed). */
void tfrec_writer_abort(tfrec_writer *w);

/* Release the handle; a writer neither closed nor aborted is aborted.
 * NULL is a no-op. */
void tfrec_writer_free(tfrec_writer *w);

uint64_t tfrec_writer_records(const tfrec_writer *w);
/* Bytes handed to the sink so far (compressed size when compressed). */
uint64_t tfrec_writer_bytes_out(const tfrec_writer *w);
const char *tfrec_writer_errmsg(const tfrec_writer *w);

/* Encode one record's 12-byte header and 4-byte footer (for code that
 * frames records itself, e.g. in memory). */
void tfrec_record_header(uint8_t header[12], uint64_t len);
/* The masked CRC of data, stored little-endian as the record's footer. */
uint32_t tfrec_record_footer_crc(const void *data, size_t len);

/* Deflate library used for ZLIB and GZIP streams opened from now on: "isal"
 * (ISA-L's igzip, the default when built with it) or "zlib". Both write
 * streams every inflater reads. */
const char *tfrec_deflate_backend(void);

/* Choose the deflate library for streams opened afterwards: "zlib", "isal"
 * (TFREC_E_UNSUPPORTED in a build without ISA-L), or NULL / "" / "auto" for
 * the build's default. Thread-safe; streams already open keep theirs.
 * The environment variable TFREC_DEFLATE (same names), read once at the
 * first stream of the process, sets the initial choice; an unknown or
 * unavailable name there keeps the default. */
int tfrec_set_deflate_backend(const char *name);

TFREC_END_DECLS
#endif

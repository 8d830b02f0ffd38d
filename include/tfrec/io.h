/* libtfrec: byte sources and sinks.
 *
 * The record reader and writer move bytes through this small callback table,
 * so new transports (gs://, pipes, memory) plug in without touching the
 * framing code. Local paths and "-" (stdin/stdout) are built in.
 */
#ifndef TFREC_IO_H
#define TFREC_IO_H

#include "common.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

TFREC_BEGIN_DECLS

typedef struct tfrec_io {
    size_t struct_size; /* TFREC_IO_INIT / tfrec_io_init() (see common.h) */
    void *ctx;
    /* Read up to n bytes into buf. Returns the count, 0 at end of input,
     * or a negative TFREC_E_* code with a message available from errmsg. */
    ptrdiff_t (*read)(void *ctx, void *buf, size_t n);
    /* Write all n bytes. Returns TFREC_OK or a negative code. */
    int (*write)(void *ctx, const void *buf, size_t n);
    /* Optional (NULL = not seekable): position the next read at offset. */
    int (*seek)(void *ctx, uint64_t offset);
    /* Optional (NULL or negative result = unknown): total size in bytes. */
    int64_t (*size)(void *ctx);
    /* Finish and release ctx. For sinks, commit != 0 makes the output
     * visible (rename into place, finish an upload); commit == 0 discards it.
     * Returns TFREC_OK or a negative code. Always releases ctx, so a
     * failing close leaves its message in tfrec_last_errmsg() instead. */
    int (*close)(void *ctx, int commit);
    /* Optional: message for the last failure of this ctx. */
    const char *(*errmsg)(void *ctx);
} tfrec_io;

#define TFREC_IO_INIT TFREC_STRUCT_INIT(tfrec_io)
void tfrec_io_init(tfrec_io *io);

/* Built-in transports, filled into *io (set up with TFREC_IO_INIT first;
 * at most io->struct_size bytes are written). name is a local path or "-"
 * (stdin for sources, stdout for sinks). A local sink writes to "<path>.tmp-<pid>-<n>" and is
 * renamed to path when closed with commit != 0, removed otherwise.
 * On failure these return a negative code; tfrec_last_errmsg() says why. */
int tfrec_io_open_source(tfrec_io *io, const char *name);
int tfrec_io_open_sink(tfrec_io *io, const char *name);

/* A source over caller memory (not copied; must outlive the source). */
int tfrec_io_open_memory(tfrec_io *io, const void *data, size_t len);

TFREC_END_DECLS
#endif

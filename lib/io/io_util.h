/* Internal helpers shared by the built-in transports. */
#ifndef TFREC_IO_UTIL_H
#define TFREC_IO_UTIL_H

#include <stddef.h>

#include "tfrec/error.h"
#include "tfrec/io.h"

/* Map a local regular file opened by tfrec_io_open_source() (not stdin)
 * into memory, read-only, for the life of the source. Returns 0, or -1 when
 * the source is something else, is empty, or lives on a file system where
 * faults in a mapping would be signals rather than errors (anything but
 * local disk file systems). Opt-in (tfrec_reader_options.use_mmap): a file
 * truncated by someone else while mapped makes reads from the lost part
 * raise SIGBUS, and on some virtual machines the page faults cost more than
 * read()'s copy (docs/format.md). */
int tfrec_io_source_map(const tfrec_io *io, const uint8_t **data, uint64_t *len);

/* The descriptor of a regular file opened by tfrec_io_open_source() (not
 * stdin), for positioned reads (pread) that leave the source's own position
 * alone; -1 for any other source. */
int tfrec_io_source_fd(const tfrec_io *io);

/* Whether readers map by default: TFREC_MMAP=1 in the environment, read
 * once, at the first call in the process. */
int tfrec_io_mmap_default(void);
/* Whether random access through an index may map a file of small
 * records: unless TFREC_MMAP=0 (lib/dataset/random_reader.c decides). */
int tfrec_io_mmap_random_default(void);

/* write / read slots of transports that only go one way, so callers never
 * meet a NULL function pointer. */
static inline int io_write_unsupported(void *ctx, const void *buf, size_t n)
{
    (void)ctx, (void)buf, (void)n;
    return TFREC_E_UNSUPPORTED;
}

static inline ptrdiff_t io_read_unsupported(void *ctx, void *buf, size_t n)
{
    (void)ctx, (void)buf, (void)n;
    return TFREC_E_UNSUPPORTED;
}

/* A source over len bytes at data that someone else keeps alive: name is
 * for messages (copied), release(release_ctx) runs when the source closes
 * (NULL: nothing to release). tfrec_io_open_memory() and mem:// sources
 * are both this. */
int tfrec_io_open_memory_held(tfrec_io *io, const void *data, size_t len, const char *name,
                              void (*release)(void *release_ctx), void *release_ctx);

#endif

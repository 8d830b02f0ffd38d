/* Internal: a strict reader of ustar, pax and GNU tar headers.
 *
 * The reader walks the headers of one archive (a whole file, a region of
 * one such as a tar stored inside a tar, or a buffer) by position, so the
 * data of a member is never read unless the caller asks: a listing of a
 * tar of tars costs one 512-byte read per member. Everything an entry
 * declares is checked against the bytes really there before it is
 * believed, and the only allocations are the name and extended headers,
 * each bounded by TFREC_TAR_EXT_MAX. */
#ifndef TFREC_TAR_TAR_H
#define TFREC_TAR_TAR_H

#include <stddef.h>
#include <stdint.h>

#include "tfrec/io.h"
#include "util/errors.h"

/* Longest pax or GNU extended header (and so member name) accepted. */
#define TFREC_TAR_EXT_MAX 65536

enum tfrec_tar_type {
    TFREC_TAR_FILE = 0,  /* regular file ('0', NUL, '7') */
    TFREC_TAR_DIR = 1,   /* '5' */
    TFREC_TAR_LINK = 2,  /* hard or symbolic link ('1', '2') */
    TFREC_TAR_OTHER = 3, /* devices, fifos, vendor types: data skipped */
};

typedef struct tfrec_tar {
    int fd;             /* source when mem and io are NULL */
    tfrec_io *io;       /* a seekable source (not owned; one thread) */
    const uint8_t *mem; /* source buffer (tests, fuzzing) */
    uint64_t base, end; /* the archive's bytes: [base, end) of the source */
    uint64_t pos;       /* next header */
    int done;
    uint64_t members;
    char *name; /* current member's name (malloc'ed) */
    size_t name_cap;
    char *ext; /* extended header data, reused */
    size_t ext_cap;
} tfrec_tar;

typedef struct tfrec_tar_entry {
    const char *name; /* valid until the next call */
    int type;         /* tfrec_tar_type */
    uint64_t size;    /* data bytes (0 for directories and links) */
    uint64_t offset;  /* of the data in the source (absolute) */
    uint64_t header;  /* of the (first) header, relative to base */
} tfrec_tar_entry;

/* The archive at [base, base + len) of the open file fd (not owned). */
void tfrec_tar_open_fd(tfrec_tar *t, int fd, uint64_t base, uint64_t len);
/* The archive at [base, base + len) of a seekable source (e.g. an object
 * in a bucket); reads seek and read it, so one thread at a time. */
void tfrec_tar_open_io(tfrec_tar *t, tfrec_io *io, uint64_t base, uint64_t len);
/* The archive at [base, base + len) of a buffer of at least base + len bytes. */
void tfrec_tar_open_mem(tfrec_tar *t, const void *buf, uint64_t base, uint64_t len);
/* The next member: 1 with *e set, 0 at the end-of-archive marker, or a
 * negative code with a message giving the offset (relative to base) and
 * the member before it. After an error or the end, returns the same. */
int tfrec_tar_next(tfrec_tar *t, tfrec_tar_entry *e, tfrec_err *err);
/* n bytes at absolute offset off of the source: 0, or -1 (errno set; EIO
 * for a short read). Thread-safe for fd sources (pread). */
int tfrec_tar_pread(const tfrec_tar *t, void *buf, size_t n, uint64_t off);
void tfrec_tar_close(tfrec_tar *t);

/* A member name that must be a plain file name: a leading "./" is
 * dropped; absolute names, ".." components and any other '/' are refused
 * with why set. Returns the name to use (inside name) or NULL. */
const char *tfrec_tar_flat_name(const char *name, const char **why);

#endif

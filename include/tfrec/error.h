/* libtfrec: status codes and error messages.
 *
 * Every fallible function returns an int: TFREC_OK (0) on success, a
 * negative TFREC_E_* code on failure, and a few iteration functions return
 * the positive TFREC_END at a clean end of input.
 *
 * Each handle keeps the detailed message of its last failure (file, byte
 * offset, row key, server status ...), readable with tfrec_<module>_errmsg().
 * The same message is also stored per thread and readable with
 * tfrec_last_errmsg(), which is the only way to learn why a constructor
 * (which returns no handle on failure) failed.
 *
 * Handles and NULL: every tfrec_<handle>_free() accepts NULL (a no-op);
 * other functions given a NULL handle return TFREC_E_INVALID (getters of
 * plain values return 0 or "", and tfrec_<handle>_errmsg(NULL) returns
 * tfrec_last_errmsg(), so the message of a failed open can be read through
 * the handle that was never set). None of them crash on NULL.
 */
#ifndef TFREC_ERROR_H
#define TFREC_ERROR_H

#include "common.h"
#include "version.h"

TFREC_BEGIN_DECLS

enum tfrec_status {
    TFREC_OK = 0,
    TFREC_END = 1, /* clean end of input (not an error) */

    TFREC_E_INVALID = -1,          /* bad argument or option */
    TFREC_E_NOMEM = -2,            /* allocation failed */
    TFREC_E_IO = -3,               /* read/write/open/rename failed (errno in message) */
    TFREC_E_TRUNCATED = -4,        /* record cut short: header valid, data or footer missing */
    TFREC_E_BAD_LENGTH_CRC = -5,   /* 12-byte header whose length CRC does not match */
    TFREC_E_BAD_DATA_CRC = -6,     /* record data whose CRC does not match */
    TFREC_E_RECORD_TOO_LARGE = -7, /* length field above the configured maximum */
    TFREC_E_TRAILING_GARBAGE =
        -8,                    /* 1..11 stray bytes at the end, or junk after a compressed stream */
    TFREC_E_COMPRESSION = -9,  /* zlib/gzip stream is corrupt */
    TFREC_E_PARSE = -10,       /* malformed protobuf (tf.Example, server reply) */
    TFREC_E_NOT_FOUND = -11,   /* no such key / file / table / family */
    TFREC_E_UNSUPPORTED = -12, /* operation not possible on this source (e.g. seek on a pipe) */
    TFREC_E_IMAGE = -13,       /* corrupt, truncated or unsupported image */
    TFREC_E_NETWORK = -14,     /* server unreachable, RPC failed, retries exhausted */
    TFREC_E_STATE = -15        /* call not valid in the handle's current state */
};

/* Short, static description of a status code ("bad data CRC", ...). */
const char *tfrec_strerror(int code);

/* Detailed message of the last failure on the calling thread ("" if none). */
const char *tfrec_last_errmsg(void);

/* Release memory the library allocated and handed to the caller
 * (for example tfrec_example_serialize_alloc output). NULL is fine. */
void tfrec_free(void *p);

TFREC_END_DECLS
#endif

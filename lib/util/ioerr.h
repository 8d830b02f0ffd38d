/* Internal: messages for failed system calls, in one shape everywhere:
 *
 *   <path>: <what>: <strerror(errnum)> (errno <N>)
 *
 * e.g. "data/x.tfrecord: cannot open: No such file or directory (errno 2)".
 * The path comes first so a message names its file even when a caller
 * shortens it; the errno number stays the same whatever the locale. */
#ifndef TFREC_UTIL_IOERR_H
#define TFREC_UTIL_IOERR_H

#include "util/private_api.h"
#include <stdarg.h>
#include <stddef.h>

#include "util/errors.h"

/* TFREC_E_NOT_FOUND for a missing file (ENOENT), TFREC_E_IO otherwise. */
TFREC_PRIVATE_API int tfrec_errno_code(int errnum);

/* Format the message into buf (cap bytes, always NUL-terminated). path
 * may be NULL when the context already names the file: then the message
 * starts at <what>. what is a printf format. */
void tfrec_errno_msg(char *buf, size_t cap, int errnum, const char *path, const char *what, ...)
    TFREC_PRINTF(5, 6);
TFREC_PRIVATE_API void tfrec_errno_vmsg(char *buf, size_t cap, int errnum, const char *path,
                                        const char *what, va_list ap);

/* tfrec_fail() with that message; returns code. */
TFREC_PRIVATE_API int tfrec_fail_errno(tfrec_err *err, int code, int errnum, const char *path,
                                       const char *what, ...) TFREC_PRINTF(5, 6);

#endif

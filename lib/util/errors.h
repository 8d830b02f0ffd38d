/* Internal: per-handle error messages mirrored into a per-thread slot. */
#ifndef TFREC_UTIL_ERRORS_H
#define TFREC_UTIL_ERRORS_H

#include <stdarg.h>

#include "tfrec/error.h"
#include "util/private_api.h"

#define TFREC_ERRMSG_MAX 512

/* Embed in a handle; zero-initialised means "no error". */
typedef struct tfrec_err {
    int code;
    char msg[TFREC_ERRMSG_MAX];
} tfrec_err;

#if defined(__GNUC__)
#define TFREC_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define TFREC_PRINTF(a, b)
#endif

/* Record code and message in err (may be NULL: thread slot only).
 * Returns code so callers can `return tfrec_fail(...)`. */
TFREC_PRIVATE_API int tfrec_fail(tfrec_err *err, int code, const char *fmt, ...) TFREC_PRINTF(3, 4);
int tfrec_vfail(tfrec_err *err, int code, const char *fmt, va_list ap);

/* Copy an error (e.g. from a sub-handle) into err and the thread slot. */
TFREC_PRIVATE_API int tfrec_fail_copy(tfrec_err *err, const tfrec_err *from);

static inline const char *tfrec_err_msg(const tfrec_err *err)
{
    return err ? err->msg : "";
}

#endif

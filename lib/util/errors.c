#include "util/errors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfrec/tfrec.h"

static _Thread_local char thread_msg[TFREC_ERRMSG_MAX];

int tfrec_vfail(tfrec_err *err, int code, const char *fmt, va_list ap)
{
    char buf[TFREC_ERRMSG_MAX];
    vsnprintf(buf, sizeof buf, fmt, ap);
    memcpy(thread_msg, buf, sizeof buf);
    if (err) {
        err->code = code;
        memcpy(err->msg, buf, sizeof buf);
    }
    return code;
}

int tfrec_fail(tfrec_err *err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tfrec_vfail(err, code, fmt, ap);
    va_end(ap);
    return code;
}

int tfrec_fail_copy(tfrec_err *err, const tfrec_err *from)
{
    return tfrec_fail(err, from->code, "%s", from->msg);
}

const char *tfrec_last_errmsg(void)
{
    return thread_msg;
}

const char *tfrec_strerror(int code)
{
    switch (code) {
    case TFREC_OK: return "success";
    case TFREC_END: return "end of input";
    case TFREC_E_INVALID: return "invalid argument";
    case TFREC_E_NOMEM: return "out of memory";
    case TFREC_E_IO: return "I/O error";
    case TFREC_E_TRUNCATED: return "truncated record";
    case TFREC_E_BAD_LENGTH_CRC: return "bad length CRC";
    case TFREC_E_BAD_DATA_CRC: return "bad data CRC";
    case TFREC_E_RECORD_TOO_LARGE: return "record length too large";
    case TFREC_E_TRAILING_GARBAGE: return "trailing garbage";
    case TFREC_E_COMPRESSION: return "corrupt compressed stream";
    case TFREC_E_PARSE: return "malformed protobuf";
    case TFREC_E_NOT_FOUND: return "not found";
    case TFREC_E_UNSUPPORTED: return "unsupported operation";
    case TFREC_E_IMAGE: return "bad image";
    case TFREC_E_NETWORK: return "network or server error";
    case TFREC_E_STATE: return "invalid state";
    }
    return "unknown error";
}

const char *tfrec_version(void)
{
    return TFREC_VERSION_STRING;
}

unsigned tfrec_version_number(void)
{
    return TFREC_VERSION_NUMBER;
}

int tfrec_version_check(unsigned header_version)
{
    /* Patch releases add nothing to the API: only major and minor count. */
    unsigned major = header_version / 10000, minor = header_version / 100 % 100;
    if (major == TFREC_VERSION_MAJOR && minor <= TFREC_VERSION_MINOR)
        return TFREC_OK;
    return tfrec_fail(NULL, TFREC_E_UNSUPPORTED,
                      "built against libtfrec %u.%u.%u, but the loaded library is %s: "
                      "needs the same major version and a library minor version at least as new",
                      major, minor, header_version % 100, TFREC_VERSION_STRING);
}

void tfrec_free(void *p)
{
    free(p);
}

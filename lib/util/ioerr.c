#include "util/ioerr.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int tfrec_errno_code(int errnum)
{
    return errnum == ENOENT ? TFREC_E_NOT_FOUND : TFREC_E_IO;
}

void tfrec_errno_vmsg(char *buf, size_t cap, int errnum, const char *path, const char *what,
                      va_list ap)
{
    if (!cap)
        return;
    size_t o = 0;
    if (path) {
        int k = snprintf(buf, cap, "%s: ", path);
        o = k < 0 ? 0 : (size_t)k < cap ? (size_t)k : cap - 1;
    }
    int k = vsnprintf(buf + o, cap - o, what, ap);
    o += k < 0 ? 0 : (size_t)k < cap - o ? (size_t)k : cap - o - 1;
    /* strerror_r's GNU form returns the text; it may ignore buf. */
    char tmp[128];
    const char *text = strerror_r(errnum, tmp, sizeof tmp);
    snprintf(buf + o, cap - o, ": %s (errno %d)", text, errnum);
}

void tfrec_errno_msg(char *buf, size_t cap, int errnum, const char *path, const char *what, ...)
{
    va_list ap;
    va_start(ap, what);
    tfrec_errno_vmsg(buf, cap, errnum, path, what, ap);
    va_end(ap);
}

int tfrec_fail_errno(tfrec_err *err, int code, int errnum, const char *path, const char *what, ...)
{
    char buf[TFREC_ERRMSG_MAX];
    va_list ap;
    va_start(ap, what);
    tfrec_errno_vmsg(buf, sizeof buf, errnum, path, what, ap);
    va_end(ap);
    return tfrec_fail(err, code, "%s", buf);
}

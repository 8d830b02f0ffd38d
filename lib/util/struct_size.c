/* Growable public structs: see struct_size.h for the rules. */
#include "util/struct_size.h"

#include <ctype.h>
#include <stdint.h>
#include <string.h>

/* struct_size is the first member of every such struct. */
static size_t caller_size(const void *s)
{
    size_t n;
    memcpy(&n, s, sizeof n);
    return n;
}

static int check_size(size_t n, const char *type, tfrec_err *err)
{
    if (n == 0) {
        /* Name the macro after the type: tfrec_reader_options -> TFREC_READER_OPTIONS_INIT. */
        char macro[96];
        size_t i = 0;
        for (; type[i] && i + sizeof "_INIT" < sizeof macro; i++)
            macro[i] = (char)toupper((unsigned char)type[i]);
        memcpy(macro + i, "_INIT", sizeof "_INIT");
        return tfrec_fail(err, TFREC_E_INVALID,
                          "%s.struct_size is 0: initialise the struct with %s or %s_init()", type,
                          macro, type);
    }
    if (n < sizeof(size_t) || n > TFREC_STRUCT_SIZE_MAX)
        return tfrec_fail(err, TFREC_E_INVALID,
                          "%s.struct_size is %zu, which is no layout of it (uninitialised struct?)",
                          type, n);
    return TFREC_OK;
}

int tfrec_struct_in(void *dst, size_t lib_size, const void *src, const char *type, tfrec_err *err)
{
    memset(dst, 0, lib_size);
    if (!src) {
        memcpy(dst, &lib_size, sizeof lib_size);
        return TFREC_OK;
    }
    size_t n = caller_size(src);
    int rc = check_size(n, type, err);
    if (rc)
        return rc;
    const unsigned char *s = src;
    for (size_t i = lib_size; i < n; i++)
        if (s[i])
            return tfrec_fail(err, TFREC_E_UNSUPPORTED,
                              "%s has fields this libtfrec (%s) does not know: the program was "
                              "built against a newer version and sets them (%zu bytes, this "
                              "library knows %zu; byte %zu is not zero)",
                              type, TFREC_VERSION_STRING, n, lib_size, i);
    memcpy(dst, src, n < lib_size ? n : lib_size);
    memcpy(dst, &lib_size, sizeof lib_size);
    return TFREC_OK;
}

int tfrec_struct_check_out(const void *dst, const char *type, tfrec_err *err)
{
    if (!dst)
        return tfrec_fail(err, TFREC_E_INVALID, "%s: NULL output struct", type);
    return check_size(caller_size(dst), type, err);
}

int tfrec_struct_out(void *dst, const void *src, size_t lib_size, const char *type, tfrec_err *err)
{
    int rc = tfrec_struct_check_out(dst, type, err);
    if (rc)
        return rc;
    size_t n = caller_size(dst);
    size_t common = n < lib_size ? n : lib_size;
    unsigned char *d = dst;
    const size_t skip = sizeof(size_t); /* the caller's own struct_size stays */
    memcpy(d + skip, (const unsigned char *)src + skip, common - skip);
    return TFREC_OK;
}

void tfrec_struct_init(void *s, size_t size)
{
    if (!s)
        return;
    memset(s, 0, size);
    memcpy(s, &size, sizeof size);
}

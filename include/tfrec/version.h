/* libtfrec: version of these headers, and of the library at run time.
 *
 * Compatibility policy (see README, "Versions and ABI"): within one major
 * version the shared library only grows. Existing functions keep their
 * signatures and meaning, and structs grow only at their end, recognised
 * by their struct_size member, so a program built against 1.x runs with
 * any library 1.y with y >= x. The soname is libtfrec.so.<major>.
 */
#ifndef TFREC_VERSION_H
#define TFREC_VERSION_H

#include "common.h"

#define TFREC_VERSION_MAJOR 1
#define TFREC_VERSION_MINOR 1
#define TFREC_VERSION_PATCH 0
#define TFREC_VERSION_STRING "1.1.0"
/* One comparable number: major * 10000 + minor * 100 + patch. */
#define TFREC_VERSION_NUMBER \
    (TFREC_VERSION_MAJOR * 10000 + TFREC_VERSION_MINOR * 100 + TFREC_VERSION_PATCH)

TFREC_BEGIN_DECLS

/* Version of the library actually loaded, e.g. "1.0.0" and 10000. */
const char *tfrec_version(void);
unsigned tfrec_version_number(void);

/* TFREC_OK if a program built against headers of version `header_version`
 * can use the loaded library: same major version and a library minor
 * version at least the headers' (patch levels do not matter). Otherwise TFREC_E_UNSUPPORTED (-12), with the two versions in
 * tfrec_last_errmsg(). Call it as TFREC_CHECK_VERSION() at start-up. */
int tfrec_version_check(unsigned header_version);
#define TFREC_CHECK_VERSION() tfrec_version_check(TFREC_VERSION_NUMBER)

TFREC_END_DECLS
#endif

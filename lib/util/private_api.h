/* Internal: marks the few internal functions that libtfrec.so exports to its
 * other parts (libtfrec-image.so, libtfrec-bigtable.so). The library is
 * compiled with -fvisibility=hidden, so without this they would not reach
 * the dynamic symbol table at all. The Makefile puts every function declared
 * with it (the name on the same line) into libtfrec.so's version node
 * TFREC_PRIVATE_<version>, which has no compatibility promise: the parts
 * load only with the core of their own build. Mark a core internal when a
 * part starts calling it (the part's link fails until then).
 * tests/integration/symbols.sh checks the exports. */
#ifndef TFREC_UTIL_PRIVATE_API_H
#define TFREC_UTIL_PRIVATE_API_H

#if defined(__GNUC__) || defined(__clang__)
#define TFREC_PRIVATE_API __attribute__((visibility("default")))
#else
#define TFREC_PRIVATE_API
#endif

#endif

/* Internal: growing malloc'ed arrays. Every growable array in the library
 * is a pointer plus a capacity counted in elements; these functions are
 * the only place that computes a new capacity, checks it for overflow and
 * calls realloc. On failure the array and its capacity are left as they
 * were (nothing is lost or freed) and TFREC_E_NOMEM is returned. */
#ifndef TFREC_UTIL_VEC_H
#define TFREC_UTIL_VEC_H

#include "util/private_api.h"
#include <stddef.h>

/* Room for at least `need` elements in *arrp (any T **), growing
 * geometrically: the capacity doubles, starting from `first`, until need
 * fits. For arrays appended to one element at a time. */
#define tfrec_vec_reserve(arrp, capp, need, first) \
    tfrec_vec_reserve_((arrp), (capp), (need), sizeof **(arrp), (first))

/* Capacity set to exactly `cap` elements (grow or shrink). For buffers
 * whose caller picks the size itself, e.g. "what this file needs plus a
 * quarter" or "one doubling step, but never past what the data asked". */
#define tfrec_vec_resize(arrp, capp, cap) tfrec_vec_resize_((arrp), (capp), (cap), sizeof **(arrp))

/* Room for `need` elements, and when the array must grow, need plus a
 * quarter (not a doubling): for one buffer reused across items of varying
 * size, whose memory should stay close to the largest item seen. */
#define tfrec_vec_fit(arrp, capp, need) tfrec_vec_fit_((arrp), (capp), (need), sizeof **(arrp))

/* The functions behind the macros. arrp is the address of the array
 * pointer (a T **, passed as void * so any element type fits; object
 * pointers share one representation on every platform the library
 * supports); elem is sizeof(T). */
TFREC_PRIVATE_API int tfrec_vec_reserve_(void *arrp, size_t *cap, size_t need, size_t elem,
                                         size_t first);
TFREC_PRIVATE_API int tfrec_vec_resize_(void *arrp, size_t *cap, size_t new_cap, size_t elem);
TFREC_PRIVATE_API int tfrec_vec_fit_(void *arrp, size_t *cap, size_t need, size_t elem);

#endif

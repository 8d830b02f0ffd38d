/* Internal: buffers of many megabytes written once, such as a whole file
 * kept in memory. */
#ifndef TFREC_UTIL_BIG_BUFFER_H
#define TFREC_UTIL_BIG_BUFFER_H

#include <stddef.h>

/* n bytes (n > 0) of anonymous memory, advised to use huge pages where the
 * system offers them: touching fresh memory costs a page fault per page,
 * which on some virtual machines costs far more than the copy into it
 * (bench/RESULTS.md, "gs:// datasets"). NULL when out of memory. */
void *tfrec_big_alloc(size_t n);
/* The n bytes at p (from tfrec_big_alloc of old bytes) in a buffer of
 * size n >= old: p itself or a new one (then p is freed). NULL when out
 * of memory, p untouched. */
void *tfrec_big_grow(void *p, size_t old, size_t n);
/* Free p, from tfrec_big_alloc or tfrec_big_grow of n bytes. */
void tfrec_big_free(void *p, size_t n);

#endif

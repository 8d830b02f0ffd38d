/* Big buffers: anonymous mappings advised to use huge pages. */
#include "util/big_buffer.h"

#include <string.h>
#include <sys/mman.h>

void *tfrec_big_alloc(size_t n)
{
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, n, MADV_HUGEPAGE); /* advice only: else plain pages */
#endif
    /* All pages now in one call, rather than a fault per (huge) page. */
#ifdef MADV_POPULATE_WRITE
    madvise(p, n, MADV_POPULATE_WRITE);
#endif
    return p;
}

void *tfrec_big_grow(void *p, size_t old, size_t n)
{
    if (!p)
        return tfrec_big_alloc(n);
    void *q = tfrec_big_alloc(n);
    if (q) {
        memcpy(q, p, old);
        tfrec_big_free(p, old);
    }
    return q;
}

void tfrec_big_free(void *p, size_t n)
{
    if (p)
        munmap(p, n);
}

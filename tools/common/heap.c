/* Every row these tools handle is a malloc'ed buffer of about a row (a
 * received message, an encoded mutation), freed once merged or
 * acknowledged: glibc's default of giving the top of the heap back to the
 * kernel and taking it again costs TLB flushes and page faults per row
 * (bench/RESULTS.md: "Bigtable load", "Where the client CPU goes";
 * "Bigtable reads", "Where the CPU goes"). The heap a
 * process keeps stays bounded by its read or write buffers. */
#include "heap.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

void cli_keep_heap(void)
{
#ifdef __GLIBC__
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    mallopt(M_TOP_PAD, 32 << 20);
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
#endif
}

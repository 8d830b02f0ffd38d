/* Internal: a bump allocator for feature values and parsed messages.
 *
 * The builder copies bytes values here instead of one malloc per value, and
 * a reset rewinds the arena without returning memory, so building the next
 * example of the same shape allocates nothing. The parser hands it to
 * protobuf-c as its allocator, so a parsed example is a few chunks rather
 * than dozens of small mallocs, released at once. */
#ifndef TFREC_EXAMPLE_ARENA_H
#define TFREC_EXAMPLE_ARENA_H

#include <stddef.h>

typedef struct ex_arena_chunk ex_arena_chunk;

typedef struct ex_arena {
    size_t chunk_min;      /* size of shared chunks; 0 = 64 KiB */
    ex_arena_chunk *head;  /* chunk being filled; earlier ones follow ->next */
    ex_arena_chunk *spare; /* rewound chunks waiting for reuse */
} ex_arena;

/* len bytes aligned for any type; NULL when out of memory. The memory stays
 * put until tfrec_ex_arena_rewind / tfrec_ex_arena_release. */
void *tfrec_ex_arena_alloc(ex_arena *a, size_t len);
void *tfrec_ex_arena_copy(ex_arena *a, const void *data, size_t len);
/* Forget all allocations but keep the chunks for reuse. */
void tfrec_ex_arena_rewind(ex_arena *a);
void tfrec_ex_arena_release(ex_arena *a);

#endif

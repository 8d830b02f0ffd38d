#include "example/arena.h"

#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_DEFAULT (64u * 1024u)
#define ALIGN alignof(max_align_t)

struct ex_arena_chunk {
    ex_arena_chunk *next;
    size_t cap, used;
    max_align_t data[];
};

static size_t chunk_min(const ex_arena *a)
{
    return a->chunk_min ? a->chunk_min : CHUNK_DEFAULT;
}

static ex_arena_chunk *take_spare(ex_arena *a, size_t need)
{
    for (ex_arena_chunk **p = &a->spare; *p; p = &(*p)->next) {
        if ((*p)->cap >= need) {
            ex_arena_chunk *c = *p;
            *p = c->next;
            c->used = 0;
            return c;
        }
    }
    return NULL;
}

/* Large spare chunks too small for the value at hand are unlikely to be
 * useful again (values tend to grow to a plateau); free them so a run of
 * growing values does not pile up chunks. */
static void drop_small_spares(ex_arena *a, size_t need)
{
    for (ex_arena_chunk **p = &a->spare; *p;) {
        ex_arena_chunk *c = *p;
        if (c->cap > chunk_min(a) && c->cap < need) {
            *p = c->next;
            free(c);
        } else {
            p = &c->next;
        }
    }
}

void *tfrec_ex_arena_alloc(ex_arena *a, size_t len)
{
    if (len > SIZE_MAX / 2)
        return NULL;
    size_t need = (len + ALIGN - 1) & ~(size_t)(ALIGN - 1);
    ex_arena_chunk *c = a->head;
    if (!c || c->cap - c->used < need) {
        c = take_spare(a, need);
        if (!c) {
            drop_small_spares(a, need);
            /* A value bigger than a shared chunk (an encoded image) gets a
             * chunk of its own, with headroom so slowly growing sizes do
             * not malloc every time once recycled. */
            size_t cap = need > chunk_min(a) ? need + need / 4 : chunk_min(a);
            cap = (cap + ALIGN - 1) & ~(size_t)(ALIGN - 1);
            c = malloc(sizeof *c + cap);
            if (!c)
                return NULL;
            c->cap = cap;
            c->used = 0;
        }
        c->next = a->head;
        a->head = c;
    }
    void *p = (char *)c->data + c->used;
    c->used += need;
    return p;
}

void *tfrec_ex_arena_copy(ex_arena *a, const void *data, size_t len)
{
    void *p = tfrec_ex_arena_alloc(a, len);
    if (p && len)
        memcpy(p, data, len);
    return p;
}

void tfrec_ex_arena_rewind(ex_arena *a)
{
    while (a->head) {
        ex_arena_chunk *c = a->head;
        a->head = c->next;
        c->next = a->spare;
        a->spare = c;
    }
}

void tfrec_ex_arena_release(ex_arena *a)
{
    tfrec_ex_arena_rewind(a);
    while (a->spare) {
        ex_arena_chunk *c = a->spare;
        a->spare = c->next;
        free(c);
    }
}

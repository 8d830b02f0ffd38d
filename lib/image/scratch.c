/* Per-thread scratch buffers of the decoder. Fresh memory for every image
 * (the decoded pixels, the resampler's rows) costs a page fault per page
 * each time, as the allocator returns it to the system and takes it back,
 * which is more than the resampling itself costs. Buffers up to
 * SCRATCH_KEEP bytes stay with the thread until it exits; larger ones (a
 * rare huge image) are allocated and freed per use. */
#include "image/image_internal.h"

#include <pthread.h>
#include <stdlib.h>

#define SCRATCH_KEEP ((size_t)16 << 20)

typedef struct scratch {
    uint8_t *p[IMG_SCRATCH_SLOTS];
    size_t cap[IMG_SCRATCH_SLOTS];
} scratch;

static pthread_key_t key;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int have_key;

static void scratch_destroy(void *v)
{
    scratch *s = v;
    for (int i = 0; i < IMG_SCRATCH_SLOTS; i++)
        free(s->p[i]);
    free(s);
}

static void make_key(void)
{
    have_key = pthread_key_create(&key, scratch_destroy) == 0;
}

static scratch *this_thread(void)
{
    pthread_once(&once, make_key);
    if (!have_key)
        return NULL;
    scratch *s = pthread_getspecific(key);
    if (!s && (s = calloc(1, sizeof *s)) && pthread_setspecific(key, s) != 0) {
        free(s);
        s = NULL;
    }
    return s;
}

void *tfrec_img_scratch_get(int slot, size_t size)
{
    scratch *s = size <= SCRATCH_KEEP ? this_thread() : NULL;
    if (!s)
        return malloc(size ? size : 1);
    if (s->cap[slot] < size) {
        free(s->p[slot]);
        s->p[slot] = malloc(size);
        s->cap[slot] = s->p[slot] ? size : 0;
    }
    return s->p[slot];
}

void tfrec_img_scratch_put(int slot, void *p)
{
    scratch *s = p ? this_thread() : NULL;
    if (!s || p != s->p[slot])
        free(p);
}

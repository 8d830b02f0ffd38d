/* Shared by the libFuzzer targets (tests/fuzz/fuzz_*.c, built by `make
 * fuzz`): the entry point, and the leading control bytes of an input that
 * choose options, so one target covers every mode of its parser. */
#ifndef TFREC_FUZZ_H
#define TFREC_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct fuzz_in {
    const uint8_t *p;
    size_t n;
} fuzz_in;

/* The next byte, 0 once the input is used up. */
static inline unsigned fuzz_byte(fuzz_in *in)
{
    if (!in->n)
        return 0;
    in->n--;
    return *in->p++;
}

/* A broken invariant is a finding like a crash: say which, then abort so
 * libFuzzer writes the reproducer. */
#define FUZZ_ASSERT(cond)                                                                \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, __LINE__, #cond); \
            abort();                                                                     \
        }                                                                                \
    } while (0)

/* Read every byte of a buffer the library handed out, so ASan sees any that
 * is not really there. */
static inline unsigned fuzz_touch(const void *p, size_t n)
{
    const volatile uint8_t *b = p;
    unsigned sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += b[i];
    return sum;
}

#endif

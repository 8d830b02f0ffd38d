/* Internal: SplitMix64 (Steele, Lea, Flood 2014), the generator behind every
 * seeded order in the library (the converter's train shuffle, dataset
 * epoch plans, Bigtable range orders, per-record image crops). One
 * definition, so that the orders documented as reproducible stay so. */
#ifndef TFREC_UTIL_SPLITMIX_H
#define TFREC_UTIL_SPLITMIX_H

#include <stdint.h>

/* Advances *state and returns its next output. */
static inline uint64_t tfrec_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

#endif

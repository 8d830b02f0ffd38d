/* The train shuffle, specified exactly so that other tools (and our tests)
 * can reproduce the order:
 *
 *   SplitMix64 (Steele, Lea, Flood 2014) seeded with --seed:
 *     state += 0x9E3779B97F4A7C15
 *     z = state; z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
 *                z = (z ^ (z >> 27)) * 0x94D049BB133111EB
 *     return z ^ (z >> 31)
 *   uniform(m): draw r until r < 2^64 - (2^64 mod m), return r mod m
 *   Fisher-Yates: for i = n-1 down to 1: j = uniform(i + 1); swap(v[i], v[j])
 *
 * applied to the train images in sorted order (synset, then file name).
 * The array itself is shuffled: the reference shuffled a copy and kept the
 * original order. */
#include "imagenet/plan.h"
#include "util/splitmix.h"

static uint64_t uniform(uint64_t *state, uint64_t m)
{
    /* 2^64 mod m computed in 64 bits as (2^64 - m) mod m. */
    uint64_t reject_from = 0 - ((0 - m) % m); /* 2^64 - (2^64 mod m), 0 if m divides 2^64 */
    for (;;) {
        uint64_t r = tfrec_splitmix64(state);
        if (reject_from == 0 || r < reject_from)
            return r % m;
    }
}

void tfrec_in_shuffle(in_item *v, size_t n, uint64_t seed)
{
    uint64_t state = seed;
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)uniform(&state, (uint64_t)i);
        in_item t = v[i - 1];
        v[i - 1] = v[j];
        v[j] = t;
    }
}

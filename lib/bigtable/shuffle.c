/* Shuffled scans: evenly spaced cut keys and the seeded range order. */
#include "bigtable/shuffle.h"

#include <stdlib.h>
#include <string.h>

#include "tfrec/error.h"
#include "util/splitmix.h"

typedef struct alphabet {
    unsigned lo, base;
} alphabet;

static int all_in(const bt_key *k, size_t from, unsigned a, unsigned b)
{
    for (size_t i = from; i < k->n; i++)
        if (k->p[i] < a || k->p[i] > b)
            return 0;
    return 1;
}

static alphabet pick_alphabet(const bt_key *lo, const bt_key *hi, size_t c)
{
    int any = lo->n > c || hi->n > c;
    if (any && all_in(lo, c, '0', '9') && all_in(hi, c, '0', '9'))
        return (alphabet){ '0', 10 };
    if (any && all_in(lo, c, 0x20, 0x7e) && all_in(hi, c, 0x20, 0x7e))
        return (alphabet){ 0x20, 0x7f - 0x20 };
    return (alphabet){ 0, 256 };
}

/* Digit i of key k after c in the alphabet (a byte outside it clamps). */
static unsigned digit(const bt_key *k, size_t c, size_t i, alphabet a)
{
    if (c + i >= k->n)
        return 0;
    unsigned b = k->p[c + i];
    if (b < a.lo)
        return 0;
    return b - a.lo >= a.base ? a.base - 1 : b - a.lo;
}

static double value(const bt_key *k, size_t c, size_t depth, alphabet a)
{
    double v = 0;
    for (size_t i = 0; i < depth; i++)
        v = v * a.base + digit(k, c, i, a);
    return v;
}

int tfrec_bt_shuffle_cut_keys(const bt_key *lo, const bt_key *hi, size_t pieces, bt_samples *out)
{
    out->v = NULL;
    out->n = 0;
    if (pieces < 2)
        return TFREC_OK;
    size_t c = 0;
    while (hi->n && c < lo->n && c < hi->n && lo->p[c] == hi->p[c])
        c++;
    alphabet a = pick_alphabet(lo, hi, c);
    /* digits enough for 64 steps per piece between the bounds, within a
     * double's 53 bits */
    size_t depth = 1;
    double span = a.base, v0, v1;
    for (;;) {
        v0 = value(lo, c, depth, a);
        v1 = hi->n ? value(hi, c, depth, a) : span;
        if (v1 - v0 >= 64.0 * (double)pieces || depth == 16 || span * a.base >= 9e15)
            break;
        span *= a.base;
        depth++;
    }
    if (!(v1 > v0 + 1))
        return TFREC_OK; /* no room for a cut: one piece */
    out->v = calloc(pieces - 1, sizeof *out->v);
    if (!out->v)
        return TFREC_E_NOMEM;
    double last = 0;
    for (size_t j = 1; j < pieces; j++) {
        double v = (double)(uint64_t)(v0 + (v1 - v0) * (double)j / (double)pieces);
        if (v <= v0 || (out->n && v <= last))
            continue; /* fewer cuts than asked when the bounds are that close */
        last = v;
        bt_sample *s = &out->v[out->n];
        s->key.n = c + depth;
        if (!(s->key.p = malloc(s->key.n)))
            return TFREC_E_NOMEM;
        out->n++;
        if (c)
            memcpy(s->key.p, lo->p, c);
        for (size_t i = depth; i-- > 0;) {
            double q = (double)(uint64_t)(v / a.base);
            s->key.p[c + i] = (uint8_t)(a.lo + (unsigned)(v - q * a.base));
            v = q;
        }
        s->offset_bytes = (int64_t)j;
    }
    return TFREC_OK;
}

void tfrec_bt_shuffle_order(size_t *order, size_t n, uint64_t seed, uint64_t epoch)
{
    uint64_t st = seed;
    st = tfrec_splitmix64(&st) ^ epoch;
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    for (size_t i = n; i > 1; i--) { /* Fisher-Yates */
        size_t j = (size_t)(tfrec_splitmix64(&st) % i);
        size_t t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
}

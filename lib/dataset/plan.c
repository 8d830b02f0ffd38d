/* Epoch plans. The shuffle is a Fisher-Yates permutation of every record
 * of every file driven by SplitMix64, started from a state that depends on
 * (seed, epoch) only: every worker of a job computes the same permutation
 * and takes its own contiguous part, so together they read each record
 * exactly once per epoch and a new epoch mixes records across workers.
 *
 * The block shuffle permutes blocks of consecutive records instead, and
 * each worker takes its contiguous part of that sequence and passes it
 * through a shuffle buffer, as a streaming input pipeline would: ahead of
 * time for local files (tfrec_ds_buffer_apply; reads stay near each
 * other), or at the consumer for other file systems, whose threads read
 * the blocks in order (one request per block on gs://). The result is
 * still a permutation of the worker's records, a function of (seed,
 * epoch) alone.
 * Its quality against a plain shuffle buffer is in docs/datasets.md. */
#include <stdlib.h>

#include "dataset/plan.h"
#include "tfrec/error.h"
#include "util/splitmix.h"

/* Uniform in [0, n) without modulo bias (Lemire's multiply and reject). */
static uint64_t below(uint64_t *s, uint64_t n)
{
    unsigned __int128 m = (unsigned __int128)tfrec_splitmix64(s) * n;
    uint64_t low = (uint64_t)m;
    if (low < n) {
        uint64_t t = -n % n;
        while (low < t) {
            m = (unsigned __int128)tfrec_splitmix64(s) * n;
            low = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}

void tfrec_ds_shard_range(uint64_t total, uint32_t i, uint32_t n, uint64_t *lo, uint64_t *hi)
{
    *lo = (uint64_t)((unsigned __int128)total * i / n);
    *hi = (uint64_t)((unsigned __int128)total * (i + 1) / n);
}

size_t tfrec_ds_file_of(const uint64_t *cum, size_t nfiles, uint64_t g)
{
    size_t lo = 0, hi = nfiles; /* cum[lo] <= g < cum[hi] */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (cum[mid] <= g)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

uint64_t tfrec_ds_below(uint64_t *s, uint64_t n)
{
    return below(s, n);
}

/* p[0..n) through the shuffle buffer b, into out: the same draws as the
 * consumer's pass (shuffle_buffer.c). */
static void buffer_pass(const uint64_t *p, uint64_t n, ds_buffer *b, uint64_t *out)
{
    /* The buffer is out[n - fill .. n) while out[0 .. k) is written: k
     * reaches n - fill only when the input ends. */
    uint64_t fill = b->size < n ? b->size : n, k = 0, *s = &b->state;
    uint64_t *buf = out + (n - fill);
    for (uint64_t i = 0; i < fill; i++)
        buf[i] = p[i];
    for (uint64_t i = fill; i < n; i++) {
        uint64_t j = below(s, fill);
        out[k++] = buf[j];
        buf[j] = p[i];
    }
    for (uint64_t m = fill; m > 0; m--) { /* drain in random order */
        uint64_t j = below(s, m), t = buf[j];
        buf[j] = buf[m - 1];
        buf[m - 1] = t;
    }
}

int tfrec_ds_buffer_apply(uint64_t **items, uint64_t n, ds_buffer *b)
{
    uint64_t *out = malloc((n ? n : 1) * sizeof *out);
    if (!out)
        return TFREC_E_NOMEM;
    buffer_pass(*items, n, b, out);
    free(*items);
    *items = out;
    b->size = 0;
    return TFREC_OK;
}

/* The block shuffle's read order: blocks of shuffle_block consecutive
 * records of a file, permuted. */
static int block_order(const ds_plan_in *in, uint64_t *seq, uint64_t *s)
{
    uint64_t bs = in->shuffle_block, nb = 0;
    for (size_t f = 0; f < in->nfiles; f++)
        nb += (in->cum[f + 1] - in->cum[f] + bs - 1) / bs;
    uint64_t *first = malloc((nb ? nb : 1) * sizeof *first);
    if (!first)
        return TFREC_E_NOMEM;
    uint64_t b = 0;
    for (size_t f = 0; f < in->nfiles; f++)
        for (uint64_t g = in->cum[f]; g < in->cum[f + 1]; g += bs)
            first[b++] = g;
    for (uint64_t k = nb; k > 1; k--) {
        uint64_t j = below(s, k), t = first[k - 1];
        first[k - 1] = first[j];
        first[j] = t;
    }
    uint64_t n = 0;
    for (b = 0; b < nb; b++) {
        size_t f = tfrec_ds_file_of(in->cum, in->nfiles, first[b]);
        uint64_t end = first[b] + bs < in->cum[f + 1] ? first[b] + bs : in->cum[f + 1];
        for (uint64_t g = first[b]; g < end; g++)
            seq[n++] = g;
    }
    free(first);
    return TFREC_OK;
}

int tfrec_ds_plan(const ds_plan_in *in, uint64_t **items_out, uint64_t *n_out, ds_buffer *buf)
{
    uint64_t total = in->cum[in->nfiles], lo, hi;
    tfrec_ds_shard_range(total, in->shard_index, in->num_shards, &lo, &hi);
    *items_out = NULL;
    *n_out = 0;
    buf->size = 0;
    if (in->shuffle) {
        if (total > SIZE_MAX / sizeof(uint64_t))
            return TFREC_E_NOMEM;
        uint64_t *p = malloc((total ? total : 1) * sizeof *p);
        if (!p)
            return TFREC_E_NOMEM;
        uint64_t s = in->seed ^ (0xD1B54A32D192ED03ull * (in->epoch + 1));
        if (in->shuffle_block > 1) {
            if (block_order(in, p, &s) < 0) {
                free(p);
                return TFREC_E_NOMEM;
            }
            buf->size = in->shuffle_buffer ? in->shuffle_buffer : 16 * (uint64_t)in->shuffle_block;
            buf->state = s;
        } else {
            for (uint64_t g = 0; g < total; g++)
                p[g] = g;
            for (uint64_t k = total; k > 1; k--) {
                uint64_t j = below(&s, k), t = p[k - 1];
                p[k - 1] = p[j];
                p[j] = t;
            }
        }
        /* Keep only this shard's part, at the front. */
        for (uint64_t k = lo; k < hi; k++)
            p[k - lo] = p[k];
        *items_out = p;
        *n_out = hi - lo;
        return TFREC_OK;
    }
    /* In order: the shard's part of each file, taken block records at a
     * time from each file in turn (files with nothing left drop out). */
    uint64_t count = hi - lo;
    uint64_t *p = malloc((count ? count : 1) * sizeof *p);
    uint64_t *next = malloc((in->nfiles ? in->nfiles : 1) * sizeof *next);
    if (!p || !next) {
        free(p);
        free(next);
        return TFREC_E_NOMEM;
    }
    for (size_t f = 0; f < in->nfiles; f++)
        next[f] = in->cum[f] < lo ? lo : in->cum[f];
    uint64_t k = 0, block = in->block ? in->block : 1;
    while (k < count) {
        for (size_t f = 0; f < in->nfiles; f++) {
            uint64_t end = in->cum[f + 1] < hi ? in->cum[f + 1] : hi;
            for (uint64_t b = 0; b < block && next[f] < end; b++)
                p[k++] = next[f]++;
        }
    }
    free(next);
    *items_out = p;
    *n_out = count;
    return TFREC_OK;
}

/* Scan planning: cut a row set at sampled tablet boundaries. */
#include "bigtable/planner.h"

#include <stdlib.h>
#include <string.h>

void tfrec_bt_samples_free(bt_samples *s)
{
    for (size_t i = 0; s->v && i < s->n; i++)
        free(s->v[i].key.p);
    free(s->v);
    s->v = NULL;
    s->n = 0;
}

int tfrec_bt_samples_from_keys(const void *const *keys, const size_t *lens, size_t n,
                               bt_samples *out)
{
    out->v = calloc(n ? n : 1, sizeof *out->v);
    out->n = 0;
    if (!out->v)
        return TFREC_E_NOMEM;
    for (size_t i = 0; i < n; i++) {
        bt_sample *s = &out->v[out->n++];
        s->offset_bytes = (int64_t)i;
        s->key.n = lens ? lens[i] : 0;
        if (s->key.n && !(s->key.p = malloc(s->key.n)))
            return TFREC_E_NOMEM;
        if (s->key.n)
            memcpy(s->key.p, keys[i], s->key.n);
    }
    return TFREC_OK;
}

static int kcmp(const bt_key *a, const bt_key *b)
{
    return tfrec_bt_key_cmp(a->p, a->n, b->p, b->n);
}

static int cmp_sample_ptr(const void *a, const void *b)
{
    const bt_sample *x = *(const bt_sample *const *)a, *y = *(const bt_sample *const *)b;
    return kcmp(&x->key, &y->key);
}

/* Boundaries usable as split points: non-empty, distinct, strictly inside
 * (lo, hi), in key order, with a weight that never decreases (the sampled
 * offset when the offsets are consistent, else the position). */
typedef struct cand {
    const bt_key *key;
    double w;
} cand;

static size_t candidates(const bt_samples *s, const bt_key *lo, const bt_key *hi, cand *c)
{
    const bt_sample **v = malloc((s->n ? s->n : 1) * sizeof *v);
    if (!v)
        return (size_t)-1;
    for (size_t i = 0; i < s->n; i++)
        v[i] = &s->v[i];
    qsort(v, s->n, sizeof *v, cmp_sample_ptr);
    int offsets_ok = 1;
    for (size_t i = 1; i < s->n; i++)
        if (v[i]->offset_bytes < v[i - 1]->offset_bytes && v[i]->key.n)
            offsets_ok = 0;
    size_t m = 0;
    for (size_t i = 0; i < s->n; i++) {
        const bt_key *k = &v[i]->key;
        if (!k->n || kcmp(k, lo) <= 0 || (hi->n && kcmp(k, hi) >= 0))
            continue;
        if (m && !kcmp(c[m - 1].key, k))
            continue;
        c[m].key = k;
        c[m].w = offsets_ok ? (double)v[i]->offset_bytes : (double)m;
        m++;
    }
    free(v);
    /* equal offsets would make several cuts land on one key: break ties by position */
    for (size_t i = 1; i < m; i++)
        if (c[i].w <= c[i - 1].w)
            c[i].w = c[i - 1].w + 1e-9 * (double)(i + 1);
    return m;
}

/* Choose cuts-1 ... indices into c, strictly increasing, each nearest to an
 * equal share of the weight between the first and last candidate. */
static size_t choose(const cand *c, size_t m, size_t want, size_t *pick)
{
    if (!m || !want)
        return 0;
    if (want >= m) {
        for (size_t i = 0; i < m; i++)
            pick[i] = i;
        return m;
    }
    /* the span is [w0 - one step, wlast + one step]: data lies before the
     * first boundary and after the last one too */
    double step = m > 1 ? (c[m - 1].w - c[0].w) / (double)(m - 1) : 1;
    double w0 = c[0].w - step, w1 = c[m - 1].w + step;
    size_t n = 0, next = 0;
    for (size_t j = 1; j <= want; j++) {
        double target = w0 + (w1 - w0) * (double)j / (double)(want + 1);
        size_t left = want - j;                  /* picks still to make after this one */
        size_t best = next, last = m - 1 - left; /* leave room for the later picks */
        while (best < last && c[best + 1].w <= target)
            best++;
        if (best < last && c[best].w < target && c[best + 1].w - target < target - c[best].w)
            best++;
        pick[n++] = best;
        next = best + 1;
    }
    return n;
}

static int plan_keys(const bt_rowset *set, size_t pieces, bt_rowset *out)
{
    for (size_t p = 0; p < pieces; p++) {
        size_t a = set->n * p / pieces, b = set->n * (p + 1) / pieces;
        out[p].is_keys = 1;
        if (b == a)
            continue;
        out[p].keys = calloc(b - a, sizeof *out[p].keys);
        if (!out[p].keys)
            return TFREC_E_NOMEM;
        for (size_t i = a; i < b; i++) {
            bt_key *k = &out[p].keys[out[p].n++];
            k->n = set->keys[i].n;
            k->p = malloc(k->n);
            if (!k->p)
                return TFREC_E_NOMEM;
            memcpy(k->p, set->keys[i].p, k->n);
        }
    }
    return TFREC_OK;
}

int tfrec_bt_plan_cuts(const bt_rowset *set, const bt_samples *samples, size_t pieces, bt_key *cuts,
                       size_t *ncuts)
{
    *ncuts = 0;
    if (pieces < 2 || set->is_keys || !set->n)
        return TFREC_OK;
    cand *c = malloc((samples->n ? samples->n : 1) * sizeof *c);
    size_t *pick = malloc(pieces * sizeof *pick);
    size_t m = c ? candidates(samples, tfrec_bt_rowset_lo(set), tfrec_bt_rowset_hi(set), c) : 0;
    int rc = TFREC_OK;
    if (!c || !pick || m == (size_t)-1) {
        rc = TFREC_E_NOMEM;
    } else {
        size_t n = choose(c, m, pieces - 1, pick);
        for (size_t i = 0; i < n && !rc; i++) {
            const bt_key *k = c[pick[i]].key;
            if (!(cuts[i].p = malloc(k->n)))
                rc = TFREC_E_NOMEM;
            else {
                memcpy(cuts[i].p, k->p, k->n);
                cuts[i].n = k->n;
                *ncuts = i + 1;
            }
        }
    }
    free(c);
    free(pick);
    return rc;
}

int tfrec_bt_plan_pieces(const bt_rowset *set, const bt_samples *samples, size_t pieces,
                         bt_rowset **out)
{
    if (!pieces)
        pieces = 1;
    *out = calloc(pieces, sizeof **out);
    bt_key *cuts = calloc(pieces, sizeof *cuts);
    size_t ncuts = 0;
    int rc = *out && cuts ? TFREC_OK : TFREC_E_NOMEM;
    if (!rc && set->is_keys)
        rc = plan_keys(set, pieces, *out);
    else if (!rc && set->n)
        rc = tfrec_bt_plan_cuts(set, samples, pieces, cuts, &ncuts);
    /* piece p is [cut p-1, cut p): the first from the set's start, the last
     * one with a piece to the end; pieces beyond the cuts stay empty */
    for (size_t p = 0; !rc && !set->is_keys && set->n && p <= ncuts; p++)
        rc = tfrec_bt_rowset_slice(&(*out)[p], set, p ? &cuts[p - 1] : NULL,
                                   p < ncuts ? &cuts[p] : NULL);
    for (size_t i = 0; cuts && i < ncuts; i++)
        free(cuts[i].p);
    free(cuts);
    if (rc && *out) {
        for (size_t p = 0; p < pieces; p++)
            tfrec_bt_rowset_free(&(*out)[p]);
    }
    if (rc) {
        free(*out);
        *out = NULL;
    }
    return rc;
}

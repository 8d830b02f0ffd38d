/* Shuffled scans: the cut keys of a share and the order its ranges are
 * read in. Cuts must be strictly increasing and strictly inside the
 * share's bounds (anything else would make tfrec_bt_plan_pieces drop
 * them, or worse), spread over the key space the bounds span, and the
 * same in every run; the order must be a permutation fixed by (seed,
 * epoch) and differ between epochs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bigtable/planner.h"
#include "bigtable/rowset.h"
#include "bigtable/shuffle.h"
#include "harness.h"

static bt_key K(const char *s)
{
    return (bt_key){ (uint8_t *)s, strlen(s) };
}

static int kcmp(const bt_key *a, const bt_key *b)
{
    return tfrec_bt_key_cmp(a->p, a->n, b->p, b->n);
}

/* pieces of [lo, hi): the cuts in *s, inside and increasing. */
static void check_cuts(const char *lo, const char *hi, size_t pieces, bt_samples *s)
{
    bt_key l = K(lo), h = K(hi);
    CHECK_EQ(tfrec_bt_shuffle_cut_keys(&l, &h, pieces, s), TFREC_OK);
    for (size_t i = 0; i < s->n; i++) {
        CHECKF(kcmp(&s->v[i].key, &l) > 0, "cut %zu not after lo", i);
        CHECKF(!h.n || kcmp(&s->v[i].key, &h) < 0, "cut %zu not before hi", i);
        CHECKF(!i || kcmp(&s->v[i - 1].key, &s->v[i].key) < 0, "cut %zu not increasing", i);
    }
}

static void test_cuts_inside_and_increasing(void)
{
    bt_samples s;
    check_cuts("k_0003334", "k_0006667", 64, &s);
    CHECK_EQ(s.n, 63);
    /* digit bounds: the cuts are digits too, evenly spaced (3334..6667) */
    CHECK(!memcmp(s.v[31].key.p, "k_0005", 6));
    for (size_t i = 0; i < s.n; i++)
        for (size_t j = 2; j < s.v[i].key.n; j++)
            CHECK(s.v[i].key.p[j] >= '0' && s.v[i].key.p[j] <= '9');
    tfrec_bt_samples_free(&s);
    check_cuts("", "", 16, &s);
    CHECK_EQ(s.n, 15); /* the whole table, all bytes */
    CHECK_EQ(s.v[7].key.p[0], 0x80);
    tfrec_bt_samples_free(&s);
    check_cuts("train_", "train`", 100, &s);
    CHECK_EQ(s.n, 99);
    tfrec_bt_samples_free(&s);
    check_cuts("a", "", 10, &s);
    CHECK_EQ(s.n, 9);
    tfrec_bt_samples_free(&s);
    check_cuts("k\xff", "l", 8, &s);
    CHECK_EQ(s.n, 7);
    tfrec_bt_samples_free(&s);
    check_cuts("k5", "k5\x01", 8, &s);
    CHECK_EQ(s.n, 7); /* k5\0...: keys in between */
    tfrec_bt_samples_free(&s);
    check_cuts("k5", "k5", 8, &s);
    CHECK_EQ(s.n, 0); /* nothing in between */
    tfrec_bt_samples_free(&s);
    check_cuts("abc", "abd", 1, &s);
    CHECK_EQ(s.n, 0);
    tfrec_bt_samples_free(&s);
}

/* The pieces cut at those keys cover the share exactly (the planner's job,
 * checked here on a share of real-looking keys). */
static void test_pieces_cover(void)
{
    tfrec_bt_read_options o = TFREC_BT_READ_OPTIONS_INIT;
    o.prefix = "k_";
    bt_rowset set;
    tfrec_err err = { 0 };
    CHECK_EQ(tfrec_bt_rowset_from_options(&set, &o, &err), TFREC_OK);
    bt_samples s;
    CHECK_EQ(tfrec_bt_shuffle_cut_keys(tfrec_bt_rowset_lo(&set), tfrec_bt_rowset_hi(&set), 32, &s),
             TFREC_OK);
    bt_rowset *parts;
    CHECK_EQ(tfrec_bt_plan_pieces(&set, &s, 32, &parts), TFREC_OK);
    for (unsigned k = 0; k < 5000; k += 7) {
        char key[16];
        int n = snprintf(key, sizeof key, "k_%04u", k);
        size_t hits = 0;
        for (size_t p = 0; p < 32; p++)
            for (size_t i = 0; i < parts[p].n; i++) {
                const bt_krange *r = &parts[p].ranges[i];
                if (tfrec_bt_key_cmp((const uint8_t *)key, (size_t)n, r->start.p, r->start.n) >=
                        0 &&
                    (!r->end.n ||
                     tfrec_bt_key_cmp((const uint8_t *)key, (size_t)n, r->end.p, r->end.n) < 0))
                    hits++;
            }
        CHECKF(hits == 1, "%s in %zu pieces", key, hits);
    }
    for (size_t p = 0; p < 32; p++)
        tfrec_bt_rowset_free(&parts[p]);
    free(parts);
    tfrec_bt_samples_free(&s);
    tfrec_bt_rowset_free(&set);
}

static void test_order_seeded_permutation(void)
{
    enum { N = 200 };
    size_t a[N], b[N], c[N], seen[N] = { 0 };
    tfrec_bt_shuffle_order(a, N, 7, 0);
    tfrec_bt_shuffle_order(b, N, 7, 0);
    tfrec_bt_shuffle_order(c, N, 7, 1);
    CHECK(!memcmp(a, b, sizeof a));
    CHECK(memcmp(a, c, sizeof a));
    for (size_t i = 0; i < N; i++)
        seen[a[i]]++;
    for (size_t i = 0; i < N; i++)
        CHECK_EQ(seen[i], 1);
    size_t fixed = 0; /* not the identity: few fixed points */
    for (size_t i = 0; i < N; i++)
        fixed += a[i] == i;
    CHECK(fixed < 10);
    tfrec_bt_shuffle_order(b, N, 8, 0);
    CHECK(memcmp(a, b, sizeof a));
    tfrec_bt_shuffle_order(b, 1, 8, 0);
    CHECK_EQ(b[0], 0);
}

TESTS(TEST(test_cuts_inside_and_increasing), TEST(test_pieces_cover),
      TEST(test_order_seeded_permutation))

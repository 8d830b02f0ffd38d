/* Row sets and the scan planner, as properties checked over many random
 * cases: the pieces a set is cut into are disjoint, in key order, and
 * together exactly the set, whatever the samples (random subsets, as the
 * emulator returns, with or without the empty end key, consistent offsets
 * or not) and whatever the number of pieces. Membership is probed with
 * every key of a small universe plus the bounds themselves and their
 * successors, where off-by-one errors live. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bigtable/planner.h"
#include "bigtable/rowset.h"
#include "harness.h"

static uint64_t rng = 88172645463325252ull;

static uint64_t rnd(uint64_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return n ? rng % n : 0;
}

#define UNIVERSE 600

/* Keys of the universe: "k000".."k599", and a few odd ones (binary, 0xff). */
static size_t ukey(size_t i, uint8_t *buf)
{
    if (i < UNIVERSE)
        return (size_t)sprintf((char *)buf, "k%03zu", i);
    static const char *odd[] = { "a", "k", "k0", "k5999", "l", "\xff", "\xff\xff", "k\x00z" };
    size_t n = i - UNIVERSE == 7 ? 3 : strlen(odd[i - UNIVERSE]);
    memcpy(buf, odd[i - UNIVERSE], n);
    return n;
}
#define NKEYS (UNIVERSE + 8)

static int in_set(const bt_rowset *s, const uint8_t *k, size_t n)
{
    for (size_t i = 0; i < s->n; i++) {
        if (s->is_keys) {
            if (!tfrec_bt_key_cmp(s->keys[i].p, s->keys[i].n, k, n))
                return 1;
            continue;
        }
        const bt_krange *r = &s->ranges[i];
        if (tfrec_bt_key_cmp(k, n, r->start.p, r->start.n) >= 0 &&
            (!r->end.n || tfrec_bt_key_cmp(k, n, r->end.p, r->end.n) < 0))
            return 1;
    }
    return 0;
}

/* A random row set through the public options, as a caller builds it. */
typedef struct opt_case {
    tfrec_bt_read_options o;
    tfrec_bt_range ranges[4];
    uint8_t kb[16][8], sb[4][8], eb[4][8], pb[8];
    const void *keys[16];
    size_t klens[16];
} opt_case;

static void random_options(opt_case *c)
{
    memset(c, 0, sizeof *c);
    tfrec_bt_read_options_init(&c->o);
    switch (rnd(4)) {
    case 0: /* everything or a prefix */
        if (rnd(2)) {
            c->o.prefix = (const char *)c->pb;
            c->o.prefix_len = (size_t)sprintf((char *)c->pb, "k%u", (unsigned)rnd(6));
        }
        break;
    case 1: /* a start/end window */
        c->o.start_key = c->sb[0];
        c->o.start_key_len = ukey(rnd(NKEYS), c->sb[0]);
        if (rnd(3)) {
            c->o.end_key = c->eb[0];
            c->o.end_key_len = ukey(rnd(NKEYS), c->eb[0]);
        }
        break;
    case 2: /* ranges with open and closed ends, possibly overlapping */
        c->o.ranges = c->ranges;
        c->o.n_ranges = 1 + rnd(4);
        for (size_t i = 0; i < c->o.n_ranges; i++) {
            tfrec_bt_range *r = &c->ranges[i];
            if (rnd(5)) {
                r->start = c->sb[i];
                r->start_len = ukey(rnd(NKEYS), c->sb[i]);
            }
            if (rnd(5)) {
                r->end = c->eb[i];
                r->end_len = ukey(rnd(NKEYS), c->eb[i]);
            }
            r->start_open = (int)rnd(2);
            r->end_closed = (int)rnd(2);
        }
        break;
    default: /* a key list, with duplicates */
        c->o.keys = c->keys;
        c->o.key_lens = c->klens;
        c->o.n_keys = rnd(17);
        for (size_t i = 0; i < c->o.n_keys; i++) {
            c->klens[i] = ukey(rnd(NKEYS), c->kb[i]);
            c->keys[i] = c->kb[i];
        }
    }
}

/* What the options mean, decided key by key without the row set code. */
static int wanted(const opt_case *c, const uint8_t *k, size_t n)
{
    const tfrec_bt_read_options *o = &c->o;
    if (o->prefix && (n < o->prefix_len || memcmp(k, o->prefix, o->prefix_len)))
        return 0;
    if (o->start_key && tfrec_bt_key_cmp(k, n, o->start_key, o->start_key_len) < 0)
        return 0;
    if (o->end_key && tfrec_bt_key_cmp(k, n, o->end_key, o->end_key_len) >= 0)
        return 0;
    if (o->keys) {
        for (size_t i = 0; i < o->n_keys; i++)
            if (!tfrec_bt_key_cmp(k, n, o->keys[i], o->key_lens[i]))
                return 1;
        return 0;
    }
    if (!o->ranges)
        return 1;
    for (size_t i = 0; i < o->n_ranges; i++) {
        const tfrec_bt_range *r = &o->ranges[i];
        int c1 = r->start_len ? tfrec_bt_key_cmp(k, n, r->start, r->start_len) : 1;
        int c2 = r->end_len ? tfrec_bt_key_cmp(k, n, r->end, r->end_len) : -1;
        if ((r->start_open ? c1 > 0 : c1 >= 0) && (r->end_closed ? c2 <= 0 : c2 < 0))
            return 1;
    }
    return 0;
}

static void random_samples(bt_samples *s)
{
    size_t n = rnd(4) == 0 ? 0 : rnd(60);
    s->v = calloc(n + 1, sizeof *s->v);
    s->n = 0;
    int consistent = (int)rnd(3);
    int64_t off = 0;
    uint8_t buf[8];
    for (size_t i = 0; i < n; i++) {
        bt_sample *x = &s->v[s->n++];
        x->key.n = ukey(rnd(NKEYS), buf);
        x->key.p = malloc(x->key.n);
        memcpy(x->key.p, buf, x->key.n);
        off += (int64_t)rnd(1000);
        x->offset_bytes = consistent ? off : (int64_t)rnd(100000);
    }
    if (rnd(2))
        s->v[s->n++] = (bt_sample){ { NULL, 0 }, off + 5 }; /* "" = end of table */
}

static void test_rowset_matches_options(void)
{
    for (int iter = 0; iter < 3000; iter++) {
        opt_case c;
        random_options(&c);
        bt_rowset s;
        tfrec_err err = { 0 };
        CHECK_EQ(tfrec_bt_rowset_from_options(&s, &c.o, &err), TFREC_OK);
        for (size_t i = 0; i < NKEYS; i++) {
            uint8_t k[10];
            size_t n = ukey(i, k);
            CHECKF(in_set(&s, k, n) == wanted(&c, k, n), "iteration %d key %zu", iter, i);
            k[n] = 0; /* the successor of the key: just past a closed end */
            CHECKF(in_set(&s, k, n + 1) == wanted(&c, k, n + 1), "iteration %d key %zu+0", iter, i);
        }
        for (size_t i = 1; !s.is_keys && i < s.n; i++) /* sorted, disjoint, not touching */
            CHECK(tfrec_bt_key_cmp(s.ranges[i - 1].end.p, s.ranges[i - 1].end.n,
                                   s.ranges[i].start.p, s.ranges[i].start.n) < 0);
        tfrec_bt_rowset_free(&s);
    }
}

static void test_plan_disjoint_ordered_covering(void)
{
    for (int iter = 0; iter < 3000; iter++) {
        opt_case c;
        random_options(&c);
        bt_rowset s;
        tfrec_err err = { 0 };
        CHECK_EQ(tfrec_bt_rowset_from_options(&s, &c.o, &err), TFREC_OK);
        bt_samples smp;
        random_samples(&smp);
        size_t pieces = 1 + rnd(12);
        bt_rowset *parts;
        CHECK_EQ(tfrec_bt_plan_pieces(&s, &smp, pieces, &parts), TFREC_OK);
        size_t last_piece = 0;
        for (size_t i = 0; i < NKEYS + 1; i++) {
            /* probe in key order: the universe sorts as k000.., then odd ones */
            uint8_t k[10];
            size_t n = i < NKEYS ? ukey(i, k) : 0;
            if (i == NKEYS)
                break;
            size_t hits = 0, where = 0;
            for (size_t p = 0; p < pieces; p++)
                if (in_set(&parts[p], k, n)) {
                    hits++;
                    where = p;
                }
            CHECKF(hits == (size_t)in_set(&s, k, n), "iteration %d key %zu in %zu pieces", iter, i,
                   hits);
            if (hits && i < UNIVERSE) { /* k000..k599 are in key order */
                CHECKF(where >= last_piece, "iteration %d: key %zu in piece %zu after %zu", iter, i,
                       where, last_piece);
                last_piece = where;
            }
        }
        /* pieces hold whole ranges in order: each piece's end <= the next one's start */
        uint8_t prev_hi[16];
        size_t prev_n = 0;
        int have_prev = 0;
        for (size_t p = 0; p < pieces; p++) {
            if (!parts[p].n) {
                tfrec_bt_rowset_free(&parts[p]);
                continue;
            }
            CHECK_EQ(parts[p].is_keys, s.is_keys);
            if (!s.is_keys) {
                const bt_key *lo = tfrec_bt_rowset_lo(&parts[p]),
                             *hi = tfrec_bt_rowset_hi(&parts[p]);
                if (have_prev)
                    CHECKF(prev_n && tfrec_bt_key_cmp(prev_hi, prev_n, lo->p, lo->n) <= 0,
                           "iteration %d: piece %zu starts before the end of the one before", iter,
                           p);
                have_prev = 1;
                prev_n = hi->n < sizeof prev_hi ? hi->n : sizeof prev_hi;
                if (prev_n)
                    memcpy(prev_hi, hi->p, prev_n);
            }
            tfrec_bt_rowset_free(&parts[p]);
        }
        free(parts);
        tfrec_bt_samples_free(&smp);
        tfrec_bt_rowset_free(&s);
    }
}

/* Samples of ~1% of the keys with their byte offsets, as the emulator
 * gives: N pieces of about equal size. */
static void test_plan_balanced(void)
{
    enum { ROWS = 20000 };
    for (size_t pieces = 2; pieces <= 16; pieces *= 2) {
        bt_samples smp = { calloc(ROWS / 50, sizeof(bt_sample)), 0 };
        for (size_t i = 0; i < ROWS; i++)
            if (rnd(100) == 0 && smp.n < ROWS / 50) {
                bt_sample *x = &smp.v[smp.n++];
                x->key.p = malloc(16);
                x->key.n = (size_t)sprintf((char *)x->key.p, "r%06zu", i);
                x->offset_bytes = (int64_t)i * 1000;
            }
        tfrec_bt_read_options o = TFREC_BT_READ_OPTIONS_INIT;
        o.prefix = "r";
        bt_rowset s, *parts;
        tfrec_err err = { 0 };
        CHECK_EQ(tfrec_bt_rowset_from_options(&s, &o, &err), TFREC_OK);
        CHECK_EQ(tfrec_bt_plan_pieces(&s, &smp, pieces, &parts), TFREC_OK);
        size_t count[16] = { 0 };
        for (size_t i = 0; i < ROWS; i++) {
            char k[16];
            size_t n = (size_t)sprintf(k, "r%06zu", i);
            for (size_t p = 0; p < pieces; p++)
                count[p] += (size_t)in_set(&parts[p], (const uint8_t *)k, n);
        }
        for (size_t p = 0; p < pieces; p++) {
            CHECKF(count[p] > ROWS / pieces / 2 && count[p] < ROWS / pieces * 3 / 2,
                   "%zu pieces: piece %zu has %zu rows", pieces, p, count[p]);
            tfrec_bt_rowset_free(&parts[p]);
        }
        free(parts);
        tfrec_bt_samples_free(&smp);
        tfrec_bt_rowset_free(&s);
    }
}

/* Resuming: the set after key k holds exactly its keys greater than k. */
static void test_rowset_after(void)
{
    for (int iter = 0; iter < 2000; iter++) {
        opt_case c;
        random_options(&c);
        bt_rowset s;
        tfrec_err err = { 0 };
        CHECK_EQ(tfrec_bt_rowset_from_options(&s, &c.o, &err), TFREC_OK);
        uint8_t last[10];
        size_t ln = ukey(rnd(NKEYS), last);
        CHECK_EQ(tfrec_bt_rowset_after(&s, last, ln), TFREC_OK);
        for (size_t i = 0; i < NKEYS; i++) {
            uint8_t k[10];
            size_t n = ukey(i, k);
            int want = wanted(&c, k, n) && tfrec_bt_key_cmp(k, n, last, ln) > 0;
            CHECKF(in_set(&s, k, n) == want, "iteration %d key %zu", iter, i);
        }
        tfrec_bt_rowset_free(&s);
    }
}

static void test_rowset_rejects(void)
{
    tfrec_bt_read_options o = TFREC_BT_READ_OPTIONS_INIT;
    const void *keys[1] = { "a" };
    size_t lens[1] = { 0 };
    tfrec_bt_range r = { 0 };
    bt_rowset s;
    tfrec_err err = { 0 };
    o.keys = keys;
    o.key_lens = lens;
    o.n_keys = 1;
    CHECK_EQ(tfrec_bt_rowset_from_options(&s, &o, &err), TFREC_E_INVALID); /* empty key */
    CHECK(strstr(err.msg, "key 0 is empty"));
    o.ranges = &r;
    o.n_ranges = 1;
    CHECK_EQ(tfrec_bt_rowset_from_options(&s, &o, &err), TFREC_E_INVALID);
    CHECK(strstr(err.msg, "exclusive"));
    /* an empty key list is a set with nothing in it, not the whole table */
    o.ranges = NULL;
    o.n_ranges = 0;
    o.n_keys = 0;
    CHECK_EQ(tfrec_bt_rowset_from_options(&s, &o, &err), TFREC_OK);
    CHECK_EQ(s.n, 0);
    CHECK_EQ(s.is_keys, 1);
    tfrec_bt_rowset_free(&s);
}

TESTS(TEST(test_rowset_matches_options), TEST(test_plan_disjoint_ordered_covering),
      TEST(test_plan_balanced), TEST(test_rowset_after), TEST(test_rowset_rejects))

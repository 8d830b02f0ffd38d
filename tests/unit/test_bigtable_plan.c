/* Split plan files and export part files: a plan made from random samples
 * prints and parses back to the same text; its shards tile the row set;
 * the parser refuses hostile text with a reason (truncated anywhere, a
 * changed byte, a fixed-up checksum over bad content, absurd counts, cuts
 * that go down, bad escapes); a reader refuses a sharded range read without
 * a plan unless sample_split, and a plan for another table, row set or
 * count. Part files round-trip and refuse the same hostile shapes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bigtable/export_part.h"
#include "bigtable/plan_internal.h"
#include "bigtable/plan_text.h"
#include "harness.h"
#include "tfrec/crc32c.h"

static const char *TABLE = "projects/p/instances/i/tables/t";

static void prefix_set(bt_rowset *s, const char *prefix)
{
    tfrec_bt_read_options o = TFREC_BT_READ_OPTIONS_INIT;
    o.prefix = prefix;
    tfrec_err err = { 0 };
    if (tfrec_bt_rowset_from_options(s, &o, &err))
        abort();
}

static void samples_of(bt_samples *s, int n, int step)
{
    s->v = calloc((size_t)n, sizeof *s->v);
    s->n = (size_t)n;
    for (int i = 0; i < n; i++) {
        char k[32];
        int len = snprintf(k, sizeof k, "train_%04d", (i + 1) * step);
        s->v[i].key.p = malloc((size_t)len);
        memcpy(s->v[i].key.p, k, (size_t)len);
        s->v[i].key.n = (size_t)len;
        s->v[i].offset_bytes = (i + 1) * step * 100;
    }
}

static tfrec_bt_plan *make(size_t shards, int nsamples)
{
    bt_rowset set;
    bt_samples sm = { 0 };
    prefix_set(&set, "train_");
    samples_of(&sm, nsamples, 37);
    tfrec_bt_plan *p = NULL;
    tfrec_err err = { 0 };
    int rc = tfrec_bt_plan_make(&p, TABLE, &set, &sm, shards, "sample", &err);
    tfrec_bt_samples_free(&sm);
    tfrec_bt_rowset_free(&set);
    return rc ? NULL : p;
}

/* Re-seal text (everything before its crc line) with a correct checksum. */
static char *reseal(const char *body, size_t *len)
{
    size_t n = strlen(body);
    char *t = malloc(n + 17);
    memcpy(t, body, n);
    *len = n + (size_t)sprintf(t + n, "crc32c %08x\n", (unsigned)tfrec_crc32c(body, n));
    return t;
}

static int parse_body(const char *body, const char *want_msg)
{
    size_t len;
    char *t = reseal(body, &len);
    tfrec_bt_plan *p = NULL;
    int rc = tfrec_bt_plan_parse(&p, t, len);
    free(t);
    tfrec_bt_plan_free(p);
    if (rc && want_msg && !strstr(tfrec_last_errmsg(), want_msg)) {
        fprintf(stderr, "message: %s\n", tfrec_last_errmsg());
        return 99;
    }
    return rc;
}

static void test_round_trip_and_tiling(void)
{
    for (size_t shards = 1; shards <= 9; shards++) {
        for (int ns = 0; ns <= 12; ns += 4) {
            tfrec_bt_plan *p = make(shards, ns);
            CHECK(p != NULL);
            const char *text;
            size_t len;
            CHECK_EQ(tfrec_bt_plan_text(p, &text, &len), TFREC_OK);
            tfrec_bt_plan *q = NULL;
            CHECKF(tfrec_bt_plan_parse(&q, text, len) == TFREC_OK, "%s", tfrec_last_errmsg());
            CHECK_EQ(tfrec_bt_plan_id(q), tfrec_bt_plan_id(p));
            CHECK_EQ(tfrec_bt_plan_num_shards(q), shards);
            CHECK(!strcmp(tfrec_bt_plan_table(q), TABLE));
            /* consecutive windows meet; the first and last reach the set's ends */
            for (size_t i = 0; i < shards; i++) {
                tfrec_bt_range a, b;
                CHECK_EQ(tfrec_bt_plan_shard(q, i, &a), TFREC_OK);
                if (i == 0)
                    CHECK(a.start_len == 6 && !memcmp(a.start, "train_", 6));
                if (i + 1 == shards) {
                    CHECK(a.end_len == 6 && !memcmp(a.end, "train`", 6));
                    continue;
                }
                CHECK_EQ(tfrec_bt_plan_shard(q, i + 1, &b), TFREC_OK);
                CHECK(a.end_len == b.start_len && !memcmp(a.end, b.start, a.end_len));
            }
            /* pieces: every universe key in exactly one */
            for (int k = 0; k < 500; k++) {
                char key[32];
                int kl = snprintf(key, sizeof key, "train_%04d", k);
                int in = 0;
                for (size_t i = 0; i < shards; i++) {
                    bt_rowset piece;
                    CHECK_EQ(tfrec_bt_plan_piece(q, i, &piece), TFREC_OK);
                    for (size_t r = 0; r < piece.n; r++) {
                        const bt_krange *g = &piece.ranges[r];
                        if (tfrec_bt_key_cmp((uint8_t *)key, (size_t)kl, g->start.p, g->start.n) >=
                                0 &&
                            (!g->end.n ||
                             tfrec_bt_key_cmp((uint8_t *)key, (size_t)kl, g->end.p, g->end.n) < 0))
                            in++;
                    }
                    tfrec_bt_rowset_free(&piece);
                }
                CHECKF(in == 1, "key %s in %d pieces (%zu shards, %d samples)", key, in, shards,
                       ns);
            }
            tfrec_bt_plan_free(p);
            tfrec_bt_plan_free(q);
        }
    }
}

static void test_hostile_plans(void)
{
    tfrec_bt_plan *p = make(4, 12);
    const char *text;
    size_t len;
    tfrec_bt_plan_text(p, &text, &len);
    tfrec_bt_plan *q = NULL;
    /* every truncation, and every single changed byte, is refused */
    for (size_t n = 0; n < len; n++) {
        CHECKF(tfrec_bt_plan_parse(&q, text, n) == TFREC_E_PARSE, "cut at %zu", n);
        CHECK(q == NULL);
    }
    char *copy = malloc(len);
    for (size_t i = 0; i < len; i++) {
        memcpy(copy, text, len);
        copy[i] ^= 0x01;
        CHECKF(tfrec_bt_plan_parse(&q, copy, len) != TFREC_OK, "byte %zu changed", i);
    }
    memcpy(copy, text, len);
    copy[40] ^= 1;
    tfrec_bt_plan_parse(&q, copy, len);
    CHECK(strstr(tfrec_last_errmsg(), "checksum mismatch") ||
          strstr(tfrec_last_errmsg(), "crc32c"));
    free(copy);
    CHECK_EQ(tfrec_bt_plan_parse(&q, NULL, 0), TFREC_E_PARSE);
    CHECK_EQ(tfrec_bt_plan_parse(NULL, text, len), TFREC_E_INVALID);
    tfrec_bt_plan_free(p);

    const char *head = "tfrec-bigtable-split-plan 1\ntable projects/p/instances/i/tables/t\n";
    char body[4096];
    /* valid, then one thing wrong at a time (checksum fixed each time) */
    snprintf(body, sizeof body, "%sranges 1\nrange a b\nshards 2\nsource sample 3\ncut a5\n", head);
    CHECK_EQ(parse_body(body, NULL), TFREC_OK);
    snprintf(body, sizeof body,
             "%sranges 1\nrange a b\nshards 3\nsource sample 3\ncut a5\ncut a1\n", head);
    CHECK_EQ(parse_body(body, "cuts must never go down"), TFREC_E_PARSE);
    snprintf(body, sizeof body,
             "%sranges 99999999999\nrange a b\nshards 2\nsource sample 3\ncut a5\n", head);
    CHECK_EQ(parse_body(body, "not a count of at most"), TFREC_E_PARSE);
    snprintf(body, sizeof body, "%sranges 1000000\nrange a b\nshards 2\n", head);
    CHECK_EQ(parse_body(body, "expected \"range\""), TFREC_E_PARSE);
    snprintf(body, sizeof body, "%sranges 1\nrange a b\nshards 70000\nsource sample 3\n", head);
    CHECK_EQ(parse_body(body, "shards 70000"), TFREC_E_PARSE);
    snprintf(body, sizeof body, "%sranges 1\nrange a b\nshards 0\nsource sample 3\n", head);
    CHECK_EQ(parse_body(body, "shards 0"), TFREC_E_PARSE);
    snprintf(body, sizeof body, "%sranges 1\nrange a b\nshards 65536\nsource sample 3\ncut a\n",
             head);
    CHECK_EQ(parse_body(body, "ends before its \"cut\" line"), TFREC_E_PARSE);
    snprintf(body, sizeof body, "%sranges 1\nrange b a\nshards 1\nsource sample 0\n", head);
    CHECK_EQ(parse_body(body, "end after its start"), TFREC_E_PARSE);
    snprintf(body, sizeof body, "%sranges 2\nrange a c\nrange b d\nshards 1\nsource sample 0\n",
             head);
    CHECK_EQ(parse_body(body, "sorted, disjoint"), TFREC_E_PARSE);
    snprintf(body, sizeof body, "%sranges 1\nrange a%%zz b\nshards 1\nsource sample 0\n", head);
    CHECK_EQ(parse_body(body, "bad %XX escape"), TFREC_E_PARSE);
    snprintf(body, sizeof body, "%sranges 1\nrange a b\nshards 2\nsource sample 3\ncut -\n", head);
    CHECK_EQ(parse_body(body, "non-empty"), TFREC_E_PARSE);
    snprintf(body, sizeof body, "%sranges 1\nrange a b\nshards 1\nsource guess 0\n", head);
    CHECK_EQ(parse_body(body, "source must be"), TFREC_E_PARSE);
    snprintf(body, sizeof body, "%sranges 1\nrange a b\nshards 1\nsource sample 0\nextra\n", head);
    CHECK_EQ(parse_body(body, "unexpected line"), TFREC_E_PARSE);
    snprintf(body, sizeof body, "tfrec-bigtable-split-plan 2\ntable t\n");
    CHECK_EQ(parse_body(body, "reads versions 1 to 1"), TFREC_E_PARSE);
    snprintf(body, sizeof body, "tfrec-bigtable-export-part 1\ntable t\n");
    CHECK_EQ(parse_body(body, "not a tfrec-bigtable-split-plan file"), TFREC_E_PARSE);
    /* a key of 4097 bytes */
    char *big = malloc(9000);
    int o = snprintf(big, 9000, "%sranges 1\nrange ", head);
    memset(big + o, 'k', 4097);
    snprintf(big + o + 4097, 9000 - (size_t)o - 4097, " -\nshards 1\nsource sample 0\n");
    CHECK_EQ(parse_body(big, "over 4096 bytes"), TFREC_E_PARSE);
    free(big);
}

static void test_check_refuses_other_plans(void)
{
    tfrec_bt_plan *p = make(4, 12);
    bt_rowset set, other;
    prefix_set(&set, "train_");
    prefix_set(&other, "validation_");
    tfrec_err err = { 0 };
    CHECK_EQ(tfrec_bt_plan_check(p, TABLE, &set, 4, &err), TFREC_OK);
    CHECK_EQ(tfrec_bt_plan_check(p, TABLE, &set, 3, &err), TFREC_E_INVALID);
    CHECK(strstr(err.msg, "has 4 shards, this read is split into 3"));
    CHECK_EQ(tfrec_bt_plan_check(p, "projects/p/instances/i/tables/u", &set, 4, &err),
             TFREC_E_INVALID);
    CHECK(strstr(err.msg, "for table projects/p/instances/i/tables/t, not"));
    CHECK_EQ(tfrec_bt_plan_check(p, TABLE, &other, 4, &err), TFREC_E_INVALID);
    CHECK(strstr(err.msg, "same prefix"));
    tfrec_bt_rowset_free(&set);
    tfrec_bt_rowset_free(&other);
    tfrec_bt_plan_free(p);
}

static void test_part_round_trip_and_hostile(void)
{
    bt_part p = { 0 };
    p.table = (char *)TABLE;
    p.plan_id = 0xdeadbeef;
    prefix_set(&p.set, "train_");
    p.shards = 3;
    p.task = 1;
    p.lo = (bt_key){ (uint8_t *)"train_1", 7 };
    p.hi = (bt_key){ (uint8_t *)"train_2", 7 };
    p.rows = 10;
    p.bytes = 100;
    bt_part_output out = { "x-00001-of-00003", 200, 10, 0x12345678 };
    p.out = &out;
    p.nout = 1;
    bt_text t = { 0 };
    tfrec_bt_part_print(&p, &t);
    CHECK(!t.failed);
    tfrec_bt_rowset_free(&p.set);
    bt_part q;
    char why[300];
    CHECKF(tfrec_bt_part_parse(&q, t.p, t.n, why, sizeof why) == TFREC_OK, "%s", why);
    CHECK(!strcmp(q.table, TABLE) && q.plan_id == 0xdeadbeef && q.shards == 3 && q.task == 1);
    CHECK(q.lo.n == 7 && !memcmp(q.lo.p, "train_1", 7) && q.rows == 10 && q.nout == 1);
    CHECK(!strcmp(q.out[0].name, "x-00001-of-00003") && q.out[0].crc == 0x12345678);
    tfrec_bt_part_free(&q);
    for (size_t n = 0; n < t.n; n++)
        CHECKF(tfrec_bt_part_parse(&q, t.p, n, why, sizeof why) == TFREC_E_PARSE, "cut at %zu", n);
    /* task beyond the shard count, outputs in another directory, absurd counts */
    const char *bad[] = { "task 3\n", "output ../x 1 1 00000000\n", "outputs 100000\n" };
    const char *want[] = { "task", "part's directory", "too large" };
    for (int i = 0; i < 3; i++) {
        char body[2048];
        snprintf(body, sizeof body,
                 "tfrec-bigtable-export-part 1\ntable t\nplan 00000000\nranges 0\nshards 3\n%s"
                 "share - -\nrows 0\nbytes 0\nskipped 0\noutputs 1\n%s",
                 i == 0 ? bad[0] : "task 0\n",
                 i == 1   ? bad[1]
                 : i == 2 ? ""
                          : "output x 1 1 00000000\n");
        if (i == 2) { /* replace the outputs line */
            char *o = strstr(body, "outputs 1\n");
            snprintf(o, sizeof body - (size_t)(o - body), "%s", bad[2]);
        }
        size_t len;
        char *s = reseal(body, &len);
        CHECKF(tfrec_bt_part_parse(&q, s, len, why, sizeof why) == TFREC_E_PARSE, "case %d", i);
        CHECKF(strstr(why, want[i]) != NULL, "case %d: %s", i, why);
        free(s);
    }
    tfrec_bt_text_free(&t);
}

static void test_key_escapes(void)
{
    const uint8_t keys[][6] = { { 0 }, { '-' }, { '%', ' ', 0xff, '\n', 'a', 0 } };
    const size_t lens[] = { 0, 1, 6 };
    for (int i = 0; i < 3; i++) {
        bt_text t = { 0 };
        tfrec_bt_text_word(&t, keys[i], lens[i]);
        CHECK(!strchr(t.p, ' ') && !strchr(t.p, '\n'));
        bt_key k;
        CHECK_EQ(tfrec_bt_word_key(t.p, 100, &k), TFREC_OK);
        CHECK_EQ(k.n, lens[i]);
        CHECK(!lens[i] || !memcmp(k.p, keys[i], lens[i]));
        free(k.p);
        tfrec_bt_text_free(&t);
    }
}

/* Row sets compare by kind and content: ranges by both bounds, keys one
 * by one, a range set never equal to a key list. */
static void test_rowset_equal(void)
{
    bt_rowset a, b, c, k1, k2;
    prefix_set(&a, "train_");
    prefix_set(&b, "train_");
    prefix_set(&c, "train_0");
    CHECK(tfrec_bt_rowset_equal(&a, &b));
    CHECK(!tfrec_bt_rowset_equal(&a, &c));
    static const char *ka[] = { "a", "b" }, *kb[] = { "a", "c" };
    size_t lens[] = { 1, 1 };
    tfrec_bt_read_options o = TFREC_BT_READ_OPTIONS_INIT;
    tfrec_err err = { 0 };
    o.keys = (const void *const *)ka;
    o.key_lens = lens;
    o.n_keys = 2;
    CHECK_EQ(tfrec_bt_rowset_from_options(&k1, &o, &err), TFREC_OK);
    o.keys = (const void *const *)kb;
    CHECK_EQ(tfrec_bt_rowset_from_options(&k2, &o, &err), TFREC_OK);
    CHECK(tfrec_bt_rowset_equal(&k1, &k1));
    CHECK(!tfrec_bt_rowset_equal(&k1, &k2));
    CHECK(!tfrec_bt_rowset_equal(&k1, &a));
    bt_rowset *all[] = { &a, &b, &c, &k1, &k2 };
    for (size_t i = 0; i < 5; i++)
        tfrec_bt_rowset_free(all[i]);
}

TESTS(TEST(test_rowset_equal), TEST(test_round_trip_and_tiling), TEST(test_hostile_plans),
      TEST(test_check_refuses_other_plans), TEST(test_part_round_trip_and_hostile),
      TEST(test_key_escapes))

/* Split plans: made once from SampleRowKeys or split keys, printed as a
 * checksummed text file, parsed back with every count bounded. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bigtable/plan_internal.h"
#include "bigtable/plan_text.h"
#include "tfrec/crc32c.h"

static int kcmp(const bt_key *a, const bt_key *b)
{
    return tfrec_bt_key_cmp(a->p, a->n, b->p, b->n);
}

const char *tfrec_bt_key_show(const uint8_t *p, size_t n, const char *empty, char *buf, size_t cap)
{
    if (!n) {
        snprintf(buf, cap, "%s", empty);
        return buf;
    }
    size_t o = 0;
    for (size_t i = 0; i < n && o + 8 < cap; i++)
        o +=
            (size_t)snprintf(buf + o, cap - o, p[i] >= ' ' && p[i] < 0x7f ? "%c" : "\\x%02x", p[i]);
    if (o + 8 >= cap)
        snprintf(buf + o, cap - o, "...");
    return buf;
}

void tfrec_bt_plan_free(tfrec_bt_plan *p)
{
    if (!p)
        return;
    free(p->table);
    tfrec_bt_rowset_free(&p->set);
    for (size_t i = 0; p->cuts && i + 1 < p->shards; i++)
        free(p->cuts[i].p);
    free(p->cuts);
    free(p->text);
    free(p);
}

int tfrec_bt_plan_print(tfrec_bt_plan *p)
{
    bt_text t = { 0 };
    tfrec_bt_text_printf(&t, "%s %d\ntable ", BT_PLAN_MAGIC, BT_PLAN_VERSION);
    tfrec_bt_text_word(&t, p->table, strlen(p->table));
    tfrec_bt_text_printf(&t, "\nranges %zu\n", p->set.n);
    for (size_t i = 0; i < p->set.n; i++) {
        tfrec_bt_text_printf(&t, "range ");
        tfrec_bt_text_word(&t, p->set.ranges[i].start.p, p->set.ranges[i].start.n);
        tfrec_bt_text_printf(&t, " ");
        tfrec_bt_text_word(&t, p->set.ranges[i].end.p, p->set.ranges[i].end.n);
        tfrec_bt_text_printf(&t, "\n");
    }
    tfrec_bt_text_printf(&t, "shards %zu\nsource %s %llu\n", p->shards, p->source,
                         (unsigned long long)p->nsource);
    for (size_t i = 0; i + 1 < p->shards; i++) {
        tfrec_bt_text_printf(&t, "cut ");
        tfrec_bt_text_word(&t, p->cuts[i].p, p->cuts[i].n);
        tfrec_bt_text_printf(&t, "\n");
    }
    tfrec_bt_text_seal(&t);
    if (t.failed) {
        tfrec_bt_text_free(&t);
        return TFREC_E_NOMEM;
    }
    free(p->text);
    p->text = t.p;
    p->text_len = t.n;
    p->id = tfrec_crc32c(t.p, t.n);
    return TFREC_OK;
}

static int copy_key(bt_key *d, const bt_key *s)
{
    d->n = s->n;
    d->p = NULL;
    if (!s->n)
        return TFREC_OK;
    if (!(d->p = malloc(s->n)))
        return TFREC_E_NOMEM;
    memcpy(d->p, s->p, s->n);
    return TFREC_OK;
}

int tfrec_bt_plan_make(tfrec_bt_plan **out, const char *table_name, const bt_rowset *set,
                       const bt_samples *samples, size_t shards, const char *source, tfrec_err *err)
{
    *out = NULL;
    if (set->is_keys)
        return tfrec_fail(err, TFREC_E_INVALID,
                          "a key list is split by count in every worker alike: it needs no plan");
    if (!shards || shards > BT_PLAN_MAX_SHARDS)
        return tfrec_fail(err, TFREC_E_INVALID, "a plan has 1 to %d shards, not %zu",
                          BT_PLAN_MAX_SHARDS, shards);
    tfrec_bt_plan *p = calloc(1, sizeof *p);
    int rc = p ? TFREC_OK : TFREC_E_NOMEM;
    if (!rc && (!(p->table = strdup(table_name)) || !(p->cuts = calloc(shards, sizeof *p->cuts))))
        rc = TFREC_E_NOMEM;
    if (!rc) {
        p->shards = shards;
        snprintf(p->source, sizeof p->source, "%s", source);
        p->nsource = samples->n;
        p->set.ranges = calloc(set->n ? set->n : 1, sizeof *p->set.ranges);
        if (!p->set.ranges)
            rc = TFREC_E_NOMEM;
        for (size_t i = 0; !rc && i < set->n; i++) {
            p->set.n++;
            if (copy_key(&p->set.ranges[i].start, &set->ranges[i].start) ||
                copy_key(&p->set.ranges[i].end, &set->ranges[i].end))
                rc = TFREC_E_NOMEM;
        }
    }
    size_t ncuts = 0;
    if (!rc)
        rc = tfrec_bt_plan_cuts(set, samples, shards, p->cuts, &ncuts);
    /* Fewer split points than shards: the first shards read nothing. Their
     * cut is the lowest one possible (the set's start, or the smallest
     * non-empty key), below every real cut. */
    if (!rc && ncuts < shards - 1) {
        size_t pad = shards - 1 - ncuts;
        memmove(p->cuts + pad, p->cuts, ncuts * sizeof *p->cuts);
        static const uint8_t zero = 0;
        bt_key low = set->n && set->ranges[0].start.n ? set->ranges[0].start
                                                      : (bt_key){ (uint8_t *)&zero, 1 };
        for (size_t i = 0; i < pad; i++)
            p->cuts[i] = (bt_key){ 0 };
        for (size_t i = 0; i < pad && !rc; i++)
            rc = copy_key(&p->cuts[i], &low);
    }
    if (!rc)
        rc = tfrec_bt_plan_print(p);
    if (rc) {
        tfrec_bt_plan_free(p);
        return tfrec_fail(err, rc, "out of memory making a split plan");
    }
    *out = p;
    return TFREC_OK;
}

int tfrec_bt_plan_piece(const tfrec_bt_plan *p, size_t i, bt_rowset *out)
{
    const bt_key *lo = i ? &p->cuts[i - 1] : NULL;
    const bt_key *hi = i + 1 < p->shards ? &p->cuts[i] : NULL;
    return tfrec_bt_rowset_slice(out, &p->set, lo, hi);
}

static void show_set(const bt_rowset *s, char *buf, size_t cap)
{
    char a[80], b[80];
    if (!s->n)
        snprintf(buf, cap, "no rows");
    else
        snprintf(
            buf, cap, "%zu range%s, [%s, %s)", s->n, s->n == 1 ? "" : "s",
            tfrec_bt_key_show(s->ranges[0].start.p, s->ranges[0].start.n, "first row", a, sizeof a),
            tfrec_bt_key_show(s->ranges[s->n - 1].end.p, s->ranges[s->n - 1].end.n, "end of table",
                              b, sizeof b));
}

int tfrec_bt_plan_check(const tfrec_bt_plan *p, const char *table_name, const bt_rowset *set,
                        size_t num_shards, tfrec_err *err)
{
    if (strcmp(p->table, table_name) != 0)
        return tfrec_fail(err, TFREC_E_INVALID,
                          "the split plan is for table %s, not %s: make a plan for this table",
                          p->table, table_name);
    if (set->is_keys)
        return tfrec_fail(err, TFREC_E_INVALID,
                          "a split plan cuts ranges; this read is a key list (split by count)");
    if (!tfrec_bt_rowset_equal(&p->set, set)) {
        char want[200], got[200];
        show_set(&p->set, want, sizeof want);
        show_set(set, got, sizeof got);
        return tfrec_fail(err, TFREC_E_INVALID,
                          "the split plan is for the rows %s, this read asks for %s: the plan "
                          "must be made with the same prefix / ranges",
                          want, got);
    }
    if (p->shards != num_shards)
        return tfrec_fail(err, TFREC_E_INVALID,
                          "the split plan has %zu shards, this read is split into %zu: make the "
                          "plan for %zu shards",
                          p->shards, num_shards, num_shards);
    return TFREC_OK;
}

/* ---- parsing */

typedef struct parse {
    bt_lines l;
    char why[200];
} parse;

static int bad(parse *ps, const char *what)
{
    snprintf(ps->why, sizeof ps->why, "line %zu: %s", ps->l.lineno, what);
    return TFREC_E_PARSE;
}

/* The next line, which must be `name` followed by nargs words. */
static int expect(parse *ps, const char *name, size_t nargs)
{
    int rc = tfrec_bt_lines_next(&ps->l, ps->why, sizeof ps->why);
    if (rc < 0)
        return rc;
    if (rc == 0) {
        snprintf(ps->why, sizeof ps->why, "ends before its \"%s\" line", name);
        return TFREC_E_PARSE;
    }
    if (strcmp(ps->l.words[0], name) != 0 || ps->l.nwords != nargs + 1) {
        char w[80];
        snprintf(w, sizeof w, "expected \"%s\" and %zu word%s", name, nargs, nargs == 1 ? "" : "s");
        return bad(ps, w);
    }
    return TFREC_OK;
}

static int word_key(parse *ps, size_t word, bt_key *k)
{
    int rc = tfrec_bt_word_key(ps->l.words[word], BT_PLAN_MAX_KEY, k);
    if (rc == TFREC_E_PARSE)
        return bad(ps, "a key with a bad %XX escape, a control byte or over 4096 bytes");
    return rc;
}

static int count(parse *ps, uint64_t max, uint64_t *v, const char *what)
{
    if (tfrec_bt_word_u64(ps->l.words[1], max, v)) {
        char w[120];
        snprintf(w, sizeof w, "%s %.24s: not a count of at most %llu", what, ps->l.words[1],
                 (unsigned long long)max);
        return bad(ps, w);
    }
    return TFREC_OK;
}

static int parse_body(parse *ps, tfrec_bt_plan *p)
{
    int rc;
    uint64_t n;
    bt_key name = { 0 };
    if ((rc = expect(ps, "table", 1)) || (rc = word_key(ps, 1, &name)))
        return rc;
    if (!name.n || memchr(name.p, 0, name.n) || name.n > 1024) {
        free(name.p);
        return bad(ps, "a table name must be 1 to 1024 bytes without NUL");
    }
    p->table = malloc(name.n + 1);
    if (!p->table) {
        free(name.p);
        return TFREC_E_NOMEM;
    }
    memcpy(p->table, name.p, name.n);
    p->table[name.n] = 0;
    free(name.p);
    if ((rc = expect(ps, "ranges", 1)) || (rc = count(ps, BT_PLAN_MAX_RANGES, &n, "ranges")))
        return rc;
    /* grown line by line: a count is only believed as far as lines back it */
    size_t cap = 0;
    for (uint64_t i = 0; i < n; i++) {
        if ((rc = expect(ps, "range", 2)))
            return rc;
        if (tfrec_vec_reserve(&p->set.ranges, &cap, p->set.n + 1, 16))
            return TFREC_E_NOMEM;
        bt_krange *r = &p->set.ranges[p->set.n];
        memset(r, 0, sizeof *r);
        p->set.n++;
        if ((rc = word_key(ps, 1, &r->start)) || (rc = word_key(ps, 2, &r->end)))
            return rc;
        if (r->end.n && kcmp(&r->start, &r->end) >= 0)
            return bad(ps, "a range must end after its start");
        if (i) {
            const bt_krange *q = &p->set.ranges[p->set.n - 2];
            if (!q->end.n || kcmp(&q->end, &r->start) >= 0)
                return bad(ps, "ranges must be sorted, disjoint and not touching");
        }
    }
    if ((rc = expect(ps, "shards", 1)) || (rc = count(ps, BT_PLAN_MAX_SHARDS, &n, "shards")))
        return rc;
    if (!n)
        return bad(ps, "shards 0: a plan has at least one shard");
    size_t total = (size_t)n;
    p->shards = 1; /* grows with the cuts read, so that a failure frees what is there */
    if ((rc = expect(ps, "source", 2)))
        return rc;
    if (strcmp(ps->l.words[1], "sample") && strcmp(ps->l.words[1], "split_keys"))
        return bad(ps, "source must be \"sample\" or \"split_keys\"");
    snprintf(p->source, sizeof p->source, "%s", ps->l.words[1]);
    if (tfrec_bt_word_u64(ps->l.words[2], UINT64_MAX, &p->nsource))
        return bad(ps, "the source count is not a number");
    size_t ccap = 0;
    for (size_t i = 0; i + 1 < total; i++) {
        if ((rc = expect(ps, "cut", 1)))
            return rc;
        if (tfrec_vec_reserve(&p->cuts, &ccap, i + 1, 16))
            return TFREC_E_NOMEM;
        p->cuts[i] = (bt_key){ 0 };
        if ((rc = word_key(ps, 1, &p->cuts[i])))
            return rc;
        p->shards = i + 2;
        if (!p->cuts[i].n)
            return bad(ps, "a cut must be a non-empty key");
        if (i && kcmp(&p->cuts[i - 1], &p->cuts[i]) > 0)
            return bad(ps, "cuts must never go down: shards would overlap");
    }
    rc = tfrec_bt_lines_next(&ps->l, ps->why, sizeof ps->why);
    if (rc < 0)
        return rc;
    if (rc > 0)
        return bad(ps, "unexpected line after the last cut");
    return TFREC_OK;
}

int tfrec_bt_plan_parse(tfrec_bt_plan **out, const void *text, size_t len)
{
    if (!out)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_bt_plan_parse: NULL out");
    *out = NULL;
    if (!text && len)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_bt_plan_parse: NULL text");
    if (len > BT_PLAN_MAX_TEXT)
        return tfrec_fail(NULL, TFREC_E_PARSE, "split plan: %zu bytes, more than a plan can be",
                          len);
    parse ps = { 0 };
    unsigned version;
    int rc = tfrec_bt_lines_open(&ps.l, text, len, BT_PLAN_MAGIC, BT_PLAN_VERSION, &version, ps.why,
                                 sizeof ps.why);
    if (rc)
        return tfrec_fail(NULL, rc, "split plan: %s", ps.why);
    tfrec_bt_plan *p = calloc(1, sizeof *p);
    rc = p ? parse_body(&ps, p) : TFREC_E_NOMEM;
    tfrec_bt_lines_close(&ps.l);
    if (!rc && !(p->text = malloc(len)))
        rc = TFREC_E_NOMEM;
    if (rc) {
        tfrec_bt_plan_free(p);
        if (rc == TFREC_E_NOMEM)
            return tfrec_fail(NULL, rc, "out of memory reading a split plan");
        return tfrec_fail(NULL, rc, "split plan: %s", ps.why);
    }
    memcpy(p->text, text, len);
    p->text_len = len;
    p->id = tfrec_crc32c(text, len);
    *out = p;
    return TFREC_OK;
}

/* ---- accessors */

int tfrec_bt_plan_text(const tfrec_bt_plan *p, const char **text, size_t *len)
{
    if (!p || !text || !len)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_bt_plan_text: NULL argument");
    *text = p->text;
    *len = p->text_len;
    return TFREC_OK;
}

uint32_t tfrec_bt_plan_id(const tfrec_bt_plan *p)
{
    return p ? p->id : 0;
}

size_t tfrec_bt_plan_num_shards(const tfrec_bt_plan *p)
{
    return p ? p->shards : 0;
}

const char *tfrec_bt_plan_table(const tfrec_bt_plan *p)
{
    return p ? p->table : "";
}

int tfrec_bt_plan_shard(const tfrec_bt_plan *p, size_t i, tfrec_bt_range *out)
{
    if (!p || !out || i >= p->shards)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_bt_plan_shard: no shard %zu", i);
    memset(out, 0, sizeof *out);
    const bt_key *lo = i ? &p->cuts[i - 1] : p->set.n ? &p->set.ranges[0].start : NULL;
    const bt_key *hi = i + 1 < p->shards ? &p->cuts[i]
                       : p->set.n        ? &p->set.ranges[p->set.n - 1].end
                                         : NULL;
    if (lo) {
        out->start = lo->p;
        out->start_len = lo->n;
    }
    if (hi) {
        out->end = hi->p;
        out->end_len = hi->n;
    }
    return TFREC_OK;
}

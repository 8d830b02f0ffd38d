/* Row sets in normal form: half-open key ranges or a sorted key list. */
#include "bigtable/rowset.h"

#include <stdlib.h>
#include <string.h>

int tfrec_bt_key_cmp(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    size_t n = an < bn ? an : bn;
    int c = n ? memcmp(a, b, n) : 0;
    if (c)
        return c;
    return an < bn ? -1 : an > bn;
}

static int kcmp(const bt_key *a, const bt_key *b)
{
    return tfrec_bt_key_cmp(a->p, a->n, b->p, b->n);
}

int tfrec_bt_rowset_equal(const bt_rowset *a, const bt_rowset *b)
{
    if (a->is_keys != b->is_keys || a->n != b->n)
        return 0;
    for (size_t i = 0; i < a->n; i++)
        if (a->is_keys ? kcmp(&a->keys[i], &b->keys[i]) != 0
                       : kcmp(&a->ranges[i].start, &b->ranges[i].start) != 0 ||
                             kcmp(&a->ranges[i].end, &b->ranges[i].end) != 0)
            return 0;
    return 1;
}

/* Copy p[0..n) followed by `extra` zero bytes (1: the key's successor). */
static int key_set(bt_key *k, const void *p, size_t n, size_t extra)
{
    k->p = NULL;
    k->n = n + extra;
    if (!k->n)
        return TFREC_OK;
    k->p = calloc(1, k->n);
    if (!k->p)
        return TFREC_E_NOMEM;
    if (n)
        memcpy(k->p, p, n);
    return TFREC_OK;
}

static void key_free(bt_key *k)
{
    free(k->p);
    k->p = NULL;
    k->n = 0;
}

/* An end bound: empty is +infinity. */
static int end_cmp(const bt_key *a, const bt_key *b)
{
    if (!a->n || !b->n)
        return !a->n && !b->n ? 0 : !a->n ? 1 : -1;
    return kcmp(a, b);
}

static int range_empty(const bt_krange *r)
{
    return r->end.n && kcmp(&r->start, &r->end) >= 0;
}

/* r = r intersected with [lo, hi) (either bound may be NULL/empty). */
static int range_clip(bt_krange *r, const bt_key *lo, const bt_key *hi)
{
    if (lo && lo->n && kcmp(lo, &r->start) > 0) {
        key_free(&r->start);
        if (key_set(&r->start, lo->p, lo->n, 0))
            return TFREC_E_NOMEM;
    }
    if (hi && hi->n && end_cmp(hi, &r->end) < 0) {
        key_free(&r->end);
        if (key_set(&r->end, hi->p, hi->n, 0))
            return TFREC_E_NOMEM;
    }
    return TFREC_OK;
}

/* Smallest key after every key starting with p: p with its last byte below
 * 0xff incremented and the rest cut; none (empty) if p is all 0xff. */
static int prefix_end(bt_key *k, const uint8_t *p, size_t n)
{
    while (n && p[n - 1] == 0xff)
        n--;
    if (key_set(k, p, n, 0))
        return TFREC_E_NOMEM;
    if (n)
        k->p[n - 1]++;
    return TFREC_OK;
}

/* The single range prefix / start_key / end_key describe. */
static int bound_range(bt_krange *b, const tfrec_bt_read_options *o)
{
    memset(b, 0, sizeof *b);
    if (o->prefix) {
        size_t pl = o->prefix_len ? o->prefix_len : strlen(o->prefix);
        if (key_set(&b->start, o->prefix, pl, 0) || prefix_end(&b->end, o->prefix, pl))
            return TFREC_E_NOMEM;
        return TFREC_OK;
    }
    if (o->start_key && o->start_key_len && key_set(&b->start, o->start_key, o->start_key_len, 0))
        return TFREC_E_NOMEM;
    if (o->end_key && o->end_key_len && key_set(&b->end, o->end_key, o->end_key_len, 0))
        return TFREC_E_NOMEM;
    return TFREC_OK;
}

static int cmp_range_start(const void *a, const void *b)
{
    return kcmp(&((const bt_krange *)a)->start, &((const bt_krange *)b)->start);
}

static int cmp_key(const void *a, const void *b)
{
    return kcmp(a, b);
}

static int in_range(const bt_krange *r, const bt_key *k)
{
    return kcmp(k, &r->start) >= 0 && (!r->end.n || kcmp(k, &r->end) < 0);
}

static int keys_from_options(bt_rowset *out, const tfrec_bt_read_options *o, const bt_krange *b,
                             tfrec_err *err)
{
    out->is_keys = 1;
    if (!o->n_keys)
        return TFREC_OK;
    if (!o->key_lens)
        return tfrec_fail(err, TFREC_E_INVALID, "read options: keys without key_lens");
    out->keys = calloc(o->n_keys, sizeof *out->keys);
    if (!out->keys)
        return TFREC_E_NOMEM;
    for (size_t i = 0; i < o->n_keys; i++) {
        if (!o->keys[i] || !o->key_lens[i])
            return tfrec_fail(err, TFREC_E_INVALID, "read options: key %zu is empty", i);
        bt_key k = { (uint8_t *)o->keys[i], o->key_lens[i] };
        if (in_range(b, &k) && key_set(&out->keys[out->n++], k.p, k.n, 0))
            return TFREC_E_NOMEM;
    }
    qsort(out->keys, out->n, sizeof *out->keys, cmp_key);
    size_t w = 0;
    for (size_t i = 0; i < out->n; i++) {
        if (w && !kcmp(&out->keys[w - 1], &out->keys[i]))
            key_free(&out->keys[i]);
        else
            out->keys[w++] = out->keys[i];
    }
    out->n = w;
    return TFREC_OK;
}

/* Sort, merge overlapping or touching ranges, drop empty ones. */
static void ranges_normalize(bt_rowset *s)
{
    size_t w = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (range_empty(&s->ranges[i])) {
            key_free(&s->ranges[i].start);
            key_free(&s->ranges[i].end);
        } else {
            s->ranges[w++] = s->ranges[i];
        }
    }
    s->n = w;
    qsort(s->ranges, s->n, sizeof *s->ranges, cmp_range_start);
    w = 0;
    for (size_t i = 0; i < s->n; i++) {
        bt_krange *prev = w ? &s->ranges[w - 1] : NULL;
        bt_krange *r = &s->ranges[i];
        if (prev && (!prev->end.n || kcmp(&r->start, &prev->end) <= 0)) {
            if (end_cmp(&r->end, &prev->end) > 0) {
                key_free(&prev->end);
                prev->end = r->end;
            } else {
                key_free(&r->end);
            }
            key_free(&r->start);
        } else {
            s->ranges[w++] = *r;
        }
    }
    s->n = w;
}

static int ranges_from_options(bt_rowset *out, const tfrec_bt_read_options *o, const bt_krange *b,
                               tfrec_err *err)
{
    if (!o->n_ranges)
        return TFREC_OK;
    out->ranges = calloc(o->n_ranges, sizeof *out->ranges);
    if (!out->ranges)
        return TFREC_E_NOMEM;
    for (size_t i = 0; i < o->n_ranges; i++) {
        const tfrec_bt_range *in = &o->ranges[i];
        bt_krange *r = &out->ranges[out->n++];
        if ((in->start_len && !in->start) || (in->end_len && !in->end))
            return tfrec_fail(err, TFREC_E_INVALID, "read options: range %zu has a NULL key", i);
        /* open start k == closed start k+"\0"; closed end k == open end k+"\0" */
        if (key_set(&r->start, in->start, in->start_len, in->start_open && in->start_len) ||
            key_set(&r->end, in->end, in->end_len, in->end_closed && in->end_len) ||
            range_clip(r, &b->start, &b->end))
            return TFREC_E_NOMEM;
    }
    ranges_normalize(out);
    return TFREC_OK;
}

int tfrec_bt_rowset_from_options(bt_rowset *out, const tfrec_bt_read_options *o, tfrec_err *err)
{
    memset(out, 0, sizeof *out);
    bt_krange b;
    int rc = bound_range(&b, o);
    if (!rc && o->keys && o->ranges)
        rc = tfrec_fail(err, TFREC_E_INVALID, "read options: keys and ranges are exclusive");
    else if (!rc && o->keys)
        rc = keys_from_options(out, o, &b, err);
    else if (!rc && o->ranges)
        rc = ranges_from_options(out, o, &b, err);
    else if (!rc) {
        out->ranges = malloc(sizeof *out->ranges);
        if (!out->ranges)
            rc = TFREC_E_NOMEM;
        else {
            out->ranges[0] = b;
            out->n = 1;
            memset(&b, 0, sizeof b); /* moved */
            ranges_normalize(out);
        }
    }
    key_free(&b.start);
    key_free(&b.end);
    if (rc == TFREC_E_NOMEM)
        tfrec_fail(err, rc, "out of memory building a row set");
    if (rc)
        tfrec_bt_rowset_free(out);
    return rc;
}

int tfrec_bt_rowset_slice(bt_rowset *out, const bt_rowset *s, const bt_key *lo, const bt_key *hi)
{
    memset(out, 0, sizeof *out);
    out->is_keys = s->is_keys;
    if (!s->n)
        return TFREC_OK;
    if (s->is_keys) {
        out->keys = calloc(s->n, sizeof *out->keys);
        if (!out->keys)
            return TFREC_E_NOMEM;
        bt_krange win = { lo ? *lo : (bt_key){ 0 }, hi ? *hi : (bt_key){ 0 } };
        for (size_t i = 0; i < s->n; i++)
            if (in_range(&win, &s->keys[i]) &&
                key_set(&out->keys[out->n++], s->keys[i].p, s->keys[i].n, 0))
                goto nomem;
        return TFREC_OK;
    }
    out->ranges = calloc(s->n, sizeof *out->ranges);
    if (!out->ranges)
        return TFREC_E_NOMEM;
    for (size_t i = 0; i < s->n; i++) {
        bt_krange *r = &out->ranges[out->n++];
        if (key_set(&r->start, s->ranges[i].start.p, s->ranges[i].start.n, 0) ||
            key_set(&r->end, s->ranges[i].end.p, s->ranges[i].end.n, 0) || range_clip(r, lo, hi))
            goto nomem;
    }
    ranges_normalize(out);
    return TFREC_OK;
nomem:
    tfrec_bt_rowset_free(out);
    return TFREC_E_NOMEM;
}

int tfrec_bt_rowset_after(bt_rowset *s, const uint8_t *k, size_t kn)
{
    if (s->is_keys) {
        size_t skip = 0;
        while (skip < s->n && tfrec_bt_key_cmp(s->keys[skip].p, s->keys[skip].n, k, kn) <= 0)
            key_free(&s->keys[skip++]);
        if (skip && s->n > skip)
            memmove(s->keys, s->keys + skip, (s->n - skip) * sizeof *s->keys);
        s->n -= skip;
        return TFREC_OK;
    }
    bt_key succ;
    if (key_set(&succ, k, kn, 1))
        return TFREC_E_NOMEM;
    int rc = TFREC_OK;
    for (size_t i = 0; i < s->n && !rc; i++)
        rc = range_clip(&s->ranges[i], &succ, NULL);
    key_free(&succ);
    if (!rc)
        ranges_normalize(s);
    return rc;
}

const bt_key *tfrec_bt_rowset_lo(const bt_rowset *s)
{
    return &s->ranges[0].start;
}

const bt_key *tfrec_bt_rowset_hi(const bt_rowset *s)
{
    return &s->ranges[s->n - 1].end;
}

int tfrec_bt_rowset_to_proto(const bt_rowset *s, Google__Bigtable__V2__RowSet *set,
                             Google__Bigtable__V2__RowRange **rr,
                             Google__Bigtable__V2__RowRange ***rp, ProtobufCBinaryData **kp)
{
    *rr = NULL;
    *rp = NULL;
    *kp = NULL;
    if (s->is_keys) {
        *kp = calloc(s->n ? s->n : 1, sizeof **kp);
        if (!*kp)
            return TFREC_E_NOMEM;
        for (size_t i = 0; i < s->n; i++)
            (*kp)[i] = (ProtobufCBinaryData){ s->keys[i].n, s->keys[i].p };
        set->n_row_keys = s->n;
        set->row_keys = *kp;
        return TFREC_OK;
    }
    *rr = calloc(s->n ? s->n : 1, sizeof **rr);
    *rp = calloc(s->n ? s->n : 1, sizeof **rp);
    if (!*rr || !*rp)
        return TFREC_E_NOMEM;
    for (size_t i = 0; i < s->n; i++) {
        Google__Bigtable__V2__RowRange *r = &(*rr)[i];
        google__bigtable__v2__row_range__init(r);
        if (s->ranges[i].start.n) {
            r->start_key_case = GOOGLE__BIGTABLE__V2__ROW_RANGE__START_KEY_START_KEY_CLOSED;
            r->start_key_closed =
                (ProtobufCBinaryData){ s->ranges[i].start.n, s->ranges[i].start.p };
        }
        if (s->ranges[i].end.n) {
            r->end_key_case = GOOGLE__BIGTABLE__V2__ROW_RANGE__END_KEY_END_KEY_OPEN;
            r->end_key_open = (ProtobufCBinaryData){ s->ranges[i].end.n, s->ranges[i].end.p };
        }
        (*rp)[i] = r;
    }
    set->n_row_ranges = s->n;
    set->row_ranges = *rp;
    return TFREC_OK;
}

void tfrec_bt_rowset_free(bt_rowset *s)
{
    for (size_t i = 0; s->ranges && i < s->n; i++) {
        key_free(&s->ranges[i].start);
        key_free(&s->ranges[i].end);
    }
    for (size_t i = 0; s->keys && i < s->n; i++)
        key_free(&s->keys[i]);
    free(s->ranges);
    free(s->keys);
    memset(s, 0, sizeof *s);
}

/* Export part files: what one task covered and wrote. */
#include "bigtable/export_part.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bigtable/plan_internal.h"
#include "util/errors.h"

static void word_line(bt_text *t, const char *name, const bt_key *a, const bt_key *b)
{
    tfrec_bt_text_printf(t, "%s ", name);
    tfrec_bt_text_word(t, a->p, a->n);
    if (b) {
        tfrec_bt_text_printf(t, " ");
        tfrec_bt_text_word(t, b->p, b->n);
    }
    tfrec_bt_text_printf(t, "\n");
}

void tfrec_bt_part_print(const bt_part *p, bt_text *t)
{
    tfrec_bt_text_printf(t, "%s 1\n", BT_PART_MAGIC);
    bt_key table = { (uint8_t *)p->table, strlen(p->table) };
    word_line(t, "table", &table, NULL);
    tfrec_bt_text_printf(t, "plan %08x\nranges %zu\n", (unsigned)p->plan_id, p->set.n);
    for (size_t i = 0; i < p->set.n; i++)
        word_line(t, "range", &p->set.ranges[i].start, &p->set.ranges[i].end);
    tfrec_bt_text_printf(t, "shards %zu\ntask %zu\n", p->shards, p->task);
    word_line(t, "share", &p->lo, &p->hi);
    tfrec_bt_text_printf(t, "rows %llu\nbytes %llu\nskipped %llu\noutputs %zu\n",
                         (unsigned long long)p->rows, (unsigned long long)p->bytes,
                         (unsigned long long)p->skipped, p->nout);
    for (size_t i = 0; i < p->nout; i++) {
        tfrec_bt_text_printf(t, "output ");
        tfrec_bt_text_word(t, p->out[i].name, strlen(p->out[i].name));
        tfrec_bt_text_printf(t, " %llu %llu %08x\n", (unsigned long long)p->out[i].size,
                             (unsigned long long)p->out[i].records, (unsigned)p->out[i].crc);
    }
    tfrec_bt_text_seal(t);
}

void tfrec_bt_part_free(bt_part *p)
{
    free(p->table);
    tfrec_bt_rowset_free(&p->set);
    free(p->lo.p);
    free(p->hi.p);
    for (size_t i = 0; p->out && i < p->nout; i++)
        free(p->out[i].name);
    free(p->out);
    memset(p, 0, sizeof *p);
}

typedef struct pp {
    bt_lines l;
    char *why;
    size_t whycap;
} pp;

static int bad(pp *s, const char *what)
{
    snprintf(s->why, s->whycap, "line %zu: %s", s->l.lineno, what);
    return TFREC_E_PARSE;
}

static int expect(pp *s, const char *name, size_t nargs)
{
    int rc = tfrec_bt_lines_next(&s->l, s->why, s->whycap);
    if (rc < 0)
        return rc;
    if (rc == 0) {
        snprintf(s->why, s->whycap, "ends before its \"%s\" line", name);
        return TFREC_E_PARSE;
    }
    if (strcmp(s->l.words[0], name) != 0 || s->l.nwords != nargs + 1) {
        char w[80];
        snprintf(w, sizeof w, "expected \"%s\" and %zu word%s", name, nargs, nargs == 1 ? "" : "s");
        return bad(s, w);
    }
    return TFREC_OK;
}

static int key(pp *s, size_t word, size_t max, bt_key *k)
{
    int rc = tfrec_bt_word_key(s->l.words[word], max, k);
    return rc == TFREC_E_PARSE ? bad(s, "a bad escaped word") : rc;
}

static int text(pp *s, size_t word, size_t max, char **out)
{
    bt_key k;
    int rc = key(s, word, max, &k);
    if (rc)
        return rc;
    if (!k.n || memchr(k.p, 0, k.n)) {
        free(k.p);
        return bad(s, "an empty name or one with a NUL byte");
    }
    *out = malloc(k.n + 1);
    if (!*out) {
        free(k.p);
        return TFREC_E_NOMEM;
    }
    memcpy(*out, k.p, k.n);
    (*out)[k.n] = 0;
    free(k.p);
    return TFREC_OK;
}

static int num(pp *s, const char *name, uint64_t max, uint64_t *v)
{
    int rc = expect(s, name, 1);
    if (!rc && tfrec_bt_word_u64(s->l.words[1], max, v)) {
        char w[120];
        snprintf(w, sizeof w, "%s %.24s: not a count, or too large", name, s->l.words[1]);
        rc = bad(s, w);
    }
    return rc;
}

static int hex32(pp *s, const char *w, uint32_t *v)
{
    uint64_t x = 0;
    if (strlen(w) != 8)
        return bad(s, "not 8 hex digits");
    for (const char *c = w; *c; c++) {
        int d = *c >= '0' && *c <= '9' ? *c - '0' : *c >= 'a' && *c <= 'f' ? *c - 'a' + 10 : -1;
        if (d < 0)
            return bad(s, "not 8 lower-case hex digits");
        x = x << 4 | (unsigned)d;
    }
    *v = (uint32_t)x;
    return TFREC_OK;
}

static int body(pp *s, bt_part *p)
{
    uint64_t n;
    int rc;
    if ((rc = expect(s, "table", 1)) || (rc = text(s, 1, 1024, &p->table)))
        return rc;
    if ((rc = expect(s, "plan", 1)) || (rc = hex32(s, s->l.words[1], &p->plan_id)))
        return rc;
    if ((rc = num(s, "ranges", BT_PLAN_MAX_RANGES, &n)))
        return rc;
    size_t cap = 0;
    for (uint64_t i = 0; i < n; i++) {
        if ((rc = expect(s, "range", 2)))
            return rc;
        if (tfrec_vec_reserve(&p->set.ranges, &cap, p->set.n + 1, 16))
            return TFREC_E_NOMEM;
        bt_krange *r = &p->set.ranges[p->set.n++];
        memset(r, 0, sizeof *r);
        if ((rc = key(s, 1, BT_PLAN_MAX_KEY, &r->start)) ||
            (rc = key(s, 2, BT_PLAN_MAX_KEY, &r->end)))
            return rc;
    }
    if ((rc = num(s, "shards", BT_PLAN_MAX_SHARDS, &n)))
        return rc;
    if (!n)
        return bad(s, "shards 0");
    p->shards = (size_t)n;
    if ((rc = num(s, "task", p->shards - 1, &n)))
        return rc;
    p->task = (size_t)n;
    if ((rc = expect(s, "share", 2)) || (rc = key(s, 1, BT_PLAN_MAX_KEY, &p->lo)) ||
        (rc = key(s, 2, BT_PLAN_MAX_KEY, &p->hi)))
        return rc;
    if ((rc = num(s, "rows", UINT64_MAX, &p->rows)) ||
        (rc = num(s, "bytes", UINT64_MAX, &p->bytes)) ||
        (rc = num(s, "skipped", UINT64_MAX, &p->skipped)) ||
        (rc = num(s, "outputs", BT_PART_MAX_OUTPUTS, &n)))
        return rc;
    if (n && !(p->out = calloc((size_t)n, sizeof *p->out)))
        return TFREC_E_NOMEM;
    for (uint64_t i = 0; i < n; i++) {
        if ((rc = expect(s, "output", 4)))
            return rc;
        bt_part_output *o = &p->out[p->nout++];
        if ((rc = text(s, 1, 4096, &o->name)))
            return rc;
        if (strchr(o->name, '/') || !strcmp(o->name, ".") || !strcmp(o->name, ".."))
            return bad(s, "an output name must be a file name in the part's directory");
        if (tfrec_bt_word_u64(s->l.words[2], UINT64_MAX, &o->size) ||
            tfrec_bt_word_u64(s->l.words[3], UINT64_MAX, &o->records))
            return bad(s, "an output's size or records is not a count");
        if ((rc = hex32(s, s->l.words[4], &o->crc)))
            return rc;
    }
    rc = tfrec_bt_lines_next(&s->l, s->why, s->whycap);
    if (rc < 0)
        return rc;
    return rc ? bad(s, "unexpected line after the outputs") : TFREC_OK;
}

int tfrec_bt_part_parse(bt_part *p, const void *t, size_t len, char *why, size_t whycap)
{
    memset(p, 0, sizeof *p);
    if (len > BT_PART_MAX_TEXT) {
        snprintf(why, whycap, "%zu bytes, more than a part file can be", len);
        return TFREC_E_PARSE;
    }
    pp s = { .why = why, .whycap = whycap };
    unsigned version;
    int rc = tfrec_bt_lines_open(&s.l, t, len, BT_PART_MAGIC, 1, &version, why, whycap);
    if (rc)
        return rc;
    rc = body(&s, p);
    tfrec_bt_lines_close(&s.l);
    if (rc == TFREC_E_NOMEM)
        snprintf(why, whycap, "out of memory");
    if (rc)
        tfrec_bt_part_free(p);
    return rc;
}

/* Split plan files and export part files (lib/bigtable/plan.c,
 * export_part.c): untrusted text that workers and the merge step read.
 * Input: one control byte (even: a plan file, odd: a part file), then the
 * file. Whatever parses must print (canonical form) to text that parses
 * and prints to the same bytes, its shards must tile
 * (consecutive windows meet, none ends before it starts) and every piece
 * must be computable. The checksum is fixed up by the harness for inputs
 * whose control byte has bit 1 set, so that the fuzzer reaches the body
 * parser instead of stopping at the CRC. */
#include <stdlib.h>
#include <string.h>

#include "bigtable/export_part.h"
#include "bigtable/plan_internal.h"
#include "fuzz.h"
#include "tfrec/crc32c.h"

/* The input with its last line replaced by a correct crc32c line. */
static char *fix_crc(const uint8_t *p, size_t n, size_t *len)
{
    size_t body = n;
    while (body && p[body - 1] != '\n')
        body--;
    char *t = malloc(body + 17);
    FUZZ_ASSERT(t != NULL);
    memcpy(t, p, body);
    *len = body + (size_t)snprintf(t + body, 17, "crc32c %08x\n", (unsigned)tfrec_crc32c(p, body));
    return t;
}

static void plan_case(const char *text, size_t len)
{
    tfrec_bt_plan *p = NULL;
    if (tfrec_bt_plan_parse(&p, text, len) != TFREC_OK) {
        FUZZ_ASSERT(p == NULL);
        return;
    }
    FUZZ_ASSERT(p->shards >= 1 && p->shards <= BT_PLAN_MAX_SHARDS);
    for (size_t i = 0; i < p->shards; i++) {
        tfrec_bt_range a;
        FUZZ_ASSERT(tfrec_bt_plan_shard(p, i, &a) == TFREC_OK);
        fuzz_touch(a.start, a.start_len);
        fuzz_touch(a.end, a.end_len);
        if (i + 1 < p->shards) {
            tfrec_bt_range b;
            FUZZ_ASSERT(tfrec_bt_plan_shard(p, i + 1, &b) == TFREC_OK);
            FUZZ_ASSERT(a.end_len == b.start_len && !memcmp(a.end, b.start, a.end_len));
        }
        if (i < 64) { /* pieces cost a copy of the row set each */
            bt_rowset piece;
            FUZZ_ASSERT(tfrec_bt_plan_piece(p, i, &piece) == TFREC_OK);
            tfrec_bt_rowset_free(&piece);
        }
    }
    tfrec_err err = { 0 };
    FUZZ_ASSERT(tfrec_bt_plan_check(p, p->table, &p->set, p->shards, &err) == TFREC_OK);
    /* printed from its fields, parsed and printed again: the same text */
    FUZZ_ASSERT(tfrec_bt_plan_print(p) == TFREC_OK);
    tfrec_bt_plan *r = NULL;
    FUZZ_ASSERT(tfrec_bt_plan_parse(&r, p->text, p->text_len) == TFREC_OK);
    FUZZ_ASSERT(r->id == p->id && r->shards == p->shards && !strcmp(r->table, p->table));
    FUZZ_ASSERT(tfrec_bt_plan_print(r) == TFREC_OK && r->text_len == p->text_len &&
                !memcmp(r->text, p->text, p->text_len));
    tfrec_bt_plan_free(r);
    tfrec_bt_plan_free(p);
}

static void part_case(const char *text, size_t len)
{
    bt_part p;
    char why[300];
    if (tfrec_bt_part_parse(&p, text, len, why, sizeof why) != TFREC_OK)
        return;
    FUZZ_ASSERT(p.task < p.shards && p.nout <= BT_PART_MAX_OUTPUTS);
    bt_text t = { 0 };
    tfrec_bt_part_print(&p, &t);
    FUZZ_ASSERT(!t.failed);
    bt_part q;
    FUZZ_ASSERT(tfrec_bt_part_parse(&q, t.p, t.n, why, sizeof why) == TFREC_OK);
    bt_text u = { 0 };
    tfrec_bt_part_print(&q, &u);
    FUZZ_ASSERT(!u.failed && u.n == t.n && !memcmp(u.p, t.p, t.n));
    tfrec_bt_text_free(&t);
    tfrec_bt_text_free(&u);
    tfrec_bt_part_free(&q);
    tfrec_bt_part_free(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in in = { data, size };
    unsigned ctl = fuzz_byte(&in);
    char *text;
    size_t len;
    if (ctl & 2) {
        text = fix_crc(in.p, in.n, &len);
    } else {
        text = malloc(in.n ? in.n : 1);
        FUZZ_ASSERT(text != NULL);
        memcpy(text, in.p, in.n);
        len = in.n;
    }
    if (ctl & 1)
        part_case(text, len);
    else
        plan_case(text, len);
    free(text);
    return 0;
}

/* The JSON reader (util/json_read.h): any bytes give a tree or a message
 * naming a byte offset, within the bounds; a tree written back with
 * tfrec_json_emit reads again as the same tree. Input: one control byte
 * (bit 0: the writer's \udcXX bytes decode), then the JSON text. */
#include <string.h>

#include "fuzz.h"
#include "tfrec/error.h"
#include "util/json_read.h"

static int has_fraction(const tfrec_json_value *v)
{
    for (; v; v = v->next) {
        if (v->type == TFREC_JSON_NUM &&
            strspn(v->str + (v->str[0] == '-'), "0123456789") != v->slen - (v->str[0] == '-'))
            return 1;
        if (has_fraction(v->child))
            return 1;
    }
    return 0;
}

/* Same shape, keys and strings; numbers by type only (integers past 64
 * bits are written back clamped). */
static int same(const tfrec_json_value *a, const tfrec_json_value *b)
{
    for (; a && b; a = a->next, b = b->next) {
        if (a->type != b->type || !a->key != !b->key || (a->key && strcmp(a->key, b->key)))
            return 0;
        if (a->type == TFREC_JSON_STR &&
            (a->slen != b->slen || memcmp(a->str, b->str, a->slen) != 0))
            return 0;
        if (a->type == TFREC_JSON_BOOL && a->boolean != b->boolean)
            return 0;
        if (!same(a->child, b->child))
            return 0;
    }
    return !a && !b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in in = { data, size };
    unsigned ctl = fuzz_byte(&in);
    const tfrec_json_limits lim = { 1u << 20, 32, 100000, (int)(ctl & 1) };
    tfrec_json_value *v = (tfrec_json_value *)1;
    char why[128] = "";
    int rc = tfrec_json_parse((const char *)in.p, in.n, &lim, &v, why, sizeof why);
    if (rc != TFREC_OK) {
        FUZZ_ASSERT((rc == TFREC_E_PARSE || rc == TFREC_E_NOMEM) && v == NULL);
        FUZZ_ASSERT(memchr(why, 0, sizeof why) &&
                    (strstr(why, " at byte ") || in.n > lim.max_bytes));
        return 0;
    }
    if (v->type == TFREC_JSON_OBJ && v->child) {
        FUZZ_ASSERT(tfrec_json_member(v, v->child->key) == v->child);
        uint64_t u;
        int64_t i;
        if (tfrec_json_member_u64(v, v->child->key, &u) == 0)
            FUZZ_ASSERT(v->child->type == TFREC_JSON_NUM || v->child->type == TFREC_JSON_STR);
        if (tfrec_json_member_i64(v, v->child->key, &i) == 0)
            FUZZ_ASSERT(v->child->type == TFREC_JSON_NUM || v->child->type == TFREC_JSON_STR);
    }
    if (v->type == TFREC_JSON_STR) {
        FUZZ_ASSERT(v->slen <= in.n && strlen(v->str) == v->slen);
        fuzz_touch(v->str, v->slen + 1);
    }
    tfrec_json j;
    tfrec_json_init(&j, NULL);
    tfrec_json_emit(&j, v);
    char *text = tfrec_json_take(&j);
    FUZZ_ASSERT(text != NULL);
    if (!has_fraction(v)) {
        /* Bytes that are not UTF-8 come back as \udcXX, 6 bytes each. */
        const tfrec_json_limits back_lim = { 8u << 20, 32, 100000, 1 };
        tfrec_json_value *back = NULL;
        rc = tfrec_json_parse(text, strlen(text), &back_lim, &back, why, sizeof why);
        FUZZ_ASSERT(rc == TFREC_OK);
        FUZZ_ASSERT(same(v, back));
        tfrec_json_value_free(back);
    }
    free(text);
    tfrec_json_value_free(v);
    return 0;
}

/* The consumer's shuffle buffer (shuffle_buffer.h): the same draws as
 * plan.c's buffer_pass, over records instead of record numbers. */
#include <stdlib.h>
#include <string.h>

#include "dataset/shuffle_buffer.h"

int tfrec_ds_shuffle_reserve(ds_shuffle_buffer *s, const ds_buffer *b, uint64_t n)
{
    uint64_t fill = b->size < n ? b->size : n;
    if (fill <= s->nslots)
        return TFREC_OK;
    if (fill > SIZE_MAX / sizeof(ds_slot))
        return TFREC_E_NOMEM;
    ds_slot *x = realloc(s->slots, (size_t)fill * sizeof *x);
    if (x)
        s->slots = x;
    size_t *d = x ? realloc(s->drain, (size_t)fill * sizeof *d) : NULL;
    if (d)
        s->drain = d;
    if (!x || !d)
        return TFREC_E_NOMEM;
    memset(x + s->nslots, 0, (size_t)(fill - s->nslots) * sizeof *x);
    s->nslots = (size_t)fill;
    return TFREC_OK;
}

void tfrec_ds_shuffle_start(ds_shuffle_buffer *s, const ds_buffer *b, uint64_t n)
{
    s->b = *b;
    s->n = n;
    s->loaded = s->handed = 0;
}

static int slot_take(ds_slot *x, const uint8_t *data, size_t len, uint64_t g, tfrec_err *err)
{
    if (x->cap < len) {
        uint8_t *q = realloc(x->p, len ? len : 1);
        if (!q)
            return tfrec_fail(err, TFREC_E_NOMEM, "dataset: out of memory for the shuffle buffer");
        x->p = q;
        x->cap = len;
    }
    memcpy(x->p, data, len);
    x->len = len;
    x->g = g;
    return TFREC_OK;
}

static int input_into(ds_slot *x, ds_input_fn input, void *ctx, tfrec_err *err)
{
    const uint8_t *data;
    size_t len;
    uint64_t g;
    int rc = input(ctx, &data, &len, &g);
    if (rc == TFREC_END)
        return tfrec_fail(err, TFREC_E_STATE,
                          "dataset: the read order ended before the shuffle buffer was drained");
    return rc < 0 ? rc : slot_take(x, data, len, g, err);
}

int tfrec_ds_shuffle_next(ds_shuffle_buffer *s, ds_input_fn input, void *ctx, ds_slot **out,
                          tfrec_err *err)
{
    uint64_t n = s->n, fill = s->b.size < n ? s->b.size : n;
    if (s->handed >= n)
        return TFREC_END;
    int rc;
    for (; s->loaded < fill; s->loaded++)
        if ((rc = input_into(&s->slots[s->loaded], input, ctx, err)) < 0)
            return rc;
    size_t j;
    if (s->handed < n - fill) {
        j = (size_t)tfrec_ds_below(&s->b.state, fill);
    } else {
        if (s->handed == n - fill) { /* the drain order, drawn once */
            for (size_t i = 0; i < fill; i++)
                s->drain[i] = i;
            for (size_t m = (size_t)fill; m > 0; m--) {
                size_t r = (size_t)tfrec_ds_below(&s->b.state, m), t = s->drain[r];
                s->drain[r] = s->drain[m - 1];
                s->drain[m - 1] = t;
            }
        }
        j = s->drain[s->handed - (n - fill)];
    }
    /* The record handed out stays valid until the next call: it moves to
     * the out slot, whose old buffer takes the slot's place. */
    ds_slot t = s->slots[j];
    s->slots[j] = s->out;
    s->out = t;
    if (s->handed < n - fill && (rc = input_into(&s->slots[j], input, ctx, err)) < 0)
        return rc;
    s->handed++;
    *out = &s->out;
    return TFREC_OK;
}

void tfrec_ds_shuffle_free(ds_shuffle_buffer *s)
{
    for (size_t i = 0; i < s->nslots; i++)
        free(s->slots[i].p);
    free(s->slots);
    free(s->drain);
    free(s->out.p);
    memset(s, 0, sizeof *s);
}

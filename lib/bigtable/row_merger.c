/* ReadRows chunk merging (see row_merger.h for the rules). */
#include "bigtable/row_merger.h"

#include <stdlib.h>
#include <string.h>

#include "util/vec.h"

void tfrec_bt_merger_init(bt_merger *m)
{
    memset(m, 0, sizeof *m);
}

void tfrec_bt_merger_free(bt_merger *m)
{
    free(m->key);
    free(m->last_key);
    free(m->cells);
    free(m->arena);
    free(m->out_cells);
    free(m->out_ptrs);
    memset(m, 0, sizeof *m);
}

/* Append n bytes to the arena; offset in *off. */
static int arena_add(bt_merger *m, const void *data, size_t n, int nul, size_t *off)
{
    if (tfrec_vec_reserve(&m->arena, &m->arena_cap, m->arena_len + n + (size_t)nul, 64))
        return -1;
    if (off)
        *off = m->arena_len;
    if (n)
        memcpy(m->arena + m->arena_len, data, n);
    m->arena_len += n;
    if (nul)
        m->arena[m->arena_len++] = 0;
    return 0;
}

static int keycmp(const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
    int c = memcmp(a, b, al < bl ? al : bl);
    return c ? c : (al > bl) - (al < bl);
}

void tfrec_bt_merger_drop_partial(bt_merger *m)
{
    m->in_row = m->in_cell = 0;
    m->have_family = m->have_qualifier = 0;
    m->ncells = 0;
    m->arena_len = 0;
}

static int violation(tfrec_err *err, const char *what)
{
    return tfrec_fail(err, TFREC_E_PARSE, "malformed ReadRows stream: %s", what);
}

static int commit(bt_merger *m, tfrec_err *err)
{
    if (tfrec_vec_reserve(&m->out_cells, &m->out_cap, m->ncells ? m->ncells : 1, 64) ||
        tfrec_vec_reserve(&m->out_ptrs, &m->ptrs_cap, m->ncells ? m->ncells : 1, 64) ||
        tfrec_vec_reserve(&m->last_key, &m->last_cap, m->key_len ? m->key_len : 1, 64))
        return tfrec_fail(err, TFREC_E_NOMEM, "out of memory merging a row");
    for (size_t i = 0; i < m->ncells; i++) {
        const bt_cell_rec *r = &m->cells[i];
        tfrec_bt_cell *c = &m->out_cells[i];
        c->struct_size = sizeof *c;
        c->family = (const char *)m->arena + r->family_off;
        c->qualifier = m->arena + r->qualifier_off;
        c->qualifier_len = r->qualifier_len;
        c->timestamp_micros = r->timestamp;
        c->value = m->arena + r->value_off;
        c->value_len = r->value_len;
        m->out_ptrs[i] = c;
    }
    memcpy(m->last_key, m->key, m->key_len);
    m->last_len = m->key_len;
    m->have_last = 1;
    m->row.struct_size = sizeof m->row;
    m->row.key = m->last_key;
    m->row.key_len = m->last_len;
    m->row.cells = m->out_ptrs;
    m->row.ncells = m->ncells;
    m->in_row = m->in_cell = 0;
    return 1;
}

static int start_row(bt_merger *m, const Google__Bigtable__V2__ReadRowsResponse__CellChunk *ch,
                     tfrec_err *err)
{
    if (ch->row_status_case ==
        GOOGLE__BIGTABLE__V2__READ_ROWS_RESPONSE__CELL_CHUNK__ROW_STATUS_RESET_ROW)
        return violation(err, "reset_row with no row in progress");
    if (ch->row_key.len == 0)
        return violation(err, "a new row without a row key");
    if (!ch->family_name || !ch->qualifier)
        return violation(err, "a new row without family and qualifier");
    if (m->have_last && keycmp(ch->row_key.data, ch->row_key.len, m->last_key, m->last_len) <= 0)
        return violation(err, "row keys out of order");
    if (tfrec_vec_reserve(&m->key, &m->key_cap, ch->row_key.len, 64))
        return tfrec_fail(err, TFREC_E_NOMEM, "out of memory merging a row");
    memcpy(m->key, ch->row_key.data, ch->row_key.len);
    m->key_len = ch->row_key.len;
    tfrec_bt_merger_drop_partial(m);
    m->in_row = 1;
    return 0;
}

int tfrec_bt_merger_feed(bt_merger *m, const Google__Bigtable__V2__ReadRowsResponse__CellChunk *ch,
                         tfrec_err *err)
{
    int reset = ch->row_status_case ==
                GOOGLE__BIGTABLE__V2__READ_ROWS_RESPONSE__CELL_CHUNK__ROW_STATUS_RESET_ROW;
    int commit_row = ch->row_status_case ==
                     GOOGLE__BIGTABLE__V2__READ_ROWS_RESPONSE__CELL_CHUNK__ROW_STATUS_COMMIT_ROW;
    if (!m->in_row) {
        int rc = start_row(m, ch, err);
        if (rc)
            return rc;
    } else if (reset) {
        if (ch->row_key.len || ch->family_name || ch->qualifier || ch->value.len ||
            ch->timestamp_micros || ch->n_labels)
            return violation(err, "reset_row chunk carrying data");
        tfrec_bt_merger_drop_partial(m);
        return 0;
    } else if (ch->row_key.len && keycmp(ch->row_key.data, ch->row_key.len, m->key, m->key_len))
        return violation(err, "row key changed before commit_row");

    if (m->in_cell) { /* continuation of a split value */
        if (ch->family_name || ch->qualifier || ch->timestamp_micros || ch->n_labels)
            return violation(err, "value continuation chunk starts a new cell");
        bt_cell_rec *c = &m->cells[m->ncells - 1];
        if (arena_add(m, ch->value.data, ch->value.len, 0, NULL))
            return tfrec_fail(err, TFREC_E_NOMEM, "out of memory merging a row");
        c->value_len += ch->value.len;
    } else {
        if (ch->family_name) {
            if (!ch->qualifier)
                return violation(err, "family without qualifier");
            const char *f = ch->family_name->value ? ch->family_name->value : "";
            if (arena_add(m, f, strlen(f), 1, &m->family_off))
                goto nomem;
            m->have_family = 1;
        }
        if (ch->qualifier) {
            if (!m->have_family)
                return violation(err, "qualifier without family");
            if (arena_add(m, ch->qualifier->value.data, ch->qualifier->value.len, 0,
                          &m->qualifier_off))
                goto nomem;
            m->qualifier_len = ch->qualifier->value.len;
            m->have_qualifier = 1;
        }
        if (!m->have_family || !m->have_qualifier)
            return violation(err, "cell without column");
        if (tfrec_vec_reserve(&m->cells, &m->cells_cap, m->ncells + 1, 64))
            goto nomem;
        bt_cell_rec *c = &m->cells[m->ncells++];
        c->family_off = m->family_off;
        c->qualifier_off = m->qualifier_off;
        c->qualifier_len = m->qualifier_len;
        c->timestamp = ch->timestamp_micros;
        if (ch->value_size > 0 &&
            tfrec_vec_reserve(&m->arena, &m->arena_cap, m->arena_len + (size_t)ch->value_size, 64))
            goto nomem;
        if (arena_add(m, ch->value.data, ch->value.len, 0, &c->value_off))
            goto nomem;
        c->value_len = ch->value.len;
    }
    m->in_cell = ch->value_size > 0;
    if (commit_row) {
        if (m->in_cell)
            return violation(err, "commit_row in the middle of a split value");
        return commit(m, err);
    }
    return 0;
nomem:
    return tfrec_fail(err, TFREC_E_NOMEM, "out of memory merging a row");
}

int tfrec_bt_merger_finish(bt_merger *m, tfrec_err *err)
{
    if (m->in_row)
        return violation(err, "stream ended in the middle of a row");
    return TFREC_OK;
}

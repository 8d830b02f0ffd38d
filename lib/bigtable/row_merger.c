/* ReadRows chunk merging (see row_merger.h for the rules). */
#include "bigtable/row_merger.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/vec.h"

typedef bt_chunk chunk_t;

/* What a cell and a label cost besides their bytes, so that max_row_bytes
 * bounds memory even for rows of many empty cells. */
#define CELL_COST (sizeof(bt_cell_rec) + sizeof(tfrec_bt_cell) + sizeof(tfrec_bt_cell *))
#define LABEL_COST (sizeof(size_t) + sizeof(char *))
#define KEY_SHOWN 48 /* key bytes quoted in messages */

void tfrec_bt_merger_init(bt_merger *m, size_t max_row_bytes)
{
    memset(m, 0, sizeof *m);
    m->max_row_bytes = max_row_bytes ? max_row_bytes : TFREC_BT_DEFAULT_MAX_ROW_BYTES;
}

void tfrec_bt_merger_free(bt_merger *m)
{
    free(m->key);
    free(m->last_key);
    free(m->cells);
    free(m->label_offs);
    free(m->arena);
    free(m->out_cells);
    free(m->out_ptrs);
    free(m->out_labels);
    memset(m, 0, sizeof *m);
}

void tfrec_bt_merger_drop_partial(bt_merger *m)
{
    m->in_row = m->in_cell = 0;
    m->have_family = m->have_qualifier = 0;
    m->ncells = m->nlabels = 0;
    m->arena_len = m->row_bytes = 0;
}

/* A key as message text: printable ASCII as is, other bytes as \xHH,
 * cut after KEY_SHOWN bytes. */
static const char *show_key(char *buf, const uint8_t *k, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < n && i < KEY_SHOWN; i++) {
        if (k[i] >= 0x20 && k[i] < 0x7f && k[i] != '\\' && k[i] != '\'')
            buf[o++] = (char)k[i];
        else
            o += (size_t)sprintf(buf + o, "\\x%02x", k[i]);
    }
    strcpy(buf + o, n > KEY_SHOWN ? "..." : "");
    return buf;
}
#define KEYBUF (4 * KEY_SHOWN + 4)

static int violation(bt_merger *m, tfrec_err *err, const char *what)
{
    char k[KEYBUF];
    if (m->in_row)
        return tfrec_fail(err, TFREC_E_PARSE, "malformed ReadRows stream at row '%s': %s",
                          show_key(k, m->key, m->key_len), what);
    if (m->have_last)
        return tfrec_fail(err, TFREC_E_PARSE, "malformed ReadRows stream after row '%s': %s",
                          show_key(k, m->last_key, m->last_len), what);
    return tfrec_fail(err, TFREC_E_PARSE, "malformed ReadRows stream before the first row: %s",
                      what);
}

static int nomem(tfrec_err *err)
{
    return tfrec_fail(err, TFREC_E_NOMEM, "out of memory merging a ReadRows row");
}

/* Count n more bytes against max_row_bytes. */
static int charge(bt_merger *m, size_t n, tfrec_err *err)
{
    if (n > m->max_row_bytes - m->row_bytes) {
        char k[KEYBUF];
        return tfrec_fail(err, TFREC_E_RECORD_TOO_LARGE,
                          "row '%s': larger than max_row_bytes (%zu) of the reader",
                          show_key(k, m->key, m->key_len), m->max_row_bytes);
    }
    m->row_bytes += n;
    return 0;
}

/* Append n bytes (and a NUL) to the arena, offset in *off. The arena
 * doubles, but never past max_row_bytes: what was charged always fits. */
static int arena_add(bt_merger *m, const void *data, size_t n, int nul, size_t *off)
{
    size_t need = m->arena_len + n + (size_t)nul;
    if (need > m->arena_cap) {
        size_t cap = m->arena_cap ? m->arena_cap : 256;
        while (cap < need)
            cap = cap > SIZE_MAX / 2 ? need : 2 * cap;
        if (cap > m->max_row_bytes)
            cap = need > m->max_row_bytes ? need : m->max_row_bytes;
        if (tfrec_vec_resize(&m->arena, &m->arena_cap, cap))
            return -1;
    }
    if (off)
        *off = m->arena_len;
    if (n && data) /* NULL: room only */
        memcpy(m->arena + m->arena_len, data, n);
    m->arena_len += n;
    if (nul)
        m->arena[m->arena_len++] = 0;
    return 0;
}

/* Charge and append a string with its NUL; it ends at its first NUL, as
 * protobuf-c's copy of it would. */
static int add_string(bt_merger *m, const char *s, size_t len, size_t extra_cost, size_t *off,
                      tfrec_err *err)
{
    size_t n = len ? strnlen(s, len) : 0;
    if (charge(m, n + 1 + extra_cost, err))
        return err->code;
    return arena_add(m, s, n, 1, off) ? nomem(err) : 0;
}

static int keycmp(const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
    int c = al && bl ? memcmp(a, b, al < bl ? al : bl) : 0;
    return c ? c : (al > bl) - (al < bl);
}

static int commit(bt_merger *m, tfrec_err *err)
{
    if (tfrec_vec_reserve(&m->out_cells, &m->out_cap, m->ncells ? m->ncells : 1, 64) ||
        tfrec_vec_reserve(&m->out_ptrs, &m->ptrs_cap, m->ncells ? m->ncells : 1, 64) ||
        tfrec_vec_reserve(&m->out_labels, &m->out_labels_cap, m->nlabels ? m->nlabels : 1, 16) ||
        tfrec_vec_reserve(&m->last_key, &m->last_cap, m->key_len ? m->key_len : 1, 64))
        return nomem(err);
    for (size_t i = 0; i < m->nlabels; i++)
        m->out_labels[i] = (const char *)m->arena + m->label_offs[i];
    for (size_t i = 0; i < m->ncells; i++) {
        const bt_cell_rec *r = &m->cells[i];
        tfrec_bt_cell *c = &m->out_cells[i];
        c->struct_size = sizeof *c;
        c->family = (const char *)m->arena + r->family_off;
        c->qualifier = m->arena + r->qualifier_off;
        c->qualifier_len = r->qualifier_len;
        c->timestamp_micros = r->timestamp;
        c->value = r->value_ext ? r->value_ext : m->arena + r->value_off;
        c->value_len = r->value_len;
        c->labels = r->nlabels ? m->out_labels + r->label_first : NULL;
        c->n_labels = r->nlabels;
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

static int start_row(bt_merger *m, const chunk_t *ch, tfrec_err *err)
{
    if (ch->row_key_len == 0)
        return violation(m, err, "a new row without a row key");
    if (!ch->has_family || !ch->has_qualifier)
        return violation(m, err, "a new row without family and qualifier");
    if (m->have_last && keycmp(ch->row_key, ch->row_key_len, m->last_key, m->last_len) <= 0) {
        char k[KEYBUF], msg[KEYBUF + 64];
        snprintf(msg, sizeof msg, "row keys out of order: '%s' comes next",
                 show_key(k, ch->row_key, ch->row_key_len));
        return violation(m, err, msg);
    }
    if (tfrec_vec_reserve(&m->key, &m->key_cap, ch->row_key_len, 64))
        return nomem(err);
    memcpy(m->key, ch->row_key, ch->row_key_len);
    m->key_len = ch->row_key_len;
    tfrec_bt_merger_drop_partial(m);
    m->in_row = 1;
    return charge(m, m->key_len, err);
}

/* A chunk that is not a continuation: one new cell of the row. */
static int start_cell(bt_merger *m, const chunk_t *ch, tfrec_err *err)
{
    if (ch->row_key_len && keycmp(ch->row_key, ch->row_key_len, m->key, m->key_len))
        return violation(m, err, "row key changed before commit_row");
    if (ch->has_family && !ch->has_qualifier)
        return violation(m, err, "family without qualifier");
    if (ch->value_size > 0 && (size_t)ch->value_size > m->max_row_bytes - m->row_bytes) {
        char k[KEYBUF];
        return tfrec_fail(err, TFREC_E_RECORD_TOO_LARGE,
                          "row '%s': a cell value of %d bytes (value_size) takes the row past "
                          "max_row_bytes (%zu) of the reader",
                          show_key(k, m->key, m->key_len), (int)ch->value_size, m->max_row_bytes);
    }
    if (charge(m, CELL_COST, err))
        return err->code;
    if (ch->has_family) {
        if (add_string(m, ch->family, ch->family_len, 0, &m->family_off, err))
            return err->code;
        m->have_family = 1;
    }
    if (ch->has_qualifier) {
        size_t n = ch->qualifier_len;
        if (charge(m, n, err))
            return err->code;
        if (arena_add(m, ch->qualifier, n, 0, &m->qualifier_off))
            return nomem(err);
        m->qualifier_len = n;
        m->have_qualifier = 1;
    }
    /* a row's first chunk names both, and they stay until the row ends */
    if (!m->have_family || !m->have_qualifier)
        return violation(m, err, "cell without column");
    size_t label_first = m->nlabels;
    const char *label;
    size_t label_len, pos = 0;
    while (tfrec_bt_chunk_label(ch, &pos, &label, &label_len)) {
        if (tfrec_vec_reserve(&m->label_offs, &m->labels_cap, m->nlabels + 1, 8))
            return nomem(err);
        if (add_string(m, label, label_len, LABEL_COST, &m->label_offs[m->nlabels], err))
            return err->code;
        m->nlabels++;
    }
    if (tfrec_vec_reserve(&m->cells, &m->cells_cap, m->ncells + 1, 64))
        return nomem(err);
    bt_cell_rec *c = &m->cells[m->ncells];
    c->family_off = m->family_off;
    c->qualifier_off = m->qualifier_off;
    c->qualifier_len = m->qualifier_len;
    c->timestamp = ch->timestamp_micros;
    c->label_first = label_first;
    c->nlabels = ch->n_labels;
    if (charge(m, ch->value_len, err))
        return err->code;
    c->value_len = ch->value_len;
    c->value_ext = NULL;
    if (ch->value_size <= 0 && ch->value_len) {
        /* A whole value: left where it is (the caller keeps the chunk's
         * bytes until the row is handed out, row_merger.h). */
        c->value_ext = ch->value;
        c->value_off = 0;
    } else if (arena_add(m, ch->value, ch->value_len, 0, &c->value_off)) {
        /* The first piece of a split value is the last thing added, so
         * continuations extend it in place. */
        return nomem(err);
    }
    m->ncells++;
    return 0;
}

/* The next piece of a value announced by value_size: bytes only. */
static int continue_value(bt_merger *m, const chunk_t *ch, tfrec_err *err)
{
    if (ch->row_key_len || ch->has_family || ch->has_qualifier || ch->timestamp_micros ||
        ch->n_labels)
        return violation(
            m, err, "value continuation chunk carrying a row key, column, timestamp or labels");
    if (charge(m, ch->value_len, err))
        return err->code;
    if (arena_add(m, ch->value, ch->value_len, 0, NULL))
        return nomem(err);
    m->cells[m->ncells - 1].value_len += ch->value_len;
    return 0;
}

static int feed(bt_merger *m, const chunk_t *ch, tfrec_err *err)
{
    /* The oneof's value decides: proto3 keeps a member's presence, so a
     * server may send commit_row = false, which commits nothing. */
    int reset = ch->reset_row, commit_row = ch->commit_row;
    if (reset) {
        if (!m->in_row)
            return violation(m, err, "reset_row with no row in progress");
        if (ch->row_key_len || ch->has_family || ch->has_qualifier || ch->timestamp_micros ||
            ch->n_labels || ch->value_len)
            return violation(m, err, "reset_row chunk carrying data");
        tfrec_bt_merger_drop_partial(m);
        return 0;
    }
    int rc;
    if (m->in_cell)
        rc = continue_value(m, ch, err);
    else if (!m->in_row && (rc = start_row(m, ch, err)) != 0)
        return rc;
    else
        rc = start_cell(m, ch, err);
    if (rc)
        return rc;
    m->in_cell = ch->value_size > 0;
    if (commit_row) {
        if (m->in_cell)
            return violation(m, err, "commit_row in the middle of a split value");
        return commit(m, err);
    }
    return 0;
}

int tfrec_bt_merger_feed(bt_merger *m, const chunk_t *ch, tfrec_err *err)
{
    int rc = feed(m, ch, err);
    if (rc < 0) /* whatever comes next starts clean (the fuzz target keeps feeding) */
        tfrec_bt_merger_drop_partial(m);
    return rc;
}

int tfrec_bt_merger_keep(bt_merger *m, tfrec_err *err)
{
    if (!m->in_row)
        return 0;
    size_t moved = 0;
    for (size_t i = 0; i < m->ncells; i++) {
        bt_cell_rec *c = &m->cells[i];
        if (!c->value_ext)
            continue;
        if (arena_add(m, c->value_ext, c->value_len, 0, &c->value_off))
            return nomem(err);
        c->value_ext = NULL;
        moved++;
    }
    if (moved && m->in_cell) {
        /* A split value goes on at the arena's end: move it back there. */
        bt_cell_rec *c = &m->cells[m->ncells - 1];
        if (arena_add(m, NULL, c->value_len, 0, NULL))
            return nomem(err);
        size_t off = m->arena_len - c->value_len;
        memmove(m->arena + off, m->arena + c->value_off, c->value_len);
        c->value_off = off;
    }
    return 0;
}

int tfrec_bt_merger_finish(bt_merger *m, tfrec_err *err)
{
    if (m->in_row)
        return violation(m, err, "stream ended in the middle of a row");
    return TFREC_OK;
}

typedef struct feed_ctx {
    bt_merger *m;
    int (*on_row)(void *ctx, const tfrec_bt_row *row);
    void *ctx;
    tfrec_err *err;
    int rows;
} feed_ctx;

static int feed_one(void *ctx, const bt_chunk *ch)
{
    feed_ctx *f = ctx;
    int rc = tfrec_bt_merger_feed(f->m, ch, f->err);
    if (rc == 1) {
        f->rows++;
        int stop = f->on_row ? f->on_row(f->ctx, &f->m->row) : 0;
        rc = stop < 0 ? stop : -stop;
    }
    return rc;
}

int tfrec_bt_merger_feed_response(bt_merger *m, const uint8_t *bytes, size_t len,
                                  int (*on_row)(void *ctx, const tfrec_bt_row *row), void *ctx,
                                  tfrec_err *err)
{
    if (tfrec_bt_read_response_each(bytes, len, NULL, NULL))
        return tfrec_fail(err, TFREC_E_PARSE, "unparsable ReadRows response (%zu bytes)", len);
    feed_ctx f = { m, on_row, ctx, err, 0 };
    int rc = tfrec_bt_read_response_each(bytes, len, feed_one, &f);
    if (rc >= 0)
        rc = tfrec_bt_merger_keep(m, err); /* the bytes go with this call */
    return rc < 0 ? rc : f.rows;
}

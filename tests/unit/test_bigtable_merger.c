/* The ReadRows chunk merger, tested the way Bigtable client libraries test
 * theirs: a table of chunk streams, each with the cells of the rows it must
 * commit and the error it must end with (if any). Every stream is encoded on
 * the wire by hand (independently of the generated code) and fed through
 * tfrec_bt_merger_feed_response in six ways: chunks that carry no status
 * either omit the row_status oneof or send an explicit commit_row = false or
 * reset_row = false (proto3 keeps a oneof member's presence, and servers do
 * send false), and the chunks travel in one ReadRowsResponse or one per
 * message. The outcome must be the same every time. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bigtable/row_merger.h"
#include "harness.h"

enum { NONE, COMMIT, RESET };

/* One CellChunk. NULL = field absent; for family and qualifier "" is a
 * wrapper that is present but empty. labels: comma-separated. */
typedef struct ck {
    const char *k, *f, *q;
    int64_t ts;
    const char *labels, *v;
    int32_t vs; /* value_size */
    int st;     /* NONE, COMMIT (commit_row = true), RESET (reset_row = true) */
} ck;

/* One cell of a committed row, as the merger must hand it out. */
typedef struct xcell {
    const char *k, *f, *q;
    int64_t ts;
    const char *v, *labels;
} xcell;

typedef struct mcase {
    const char *name;
    const ck *chunks;
    size_t nchunks;
    const xcell *cells; /* of every row committed, in order, before any error */
    size_t ncells;
    const char *error; /* part of the expected message; NULL: the stream is valid */
} mcase;

#define CHUNKS(...)                        \
    .chunks = (const ck[]){ __VA_ARGS__ }, \
    .nchunks = sizeof((const ck[]){ __VA_ARGS__ }) / sizeof(ck)
#define CELLS(...)                           \
    .cells = (const xcell[]){ __VA_ARGS__ }, \
    .ncells = sizeof((const xcell[]){ __VA_ARGS__ }) / sizeof(xcell)

static const mcase cases[] = {
    /* ------------------------------------------------ valid streams */
    { "one cell", CHUNKS({ "RK", "A", "C", 100, NULL, "value-VAL", 0, COMMIT }),
      CELLS({ "RK", "A", "C", 100, "value-VAL", "" }) },
    { "no timestamp means 0", CHUNKS({ "RK", "A", "C", 0, NULL, "v", 0, COMMIT }),
      CELLS({ "RK", "A", "C", 0, "v", "" }) },
    { "empty value", CHUNKS({ "RK", "A", "C", 100, NULL, NULL, 0, COMMIT }),
      CELLS({ "RK", "A", "C", 100, "", "" }) },
    { "empty qualifier is a qualifier", CHUNKS({ "RK", "A", "", 100, NULL, "v", 0, COMMIT }),
      CELLS({ "RK", "A", "", 100, "v", "" }) },
    { "two qualifiers",
      CHUNKS({ "RK", "A", "C", 100, NULL, "v1", 0, NONE },
             { NULL, NULL, "D", 99, NULL, "v2", 0, COMMIT }),
      CELLS({ "RK", "A", "C", 100, "v1", "" }, { "RK", "A", "D", 99, "v2", "" }) },
    { "two families",
      CHUNKS({ "RK", "A", "C", 100, NULL, "v1", 0, NONE },
             { NULL, "B", "E", 99, NULL, "v2", 0, COMMIT }),
      CELLS({ "RK", "A", "C", 100, "v1", "" }, { "RK", "B", "E", 99, "v2", "" }) },
    { "versions of one column",
      CHUNKS({ "RK", "A", "C", 100, NULL, "new", 0, NONE },
             { NULL, NULL, NULL, 90, NULL, "old", 0, COMMIT }),
      CELLS({ "RK", "A", "C", 100, "new", "" }, { "RK", "A", "C", 90, "old", "" }) },
    { "qualifier alone keeps the family",
      CHUNKS({ "RK", "A", "C", 100, NULL, "v1", 0, NONE },
             { NULL, NULL, "D", 100, NULL, "v2", 0, NONE },
             { NULL, "B", "C", 100, NULL, "v3", 0, COMMIT }),
      CELLS({ "RK", "A", "C", 100, "v1", "" }, { "RK", "A", "D", 100, "v2", "" },
            { "RK", "B", "C", 100, "v3", "" }) },
    { "row key repeated on a new cell",
      CHUNKS({ "RK", "A", "C", 100, NULL, "v1", 0, NONE },
             { "RK", NULL, "D", 100, NULL, "v2", 0, COMMIT }),
      CELLS({ "RK", "A", "C", 100, "v1", "" }, { "RK", "A", "D", 100, "v2", "" }) },
    { "labels",
      CHUNKS({ "RK", "A", "C", 100, "L1,L2", "v1", 0, NONE },
             { NULL, NULL, "D", 100, NULL, "v2", 0, COMMIT }),
      CELLS({ "RK", "A", "C", 100, "v1", "L1,L2" }, { "RK", "A", "D", 100, "v2", "" }) },
    { "split value in two",
      CHUNKS({ "RK", "A", "C", 100, NULL, "val", 9, NONE },
             { NULL, NULL, NULL, 0, NULL, "ue-VAL", 0, COMMIT }),
      CELLS({ "RK", "A", "C", 100, "value-VAL", "" }) },
    { "split value in four",
      CHUNKS({ "RK", "A", "C", 100, NULL, "va", 9, NONE },
             { NULL, NULL, NULL, 0, NULL, "lu", 9, NONE },
             { NULL, NULL, NULL, 0, NULL, "e-", 9, NONE },
             { NULL, NULL, NULL, 0, NULL, "VAL", 0, COMMIT }),
      CELLS({ "RK", "A", "C", 100, "value-VAL", "" }) },
    /* A chunk that is not a continuation starts a cell, even a bare one. */
    { "split value then a bare commit",
      CHUNKS({ "RK", "A", "C", 100, NULL, "val", 9, NONE },
             { NULL, NULL, NULL, 0, NULL, "ue-VAL", 0, NONE },
             { NULL, NULL, NULL, 0, NULL, NULL, 0, COMMIT }),
      CELLS({ "RK", "A", "C", 100, "value-VAL", "" }, { "RK", "A", "C", 0, "", "" }) },
    { "empty cell chunk",
      CHUNKS({ "RK", "A", "C", 100, NULL, "value-VAL", 0, NONE },
             { NULL, NULL, NULL, 0, NULL, NULL, 0, NONE },
             { NULL, NULL, NULL, 0, NULL, NULL, 0, COMMIT }),
      CELLS({ "RK", "A", "C", 100, "value-VAL", "" }, { "RK", "A", "C", 0, "", "" },
            { "RK", "A", "C", 0, "", "" }) },
    { "two split cells",
      CHUNKS({ "RK", "A", "C", 100, NULL, "v1-", 5, NONE },
             { NULL, NULL, NULL, 0, NULL, "ab", 0, NONE },
             { NULL, NULL, "D", 99, NULL, "v2-", 5, NONE },
             { NULL, NULL, NULL, 0, NULL, "cd", 0, COMMIT }),
      CELLS({ "RK", "A", "C", 100, "v1-ab", "" }, { "RK", "A", "D", 99, "v2-cd", "" }) },
    { "splits over families and qualifiers",
      CHUNKS(
          { "RK", "A", "C", 100, NULL, "a", 2, NONE }, { NULL, NULL, NULL, 0, NULL, "b", 0, NONE },
          { NULL, "B", "D", 100, "L", "c", 3, NONE }, { NULL, NULL, NULL, 0, NULL, "d", 3, NONE },
          { NULL, NULL, NULL, 0, NULL, "e", 0, NONE },
          { NULL, NULL, "E", 5, NULL, "f", 0, COMMIT }),
      CELLS({ "RK", "A", "C", 100, "ab", "" }, { "RK", "B", "D", 100, "cde", "L" },
            { "RK", "B", "E", 5, "f", "" }) },
    { "two rows",
      CHUNKS({ "RK", "A", "C", 100, NULL, "v1", 0, COMMIT },
             { "RK2", "A", "C", 100, NULL, "v2", 0, COMMIT }),
      CELLS({ "RK", "A", "C", 100, "v1", "" }, { "RK2", "A", "C", 100, "v2", "" }) },
    { "rows with several families and qualifiers",
      CHUNKS({ "RK", "A", "C", 100, NULL, "v1", 0, NONE },
             { NULL, "B", "C", 100, NULL, "v2", 0, COMMIT },
             { "RK2", "A", "C", 100, NULL, "v3", 0, NONE },
             { NULL, "B", "D", 100, NULL, "v4", 0, NONE },
             { NULL, NULL, "E", 50, NULL, "v5", 0, COMMIT },
             { "RK3", "B", "E", 7, NULL, "v6", 0, COMMIT }),
      CELLS({ "RK", "A", "C", 100, "v1", "" }, { "RK", "B", "C", 100, "v2", "" },
            { "RK2", "A", "C", 100, "v3", "" }, { "RK2", "B", "D", 100, "v4", "" },
            { "RK2", "B", "E", 50, "v5", "" }, { "RK3", "B", "E", 7, "v6", "" }) },
    { "rows with labels and split values",
      CHUNKS({ "RK", "A", "C", 100, "L1", "ab", 4, NONE },
             { NULL, NULL, NULL, 0, NULL, "cd", 0, COMMIT },
             { "RK2", "A", "C", 100, "L2,L3", "ef", 0, NONE },
             { NULL, NULL, "D", 100, "L4", "gh", 0, COMMIT }),
      CELLS({ "RK", "A", "C", 100, "abcd", "L1" }, { "RK2", "A", "C", 100, "ef", "L2,L3" },
            { "RK2", "A", "D", 100, "gh", "L4" }) },

    /* ------------------------------------------------ reset_row */
    { "reset discards the row",
      CHUNKS({ "RK", "A", "C", 100, NULL, "v1", 0, NONE },
             { NULL, "B", "D", 100, "L", "v2", 0, NONE }, { .st = RESET },
             { "RK", "A", "C", 100, NULL, "v3", 0, COMMIT }),
      CELLS({ "RK", "A", "C", 100, "v3", "" }) },
    { "reset to a new value",
      CHUNKS({ "RK", "A", "C", 100, NULL, "v1", 0, NONE }, { .st = RESET },
             { "RK", "A", "C", 100, NULL, "v2", 0, COMMIT }),
      CELLS({ "RK", "A", "C", 100, "v2", "" }) },
    { "reset to a new qualifier",
      CHUNKS({ "RK", "A", "C", 100, NULL, "v1", 0, NONE }, { .st = RESET },
             { "RK", "A", "D", 100, NULL, "v1", 0, COMMIT }),
      CELLS({ "RK", "A", "D", 100, "v1", "" }) },
    { "reset to a new row",
      CHUNKS({ "RK", "A", "C", 100, NULL, "v1", 0, NONE }, { .st = RESET },
             { "RK2", "A", "C", 100, NULL, "v2", 0, COMMIT }),
      CELLS({ "RK2", "A", "C", 100, "v2", "" }) },
    { "reset to a lower key than the discarded row",
      CHUNKS({ "RK2", "A", "C", 100, NULL, "v1", 0, NONE }, { .st = RESET },
             { "RK", "A", "C", 100, NULL, "v2", 0, COMMIT }),
      CELLS({ "RK", "A", "C", 100, "v2", "" }) },
    { "nothing after a reset",
      CHUNKS({ "RK", "A", "C", 100, NULL, "v1", 0, NONE }, { .st = RESET }) },
    { "reset before a split value",
      CHUNKS({ "RK", "A", "C", 100, NULL, "x", 0, NONE }, { .st = RESET },
             { "RK", "A", "C", 100, NULL, "ab", 4, NONE },
             { NULL, NULL, NULL, 0, NULL, "cd", 0, COMMIT }),
      CELLS({ "RK", "A", "C", 100, "abcd", "" }) },
    { "reset in the middle of a split value",
      CHUNKS({ "RK", "A", "C", 100, NULL, "ab", 4, NONE }, { .st = RESET },
             { "RK", "A", "C", 100, NULL, "xy", 0, COMMIT }),
      CELLS({ "RK", "A", "C", 100, "xy", "" }) },
    { "reset after a split value",
      CHUNKS({ "RK", "A", "C", 100, NULL, "ab", 4, NONE },
             { NULL, NULL, NULL, 0, NULL, "cd", 0, NONE }, { .st = RESET },
             { "RK", "A", "C", 100, NULL, "z", 0, COMMIT }),
      CELLS({ "RK", "A", "C", 100, "z", "" }) },
    { "reset between split values",
      CHUNKS({ "RK", "A", "C", 100, NULL, "ab", 4, NONE },
             { NULL, NULL, NULL, 0, NULL, "cd", 0, NONE }, { .st = RESET },
             { "RK", "A", "C", 100, NULL, "ef", 4, NONE },
             { NULL, NULL, NULL, 0, NULL, "gh", 0, COMMIT }),
      CELLS({ "RK", "A", "C", 100, "efgh", "" }) },
    { "two resets",
      CHUNKS({ "RK", "A", "C", 100, NULL, "v1", 0, NONE }, { .st = RESET },
             { "RK", "A", "C", 100, NULL, "v2", 0, NONE }, { .st = RESET },
             { "RK", "A", "C", 100, NULL, "v3", 0, COMMIT }),
      CELLS({ "RK", "A", "C", 100, "v3", "" }) },
    { "reset then two cells",
      CHUNKS({ "RK", "A", "C", 100, NULL, "v1", 0, NONE }, { .st = RESET },
             { "RK", "A", "C", 100, NULL, "v2", 0, NONE },
             { NULL, NULL, "D", 99, NULL, "v3", 0, COMMIT }),
      CELLS({ "RK", "A", "C", 100, "v2", "" }, { "RK", "A", "D", 99, "v3", "" }) },
    { "reset of the second row keeps the first",
      CHUNKS({ "RK", "A", "C", 100, NULL, "v1", 0, COMMIT },
             { "RK2", "A", "C", 100, "L", "x", 0, NONE }, { .st = RESET },
             { "RK2", "A", "C", 100, NULL, "y", 0, COMMIT }),
      CELLS({ "RK", "A", "C", 100, "v1", "" }, { "RK2", "A", "C", 100, "y", "" }) },

    /* ------------------------------------------------ protocol errors */
    { "no commit", CHUNKS({ "RK", "A", "C", 100, NULL, "v1", 0, NONE }),
      .error = "stream ended in the middle of a row" },
    { "no commit after a split value",
      CHUNKS({ "RK", "A", "C", 100, NULL, "ab", 4, NONE },
             { NULL, NULL, NULL, 0, NULL, "cd", 0, NONE }),
      .error = "stream ended in the middle of a row" },
    { "no commit between rows",
      CHUNKS({ "RK", "A", "C", 100, NULL, "v1", 0, NONE },
             { "RK2", "A", "C", 100, NULL, "v2", 0, COMMIT }),
      .error = "row key changed before commit_row" },
    { "missing commit after the first row",
      CHUNKS({ "RK", "A", "C", 100, NULL, "v1", 0, NONE },
             { "RK2", "A", "C", 100, NULL, "v2", 0, NONE }),
      .error = "row key changed before commit_row" },
    { "last row not committed",
      CHUNKS({ "RK", "A", "C", 100, NULL, "v1", 0, COMMIT },
             { "RK2", "A", "C", 100, NULL, "v2", 0, NONE }),
      CELLS({ "RK", "A", "C", 100, "v1", "" }), .error = "stream ended in the middle of a row" },
    { "commit in the middle of a split value",
      CHUNKS({ "RK", "A", "C", 100, NULL, "ab", 4, COMMIT }),
      .error = "commit_row in the middle of a split value" },
    { "commit on a continuation that announces more",
      CHUNKS({ "RK", "A", "C", 100, NULL, "ab", 6, NONE },
             { NULL, NULL, NULL, 0, NULL, "cd", 6, COMMIT }),
      .error = "commit_row in the middle of a split value" },
    { "reset before any row", CHUNKS({ .st = RESET }),
      .error = "reset_row with no row in progress" },
    { "reset between rows", CHUNKS({ "RK", "A", "C", 100, NULL, "v1", 0, COMMIT }, { .st = RESET }),
      CELLS({ "RK", "A", "C", 100, "v1", "" }), .error = "reset_row with no row in progress" },
    { "reset carrying a value",
      CHUNKS({ "RK", "A", "C", 100, NULL, "v1", 0, NONE }, { .v = "x", .st = RESET }),
      .error = "reset_row chunk carrying data" },
    { "reset carrying the row key",
      CHUNKS({ "RK", "A", "C", 100, NULL, "v1", 0, NONE }, { .k = "RK", .st = RESET }),
      .error = "reset_row chunk carrying data" },
    { "reset carrying a column",
      CHUNKS({ "RK", "A", "C", 100, NULL, "v1", 0, NONE }, { .f = "A", .q = "C", .st = RESET }),
      .error = "reset_row chunk carrying data" },
    { "reset carrying a timestamp",
      CHUNKS({ "RK", "A", "C", 100, NULL, "v1", 0, NONE }, { .ts = 5, .st = RESET }),
      .error = "reset_row chunk carrying data" },
    { "reset carrying labels",
      CHUNKS({ "RK", "A", "C", 100, NULL, "v1", 0, NONE }, { .labels = "L", .st = RESET }),
      .error = "reset_row chunk carrying data" },
    { "missing key after a reset",
      CHUNKS({ "RK", "A", "C", 100, NULL, "v1", 0, NONE }, { .st = RESET },
             { NULL, "A", "C", 100, NULL, "v2", 0, COMMIT }),
      .error = "a new row without a row key" },
    { "no column to carry after a reset",
      CHUNKS({ "RK", "A", "C", 100, NULL, "v1", 0, NONE }, { .st = RESET },
             { "RK", NULL, "D", 100, NULL, "v2", 0, COMMIT }),
      .error = "a new row without family and qualifier" },
    { "new row without key", CHUNKS({ NULL, "A", "C", 100, NULL, "v", 0, COMMIT }),
      .error = "a new row without a row key" },
    { "new row without family", CHUNKS({ "RK", NULL, "C", 100, NULL, "v", 0, COMMIT }),
      .error = "a new row without family and qualifier" },
    { "new row without qualifier", CHUNKS({ "RK", "A", NULL, 100, NULL, "v", 0, COMMIT }),
      .error = "a new row without family and qualifier" },
    { "second row without family",
      CHUNKS({ "RK", "A", "C", 100, NULL, "v1", 0, COMMIT },
             { "RK2", NULL, "C", 100, NULL, "v2", 0, COMMIT }),
      CELLS({ "RK", "A", "C", 100, "v1", "" }), .error = "a new row without family and qualifier" },
    { "family without qualifier",
      CHUNKS({ "RK", "A", "C", 100, NULL, "v1", 0, NONE },
             { NULL, "B", NULL, 100, NULL, "v2", 0, COMMIT }),
      .error = "family without qualifier" },
    { "key going backwards",
      CHUNKS({ "RK2", "A", "C", 100, NULL, "v1", 0, COMMIT },
             { "RK", "A", "C", 100, NULL, "v2", 0, COMMIT }),
      CELLS({ "RK2", "A", "C", 100, "v1", "" }), .error = "row keys out of order" },
    { "same key twice",
      CHUNKS({ "RK", "A", "C", 100, NULL, "v1", 0, COMMIT },
             { "RK", "A", "C", 100, NULL, "v2", 0, COMMIT }),
      CELLS({ "RK", "A", "C", 100, "v1", "" }), .error = "row keys out of order" },
    { "continuation repeating the row key",
      CHUNKS({ "RK", "A", "C", 100, NULL, "ab", 4, NONE },
             { "RK", NULL, NULL, 0, NULL, "cd", 0, COMMIT }),
      .error = "value continuation chunk carrying" },
    { "continuation with another row key",
      CHUNKS({ "RK", "A", "C", 100, NULL, "ab", 4, NONE },
             { "RK2", NULL, NULL, 0, NULL, "cd", 0, COMMIT }),
      .error = "value continuation chunk carrying" },
    { "continuation naming a column",
      CHUNKS({ "RK", "A", "C", 100, NULL, "ab", 4, NONE },
             { NULL, "A", "C", 0, NULL, "cd", 0, COMMIT }),
      .error = "value continuation chunk carrying" },
    { "continuation naming a qualifier",
      CHUNKS({ "RK", "A", "C", 100, NULL, "ab", 4, NONE },
             { NULL, NULL, "C", 0, NULL, "cd", 0, COMMIT }),
      .error = "value continuation chunk carrying" },
    { "continuation with a timestamp",
      CHUNKS({ "RK", "A", "C", 100, NULL, "ab", 4, NONE },
             { NULL, NULL, NULL, 100, NULL, "cd", 0, COMMIT }),
      .error = "value continuation chunk carrying" },
    { "continuation with labels",
      CHUNKS({ "RK", "A", "C", 100, NULL, "ab", 4, NONE },
             { NULL, NULL, NULL, 0, "L", "cd", 0, COMMIT }),
      .error = "value continuation chunk carrying" },
    /* The declared size is past the default row limit: refused before any
     * memory is set aside for it, naming the row. */
    { "huge value_size",
      CHUNKS({ "RK", "A", "C", 100, NULL, "abc", INT32_MAX, NONE },
             { NULL, NULL, NULL, 0, NULL, "de", 0, COMMIT }),
      .error = "row 'RK': a cell value of 2147483647 bytes" },
};

/* ---------------------------------------------------------------- wire */

typedef struct wbuf {
    uint8_t *p;
    size_t n, cap;
} wbuf;

static void put_raw(wbuf *w, const void *p, size_t n)
{
    if (w->n + n > w->cap) {
        w->cap = 2 * (w->n + n) + 64;
        w->p = realloc(w->p, w->cap);
        if (!w->p)
            abort();
    }
    if (n) /* p may be NULL then (an empty wrapper's body) */
        memcpy(w->p + w->n, p, n);
    w->n += n;
}

static void put_varint(wbuf *w, uint64_t v)
{
    uint8_t b[10];
    size_t n = 0;
    do {
        b[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    put_raw(w, b, n);
}

static void put_len(wbuf *w, int field, const void *p, size_t n)
{
    put_varint(w, (uint64_t)field << 3 | 2);
    put_varint(w, n);
    put_raw(w, p, n);
}

static void put_int(wbuf *w, int field, int64_t v)
{
    put_varint(w, (uint64_t)field << 3);
    put_varint(w, (uint64_t)v); /* negatives take ten bytes, as protobuf sends them */
}

/* A wrapper message (StringValue / BytesValue): its value is field 1,
 * left out when empty, so a present empty wrapper has length 0. */
static void put_wrapper(wbuf *w, int field, const char *s)
{
    wbuf in = { 0 };
    if (*s)
        put_len(&in, 1, s, strlen(s));
    put_len(w, field, in.p, in.n);
    free(in.p);
}

enum { FALSE_NONE, FALSE_COMMIT, FALSE_RESET };

/* One CellChunk, fields in number order; `falses` says which oneof member
 * a chunk without a status sends as false. */
static void put_chunk(wbuf *w, const ck *c, int falses)
{
    wbuf in = { 0 };
    if (c->k && *c->k)
        put_len(&in, 1, c->k, strlen(c->k));
    if (c->f)
        put_wrapper(&in, 2, c->f);
    if (c->q)
        put_wrapper(&in, 3, c->q);
    if (c->ts)
        put_int(&in, 4, c->ts);
    for (const char *l = c->labels; l && *l;) {
        size_t n = strcspn(l, ",");
        put_len(&in, 5, l, n);
        l += n + (l[n] == ',');
    }
    if (c->v && *c->v)
        put_len(&in, 6, c->v, strlen(c->v));
    if (c->vs)
        put_int(&in, 7, c->vs);
    if (c->st == RESET || (c->st == NONE && falses == FALSE_RESET))
        put_int(&in, 8, c->st == RESET);
    if (c->st == COMMIT || (c->st == NONE && falses == FALSE_COMMIT))
        put_int(&in, 9, c->st == COMMIT);
    put_len(w, 1, in.p, in.n); /* ReadRowsResponse.chunks */
    free(in.p);
}

/* ---------------------------------------------------------------- running */

typedef struct seen {
    char text[4096];
    size_t n;
} seen;

static void seen_add(seen *s, const char *k, size_t kl, const char *f, const char *q, size_t ql,
                     int64_t ts, const char *v, size_t vl, const char *labels)
{
    s->n += (size_t)snprintf(s->text + s->n, sizeof s->text - s->n, "%.*s|%s|%.*s|%lld|%.*s|%s\n",
                             (int)kl, k, f, (int)ql, q, (long long)ts, (int)vl, v, labels);
    if (s->n >= sizeof s->text)
        s->n = sizeof s->text - 1;
}

static int on_row(void *ctx, const tfrec_bt_row *row)
{
    seen *s = ctx;
    if (row->struct_size != sizeof *row || row->ncells == 0) {
        harness_fail(__FILE__, __LINE__, "row of %zu cells, struct_size %zu", row->ncells,
                     row->struct_size);
        return -1;
    }
    for (size_t i = 0; i < row->ncells; i++) {
        const tfrec_bt_cell *c = row->cells[i];
        char labels[256] = "";
        for (size_t j = 0; j < c->n_labels; j++)
            snprintf(labels + strlen(labels), sizeof labels - strlen(labels), "%s%s", j ? "," : "",
                     c->labels[j]);
        if (c->struct_size != sizeof *c || (c->n_labels == 0) != (c->labels == NULL)) {
            harness_fail(__FILE__, __LINE__, "cell struct_size %zu, %zu labels at %p",
                         c->struct_size, c->n_labels, (const void *)c->labels);
            return -1;
        }
        seen_add(s, (const char *)row->key, row->key_len, c->family, (const char *)c->qualifier,
                 c->qualifier_len, c->timestamp_micros, (const char *)c->value, c->value_len,
                 labels);
    }
    return 0;
}

/* Feed the case; the merger's last code (negative: the stream's error). */
static int run(const mcase *mc, int falses, int per_message, seen *got, tfrec_err *err)
{
    bt_merger m;
    tfrec_bt_merger_init(&m, 0);
    int rc = 0;
    for (size_t i = 0; i < mc->nchunks && rc >= 0;) {
        wbuf w = { 0 };
        size_t end = per_message ? i + 1 : mc->nchunks;
        for (; i < end; i++)
            put_chunk(&w, &mc->chunks[i], falses);
        rc = tfrec_bt_merger_feed_response(&m, w.p, w.n, on_row, got, err);
        free(w.p);
    }
    if (rc >= 0)
        rc = tfrec_bt_merger_finish(&m, err);
    tfrec_bt_merger_free(&m);
    return rc;
}

/* One case in one encoding; a failure is reported and the next goes on. */
static void check_case(const mcase *mc, const seen *want, int falses, int per_message)
{
    static const char *const false_names[] = { "no status", "commit_row=false", "reset_row=false" };
    seen got = { .n = 0 };
    tfrec_err err = { 0 };
    int rc = run(mc, falses, per_message, &got, &err);
    const char *how = false_names[falses];
    const char *pack = per_message ? "one chunk per message" : "one message";
    CHECKF(!strcmp(got.text, want->text), "%s (%s, %s): rows\n%s  want\n%s  (rc %d '%s')", mc->name,
           how, pack, got.text, want->text, rc, err.msg);
    if (mc->error)
        CHECKF(rc < 0 && strstr(err.msg, mc->error), "%s (%s, %s): rc %d '%s'", mc->name, how, pack,
               rc, err.msg);
    else
        CHECKF(rc == TFREC_OK, "%s (%s, %s): rc %d '%s'", mc->name, how, pack, rc, err.msg);
}

static void test_chunk_streams(void)
{
    for (size_t ci = 0; ci < sizeof cases / sizeof *cases; ci++) {
        const mcase *mc = &cases[ci];
        seen want = { .n = 0 };
        for (size_t i = 0; i < mc->ncells; i++) {
            const xcell *x = &mc->cells[i];
            seen_add(&want, x->k, strlen(x->k), x->f, x->q, strlen(x->q), x->ts, x->v, strlen(x->v),
                     x->labels);
        }
        for (int falses = FALSE_NONE; falses <= FALSE_RESET; falses++)
            for (int per_message = 0; per_message <= 1; per_message++)
                check_case(mc, &want, falses, per_message);
    }
}

/* ---------------------------------------------------------------- limits */

static int feed_one(bt_merger *m, const ck *c, tfrec_err *err)
{
    wbuf w = { 0 };
    put_chunk(&w, c, FALSE_NONE);
    int rc = tfrec_bt_merger_feed_response(m, w.p, w.n, NULL, NULL, err);
    free(w.p);
    return rc;
}

/* value_size is only an announcement: memory follows the bytes that came. */
static void test_value_size_does_not_reserve(void)
{
    bt_merger m;
    tfrec_bt_merger_init(&m, SIZE_MAX); /* no limit: only the data may cost memory */
    tfrec_err err = { 0 };
    ck first = { "RK", "A", "C", 100, NULL, "abc", INT32_MAX, NONE };
    ck last = { NULL, NULL, NULL, 0, NULL, "de", 0, COMMIT };
    CHECK_EQ(feed_one(&m, &first, &err), 0);
    CHECKF(m.arena_cap < (1u << 20), "arena of %zu bytes for 3 bytes of value", m.arena_cap);
    CHECK_EQ(feed_one(&m, &last, &err), 1);
    CHECK(m.row.ncells == 1 && m.row.cells[0]->value_len == 5 &&
          !memcmp(m.row.cells[0]->value, "abcde", 5));
    CHECK(m.arena_cap < (1u << 20));
    tfrec_bt_merger_free(&m);
}

/* A row growing past the limit through its data (no value_size) fails
 * with a message naming the row and the limit; memory stays near it. */
static void test_row_limit(void)
{
    static char big[3000];
    memset(big, 'x', sizeof big - 1);
    bt_merger m;
    tfrec_bt_merger_init(&m, 10000);
    tfrec_err err = { 0 };
    ck c1 = { "RK\x01", "A", "C", 100, NULL, big, 0, NONE };
    ck cn = { NULL, NULL, "D", 100, NULL, big, 0, NONE };
    CHECK_EQ(feed_one(&m, &c1, &err), 0);
    CHECK_EQ(feed_one(&m, &cn, &err), 0);
    CHECK_EQ(feed_one(&m, &cn, &err), 0);
    int rc = feed_one(&m, &cn, &err);
    CHECK_EQ(rc, TFREC_E_RECORD_TOO_LARGE);
    CHECKF(strstr(err.msg, "row 'RK\\x01'") && strstr(err.msg, "max_row_bytes (10000)"),
           "message: %s", err.msg);
    CHECK(m.arena_cap <= 10000);
    tfrec_bt_merger_free(&m);

    /* the same row fits a larger limit, and a split value counts too */
    tfrec_bt_merger_init(&m, 20000);
    ck split = { "RK", "A", "C", 100, NULL, big, 9000, NONE };
    ck more = { NULL, NULL, NULL, 0, NULL, big, 9000, NONE };
    CHECK_EQ(feed_one(&m, &split, &err), 0);
    CHECK_EQ(feed_one(&m, &more, &err), 0);
    CHECK_EQ(feed_one(&m, &more, &err), 0);
    CHECK_EQ(feed_one(&m, &more, &err), 0);
    CHECK_EQ(feed_one(&m, &more, &err), 0);
    CHECK_EQ(feed_one(&m, &more, &err), 0);
    rc = feed_one(&m, &more, &err);
    CHECKF(rc == TFREC_E_RECORD_TOO_LARGE && strstr(err.msg, "row 'RK'"), "rc %d: %s", rc, err.msg);
    tfrec_bt_merger_free(&m);
}

/* ---------------------------------------------------------------- entry point */

static int stop_after_one(void *ctx, const tfrec_bt_row *row)
{
    (void)row;
    ++*(int *)ctx;
    return 1;
}

static void test_feed_response(void)
{
    bt_merger m;
    tfrec_bt_merger_init(&m, 0);
    tfrec_err err = { 0 };
    static const uint8_t junk[] = { 0x0a, 0x05, 0x0a }; /* a chunk cut short */
    CHECK_EQ(tfrec_bt_merger_feed_response(&m, junk, sizeof junk, NULL, NULL, &err), TFREC_E_PARSE);
    CHECK(strstr(err.msg, "unparsable ReadRows response") != NULL);
    CHECK_EQ(tfrec_bt_merger_feed_response(&m, NULL, 0, NULL, NULL, &err), 0); /* no chunks */

    wbuf w = { 0 };
    ck two[] = { { "a", "A", "C", 1, NULL, "1", 0, COMMIT },
                 { "b", "A", "C", 1, NULL, "2", 0, COMMIT } };
    put_chunk(&w, &two[0], FALSE_NONE);
    put_chunk(&w, &two[1], FALSE_NONE);
    CHECK_EQ(tfrec_bt_merger_feed_response(&m, w.p, w.n, NULL, NULL, &err), 2);
    CHECK(m.row.key_len == 1 && m.row.key[0] == 'b');
    tfrec_bt_merger_free(&m);

    /* on_row stops the feed */
    tfrec_bt_merger_init(&m, 0);
    int calls = 0;
    CHECK(tfrec_bt_merger_feed_response(&m, w.p, w.n, stop_after_one, &calls, &err) < 0);
    CHECK_EQ(calls, 1);
    tfrec_bt_merger_free(&m);
    free(w.p);
}

/* A broken stream is resumed with a fresh start after the last row: the
 * partial row is dropped, its key may come again, earlier keys may not. */
static void test_drop_partial(void)
{
    bt_merger m;
    tfrec_bt_merger_init(&m, 0);
    tfrec_err err = { 0 };
    ck r1 = { "r1", "A", "C", 1, NULL, "1", 0, COMMIT };
    ck r2 = { "r2", "A", "C", 1, "L", "ab", 4, NONE };
    ck r2c = { "r2", "A", "C", 1, NULL, "2", 0, COMMIT };
    CHECK_EQ(feed_one(&m, &r1, &err), 1);
    CHECK_EQ(feed_one(&m, &r2, &err), 0);
    tfrec_bt_merger_drop_partial(&m);
    CHECK_EQ(tfrec_bt_merger_finish(&m, &err), TFREC_OK);
    CHECK_EQ(feed_one(&m, &r2c, &err), 1);
    CHECK(m.row.ncells == 1 && m.row.cells[0]->value_len == 1 && m.row.cells[0]->n_labels == 0);
    CHECK(feed_one(&m, &r1, &err) == TFREC_E_PARSE && strstr(err.msg, "out of order"));
    tfrec_bt_merger_free(&m);
}

TESTS(TEST(test_chunk_streams), TEST(test_value_size_does_not_reserve), TEST(test_row_limit),
      TEST(test_feed_response), TEST(test_drop_partial))

/* ReadRows chunk merging on hand-built chunk sequences: column carry-over,
 * split values, reset_row, commit_row, and the protocol violations. */
#include <stdlib.h>
#include <string.h>

#include "bigtable/row_merger.h"
#include "harness.h"

typedef Google__Bigtable__V2__ReadRowsResponse__CellChunk chunk_t;

/* Chunk builder: NULL family/qualifier = absent (not empty). */
typedef struct spec {
    const char *key, *family, *qualifier, *value;
    int64_t ts;
    int value_size;
    int status; /* 0 none, 'c' commit, 'r' reset */
} spec;

static Google__Protobuf__StringValue fam_store[16];
static Google__Protobuf__BytesValue qual_store[16];

static chunk_t make(const spec *s, int slot)
{
    chunk_t c;
    google__bigtable__v2__read_rows_response__cell_chunk__init(&c);
    if (s->key) {
        c.row_key.data = (uint8_t *)s->key;
        c.row_key.len = strlen(s->key);
    }
    if (s->family) {
        google__protobuf__string_value__init(&fam_store[slot]);
        fam_store[slot].value = (char *)s->family;
        c.family_name = &fam_store[slot];
    }
    if (s->qualifier) {
        google__protobuf__bytes_value__init(&qual_store[slot]);
        qual_store[slot].value.data = (uint8_t *)s->qualifier;
        qual_store[slot].value.len = strlen(s->qualifier);
        c.qualifier = &qual_store[slot];
    }
    if (s->value) {
        c.value.data = (uint8_t *)s->value;
        c.value.len = strlen(s->value);
    }
    c.timestamp_micros = s->ts;
    c.value_size = s->value_size;
    if (s->status == 'c') {
        c.row_status_case =
            GOOGLE__BIGTABLE__V2__READ_ROWS_RESPONSE__CELL_CHUNK__ROW_STATUS_COMMIT_ROW;
        c.commit_row = 1;
    } else if (s->status == 'r') {
        c.row_status_case =
            GOOGLE__BIGTABLE__V2__READ_ROWS_RESPONSE__CELL_CHUNK__ROW_STATUS_RESET_ROW;
        c.reset_row = 1;
    }
    return c;
}

/* Feed n chunks; returns the last feed result, counts committed rows. */
static int feed_all(bt_merger *m, const spec *s, int n, int *rows, tfrec_err *err)
{
    int rc = 0;
    *rows = 0;
    for (int i = 0; i < n; i++) {
        chunk_t c = make(&s[i], i % 16);
        rc = tfrec_bt_merger_feed(m, &c, err);
        if (rc < 0)
            return rc;
        if (rc == 1)
            (*rows)++;
    }
    return rc;
}

static int cell_is(const tfrec_bt_cell *c, const char *fam, const char *q, const char *v,
                   int64_t ts)
{
    return !strcmp(c->family, fam) && c->qualifier_len == strlen(q) &&
           !memcmp(c->qualifier, q, c->qualifier_len) && c->value_len == strlen(v) &&
           !memcmp(c->value, v, c->value_len) && c->timestamp_micros == ts;
}

static void test_two_cells_one_row_with_carried_family(void)
{
    bt_merger m;
    tfrec_bt_merger_init(&m);
    tfrec_err err = { 0 };
    spec s[] = {
        { "r1", "tfexample", "example", "v1", 1000, 0, 0 },
        { NULL, NULL, "other", "v2", 2000, 0, 'c' }, /* family carried over */
    };
    int rows;
    CHECK_EQ(feed_all(&m, s, 2, &rows, &err), 1);
    CHECK_EQ(rows, 1);
    CHECK(m.row.key_len == 2 && !memcmp(m.row.key, "r1", 2));
    CHECK_EQ(m.row.ncells, 2);
    CHECK(cell_is(m.row.cells[0], "tfexample", "example", "v1", 1000));
    CHECK(cell_is(m.row.cells[1], "tfexample", "other", "v2", 2000));
    CHECK_EQ(tfrec_bt_merger_finish(&m, &err), 0);
    tfrec_bt_merger_free(&m);
}

static void test_split_value_is_reassembled(void)
{
    bt_merger m;
    tfrec_bt_merger_init(&m);
    tfrec_err err = { 0 };
    spec s[] = {
        { "row", "f", "q", "hello ", 5, 16, 0 },
        { NULL, NULL, NULL, "big ", 0, 16, 0 },
        { NULL, NULL, NULL, "world!", 0, 0, 'c' },
    };
    int rows;
    CHECK_EQ(feed_all(&m, s, 3, &rows, &err), 1);
    CHECK_EQ(m.row.ncells, 1);
    CHECK(cell_is(m.row.cells[0], "f", "q", "hello big world!", 5));
    tfrec_bt_merger_free(&m);
}

static void test_reset_row_discards_partial_row(void)
{
    bt_merger m;
    tfrec_bt_merger_init(&m);
    tfrec_err err = { 0 };
    spec s[] = {
        { "a", "f", "q", "stale", 1, 0, 0 },
        { NULL, NULL, NULL, NULL, 0, 0, 'r' },
        { "a", "f", "q2", "fresh", 2, 0, 'c' },
        { "b", "f", "q", "next", 3, 0, 'c' },
    };
    int rows;
    for (int i = 0; i < 3; i++) {
        chunk_t c = make(&s[i], i);
        int rc = tfrec_bt_merger_feed(&m, &c, &err);
        CHECK_EQ(rc, i == 2 ? 1 : 0);
    }
    CHECK_EQ(m.row.ncells, 1);
    CHECK(cell_is(m.row.cells[0], "f", "q2", "fresh", 2));
    CHECK_EQ(feed_all(&m, &s[3], 1, &rows, &err), 1);
    CHECK(m.row.key_len == 1 && m.row.key[0] == 'b');
    tfrec_bt_merger_free(&m);
}

static void test_many_rows_in_order(void)
{
    bt_merger m;
    tfrec_bt_merger_init(&m);
    tfrec_err err = { 0 };
    spec s[] = {
        { "k1", "f", "q", "1", 0, 0, 'c' },
        { "k2", "f", "q", "2", 0, 0, 'c' },
        { "k3", "f", "q", "", 0, 0, 'c' }, /* empty value is a real cell */
    };
    int rows;
    CHECK_EQ(feed_all(&m, s, 3, &rows, &err), 1);
    CHECK_EQ(rows, 3);
    CHECK_EQ(m.row.ncells, 1);
    CHECK_EQ(m.row.cells[0]->value_len, 0);
    tfrec_bt_merger_free(&m);
}

static void expect_violation(const spec *s, int n, const char *what)
{
    bt_merger m;
    tfrec_bt_merger_init(&m);
    tfrec_err err = { 0 };
    int rows;
    int rc = feed_all(&m, s, n, &rows, &err);
    if (rc >= 0)
        rc = tfrec_bt_merger_finish(&m, &err);
    tfrec_bt_merger_free(&m);
    CHECKF(rc == TFREC_E_PARSE, "%s: accepted (rc %d)", what, rc);
    CHECKF(strstr(err.msg, "malformed ReadRows stream"), "%s: message '%s'", what, err.msg);
}

static void test_protocol_violations(void)
{
    spec no_family[] = { { "r", NULL, "q", "v", 0, 0, 'c' } };
    expect_violation(no_family, 1, "new row without family");
    spec no_key[] = { { NULL, "f", "q", "v", 0, 0, 'c' } };
    expect_violation(no_key, 1, "new row without key");
    spec order[] = { { "b", "f", "q", "v", 0, 0, 'c' }, { "a", "f", "q", "v", 0, 0, 'c' } };
    expect_violation(order, 2, "keys out of order");
    spec dup[] = { { "a", "f", "q", "v", 0, 0, 'c' }, { "a", "f", "q", "v", 0, 0, 'c' } };
    expect_violation(dup, 2, "same key twice");
    spec commit_split[] = { { "a", "f", "q", "v", 0, 10, 'c' } };
    expect_violation(commit_split, 1, "commit inside a split value");
    spec reset_data[] = { { "a", "f", "q", "v", 0, 0, 0 }, { NULL, NULL, NULL, "x", 0, 0, 'r' } };
    expect_violation(reset_data, 2, "reset carrying data");
    spec reset_first[] = { { NULL, NULL, NULL, NULL, 0, 0, 'r' } };
    expect_violation(reset_first, 1, "reset with no row");
    spec key_change[] = { { "a", "f", "q", "v", 0, 0, 0 }, { "b", "f", "q", "v", 0, 0, 'c' } };
    expect_violation(key_change, 2, "key changed before commit");
    spec unfinished[] = { { "a", "f", "q", "v", 0, 0, 0 } };
    expect_violation(unfinished, 1, "stream ends inside a row");
    spec cont_new_cell[] = { { "a", "f", "q", "v", 0, 5, 0 }, { NULL, "f", "q", "x", 0, 0, 'c' } };
    expect_violation(cont_new_cell, 2, "continuation naming a column");
    spec fam_no_qual[] = { { "a", "f", "q", "v", 0, 0, 0 }, { NULL, "g", NULL, "x", 0, 0, 'c' } };
    expect_violation(fam_no_qual, 2, "family without qualifier");
}

TESTS(TEST(test_two_cells_one_row_with_carried_family), TEST(test_split_value_is_reassembled),
      TEST(test_reset_row_discards_partial_row), TEST(test_many_rows_in_order),
      TEST(test_protocol_violations))

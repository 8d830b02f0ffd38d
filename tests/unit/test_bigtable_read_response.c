/* The in-place ReadRowsResponse decoder against protobuf-c's generated
 * code: responses packed by protobuf-c (an independent encoder) come out
 * chunk by chunk with every field; hand-made bytes cover what no encoder
 * writes but protobuf-c accepts (a wrapper given twice, oneof members one
 * after the other, a bool with only high bits set or in another wire type,
 * unknown fields of every wire type), and truncated or malformed messages yield no chunk at all.
 * fuzz_bigtable_read_response compares the two decoders on any bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bigtable/read_response.h"
#include "google/bigtable/v2/bigtable.pb-c.h"
#include "harness.h"

typedef Google__Bigtable__V2__ReadRowsResponse__CellChunk pb_chunk;

static int same_str(const char *ours, size_t n, const char *theirs)
{
    const char *t = theirs ? theirs : "";
    size_t tl = strlen(t); /* protobuf-c's copy ends at a NUL */
    return n >= tl && (!tl || !memcmp(ours, t, tl)) && (n == tl || ours[tl] == '\0');
}

static int same_bytes(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    return an == bn && (!an || !memcmp(a, b, an));
}

static int same_chunk(const bt_chunk *c, const pb_chunk *p)
{
    int ok = same_bytes(c->row_key, c->row_key_len, p->row_key.data, p->row_key.len) &&
             c->has_family == (p->family_name != NULL) &&
             (!p->family_name || same_str(c->family, c->family_len, p->family_name->value)) &&
             c->has_qualifier == (p->qualifier != NULL) &&
             (!p->qualifier || same_bytes(c->qualifier, c->qualifier_len, p->qualifier->value.data,
                                          p->qualifier->value.len)) &&
             c->timestamp_micros == p->timestamp_micros && c->value_size == p->value_size &&
             same_bytes(c->value, c->value_len, p->value.data, p->value.len) &&
             c->reset_row == (p->row_status_case == 8 && p->reset_row) &&
             c->commit_row == (p->row_status_case == 9 && p->commit_row) &&
             c->n_labels == p->n_labels;
    size_t pos = 0, k = 0, n;
    const char *s;
    while (ok && tfrec_bt_chunk_label(c, &pos, &s, &n))
        ok = k < p->n_labels && same_str(s, n, p->labels[k++]);
    return ok && k == p->n_labels;
}

typedef struct seen {
    Google__Bigtable__V2__ReadRowsResponse *pb;
    size_t n;
    int differ;
} seen;

static int on_chunk(void *ctx, const bt_chunk *ch)
{
    seen *s = ctx;
    if (!s->pb || s->n >= s->pb->n_chunks || !same_chunk(ch, s->pb->chunks[s->n]))
        s->differ = 1;
    s->n++;
    return 0;
}

/* Decode with both; 1 if both accept with the same chunks, 0 if both
 * refuse, -1 if they disagree. Walking chunk by chunk must agree too. */
static int compare(const uint8_t *d, size_t n)
{
    seen s = { google__bigtable__v2__read_rows_response__unpack(NULL, n, d), 0, 0 };
    int ours = tfrec_bt_read_response_each(d, n, on_chunk, &s);
    int rc;
    if (ours == 0 && s.pb && !s.differ && s.n == s.pb->n_chunks) {
        size_t pos = 0, k = 0;
        bt_chunk ch;
        rc = 1;
        while (tfrec_bt_read_response_next(d, n, &pos, &ch))
            if (k >= s.pb->n_chunks || !same_chunk(&ch, s.pb->chunks[k++]))
                rc = -1;
        if (k != s.pb->n_chunks)
            rc = -1;
    } else {
        rc = ours != 0 && !s.pb && s.n == 0 ? 0 : -1;
    }
    if (s.pb)
        google__bigtable__v2__read_rows_response__free_unpacked(s.pb, NULL);
    return rc;
}

static uint8_t *pack_chunks(pb_chunk **ch, size_t n, size_t *len)
{
    Google__Bigtable__V2__ReadRowsResponse r = GOOGLE__BIGTABLE__V2__READ_ROWS_RESPONSE__INIT;
    r.chunks = ch;
    r.n_chunks = n;
    r.last_scanned_row_key.data = (uint8_t *)"zz";
    r.last_scanned_row_key.len = 2;
    *len = google__bigtable__v2__read_rows_response__get_packed_size(&r);
    uint8_t *b = malloc(*len);
    google__bigtable__v2__read_rows_response__pack(&r, b);
    return b;
}

static void test_packed_chunks(void)
{
    pb_chunk c[4];
    Google__Protobuf__StringValue fam = GOOGLE__PROTOBUF__STRING_VALUE__INIT, empty_fam = fam;
    Google__Protobuf__BytesValue qual = GOOGLE__PROTOBUF__BYTES_VALUE__INIT, empty_qual = qual;
    fam.value = "cf";
    qual.value.data = (uint8_t *)"q\0x";
    qual.value.len = 3;
    char *labels[] = { "l1", "", "l3" };
    for (int i = 0; i < 4; i++)
        google__bigtable__v2__read_rows_response__cell_chunk__init(&c[i]);
    c[0].row_key.data = (uint8_t *)"row\x00\xff";
    c[0].row_key.len = 5;
    c[0].family_name = &fam;
    c[0].qualifier = &qual;
    c[0].timestamp_micros = -7;
    c[0].labels = labels;
    c[0].n_labels = 3;
    c[0].value.data = (uint8_t *)"abc";
    c[0].value.len = 3;
    c[0].value_size = 9;
    c[1].value.data = (uint8_t *)"defghi";
    c[1].value.len = 6;
    c[1].row_status_case =
        GOOGLE__BIGTABLE__V2__READ_ROWS_RESPONSE__CELL_CHUNK__ROW_STATUS_COMMIT_ROW;
    c[1].commit_row = 1;
    c[2].family_name = &empty_fam; /* present though empty */
    c[2].qualifier = &empty_qual;
    c[2].value_size = -3;
    c[2].row_status_case =
        GOOGLE__BIGTABLE__V2__READ_ROWS_RESPONSE__CELL_CHUNK__ROW_STATUS_COMMIT_ROW;
    c[2].commit_row = 0; /* explicit false: no status */
    c[3].row_status_case =
        GOOGLE__BIGTABLE__V2__READ_ROWS_RESPONSE__CELL_CHUNK__ROW_STATUS_RESET_ROW;
    c[3].reset_row = 1;
    pb_chunk *ptrs[4] = { &c[0], &c[1], &c[2], &c[3] };
    size_t len;
    uint8_t *b = pack_chunks(ptrs, 4, &len);
    CHECK_EQ(compare(b, len), 1);
    /* and what the decoder reports, spelled out */
    bt_chunk ch;
    size_t pos = 0;
    CHECK_EQ(tfrec_bt_read_response_next(b, len, &pos, &ch), 1);
    CHECK(ch.has_family && ch.family_len == 2 && ch.n_labels == 3 && ch.value_size == 9);
    CHECK_EQ(tfrec_bt_read_response_next(b, len, &pos, &ch), 1);
    CHECK(ch.commit_row && !ch.reset_row && !ch.has_family && ch.value_len == 6);
    CHECK_EQ(tfrec_bt_read_response_next(b, len, &pos, &ch), 1);
    CHECK(ch.has_family && ch.family_len == 0 && ch.has_qualifier && !ch.commit_row);
    CHECK_EQ(tfrec_bt_read_response_next(b, len, &pos, &ch), 1);
    CHECK(ch.reset_row);
    CHECK_EQ(tfrec_bt_read_response_next(b, len, &pos, &ch), 0);
    /* every truncation is refused by both, or accepted by both alike */
    for (size_t n = 0; n < len; n++)
        CHECK(compare(b, n) >= 0);
    free(b);
    CHECK_EQ(compare(NULL, 0), 1); /* no chunks */
}

/* A byte string literal and its length (NUL bytes included). */
#define B(s) s, sizeof(s) - 1

/* Hand-made: tag 0x0a = chunks, then the chunk's bytes. */
static void test_what_protobuf_c_accepts(void)
{
    static const struct {
        const char *what;
        const char *bytes;
        size_t len;
    } cases[] = {
        { "wrapper twice, second empty", B("\x0a\x09\x12\x03\x0a\x01\x61\x12\x00\x1a\x00") },
        { "wrapper twice, second with a value",
          B("\x0a\x0c\x12\x03\x0a\x01\x61\x12\x03\x0a\x01\x62\x1a\x00") },
        { "wrapper twice, second explicitly empty",
          B("\x0a\x0b\x12\x03\x0a\x01\x61\x12\x02\x0a\x00\x1a\x00") },
        { "value twice inside one wrapper", B("\x0a\x07\x1a\x05\x0a\x01\x61\x0a\x00") },
        { "qualifier twice, second explicitly empty",
          B("\x0a\x0c\x1a\x06\x0a\x04\x12\x06\x0a\x04\x1a\x02\x0a\x00") },
        { "qualifier twice, second empty", B("\x0a\x07\x1a\x03\x0a\x01\x71\x1a\x00") },
        { "commit then reset", B("\x0a\x04\x48\x01\x40\x01") },
        { "reset then commit false", B("\x0a\x04\x40\x01\x48\x00") },
        { "bool with only bit 64 set", B("\x0a\x0b\x48\x80\x80\x80\x80\x80\x80\x80\x80\x80\x02") },
        { "unknown fields of every wire type",
          B("\x0a\x13\x50\x05\x59\x01\x02\x03\x04\x05\x06\x07\x08\x62\x01\x78\x6d\x01\x02"
            "\x03\x04") },
        { "labels around other fields",
          B("\x0a\x0c\x2a\x01\x61\x32\x01\x76\x2a\x02\x62\x00\x20\x05") },
        { "int32 value_size from a 10-byte varint",
          B("\x0a\x0b\x38\xfe\xff\xff\xff\xff\xff\xff\xff\xff\x01") },
        { "row_key and value given twice",
          B("\x0a\x0e\x0a\x02\x6b\x31\x32\x02\x76\x31\x0a\x02\x6b\x32\x32\x00") },
        /* protobuf-c reads a bool in any wire type, its length prefix too */
        { "commit_row length-delimited, empty", B("\x0a\x02\x4a\x00") },
        { "commit_row length-delimited, one zero byte", B("\x0a\x03\x4a\x01\x00") },
        { "commit_row fixed32", B("\x0a\x05\x4d\x00\x00\x00\x80") },
        { "reset_row fixed64", B("\x0a\x09\x41\x00\x00\x00\x00\x00\x00\x00\x01") },
        { "last_scanned_row_key and an unknown top-level field", B("\x12\x02\x7a\x7a\x18\x07") },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = compare((const uint8_t *)cases[i].bytes, cases[i].len);
        if (rc != 1)
            fprintf(stderr, "    case '%s': %d\n", cases[i].what, rc);
        CHECK_EQ(rc, 1);
    }
}

static void test_malformed(void)
{
    static const struct {
        const char *bytes;
        size_t len;
    } cases[] = {
        { B("\x0a\x02\x08\x01") },     /* row_key as a varint */
        { B("\x0a\x02\x12\x05") },     /* wrapper past the chunk */
        { B("\x0a\x03\x12\x01\x08") }, /* wrapper's value as a varint */
        { B("\x0a\x01\x48") },         /* truncated bool */
        { B("\x0a\x01\x4a") },         /* commit_row without its length */
        { B("\x0a\x02\x0b\x0c") },     /* a group */
        { B("\x08\x01") },             /* chunks as a varint */
        { B("\x0a\x05\x0a\x01") },     /* chunk past the message */
        { B("\x10\x0e") },             /* last_scanned_row_key as a varint */
        { B("\x00") },                 /* field 0 */
        { B("\x0a\x0c\x38\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01") }, /* 11-byte varint */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        seen s = { 0 };
        CHECK_EQ(tfrec_bt_read_response_each((const uint8_t *)cases[i].bytes, cases[i].len,
                                             on_chunk, &s),
                 -1);
        CHECK_EQ(s.n, 0);
        int rc = compare((const uint8_t *)cases[i].bytes, cases[i].len);
        if (rc != 0)
            fprintf(stderr, "    malformed case %zu: %d\n", i, rc);
        CHECK_EQ(rc, 0);
    }
}

TESTS(TEST(test_packed_chunks), TEST(test_what_protobuf_c_accepts), TEST(test_malformed))

/* The batch API (include/tfrec/batch.h) the Python bindings are built on:
 * records written in batches read back one by one and the other way round,
 * batch limits, failures after good records, and skipping. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "tfrec/tfrec.h"

enum { N = 1000 };

/* Record i has length i % 97 * 13 (0 included) and pseudo-random content. */
static size_t rec_len(size_t i)
{
    return i % 97 * 13;
}

static void make_records(uint8_t *data, uint64_t *ends)
{
    uint64_t at = 0;
    for (size_t i = 0; i < N; i++) {
        harness_random(data + at, rec_len(i), i + 1);
        at += rec_len(i);
        ends[i] = at;
    }
}

static uint64_t total_len(void)
{
    uint64_t t = 0;
    for (size_t i = 0; i < N; i++)
        t += rec_len(i);
    return t;
}

static void test_write_batch_then_read_singly(void)
{
    uint8_t *data = malloc(total_len());
    uint64_t *ends = malloc(N * sizeof *ends);
    make_records(data, ends);
    for (int comp = TFREC_COMPRESSION_NONE; comp <= TFREC_COMPRESSION_GZIP; comp++) {
        const char *path = harness_path("batch.tfrecord");
        tfrec_writer_options wo = TFREC_WRITER_OPTIONS_INIT;
        wo.compression = comp;
        tfrec_writer *w;
        CHECK_EQ(tfrec_writer_open(&w, path, &wo), TFREC_OK);
        CHECK_EQ(tfrec_writer_write_batch(w, data, ends, 600), TFREC_OK);
        CHECK_EQ(tfrec_writer_write_batch(w, data + ends[599], ends + 600, 0), TFREC_OK);
        /* the second batch's ends are offsets from its own start */
        uint64_t rest[N - 600];
        for (size_t i = 600; i < N; i++)
            rest[i - 600] = ends[i] - ends[599];
        CHECK_EQ(tfrec_writer_write_batch(w, data + ends[599], rest, N - 600), TFREC_OK);
        CHECK_EQ(tfrec_writer_records(w), N);
        CHECK_EQ(tfrec_writer_close(w), TFREC_OK);
        tfrec_writer_free(w);

        tfrec_reader *r;
        CHECK_EQ(tfrec_reader_open(&r, path, NULL), TFREC_OK);
        const uint8_t *rec;
        size_t len;
        for (size_t i = 0; i < N; i++) {
            CHECK_EQ(tfrec_reader_next(r, &rec, &len), TFREC_OK);
            uint64_t start = i ? ends[i - 1] : 0;
            CHECK_EQ(len, rec_len(i));
            CHECKF(memcmp(rec, data + start, len) == 0, "record %zu differs", i);
        }
        CHECK_EQ(tfrec_reader_next(r, &rec, &len), TFREC_END);
        tfrec_reader_free(r);
    }
    free(data);
    free(ends);
}

static void test_read_batch_limits_and_contents(void)
{
    uint8_t *data = malloc(total_len());
    uint64_t *ends = malloc(N * sizeof *ends);
    make_records(data, ends);
    const char *path = harness_path("limits.tfrecord");
    tfrec_writer *w;
    CHECK_EQ(tfrec_writer_open(&w, path, NULL), TFREC_OK);
    for (size_t i = 0; i < N; i++)
        CHECK_EQ(tfrec_writer_write(w, data + (i ? ends[i - 1] : 0), rec_len(i)), TFREC_OK);
    CHECK_EQ(tfrec_writer_close(w), TFREC_OK);
    tfrec_writer_free(w);

    tfrec_reader *r;
    tfrec_record_batch *b;
    CHECK_EQ(tfrec_reader_open(&r, path, NULL), TFREC_OK);
    CHECK_EQ(tfrec_record_batch_new(&b), TFREC_OK);
    size_t seen = 0, calls = 0;
    int rc;
    /* 50 records or 4000 payload bytes, whichever comes first */
    while ((rc = tfrec_reader_read_batch(r, b, 50, 4000)) == TFREC_OK) {
        size_t n = tfrec_record_batch_count(b);
        const uint8_t *bd = tfrec_record_batch_data(b);
        const uint64_t *be = tfrec_record_batch_ends(b);
        const uint64_t *bo = tfrec_record_batch_offsets(b);
        CHECK(n >= 1 && n <= 50);
        /* it stops at the first record that reaches the byte limit */
        CHECK(n == 50 || be[n - 1] >= 4000 || seen + n == N);
        if (n > 1)
            CHECK(be[n - 2] < 4000);
        uint64_t start = 0, file_off = 0;
        for (size_t i = 0; i < seen; i++)
            file_off += rec_len(i) + 16;
        for (size_t i = 0; i < n; i++) {
            size_t k = seen + i;
            CHECK_EQ(be[i] - start, rec_len(k));
            CHECKF(memcmp(bd + start, data + (k ? ends[k - 1] : 0), rec_len(k)) == 0,
                   "record %zu differs", k);
            CHECK_EQ(bo[i], file_off);
            file_off += rec_len(k) + 16;
            start = be[i];
        }
        seen += n;
        calls++;
    }
    CHECK_EQ(rc, TFREC_END);
    CHECK_EQ(seen, N);
    CHECK(calls > N / 50);
    CHECK_EQ(tfrec_record_batch_count(b), 0);
    CHECK_EQ(tfrec_reader_read_batch(r, b, 0, 0), TFREC_END);
    tfrec_record_batch_free(b);
    tfrec_reader_free(r);
    free(data);
    free(ends);
}

static void test_failure_after_good_records(void)
{
    const char *path = harness_path("bad.tfrecord");
    tfrec_writer *w;
    CHECK_EQ(tfrec_writer_open(&w, path, NULL), TFREC_OK);
    for (int i = 0; i < 10; i++)
        CHECK_EQ(tfrec_writer_write(w, "0123456789", 10), TFREC_OK);
    CHECK_EQ(tfrec_writer_close(w), TFREC_OK);
    tfrec_writer_free(w);
    /* flip a data byte of record 7 (each record is 26 bytes) */
    FILE *f = fopen(path, "r+b");
    CHECK(f != NULL);
    fseek(f, 7 * 26 + 12 + 3, SEEK_SET);
    fputc('X', f);
    fclose(f);

    tfrec_reader *r;
    tfrec_record_batch *b;
    CHECK_EQ(tfrec_reader_open(&r, path, NULL), TFREC_OK);
    CHECK_EQ(tfrec_record_batch_new(&b), TFREC_OK);
    CHECK_EQ(tfrec_reader_read_batch(r, b, 100, 0), TFREC_OK);
    CHECK_EQ(tfrec_record_batch_count(b), 7);
    CHECK_EQ(tfrec_reader_read_batch(r, b, 100, 0), TFREC_E_BAD_DATA_CRC);
    CHECK_EQ(tfrec_record_batch_count(b), 0);
    CHECK(strstr(tfrec_reader_errmsg(r), "182") != NULL); /* the record's offset */
    tfrec_record_batch_free(b);
    tfrec_reader_free(r);

    uint64_t skipped = 99;
    CHECK_EQ(tfrec_reader_open(&r, path, NULL), TFREC_OK);
    CHECK_EQ(tfrec_reader_skip(r, 3, &skipped), TFREC_OK);
    CHECK_EQ(skipped, 3);
    CHECK_EQ(tfrec_reader_skip(r, 0, &skipped), TFREC_E_BAD_DATA_CRC);
    CHECK_EQ(skipped, 4);
    tfrec_reader_free(r);

    tfrec_reader_options ro = TFREC_READER_OPTIONS_INIT;
    ro.skip_corrupt = 1;
    CHECK_EQ(tfrec_reader_open(&r, path, &ro), TFREC_OK);
    CHECK_EQ(tfrec_reader_skip(r, 0, &skipped), TFREC_END);
    CHECK_EQ(skipped, 9);
    tfrec_reader_free(r);
}

static void test_bad_arguments(void)
{
    const char *path = harness_path("args.tfrecord");
    tfrec_writer *w;
    CHECK_EQ(tfrec_writer_open(&w, path, NULL), TFREC_OK);
    uint64_t ends[2] = { 5, 3 }; /* decreasing */
    CHECK_EQ(tfrec_writer_write_batch(w, "abcde", ends, 2), TFREC_E_INVALID);
    CHECK_EQ(tfrec_writer_write_batch(w, NULL, NULL, 1), TFREC_E_INVALID);
    CHECK_EQ(tfrec_writer_write_batch(NULL, "a", ends, 1), TFREC_E_INVALID);
    const void *ptrs[2] = { "ab", "cde" };
    size_t lens[2] = { 2, 3 };
    CHECK_EQ(tfrec_writer_write_vec(w, ptrs, lens, 2), TFREC_OK);
    CHECK_EQ(tfrec_writer_records(w), 3); /* "abcde" from the first, then two */
    CHECK_EQ(tfrec_writer_close(w), TFREC_OK);
    tfrec_writer_free(w);
    CHECK_EQ(tfrec_reader_read_batch(NULL, NULL, 1, 1), TFREC_E_INVALID);
    CHECK_EQ(tfrec_reader_skip(NULL, 1, NULL), TFREC_E_INVALID);
    CHECK_EQ(tfrec_record_batch_new(NULL), TFREC_E_INVALID);
    CHECK_EQ(tfrec_record_batch_count(NULL), 0);
}

/* Item i of batch b as (pointer, length). */
static const uint8_t *item(const tfrec_record_batch *b, size_t i, size_t *len)
{
    const uint64_t *e = tfrec_record_batch_ends(b);
    uint64_t start = i ? e[i - 1] : 0;
    *len = (size_t)(e[i] - start);
    return tfrec_record_batch_data(b) + start;
}

static int item_is(const tfrec_record_batch *b, size_t i, const void *want, size_t want_len)
{
    size_t len;
    const uint8_t *p = item(b, i, &len);
    return len == want_len && memcmp(p, want, len) == 0;
}

static int header_is(const tfrec_record_batch *b, size_t i, int kind, uint64_t count)
{
    uint8_t h[9] = { (uint8_t)kind };
    for (int k = 0; k < 8; k++)
        h[1 + k] = (uint8_t)(count >> (8 * k));
    return item_is(b, i, h, sizeof h);
}

static void test_example_to_batch(void)
{
    tfrec_example_builder *eb;
    CHECK_EQ(tfrec_example_builder_new(&eb), TFREC_OK);
    const int64_t ints[3] = { -1, 7, INT64_MAX };
    const float floats[2] = { 0.5f, -2.0f };
    CHECK_EQ(tfrec_example_add_bytes(eb, "b", "xy", 2), TFREC_OK);
    CHECK_EQ(tfrec_example_add_bytes(eb, "b", "", 0), TFREC_OK);
    CHECK_EQ(tfrec_example_add_int64_list(eb, "i", ints, 3), TFREC_OK);
    CHECK_EQ(tfrec_example_add_float_list(eb, "f", floats, 2), TFREC_OK);
    CHECK_EQ(tfrec_example_add_empty(eb, "e", TFREC_FEATURE_INT64), TFREC_OK);
    uint8_t *ser;
    size_t ser_len;
    CHECK_EQ(tfrec_example_serialize_alloc(eb, &ser, &ser_len), TFREC_OK);
    tfrec_example_builder_free(eb);
    tfrec_example *ex;
    CHECK_EQ(tfrec_example_parse(&ex, ser, ser_len), TFREC_OK);
    tfrec_free(ser);
    tfrec_record_batch *b;
    CHECK_EQ(tfrec_record_batch_new(&b), TFREC_OK);
    CHECK_EQ(tfrec_example_to_batch(ex, b), TFREC_OK);
    /* keys in order b, e, f, i */
    CHECK_EQ(tfrec_record_batch_count(b), 4 + 3 + 3 + 3); /* key, header, values per feature */
    CHECK(item_is(b, 0, "b", 1) && header_is(b, 1, TFREC_FEATURE_BYTES, 2));
    CHECK(item_is(b, 2, "xy", 2) && item_is(b, 3, "", 0));
    CHECK(item_is(b, 4, "e", 1) && header_is(b, 5, TFREC_FEATURE_INT64, 0) && item_is(b, 6, "", 0));
    CHECK(item_is(b, 7, "f", 1) && header_is(b, 8, TFREC_FEATURE_FLOAT, 2));
    CHECK(item_is(b, 9, floats, sizeof floats));
    CHECK(item_is(b, 10, "i", 1) && header_is(b, 11, TFREC_FEATURE_INT64, 3));
    CHECK(item_is(b, 12, ints, sizeof ints));
    CHECK_EQ(tfrec_example_to_batch(NULL, b), TFREC_E_INVALID);
    tfrec_record_batch_free(b);
    tfrec_example_free(ex);
}

/* n records in one call: per record its feature count, then its features;
 * a malformed record fails the whole call naming its position. */
static void test_examples_to_batch(void)
{
    tfrec_example_builder *eb;
    CHECK_EQ(tfrec_example_builder_new(&eb), TFREC_OK);
    uint8_t *ser[2];
    size_t lens[2];
    const int64_t one = 1, two[2] = { 2, 3 };
    CHECK_EQ(tfrec_example_add_int64_list(eb, "a", &one, 1), TFREC_OK);
    CHECK_EQ(tfrec_example_serialize_alloc(eb, &ser[0], &lens[0]), TFREC_OK);
    tfrec_example_builder_reset(eb);
    CHECK_EQ(tfrec_example_add_int64_list(eb, "a", two, 2), TFREC_OK);
    CHECK_EQ(tfrec_example_add_bytes(eb, "s", "x", 1), TFREC_OK);
    CHECK_EQ(tfrec_example_serialize_alloc(eb, &ser[1], &lens[1]), TFREC_OK);
    tfrec_example_builder_free(eb);
    tfrec_record_batch *b;
    CHECK_EQ(tfrec_record_batch_new(&b), TFREC_OK);
    const void *recs[3] = { ser[0], ser[1], "\xff\xff" };
    size_t rlens[3] = { lens[0], lens[1], 2 };
    CHECK_EQ(tfrec_examples_to_batch(recs, rlens, 2, b), TFREC_OK);
    const uint8_t n1[8] = { 1 }, n2[8] = { 2 };
    CHECK_EQ(tfrec_record_batch_count(b), 1 + 3 + 1 + 3 + 3);
    CHECK(item_is(b, 0, n1, 8) && item_is(b, 1, "a", 1) &&
          header_is(b, 2, TFREC_FEATURE_INT64, 1) && item_is(b, 3, &one, 8));
    CHECK(item_is(b, 4, n2, 8) && item_is(b, 5, "a", 1) &&
          header_is(b, 6, TFREC_FEATURE_INT64, 2) && item_is(b, 7, two, 16));
    CHECK(item_is(b, 8, "s", 1) && header_is(b, 9, TFREC_FEATURE_BYTES, 1) &&
          item_is(b, 10, "x", 1));
    CHECK_EQ(tfrec_examples_to_batch(recs, rlens, 3, b), TFREC_E_PARSE);
    CHECK(strstr(tfrec_last_errmsg(), "record 2 of 3") != NULL);
    CHECK_EQ(tfrec_record_batch_count(b), 0);
    CHECK_EQ(tfrec_examples_to_batch(NULL, NULL, 0, b), TFREC_OK);
    CHECK_EQ(tfrec_record_batch_count(b), 0);
    CHECK_EQ(tfrec_examples_to_batch(NULL, rlens, 1, b), TFREC_E_INVALID);
    tfrec_record_batch_free(b);
    tfrec_free(ser[0]);
    tfrec_free(ser[1]);
}

/* A batch filled item by item: contents, offsets, growth past the first
 * allocation, clear keeping nothing, refused arguments. */
static void test_append_and_clear(void)
{
    tfrec_record_batch *b;
    CHECK_EQ(tfrec_record_batch_new(&b), TFREC_OK);
    static uint8_t big[300000];
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (uint8_t)(i * 7);
    CHECK_EQ(tfrec_record_batch_append(b, "abc", 3, 7), TFREC_OK);
    CHECK_EQ(tfrec_record_batch_append(b, NULL, 0, 8), TFREC_OK);
    for (int k = 0; k < 300; k++)
        CHECK_EQ(tfrec_record_batch_append(b, big, sizeof big - k, 9 + (uint64_t)k), TFREC_OK);
    CHECK_EQ(tfrec_record_batch_count(b), 302);
    const uint8_t *d = tfrec_record_batch_data(b);
    const uint64_t *ends = tfrec_record_batch_ends(b), *offs = tfrec_record_batch_offsets(b);
    CHECK(!memcmp(d, "abc", 3));
    CHECK_EQ(ends[0], 3);
    CHECK_EQ(ends[1], 3);
    CHECK_EQ(offs[0], 7);
    CHECK_EQ(offs[1], 8);
    CHECK_EQ(offs[301], 308);
    CHECK_EQ(ends[301] - ends[300], sizeof big - 299);
    CHECK(!memcmp(d + ends[300], big, sizeof big - 299));
    tfrec_record_batch_clear(b);
    CHECK_EQ(tfrec_record_batch_count(b), 0);
    CHECK_EQ(tfrec_record_batch_append(b, "x", 1, 0), TFREC_OK);
    CHECK_EQ(tfrec_record_batch_count(b), 1);
    CHECK_EQ(tfrec_record_batch_ends(b)[0], 1);
    CHECK_EQ(tfrec_record_batch_append(b, NULL, 1, 0), TFREC_E_INVALID);
    CHECK_EQ(tfrec_record_batch_append(NULL, "x", 1, 0), TFREC_E_INVALID);
    CHECK_EQ(tfrec_record_batch_count(b), 1);
    tfrec_record_batch_clear(NULL); /* harmless */
    tfrec_record_batch_free(b);
}

TESTS(TEST(test_append_and_clear), TEST(test_write_batch_then_read_singly),
      TEST(test_read_batch_limits_and_contents), TEST(test_failure_after_good_records),
      TEST(test_bad_arguments), TEST(test_example_to_batch), TEST(test_examples_to_batch))

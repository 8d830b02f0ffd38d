/* TFRecord round trips: every compression, both deflate backends, empty
 * records, zero-record files, many sizes, a 64 MiB record, concatenated
 * gzip members, auto-detection, flush, and the framing helpers. */
#include <errno.h>
#include <unistd.h>

#include "record_util.h"

static const int comps[] = { TFREC_COMPRESSION_NONE, TFREC_COMPRESSION_ZLIB,
                             TFREC_COMPRESSION_GZIP };

static void test_names(void)
{
    CHECK_EQ(tfrec_compression_from_name("GZIP"), TFREC_COMPRESSION_GZIP);
    CHECK_EQ(tfrec_compression_from_name("zlib"), TFREC_COMPRESSION_ZLIB);
    CHECK_EQ(tfrec_compression_from_name(""), TFREC_COMPRESSION_NONE);
    CHECK_EQ(tfrec_compression_from_name("none"), TFREC_COMPRESSION_NONE);
    CHECK_EQ(tfrec_compression_from_name("Auto"), TFREC_COMPRESSION_AUTO);
    CHECK_EQ(tfrec_compression_from_name("lz4"), -1);
    CHECK(strcmp(tfrec_compression_name(TFREC_COMPRESSION_GZIP), "GZIP") == 0);
    CHECK(strcmp(tfrec_compression_name(TFREC_COMPRESSION_NONE), "NONE") == 0);
    const char *b = tfrec_deflate_backend();
    CHECK(strcmp(b, "isal") == 0 || strcmp(b, "zlib") == 0);
    tfrec_set_deflate_backend("zlib");
    CHECK(strcmp(tfrec_deflate_backend(), "zlib") == 0);
    tfrec_set_deflate_backend(NULL);
}

/* The header layout by hand: little-endian length, then the masked CRC of
 * those 8 bytes, also stored little-endian. */
static void test_header_layout(void)
{
    uint8_t h[12];
    tfrec_record_header(h, 0x0102030405060708ull);
    for (int i = 0; i < 8; i++)
        CHECK_EQ(h[i], 8 - i);
    uint32_t crc = tfrec_crc32c_mask(tfrec_crc32c(h, 8));
    CHECK_EQ(h[8] | h[9] << 8 | h[10] << 16 | (uint32_t)h[11] << 24, crc);
    /* footer = masked crc of the data; mask round-trips */
    CHECK_EQ(tfrec_record_footer_crc("123456789", 9), tfrec_crc32c_mask(0xE3069283u));
    CHECK_EQ(tfrec_crc32c_unmask(tfrec_record_footer_crc("abc", 3)), tfrec_crc32c("abc", 3));
}

static void roundtrip(const char *tag, const size_t *sizes, size_t n, uint64_t seed)
{
    for (size_t b = 0; b < 2; b++) {
        rt_use_backend(rt_backends[b]);
        for (size_t c = 0; c < 3; c++) {
            char name[64];
            snprintf(name, sizeof name, "%s-%s-%d", tag, rt_backends[b], comps[c]);
            const char *path = harness_path(name);
            int rc = rt_write(path, comps[c], sizes, n, seed);
            CHECKF(rc == 0, "%s: write %d %s", name, rc, tfrec_last_errmsg());
            tfrec_reader_options ro = TFREC_READER_OPTIONS_INIT; /* AUTO */
            const char *why = rt_verify(path, &ro, sizes, n, seed);
            CHECKF(!why, "%s (auto): %s", name, why);
            ro.compression = comps[c];
            why = rt_verify(path, &ro, sizes, n, seed);
            CHECKF(!why, "%s (explicit): %s", name, why);
            ro.use_mmap = 1; /* a mapping instead of read() into a buffer */
            why = rt_verify(path, &ro, sizes, n, seed);
            ro.use_mmap = 0;
            CHECKF(!why, "%s (mmap): %s", name, why);
            /* Read with the other backend too. */
            rt_use_backend(rt_backends[1 - b]);
            why = rt_verify(path, &ro, sizes, n, seed);
            rt_use_backend(rt_backends[b]);
            CHECKF(!why, "%s (other backend): %s", name, why);
        }
    }
    tfrec_set_deflate_backend(NULL);
}

static void test_zero_records(void)
{
    roundtrip("zero", NULL, 0, 1);
    /* NONE with no records is an empty file; compressed ones are not. */
    size_t len;
    uint8_t *p = rt_slurp(harness_path("zero-default-1"), &len);
    CHECK(p);
    free(p);
    CHECK_EQ(len, 0);
    p = rt_slurp(harness_path("zero-default-3"), &len);
    CHECK(p && len >= 18 && p[0] == 0x1f && p[1] == 0x8b);
    free(p);
}

static void test_empty_records(void)
{
    size_t sizes[5] = { 0, 0, 0, 0, 0 };
    roundtrip("empty", sizes, 5, 2);
    size_t mixed[4] = { 0, 3, 0, 1 };
    roundtrip("mixed", mixed, 4, 3);
    size_t len;
    uint8_t *p = rt_slurp(harness_path("empty-default-1"), &len);
    free(p);
    CHECK_EQ(len, 5 * 16);
}

static void test_many_sizes(void)
{
    enum { N = 600 };
    size_t sizes[N];
    uint8_t r[N * 2];
    harness_random(r, sizeof r, 77);
    for (size_t i = 0; i < N; i++) {
        if (i < 300)
            sizes[i] = i; /* every small size */
        else if (i % 100 == 0)
            sizes[i] = 256 * 1024 - 16 + i % 3 - 1; /* around the compressed buffer size */
        else if (i % 50 == 0)
            sizes[i] = 1024 * 1024 - 16 + i % 3 - 1; /* around the uncompressed one */
        else if (i % 97 == 0)
            sizes[i] = 1100000 + i; /* larger than either */
        else
            sizes[i] = (size_t)(r[2 * i] | r[2 * i + 1] << 8) % 20000;
    }
    roundtrip("many", sizes, N, 4);
}

/* Odd buffer sizes make the inflater stop at every possible point,
 * including right at the end of the stream with output still held back. */
static void test_buffer_sizes(void)
{
    enum { N = 120 };
    size_t sizes[N];
    for (size_t i = 0; i < N; i++)
        sizes[i] = (i * 7777) % 9000;
    static const size_t bufs[] = { 64, 100, 4096, 65543 };
    for (size_t b = 0; b < 2; b++) {
        rt_use_backend(rt_backends[b]);
        for (size_t c = 0; c < 3; c++) {
            CHECK(rt_write(harness_path("bufs"), comps[c], sizes, N, 12) == 0);
            /* buffer sizes matter only without a mapping (the default) */
            for (size_t k = 0; k < sizeof bufs / sizeof bufs[0]; k++) {
                tfrec_reader_options ro = { .struct_size = sizeof ro, .buffer_size = bufs[k] };
                const char *why = rt_verify(harness_path("bufs"), &ro, sizes, N, 12);
                CHECKF(!why, "%s comp %d buffer %zu: %s", rt_backends[b], comps[c], bufs[k], why);
            }
            /* and a small writer buffer */
            tfrec_writer_options wo = { .struct_size = sizeof wo,
                                        .compression = comps[c],
                                        .buffer_size = 100 };
            tfrec_writer *w;
            CHECK(tfrec_writer_open(&w, harness_path("bufs-w"), &wo) == 0);
            uint8_t *buf = malloc(9000);
            for (size_t i = 0; i < N; i++) {
                rt_payload(buf, sizes[i], 12, i);
                CHECK(tfrec_writer_write(w, buf, sizes[i]) == 0);
                if (i % 17 == 0)
                    CHECK(tfrec_writer_flush(w) == 0);
            }
            free(buf);
            CHECK(tfrec_writer_close(w) == 0);
            tfrec_writer_free(w);
            const char *why = rt_verify(harness_path("bufs-w"), NULL, sizes, N, 12);
            CHECKF(!why, "small writer buffer, comp %d: %s", comps[c], why);
        }
    }
    tfrec_set_deflate_backend(NULL);
}

static void test_large_record(void)
{
    size_t sizes[3] = { 10, (size_t)64 << 20, 5 };
    const char *path = harness_path("big.gz");
    for (size_t c = 0; c < 3; c++) {
        int rc = rt_write(path, comps[c], sizes, 3, 5);
        CHECKF(rc == 0, "write %d %s", rc, tfrec_last_errmsg());
        const char *why = rt_verify(path, NULL, sizes, 3, 5);
        CHECKF(!why, "compression %d: %s", comps[c], why);
        tfrec_reader_options mapped = TFREC_READER_OPTIONS_INIT;
        mapped.use_mmap = 1;
        why = rt_verify(path, &mapped, sizes, 3, 5);
        CHECKF(!why, "compression %d with mmap: %s", comps[c], why);
    }
}

/* Our compressed output is an ordinary stream: zlib alone inflates it to
 * exactly the bytes of the uncompressed file. */
static void test_output_is_standard(void)
{
    size_t sizes[50];
    for (size_t i = 0; i < 50; i++)
        sizes[i] = i * 997 % 5000;
    CHECK(rt_write(harness_path("std-none"), TFREC_COMPRESSION_NONE, sizes, 50, 6) == 0);
    size_t plain_len;
    uint8_t *plain = rt_slurp(harness_path("std-none"), &plain_len);
    CHECK(plain);
    for (size_t b = 0; b < 2; b++) {
        rt_use_backend(rt_backends[b]);
        for (int c = TFREC_COMPRESSION_ZLIB; c <= TFREC_COMPRESSION_GZIP; c++) {
            CHECK(rt_write(harness_path("std-z"), c, sizes, 50, 6) == 0);
            size_t zlen, ulen;
            uint8_t *z = rt_slurp(harness_path("std-z"), &zlen);
            CHECK(z);
            if (c == TFREC_COMPRESSION_GZIP)
                CHECK(z[0] == 0x1f && z[1] == 0x8b);
            else
                CHECK((z[0] & 0x0f) == 8 && ((z[0] << 8) | z[1]) % 31 == 0);
            uint8_t *u = rt_zlib_inflate(z, zlen, &ulen);
            free(z);
            CHECKF(u, "zlib cannot inflate %s output", rt_backends[b]);
            int same = ulen == plain_len && memcmp(u, plain, ulen) == 0;
            free(u);
            CHECKF(same, "backend %s compression %d: inflated bytes differ", rt_backends[b], c);
        }
    }
    tfrec_set_deflate_backend(NULL);
    free(plain);
}

/* Streams written by zlib itself read back, and so do several gzip
 * members one after another (`cat a.gz b.gz`). */
static void test_concatenated_gzip(void)
{
    size_t sa[3] = { 5, 0, 3000 }, sb[2] = { 77, 1 };
    CHECK(rt_write(harness_path("cat-a"), TFREC_COMPRESSION_NONE, sa, 3, 8) == 0);
    size_t la, lb;
    uint8_t *a = rt_slurp(harness_path("cat-a"), &la);
    CHECK(rt_write(harness_path("cat-b"), TFREC_COMPRESSION_GZIP, sb, 2, 9) == 0);
    uint8_t *b = rt_slurp(harness_path("cat-b"), &lb);
    size_t za;
    uint8_t *ga = rt_zlib_compress(a, la, 1, &za); /* member 1 by zlib */
    CHECK(a && b && ga);
    /* member 1 (zlib's), member 2 (ours), member 3 (zlib's, same as 1) */
    uint8_t *all = malloc(za * 2 + lb);
    memcpy(all, ga, za);
    memcpy(all + za, b, lb);
    memcpy(all + za + lb, ga, za);
    CHECK(rt_spit(harness_path("cat.gz"), all, za * 2 + lb) == 0);
    for (size_t k = 0; k < 2; k++) {
        rt_use_backend(rt_backends[k]);
        tfrec_reader *r;
        CHECK(tfrec_reader_open(&r, harness_path("cat.gz"), NULL) == 0);
        CHECK_EQ(tfrec_reader_compression(r), TFREC_COMPRESSION_GZIP);
        size_t want[8] = { 5, 0, 3000, 77, 1, 5, 0, 3000 }, got = 0;
        const uint8_t *d;
        size_t len;
        int rc;
        while ((rc = tfrec_reader_next(r, &d, &len)) == TFREC_OK) {
            CHECK(got < 8);
            CHECK_EQ(len, want[got]);
            got++;
        }
        CHECKF(rc == TFREC_END, "backend %s: %d %s", rt_backends[k], rc, tfrec_reader_errmsg(r));
        CHECK_EQ(got, 8);
        tfrec_reader_free(r);
    }
    tfrec_set_deflate_backend(NULL);
    free(a);
    free(b);
    free(ga);
    free(all);
}

static int detect_file(const char *name, const void *bytes, size_t n)
{
    const char *p = harness_path(name);
    if (rt_spit(p, bytes, n) != 0)
        return -100;
    tfrec_reader *r;
    int rc = tfrec_reader_open(&r, p, NULL);
    if (rc)
        return rc;
    int c = tfrec_reader_compression(r);
    tfrec_reader_free(r);
    return c;
}

static void test_autodetect(void)
{
    /* A record of length 376 starts 78 01: a valid zlib header. The valid
     * length CRC must win, and the file must read as NONE. */
    uint8_t data[376], rec[376 + 16];
    harness_random(data, sizeof data, 10);
    size_t n = rt_frame(rec, data, sizeof data);
    CHECK(rec[0] == 0x78 && rec[1] == 0x01);
    CHECK(((rec[0] << 8) | rec[1]) % 31 == 0);
    CHECK_EQ(detect_file("det-376", rec, n), TFREC_COMPRESSION_NONE);
    tfrec_reader *r;
    CHECK(tfrec_reader_open(&r, harness_path("det-376"), NULL) == 0);
    const uint8_t *d;
    size_t len;
    CHECK(tfrec_reader_next(r, &d, &len) == TFREC_OK);
    CHECK(len == 376 && memcmp(d, data, 376) == 0);
    CHECK(tfrec_reader_next(r, &d, &len) == TFREC_END);
    tfrec_reader_free(r);

    size_t zl;
    uint8_t *z = rt_zlib_compress(rec, n, 0, &zl);
    CHECK_EQ(detect_file("det-zlib", z, zl), TFREC_COMPRESSION_ZLIB);
    free(z);
    z = rt_zlib_compress(rec, n, 1, &zl);
    CHECK_EQ(detect_file("det-gzip", z, zl), TFREC_COMPRESSION_GZIP);
    free(z);
    CHECK_EQ(detect_file("det-empty", "", 0), TFREC_COMPRESSION_NONE);
    CHECK_EQ(detect_file("det-short", "ab", 2), TFREC_COMPRESSION_NONE);
    /* 0x78 0x02 is no zlib header (0x7802 % 31 != 0): NONE, and a bad header. */
    uint8_t junk[20] = { 0x78, 0x02 };
    CHECK_EQ(detect_file("det-junk", junk, sizeof junk), TFREC_COMPRESSION_NONE);
}

/* After flush, everything written so far can be read from the partial
 * (temporary) file, compressed or not. */
static void flush_case(size_t b)
{
    for (size_t c = 0; c < 3; c++) {
        char dir[4200];
        snprintf(dir, sizeof dir, "%s/flush%zu-%zu", harness_tmpdir(), b, c);
        CHECK(mkdir(dir, 0700) == 0);
        char path[4300];
        snprintf(path, sizeof path, "%s/out", dir);
        tfrec_writer_options o = { .struct_size = sizeof o, .compression = comps[c] };
        tfrec_writer *w;
        CHECK(tfrec_writer_open(&w, path, &o) == 0);
        CHECK(tfrec_writer_write(w, "hello", 5) == 0);
        CHECK(tfrec_writer_write(w, "world!", 6) == 0);
        CHECK(tfrec_writer_flush(w) == 0);
        CHECK(tfrec_writer_bytes_out(w) > 0);
        CHECK_EQ(tfrec_writer_records(w), 2);
        /* find the temporary file */
        DIR *d = opendir(dir);
        struct dirent *e;
        char tmp[4600] = "";
        while ((e = readdir(d)))
            if (strncmp(e->d_name, "out.tmp-", 8) == 0)
                snprintf(tmp, sizeof tmp, "%s/%s", dir, e->d_name);
        closedir(d);
        CHECK(tmp[0]);
        tfrec_reader_options ro = { .struct_size = sizeof ro, .compression = comps[c] };
        tfrec_reader *r;
        CHECK(tfrec_reader_open(&r, tmp, &ro) == 0);
        const uint8_t *data;
        size_t len;
        CHECK(tfrec_reader_next(r, &data, &len) == 0 && len == 5 && !memcmp(data, "hello", 5));
        CHECK(tfrec_reader_next(r, &data, &len) == 0 && len == 6 && !memcmp(data, "world!", 6));
        int rc = tfrec_reader_next(r, &data, &len);
        /* the compressed stream is not finished yet */
        CHECK_EQ(rc, c == 0 ? TFREC_END : TFREC_E_TRUNCATED);
        tfrec_reader_free(r);
        CHECK(tfrec_writer_close(w) == 0);
        tfrec_writer_free(w);
        CHECK(tfrec_reader_open(&r, path, NULL) == 0);
        CHECK(tfrec_reader_next(r, &data, &len) == 0 && len == 5);
        CHECK(tfrec_reader_next(r, &data, &len) == 0 && len == 6);
        CHECK(tfrec_reader_next(r, &data, &len) == TFREC_END);
        tfrec_reader_free(r);
    }
}

static void test_flush(void)
{
    for (size_t b = 0; b < 2; b++) {
        rt_use_backend(rt_backends[b]);
        flush_case(b);
    }
    tfrec_set_deflate_backend(NULL);
}

/* Reading through a caller transport, and the stats. */
static void test_memory_source_and_stats(void)
{
    uint8_t buf[3 * (100 + 16)], data[100];
    size_t n = 0;
    for (int i = 0; i < 3; i++) {
        harness_random(data, sizeof data, 20 + i);
        n += rt_frame(buf + n, data, sizeof data);
    }
    tfrec_io io = TFREC_IO_INIT;
    CHECK(tfrec_io_open_memory(&io, buf, n) == 0);
    tfrec_reader *r;
    CHECK(tfrec_reader_open_io(&r, &io, "mem", NULL) == 0);
    const uint8_t *d;
    size_t len;
    uint64_t offsets[3];
    for (int i = 0; i < 3; i++) {
        CHECK(tfrec_reader_next(r, &d, &len) == 0);
        offsets[i] = tfrec_reader_offset(r);
    }
    CHECK(tfrec_reader_next(r, &d, &len) == TFREC_END);
    CHECK(tfrec_reader_next(r, &d, &len) == TFREC_END);
    CHECK(offsets[0] == 0 && offsets[1] == 116 && offsets[2] == 232);
    tfrec_reader_stats st = TFREC_READER_STATS_INIT;
    tfrec_reader_stats_get(r, &st);
    CHECK(st.records == 3 && st.bytes == 300 && st.skipped_regions == 0 && st.skipped_bytes == 0);
    tfrec_reader_free(r);
}

static void test_bad_options(void)
{
    tfrec_reader *r = (tfrec_reader *)1;
    tfrec_reader_options ro = { .struct_size = sizeof ro, .compression = 9 };
    CHECK_EQ(tfrec_reader_open(&r, harness_path("det-376"), &ro), TFREC_E_INVALID);
    CHECK(r == NULL);
    CHECK_EQ(tfrec_reader_open(&r, harness_path("does-not-exist"), NULL), TFREC_E_NOT_FOUND);
    CHECK(rt_contains(tfrec_last_errmsg(), "does-not-exist"));
    tfrec_writer *w = (tfrec_writer *)1;
    tfrec_writer_options wo = { .struct_size = sizeof wo, .level = 10 };
    CHECK_EQ(tfrec_writer_open(&w, harness_path("x"), &wo), TFREC_E_INVALID);
    CHECK(w == NULL);
    CHECK_EQ(rt_count_files(harness_tmpdir(), "x.tmp-"), 0);
}

/* Levels 1..9 all give valid output, and higher levels are not larger
 * on compressible data (the mapping is monotonic). */
static void test_levels(void)
{
    enum { N = 300 };
    static uint8_t text[N * 200];
    for (size_t i = 0; i < sizeof text; i++)
        text[i] = "the quick brown fox jumps over the lazy dog 0123456789"[(i * 7 + i / 13) % 54];
    for (size_t b = 0; b < 2; b++) {
        rt_use_backend(rt_backends[b]);
        uint64_t prev = UINT64_MAX;
        for (int level = 1; level <= 9; level += 4) {
            tfrec_writer_options o = { .struct_size = sizeof o,
                                       .compression = TFREC_COMPRESSION_GZIP,
                                       .level = level };
            tfrec_writer *w;
            CHECK(tfrec_writer_open(&w, harness_path("lvl"), &o) == 0);
            for (int i = 0; i < N; i++)
                CHECK(tfrec_writer_write(w, text + i * 200, 200) == 0);
            CHECK(tfrec_writer_close(w) == 0);
            uint64_t out = tfrec_writer_bytes_out(w);
            tfrec_writer_free(w);
            CHECKF(out <= prev, "%s level %d: %llu bytes > %llu", rt_backends[b], level,
                   (unsigned long long)out, (unsigned long long)prev);
            CHECK(out < sizeof text / 4);
            prev = out;
            size_t zlen, ulen;
            uint8_t *z = rt_slurp(harness_path("lvl"), &zlen);
            CHECK_EQ(zlen, out);
            uint8_t *u = rt_zlib_inflate(z, zlen, &ulen);
            free(z);
            CHECK(u && ulen == N * 216);
            free(u);
        }
    }
    tfrec_set_deflate_backend(NULL);
}

/* Fill the stack below the caller with small numbers, so that the library's
 * frames later start on dirty memory: uninitialised fields that look like
 * valid settings (an ISA-L window size, say) then change the output. */
__attribute__((noinline)) static void dirty_stack(int pattern)
{
    volatile uint16_t junk[128 * 1024];
    for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++)
        junk[i] = (uint16_t)(pattern + 8); /* small numbers look like valid settings */
    __asm__ volatile("" : : "r"(junk) : "memory");
}

/* Same records, same options: byte-identical files, every time (and so
 * the same compression ratio however the stack or heap looked before). */
static void test_deterministic_output(void)
{
    enum { N = 400 };
    static uint8_t text[N * 300];
    static const char *const tok[] = { "image/class/label", "image/height", "JPEG", "RGB",
                                       "n01440764",         "features",     "0.25", "train_" };
    uint8_t rnd[4];
    for (size_t i = 0; i < sizeof text;) { /* tf.Example-like: keys and random numbers */
        harness_random(rnd, sizeof rnd, i);
        if (rnd[0] & 3) {
            for (const char *t = tok[rnd[1] % 8]; *t && i < sizeof text; t++)
                text[i++] = (uint8_t)*t;
        } else {
            for (int k = 1; k < 4 && i < sizeof text; k++)
                text[i++] = rnd[k];
        }
    }
    for (size_t b = 0; b < 2; b++) {
        rt_use_backend(rt_backends[b]);
        for (int c = TFREC_COMPRESSION_ZLIB; c <= TFREC_COMPRESSION_GZIP; c++) {
            uint8_t *first = NULL;
            size_t first_len = 0;
            for (int round = 0; round < 3; round++) {
                dirty_stack(round);
                tfrec_writer_options o = { .struct_size = sizeof o, .compression = c };
                tfrec_writer *w;
                CHECK(tfrec_writer_open(&w, harness_path("det"), &o) == 0);
                for (int i = 0; i < N; i++)
                    CHECK(tfrec_writer_write(w, text + i * 300, 300) == 0);
                CHECK(tfrec_writer_close(w) == 0);
                tfrec_writer_free(w);
                size_t len;
                uint8_t *p = rt_slurp(harness_path("det"), &len);
                CHECK(p && len < sizeof text / 2);
                if (!first) {
                    first = p;
                    first_len = len;
                } else {
                    int same = len == first_len && memcmp(p, first, len) == 0;
                    free(p);
                    CHECKF(same, "%s comp %d round %d: %zu bytes, first run %zu", rt_backends[b], c,
                           round, len, first_len);
                }
            }
            free(first);
        }
    }
    tfrec_set_deflate_backend(NULL);
}

TESTS(TEST(test_names), TEST(test_header_layout), TEST(test_zero_records), TEST(test_empty_records),
      TEST(test_many_sizes), TEST(test_buffer_sizes), TEST(test_large_record),
      TEST(test_output_is_standard), TEST(test_concatenated_gzip), TEST(test_autodetect),
      TEST(test_flush), TEST(test_memory_source_and_stats), TEST(test_bad_options),
      TEST(test_levels), TEST(test_deterministic_output))

/* Hostile input: each kind of damage gives its own code, and the message
 * names the file and the byte offset. Also skip_corrupt resynchronisation. */
#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include "record/reader_internal.h"
#include "record_util.h"

static long max_rss_kib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* A file of `n` records of the given sizes built in memory; returns its
 * length and each record's offset. */
static size_t build(uint8_t *out, const size_t *sizes, size_t n, uint64_t *offsets)
{
    size_t at = 0;
    uint8_t data[4096];
    for (size_t i = 0; i < n; i++) {
        rt_payload(data, sizes[i], 42, i);
        if (offsets)
            offsets[i] = at;
        at += rt_frame(out + at, data, sizes[i]);
    }
    return at;
}

/* Read a file until something other than OK; return that code, the number
 * of good records before it, and the message. */
static int read_until_error_once(const char *path, const tfrec_reader_options *o, size_t *good,
                                 char *msg, size_t msg_len)
{
    tfrec_reader *r;
    *good = 0;
    int rc = tfrec_reader_open(&r, path, o);
    if (rc) {
        snprintf(msg, msg_len, "%s", tfrec_last_errmsg());
        return rc;
    }
    const uint8_t *d;
    size_t len;
    while ((rc = tfrec_reader_next(r, &d, &len)) == TFREC_OK)
        (*good)++;
    snprintf(msg, msg_len, "%s", tfrec_reader_errmsg(r));
    /* the error sticks */
    int again = tfrec_reader_next(r, &d, &len);
    tfrec_reader_free(r);
    return again == rc ? rc : -1000;
}

/* Both ways of reading a local file (mapped, and read() into a buffer)
 * must give the same code, count and message. */
static int read_until_error(const char *path, const tfrec_reader_options *o, size_t *good,
                            char *msg, size_t msg_len)
{
    int rc = read_until_error_once(path, o, good, msg, msg_len);
    char msg2[600];
    size_t good2;
    tfrec_reader_options mapped = TFREC_READER_OPTIONS_INIT;
    if (o)
        mapped = *o;
    mapped.use_mmap = 1;
    int rc2 = read_until_error_once(path, &mapped, &good2, msg2, sizeof msg2);
    /* where a corrupt deflate stream is noticed depends on how much input
     * the inflater was given at once, so only that position may differ */
    int same_msg = strcmp(msg, msg2) == 0 ||
                   (rc == TFREC_E_COMPRESSION && rt_contains(msg2, "near compressed offset"));
    if (rc2 != rc || good2 != *good || !same_msg) {
        char first[600];
        snprintf(first, sizeof first, "%s", msg);
        snprintf(msg, msg_len, "mapped and read() paths differ: %d/%zu '%.200s' vs %d/%zu '%.200s'",
                 rc, *good, first, rc2, good2, msg2);
        return -2000;
    }
    return rc;
}

static const size_t sizes5[5] = { 100, 0, 2000, 33, 500 };

/* A memory source that notes the heap size at every read: the reader's
 * buffer is at its largest when the source runs dry. */
typedef struct watched {
    const uint8_t *p;
    size_t len, pos;
    size_t peak_heap;
} watched;

static size_t heap_now(void)
{
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

static ptrdiff_t watched_read(void *ctx, void *buf, size_t n)
{
    watched *w = ctx;
    size_t h = heap_now();
    if (h > w->peak_heap)
        w->peak_heap = h;
    if (n > w->len - w->pos)
        n = w->len - w->pos;
    memcpy(buf, w->p + w->pos, n);
    w->pos += n;
    return (ptrdiff_t)n;
}

static int watched_close(void *ctx, int commit)
{
    (void)ctx, (void)commit;
    return 0;
}

/* A header with a VALID length CRC claiming 2^60 bytes: too large by
 * default, and with no limit the reader reads what is there and reports a
 * truncated record without ever allocating more than the file holds.
 * Runs first so the peak RSS is this test's. */
static void test_absurd_length(void)
{
    enum { BODY = 3 << 20 };
    uint8_t *file = calloc(1, 12 + BODY);
    tfrec_record_header(file, 1ull << 60);
    const char *path = harness_path("absurd");
    CHECK(rt_spit(path, file, 12 + BODY) == 0);
    size_t good;
    char msg[600];
    int rc = read_until_error(path, NULL, &good, msg, sizeof msg);
    CHECKF(rc == TFREC_E_RECORD_TOO_LARGE, "%d %s", rc, msg);
    CHECK(rt_contains(msg, path) && rt_contains(msg, "at offset 0 "));
    CHECK(rt_contains(msg, "1152921504606846976"));
    long before = max_rss_kib();
    tfrec_reader_options o = { .struct_size = sizeof o, .max_record_size = UINT64_MAX };
    rc = read_until_error(path, &o, &good, msg, sizeof msg);
    CHECKF(rc == TFREC_E_TRUNCATED, "%d %s", rc, msg);
    CHECK(rt_contains(msg, path) && rt_contains(msg, "at offset 0:"));
    long grown = max_rss_kib() - before;
    CHECKF(grown < 64 * 1024, "peak RSS grew by %ld KiB for a %d-byte file", grown, 12 + BODY);
    /* Allocation, not just touched pages: watch the heap from the source. */
    watched wt = { .p = file, .len = 12 + BODY };
    size_t base = heap_now();
    tfrec_io io = {
        .struct_size = sizeof io, .ctx = &wt, .read = watched_read, .close = watched_close
    };
    tfrec_reader *r;
    CHECK(tfrec_reader_open_io(&r, &io, "watched", &o) == 0);
    const uint8_t *d;
    size_t len;
    CHECK_EQ(tfrec_reader_next(r, &d, &len), TFREC_E_TRUNCATED);
    tfrec_reader_free(r);
    CHECK(wt.pos == wt.len);
    CHECKF(wt.peak_heap < base + 4 * (size_t)BODY, "heap grew by %zu bytes for a %d-byte input",
           wt.peak_heap - base, 12 + BODY);
    /* Same through GZIP: memory is bounded by the uncompressed bytes. */
    size_t zl;
    uint8_t *z = rt_zlib_compress(file, 12 + BODY, 1, &zl);
    CHECK(rt_spit(harness_path("absurd.gz"), z, zl) == 0);
    rc = read_until_error(harness_path("absurd.gz"), &o, &good, msg, sizeof msg);
    CHECKF(rc == TFREC_E_TRUNCATED, "%d %s", rc, msg);
    CHECK(rt_contains(msg, "at uncompressed offset 0:"));
    grown = max_rss_kib() - before;
    CHECKF(grown < 64 * 1024, "peak RSS grew by %ld KiB", grown);
    free(z);
    free(file);
}

static void test_bad_length_crc(void)
{
    uint8_t file[8192];
    uint64_t off[5];
    size_t n = build(file, sizes5, 5, off);
    file[off[3] + 9] ^= 0x40; /* in the stored length CRC */
    CHECK(rt_spit(harness_path("badlen"), file, n) == 0);
    size_t good;
    char msg[600], want[64];
    int rc = read_until_error(harness_path("badlen"), NULL, &good, msg, sizeof msg);
    CHECKF(rc == TFREC_E_BAD_LENGTH_CRC, "%d %s", rc, msg);
    CHECK_EQ(good, 3);
    snprintf(want, sizeof want, "at offset %llu ", (unsigned long long)off[3]);
    CHECKF(rt_contains(msg, want) && rt_contains(msg, harness_path("badlen")) &&
               rt_contains(msg, "bad length CRC"),
           "%s", msg);
    /* a flipped length byte is caught the same way */
    n = build(file, sizes5, 5, off);
    file[off[1]] ^= 1;
    CHECK(rt_spit(harness_path("badlen2"), file, n) == 0);
    rc = read_until_error(harness_path("badlen2"), NULL, &good, msg, sizeof msg);
    CHECK(rc == TFREC_E_BAD_LENGTH_CRC && good == 1);
}

static void test_bad_data_crc(void)
{
    uint8_t file[8192];
    uint64_t off[5];
    size_t n = build(file, sizes5, 5, off);
    file[off[2] + 12 + 1000] ^= 0x01;
    uint32_t stored = file[off[2] + 12 + 2000] | file[off[2] + 12 + 2001] << 8 |
                      file[off[2] + 12 + 2002] << 16 | (uint32_t)file[off[2] + 12 + 2003] << 24;
    uint32_t actual = tfrec_record_footer_crc(file + off[2] + 12, 2000);
    CHECK(rt_spit(harness_path("baddata"), file, n) == 0);
    size_t good;
    char msg[600], want[128];
    int rc = read_until_error(harness_path("baddata"), NULL, &good, msg, sizeof msg);
    CHECKF(rc == TFREC_E_BAD_DATA_CRC, "%d %s", rc, msg);
    CHECK_EQ(good, 2);
    snprintf(want, sizeof want,
             "bad data CRC in record at offset %llu (expected 0x%08x, got 0x%08x",
             (unsigned long long)off[2], stored, actual);
    CHECKF(rt_contains(msg, want), "%s\nwanted: %s", msg, want);
    CHECK(rt_contains(msg, harness_path("baddata")));
}

static void cut_case(const char *name, size_t cut_at, int want_code, size_t want_good,
                     uint64_t want_off)
{
    uint8_t file[8192];
    uint64_t off[5];
    build(file, sizes5, 5, off);
    CHECK(rt_spit(harness_path(name), file, cut_at) == 0);
    size_t good;
    char msg[600], want[64];
    int rc = read_until_error(harness_path(name), NULL, &good, msg, sizeof msg);
    CHECKF(rc == want_code, "%s: %d %s", name, rc, msg);
    CHECK_EQ(good, want_good);
    if (want_code == TFREC_END)
        return;
    snprintf(want, sizeof want, "at offset %llu", (unsigned long long)want_off);
    CHECKF(rt_contains(msg, want) && rt_contains(msg, harness_path(name)), "%s", msg);
}

static void test_truncated(void)
{
    uint64_t off[5];
    uint8_t file[8192];
    size_t n = build(file, sizes5, 5, off);
    /* header cut short: 5 of 12 bytes left is stray bytes at the end */
    cut_case("cut-header", off[4] + 5, TFREC_E_TRAILING_GARBAGE, 4, off[4]);
    /* valid header, data cut */
    cut_case("cut-data", off[2] + 12 + 700, TFREC_E_TRUNCATED, 2, off[2]);
    /* data complete, footer cut */
    cut_case("cut-footer", n - 2, TFREC_E_TRUNCATED, 4, off[4]);
    /* exactly at a boundary: clean */
    cut_case("cut-clean", off[3], TFREC_END, 3, 0);
}

static void test_trailing_garbage(void)
{
    uint8_t file[8192];
    uint64_t off[5];
    size_t n = build(file, sizes5, 5, off);
    for (size_t extra = 1; extra <= 11; extra += 5) {
        memset(file + n, 0xAB, extra);
        CHECK(rt_spit(harness_path("garbage"), file, n + extra) == 0);
        size_t good;
        char msg[600], want[80];
        int rc = read_until_error(harness_path("garbage"), NULL, &good, msg, sizeof msg);
        CHECKF(rc == TFREC_E_TRAILING_GARBAGE, "%d %s", rc, msg);
        CHECK_EQ(good, 5);
        snprintf(want, sizeof want, "%zu stray bytes at the end, at offset %zu", extra, n);
        CHECKF(rt_contains(msg, want), "%s", msg);
    }
    /* 12 or more junk bytes are a (bad) header */
    memset(file + n, 0xAB, 12);
    CHECK(rt_spit(harness_path("garbage12"), file, n + 12) == 0);
    size_t good;
    char msg[600];
    CHECK(read_until_error(harness_path("garbage12"), NULL, &good, msg, sizeof msg) ==
          TFREC_E_BAD_LENGTH_CRC);
}

static void test_corrupt_compressed(void)
{
    uint8_t file[8192];
    size_t n = build(file, sizes5, 5, NULL);
    for (int gzip = 0; gzip <= 1; gzip++)
        for (size_t b = 0; b < 2; b++) {
            rt_use_backend(rt_backends[b]);
            size_t zl;
            uint8_t *z = rt_zlib_compress(file, n, gzip, &zl);
            CHECK(z);
            size_t good;
            char msg[600];
            const char *p = harness_path("corrupt.z");
            /* wrong checksum in the trailer: all records read, then the error */
            z[zl - (gzip ? 8 : 1)] ^= 0x10;
            CHECK(rt_spit(p, z, zl) == 0);
            int rc = read_until_error(p, NULL, &good, msg, sizeof msg);
            CHECKF(rc == TFREC_E_COMPRESSION, "%s gzip=%d: %d %s", rt_backends[b], gzip, rc, msg);
            CHECK(rt_contains(msg, p) && rt_contains(msg, "compressed offset"));
            CHECK(good <= 5);
            z[zl - (gzip ? 8 : 1)] ^= 0x10;
            /* a bad block type right at the start of the deflate data */
            size_t hdr = gzip ? 10 : 2;
            z[hdr] |= 0x06; /* BTYPE = 11, reserved */
            CHECK(rt_spit(p, z, zl) == 0);
            rc = read_until_error(p, NULL, &good, msg, sizeof msg);
            CHECKF(rc == TFREC_E_COMPRESSION && good == 0, "%s: %d %s", rt_backends[b], rc, msg);
            /* cut short */
            uint8_t *z2 = rt_zlib_compress(file, n, gzip, &zl);
            CHECK(rt_spit(p, z2, zl - 6) == 0);
            rc = read_until_error(p, NULL, &good, msg, sizeof msg);
            CHECKF(rc == TFREC_E_TRUNCATED, "%s: %d %s", rt_backends[b], rc, msg);
            CHECK(rt_contains(msg, "truncated"));
            /* only the first bytes of the header */
            CHECK(rt_spit(p, z2, 5) == 0);
            rc = read_until_error(p, NULL, &good, msg, sizeof msg);
            CHECKF(rc == TFREC_E_TRUNCATED && good == 0, "%s: %d %s", rt_backends[b], rc, msg);
            /* junk after the end of the stream */
            uint8_t *z3 = malloc(zl + 3);
            memcpy(z3, z2, zl);
            memcpy(z3 + zl, "xyz", 3);
            CHECK(rt_spit(p, z3, zl + 3) == 0);
            rc = read_until_error(p, NULL, &good, msg, sizeof msg);
            CHECKF(rc == TFREC_E_TRAILING_GARBAGE && good == 5, "%s: %d %s", rt_backends[b], rc,
                   msg);
            char want[64];
            snprintf(want, sizeof want, "at compressed offset %zu", zl);
            CHECKF(rt_contains(msg, want), "%s", msg);
            free(z);
            free(z2);
            free(z3);
        }
    tfrec_set_deflate_backend(NULL);
}

/* A file with four kinds of damage and a decoy: records 0..9, record 3's
 * data corrupted, record 6's length CRC corrupted, junk containing a valid
 * header that claims more bytes than follow, and 5 stray bytes at the end. */
static size_t build_damaged(uint8_t *file, uint64_t *want_skipped)
{
    static const size_t sizes[10] = { 10, 200, 0, 3000, 50, 60, 70, 80, 90, 1 };
    uint64_t off[10];
    uint8_t tmp[16384];
    size_t n = build(tmp, sizes, 10, off);
    tmp[off[3] + 12 + 5] ^= 0xff;
    tmp[off[6] + 8] ^= 0xff;
    /* decoy goes between records 7 and 8 */
    size_t at = off[8];
    memcpy(file, tmp, at);
    uint8_t decoy[40];
    memset(decoy, 0x55, sizeof decoy);
    tfrec_record_header(decoy + 10, 100000);
    memcpy(file + at, decoy, sizeof decoy);
    memcpy(file + at + sizeof decoy, tmp + at, n - at);
    n += sizeof decoy;
    memcpy(file + n, "\1\2\3\4\5", 5);
    n += 5;
    *want_skipped = (3000 + 16) + (70 + 16) + sizeof decoy + 5;
    return n;
}

static void check_skip(const char *path, int compressed, int use_mmap)
{
    static const size_t want_sizes[8] = { 10, 200, 0, 50, 60, 80, 90, 1 };
    tfrec_reader_options o = TFREC_READER_OPTIONS_INIT;
    o.skip_corrupt = 1;
    o.use_mmap = use_mmap;
    tfrec_reader *r;
    CHECK(tfrec_reader_open(&r, path, &o) == 0);
    const uint8_t *d;
    size_t len, got = 0;
    int rc;
    uint64_t regions_seen = 0;
    while ((rc = tfrec_reader_next(r, &d, &len)) == TFREC_OK) {
        CHECK(got < 8);
        size_t idx[8] = { 0, 1, 2, 4, 5, 7, 8, 9 };
        uint8_t want[256];
        CHECKF(len == want_sizes[got], "record %zu: len %zu", got, len);
        rt_payload(want, len, 42, idx[got]);
        CHECK(memcmp(want, d, len) == 0);
        tfrec_reader_stats st = TFREC_READER_STATS_INIT;
        tfrec_reader_stats_get(r, &st);
        if (st.skipped_regions > regions_seen) {
            uint64_t at, bytes;
            int code = tfrec_reader_last_skip(r, &at, &bytes);
            if (regions_seen == 0)
                CHECKF(code == TFREC_E_BAD_DATA_CRC && bytes == 3016, "%d %llu", code,
                       (unsigned long long)bytes);
            if (regions_seen == 1)
                CHECK(code == TFREC_E_BAD_LENGTH_CRC && bytes == 86);
            CHECK(rt_contains(tfrec_reader_errmsg(r),
                              compressed ? "uncompressed offset" : "at offset"));
            regions_seen = st.skipped_regions;
        }
        got++;
    }
    CHECKF(rc == TFREC_END, "%d %s", rc, tfrec_reader_errmsg(r));
    CHECK_EQ(got, 8);
    tfrec_reader_stats st = TFREC_READER_STATS_INIT;
    tfrec_reader_stats_get(r, &st);
    uint64_t want_skipped;
    uint8_t scratch[16384];
    build_damaged(scratch, &want_skipped);
    CHECK_EQ(st.skipped_regions, 4);
    CHECK_EQ(st.skipped_bytes, want_skipped);
    CHECK_EQ(st.records, 8);
    uint64_t bytes;
    CHECK_EQ(tfrec_reader_last_skip(r, NULL, &bytes), TFREC_E_TRAILING_GARBAGE);
    CHECK_EQ(bytes, 5);
    tfrec_reader_free(r);
}

static void test_skip_corrupt(void)
{
    static uint8_t file[20000];
    uint64_t want_skipped;
    size_t n = build_damaged(file, &want_skipped);
    CHECK(rt_spit(harness_path("damaged"), file, n) == 0);
    check_skip(harness_path("damaged"), 0, -1);
    check_skip(harness_path("damaged"), 0, 1);
    /* the same damage inside a GZIP stream: resync on uncompressed offsets */
    size_t zl;
    uint8_t *z = rt_zlib_compress(file, n, 1, &zl);
    CHECK(rt_spit(harness_path("damaged.gz"), z, zl) == 0);
    free(z);
    check_skip(harness_path("damaged.gz"), 1, -1);
    check_skip(harness_path("damaged.gz"), 1, 1);
    /* without the option, the first problem stops the reader */
    size_t good;
    char msg[600];
    CHECK(read_until_error(harness_path("damaged"), NULL, &good, msg, sizeof msg) ==
          TFREC_E_BAD_DATA_CRC);
    CHECK_EQ(good, 3);
}

/* Read a stream held in memory with skip_corrupt on, to its end; returns
 * the final code and sets the stats and the reader's work counter (bytes
 * CRC'd or moved inside its buffer). */
static int resync_all(const uint8_t *p, size_t n, size_t buffer_size, tfrec_reader_stats *st,
                      uint64_t *work, size_t *records)
{
    tfrec_io io = TFREC_IO_INIT;
    if (tfrec_io_open_memory(&io, p, n))
        return -1000;
    tfrec_reader_options o = TFREC_READER_OPTIONS_INIT;
    o.skip_corrupt = 1;
    o.buffer_size = buffer_size;
    tfrec_reader *r;
    int rc = tfrec_reader_open_io(&r, &io, "hostile", &o);
    if (rc)
        return rc;
    const uint8_t *d;
    size_t len;
    *records = 0;
    while ((rc = tfrec_reader_next(r, &d, &len)) == TFREC_OK)
        (*records)++;
    *st = (tfrec_reader_stats)TFREC_READER_STATS_INIT;
    tfrec_reader_stats_get(r, st);
    *work = r->work;
    tfrec_reader_free(r);
    return rc;
}

/* n bytes of 12-byte headers back to back, each with a valid length CRC and
 * claiming claim(i) bytes; optionally zlib-compressed (the form the finding
 * came in: 8 KiB of ZLIB for 4 MiB). */
static uint8_t *header_run(size_t n, uint64_t fixed_claim, int zlib, size_t *out_len)
{
    uint8_t *p = malloc(n);
    uint64_t x = 12345;
    for (size_t at = 0; at < n; at += 12) {
        uint64_t claim = fixed_claim;
        if (!claim) { /* varying: 256 B .. 256 KiB, so every shift differs */
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            claim = 256 + x % (256 * 1024);
        }
        uint8_t h[12];
        tfrec_record_header(h, claim);
        memcpy(p + at, h, n - at < 12 ? n - at : 12);
    }
    *out_len = n;
    if (!zlib)
        return p;
    uint8_t *z = rt_zlib_compress(p, n, 0, out_len);
    free(p);
    return z;
}

/* Resynchronising is linear in the stream: headers every 12 bytes that each
 * claim far more than 12 bytes (with valid length CRCs) used to make the
 * reader CRC the claimed length at every one of them and move its buffer at
 * every byte: an 8 KiB ZLIB file of 4 MiB took 11-21 s. The work counter
 * (bytes CRC'd or moved) must stay a small constant per stream byte, and
 * doubling the stream must about double it. */
static void test_resync_is_linear(void)
{
    /* UINT64_MAX: half the stream's length, so the old cost (claimed
     * length times candidates) would grow with the square of the size */
    const uint64_t claims[] = { UINT64_MAX, 64u << 10, 300, 0 };
    for (size_t c = 0; c < sizeof claims / sizeof claims[0]; c++)
        for (int zlib = 0; zlib <= 1; zlib++) {
            uint64_t per_byte[3];
            for (int k = 0; k < 3; k++) {
                size_t n = (size_t)(512u << 10) << k; /* 0.5, 1, 2 MiB */
                size_t len;
                uint8_t *p = header_run(n, claims[c] == UINT64_MAX ? n / 2 : claims[c], zlib, &len);
                tfrec_reader_stats st;
                uint64_t work = 0;
                size_t records = 0;
                int rc = resync_all(p, len, 0, &st, &work, &records);
                free(p);
                CHECKF(rc == TFREC_END && records == 0, "claim %llu: %d after %zu records",
                       (unsigned long long)claims[c], rc, records);
                CHECK(st.skipped_regions == 1 && st.skipped_bytes == n);
                per_byte[k] = work / n;
                /* header CRC (8), checkpoints (1), the ends of each
                 * candidate's stretch (< 2 * 64 per 12 bytes), moves (1) */
                CHECKF(work <= 24 * (uint64_t)n, "claim %llu zlib %d: %llu bytes of work for %zu",
                       (unsigned long long)claims[c], zlib, (unsigned long long)work, n);
            }
            CHECKF(per_byte[2] <= per_byte[0] + 2,
                   "claim %llu zlib %d: work per byte %llu, then %llu at 4x the size",
                   (unsigned long long)claims[c], zlib, (unsigned long long)per_byte[0],
                   (unsigned long long)per_byte[2]);
        }
}

/* The checkpointed CRC finds real records after long garbage, at the same
 * places and with the same counts as a direct CRC would: records of many
 * sizes (below and above the direct threshold, crossing checkpoints at
 * every alignment) behind runs of lying headers, read through small
 * buffers too. */
static void test_resync_finds_records_after_header_runs(void)
{
    enum { N = 24 };
    size_t cap = 4u << 20;
    uint8_t *file = malloc(cap), *data = malloc(200000);
    size_t at = 0, sizes[N];
    uint64_t want_skipped = 0;
    for (size_t i = 0; i < N; i++) {
        /* a run of headers claiming a bit more than the record behind them
         * would leave, so each is a truncated or bad-CRC candidate */
        size_t run = 12 * (i * 37 % 50) + i % 12;
        size_t run_len;
        uint8_t *junk = header_run(run, 1000 + i * 7919, 0, &run_len);
        memcpy(file + at, junk, run);
        free(junk);
        at += run;
        want_skipped += run;
        sizes[i] = i == 0 ? 0 : (i * i * 311 + i) % 150000;
        rt_payload(data, sizes[i], 9, i);
        at += rt_frame(file + at, data, sizes[i]);
    }
    const size_t buffers[] = { 0, 64, 4096 };
    for (size_t b = 0; b < 3; b++) {
        tfrec_io io = TFREC_IO_INIT;
        CHECK(tfrec_io_open_memory(&io, file, at) == 0);
        tfrec_reader_options o = TFREC_READER_OPTIONS_INIT;
        o.skip_corrupt = 1;
        o.buffer_size = buffers[b];
        tfrec_reader *r;
        CHECK(tfrec_reader_open_io(&r, &io, "runs", &o) == 0);
        const uint8_t *d;
        size_t len, got = 0;
        int rc;
        while ((rc = tfrec_reader_next(r, &d, &len)) == TFREC_OK) {
            CHECK(got < N);
            CHECKF(len == sizes[got], "buffer %zu: record %zu has %zu bytes, expected %zu",
                   buffers[b], got, len, sizes[got]);
            rt_payload(data, len, 9, got);
            CHECK(memcmp(d, data, len) == 0);
            got++;
        }
        CHECKF(rc == TFREC_END && got == N, "buffer %zu: %d after %zu records: %s", buffers[b], rc,
               got, tfrec_reader_errmsg(r));
        tfrec_reader_stats st = TFREC_READER_STATS_INIT;
        tfrec_reader_stats_get(r, &st);
        CHECK_EQ(st.skipped_bytes, want_skipped);
        tfrec_reader_free(r);
    }
    free(file);
    free(data);
}

/* A GZIP bomb: three small records, then a header claiming `claim` bytes,
 * then `zero_mib` MiB of zeros as concatenated members (one 8 MiB member
 * compressed once and repeated), so ~1 KiB of file per MiB of stream. */
static uint8_t *gzip_bomb(uint64_t claim, size_t zero_mib, size_t *len, uint64_t *bomb_at)
{
    uint8_t head[3 * 116 + 12], data[100];
    size_t at = 0;
    for (size_t i = 0; i < 3; i++) {
        rt_payload(data, 100, 5, i);
        at += rt_frame(head + at, data, 100);
    }
    *bomb_at = at;
    tfrec_record_header(head + at, claim);
    at += 12;
    size_t hl, zl;
    uint8_t *h = rt_zlib_compress(head, at, 1, &hl);
    uint8_t *zeros = calloc(1, 8u << 20);
    uint8_t *z = rt_zlib_compress(zeros, 8u << 20, 1, &zl);
    free(zeros);
    size_t members = zero_mib / 8;
    uint8_t *out = malloc(hl + members * zl);
    memcpy(out, h, hl);
    for (size_t i = 0; i < members; i++)
        memcpy(out + hl + i * zl, z, zl);
    *len = hl + members * zl;
    free(h);
    free(z);
    return out;
}

/* Decompression bombs: a ~1 MiB GZIP file whose one record claims, and
 * really holds, 1 GiB. The configured record limit refuses it before
 * anything is inflated or allocated, naming the file and offset; without a
 * lower limit, a length field that the stream does not back up never sizes
 * the buffer: it grows with the bytes that really arrived. */
static void test_decompression_bomb(void)
{
    size_t len;
    uint64_t bomb_at;
    uint8_t *bomb = gzip_bomb(1u << 30, 1024, &len, &bomb_at);
    CHECKF(len < (2u << 20), "the bomb is %zu bytes", len);
    char where[80];
    snprintf(where, sizeof where, "uncompressed offset %llu", (unsigned long long)bomb_at);
    tfrec_io io = TFREC_IO_INIT;
    CHECK(tfrec_io_open_memory(&io, bomb, len) == 0);
    tfrec_reader_options o = TFREC_READER_OPTIONS_INIT;
    o.max_record_size = 64u << 20;
    tfrec_reader *r;
    CHECK(tfrec_reader_open_io(&r, &io, "bomb.gz", &o) == 0);
    const uint8_t *d;
    size_t n;
    for (int i = 0; i < 3; i++)
        CHECK(tfrec_reader_next(r, &d, &n) == TFREC_OK);
    int rc = tfrec_reader_next(r, &d, &n);
    CHECKF(rc == TFREC_E_RECORD_TOO_LARGE, "%d %s", rc, tfrec_reader_errmsg(r));
    const char *m = tfrec_reader_errmsg(r);
    CHECKF(rt_contains(m, "bomb.gz") && rt_contains(m, where) && rt_contains(m, "1073741824") &&
               rt_contains(m, "67108864"),
           "%s", m);
    /* refused from the header: the buffer is still the default one */
    CHECKF(r->cap <= 256 * 1024, "buffer of %zu bytes", r->cap);
    tfrec_reader_free(r);
    free(bomb);

    /* The default limit (1 GiB) lets a 1 GiB claim through; the stream then
     * ends after 24 MiB: the buffer held at most about twice that. With
     * skip_corrupt, the limit makes the claim a bad region and the zeros
     * after it are scanned as garbage in the default buffer. */
    bomb = gzip_bomb(1u << 30, 24, &len, &bomb_at);
    for (int skip = 0; skip <= 1; skip++) {
        CHECK(tfrec_io_open_memory(&io, bomb, len) == 0);
        o.skip_corrupt = skip;
        CHECK(tfrec_reader_open_io(&r, &io, "short.gz", skip ? &o : NULL) == 0);
        for (int i = 0; i < 3; i++)
            CHECK(tfrec_reader_next(r, &d, &n) == TFREC_OK);
        rc = tfrec_reader_next(r, &d, &n);
        if (!skip) {
            CHECKF(rc == TFREC_E_TRUNCATED, "%d %s", rc, tfrec_reader_errmsg(r));
            CHECK(rt_contains(tfrec_reader_errmsg(r), "short.gz") &&
                  rt_contains(tfrec_reader_errmsg(r), where));
            CHECKF(r->cap <= 2 * (24u << 20) + 256 * 1024, "buffer of %zu bytes for 24 MiB of data",
                   r->cap);
        } else {
            CHECKF(rc == TFREC_END, "%d %s", rc, tfrec_reader_errmsg(r));
            tfrec_reader_stats st = TFREC_READER_STATS_INIT;
            tfrec_reader_stats_get(r, &st);
            CHECK(st.skipped_regions == 1 && st.skipped_bytes == 12 + (24u << 20));
            CHECK_EQ(tfrec_reader_last_skip(r, NULL, NULL), TFREC_E_RECORD_TOO_LARGE);
            CHECKF(r->cap <= 256 * 1024, "buffer of %zu bytes", r->cap);
        }
        tfrec_reader_free(r);
    }
    free(bomb);
}

/* Small read buffers and one-byte-at-a-time sources must not change results. */
typedef struct trickle {
    const uint8_t *p;
    size_t len, pos;
} trickle;

static ptrdiff_t trickle_read(void *ctx, void *buf, size_t n)
{
    trickle *t = ctx;
    if (t->pos == t->len || n == 0)
        return 0;
    memcpy(buf, t->p + t->pos, 1);
    t->pos++;
    return 1;
}

static int trickle_close(void *ctx, int commit)
{
    (void)commit;
    free(ctx);
    return 0;
}

static void test_trickle_and_tiny_buffer(void)
{
    static uint8_t file[20000];
    uint64_t want_skipped;
    size_t n = build_damaged(file, &want_skipped);
    size_t zl;
    uint8_t *z = rt_zlib_compress(file, n, 1, &zl);
    for (int comp = 0; comp <= 1; comp++) {
        trickle *t = calloc(1, sizeof *t);
        t->p = comp ? z : file;
        t->len = comp ? zl : n;
        tfrec_io io = {
            .struct_size = sizeof io, .ctx = t, .read = trickle_read, .close = trickle_close
        };
        tfrec_reader_options o = { .struct_size = sizeof o, .skip_corrupt = 1, .buffer_size = 1 };
        tfrec_reader *r;
        CHECK(tfrec_reader_open_io(&r, &io, "trickle", &o) == 0);
        CHECK_EQ(tfrec_reader_compression(r),
                 comp ? TFREC_COMPRESSION_GZIP : TFREC_COMPRESSION_NONE);
        const uint8_t *d;
        size_t len, got = 0;
        int rc;
        while ((rc = tfrec_reader_next(r, &d, &len)) == TFREC_OK)
            got++;
        CHECKF(rc == TFREC_END, "%d %s", rc, tfrec_reader_errmsg(r));
        tfrec_reader_stats st = TFREC_READER_STATS_INIT;
        tfrec_reader_stats_get(r, &st);
        CHECK(got == 8 && st.skipped_regions == 4 && st.skipped_bytes == want_skipped);
        tfrec_reader_free(r);
    }
    free(z);
}

/* Reading compressed data as NONE (or the reverse) fails loudly. */
static void test_wrong_compression(void)
{
    size_t sizes[3] = { 10, 20, 30 };
    CHECK(rt_write(harness_path("wc.gz"), TFREC_COMPRESSION_GZIP, sizes, 3, 1) == 0);
    CHECK(rt_write(harness_path("wc"), TFREC_COMPRESSION_NONE, sizes, 3, 1) == 0);
    size_t good;
    char msg[600];
    tfrec_reader_options o = { .struct_size = sizeof o, .compression = TFREC_COMPRESSION_NONE };
    CHECK(read_until_error(harness_path("wc.gz"), &o, &good, msg, sizeof msg) ==
          TFREC_E_BAD_LENGTH_CRC);
    o.compression = TFREC_COMPRESSION_GZIP;
    CHECK(read_until_error(harness_path("wc"), &o, &good, msg, sizeof msg) == TFREC_E_COMPRESSION);
    o.compression = TFREC_COMPRESSION_ZLIB;
    CHECK(read_until_error(harness_path("wc.gz"), &o, &good, msg, sizeof msg) ==
          TFREC_E_COMPRESSION);
}

/* Another process truncates the file while it is being read: with read()
 * (the default) that is a TRUNCATED error naming the offset, not the SIGBUS
 * a memory mapping would raise. */
static void test_file_shrinks_while_reading(void)
{
    enum { N = 64, SIZE = 64 * 1024 };
    size_t sizes[N];
    for (size_t i = 0; i < N; i++)
        sizes[i] = SIZE;
    const char *path = harness_path("shrinks");
    CHECK(rt_write(path, TFREC_COMPRESSION_NONE, sizes, N, 3) == 0);
    tfrec_reader *r;
    CHECK(tfrec_reader_open(&r, path, NULL) == TFREC_OK);
    const uint8_t *d;
    size_t len;
    CHECK(tfrec_reader_next(r, &d, &len) == TFREC_OK && len == SIZE);
    const uint64_t cut = 1024 * 1024 + 100; /* inside record 15 */
    CHECK(truncate(path, (off_t)cut) == 0);
    size_t got = 1;
    int rc;
    while ((rc = tfrec_reader_next(r, &d, &len)) == TFREC_OK)
        got++;
    CHECK_EQ(rc, TFREC_E_TRUNCATED);
    char where[64];
    snprintf(where, sizeof where, "offset %llu", (unsigned long long)(15 * (SIZE + 16)));
    CHECKF(got == 15 && rt_contains(tfrec_reader_errmsg(r), where), "%zu records; message: %s", got,
           tfrec_reader_errmsg(r));
    tfrec_reader_free(r);
}

TESTS(TEST(test_absurd_length), TEST(test_bad_length_crc), TEST(test_bad_data_crc),
      TEST(test_truncated), TEST(test_trailing_garbage), TEST(test_corrupt_compressed),
      TEST(test_skip_corrupt), TEST(test_trickle_and_tiny_buffer), TEST(test_wrong_compression),
      TEST(test_file_shrinks_while_reading), TEST(test_resync_is_linear),
      TEST(test_resync_finds_records_after_header_runs), TEST(test_decompression_bomb))

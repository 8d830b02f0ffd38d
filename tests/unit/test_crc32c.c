/* CRC32C: published vectors, every implementation against the portable one
 * and against a bit-at-a-time reference written here, the TFRecord mask,
 * and implementation selection (environment variable and API). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "crc32c/crc32c_internal.h"
#include "crc32c/crc32c_shift.h"
#include "harness.h"
#include "tfrec/crc32c.h"
#include "tfrec/error.h"

#define IMPL_MAX TFREC_CRC32C_ARM64

/* Straight from the definition, one bit at a time, no tables: the oracle
 * the optimised paths are ultimately judged by. */
static uint32_t crc_bitwise(uint32_t crc, const uint8_t *p, size_t n)
{
    crc = ~crc;
    while (n--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
    }
    return ~crc;
}

static int available(int impl)
{
    uint32_t c = 0;
    return tfrec_crc32c_extend_with(impl, &c, "", 0) == TFREC_OK;
}

static uint32_t with(int impl, uint32_t crc, const void *p, size_t n)
{
    if (tfrec_crc32c_extend_with(impl, &crc, p, n) != TFREC_OK)
        abort(); /* callers check available() first */
    return crc;
}

/* ---- first use from many threads at once (must run first) */

enum { RACE_THREADS = 8, RACE_LEN = 100000 };
static uint8_t race_buf[RACE_LEN];
static uint32_t race_out[RACE_THREADS];
static pthread_barrier_t race_barrier;

static void *race_worker(void *arg)
{
    uint32_t *out = arg;
    pthread_barrier_wait(&race_barrier);
    *out = tfrec_crc32c(race_buf, RACE_LEN);
    return NULL;
}

static void test_first_use_from_threads(void)
{
    harness_random(race_buf, RACE_LEN, 7);
    pthread_t th[RACE_THREADS];
    pthread_barrier_init(&race_barrier, NULL, RACE_THREADS);
    for (int i = 0; i < RACE_THREADS; i++)
        CHECK(pthread_create(&th[i], NULL, race_worker, &race_out[i]) == 0);
    for (int i = 0; i < RACE_THREADS; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&race_barrier);
    uint32_t want = crc_bitwise(0, race_buf, RACE_LEN);
    for (int i = 0; i < RACE_THREADS; i++)
        CHECK_EQ(race_out[i], want);
}

/* ---- published vectors */

static const uint8_t iscsi_read_pdu[48] = {
    /* RFC 3720 B.4, READ(10) PDU */
    0x01, 0xc0, 0, 0,    0, 0, 0, 0,    0,    0, 0, 0, 0, 0, 0, 0, 0x14, 0, 0, 0, 0, 0, 0x04, 0,
    0,    0,    0, 0x14, 0, 0, 0, 0x18, 0x28, 0, 0, 0, 0, 0, 0, 0, 0x02, 0, 0, 0, 0, 0, 0,    0,
};

static void test_known_vectors(void)
{
    uint8_t zeros[32], ones[32], inc[32], dec[32];
    for (int i = 0; i < 32; i++) {
        zeros[i] = 0;
        ones[i] = 0xff;
        inc[i] = (uint8_t)i;
        dec[i] = (uint8_t)(31 - i);
    }
    CHECK_EQ(tfrec_crc32c("123456789", 9), 0xE3069283u);
    CHECK_EQ(tfrec_crc32c(zeros, 32), 0x8A9136AAu);
    CHECK_EQ(tfrec_crc32c(ones, 32), 0x62A8AB43u);
    CHECK_EQ(tfrec_crc32c(inc, 32), 0x46DD794Eu);
    CHECK_EQ(tfrec_crc32c(dec, 32), 0x113FDB5Cu);
    CHECK_EQ(tfrec_crc32c(iscsi_read_pdu, 48), 0xD9963A56u);
    CHECK_EQ(tfrec_crc32c("", 0), 0);
    CHECK_EQ(tfrec_crc32c(NULL, 0), 0);
    /* The reference itself must reproduce the published values. */
    CHECK_EQ(crc_bitwise(0, (const uint8_t *)"123456789", 9), 0xE3069283u);
    CHECK_EQ(crc_bitwise(0, iscsi_read_pdu, 48), 0xD9963A56u);

    int tried = 0;
    for (int impl = TFREC_CRC32C_AUTO; impl <= IMPL_MAX; impl++) {
        if (!available(impl))
            continue;
        tried++;
        CHECKF(with(impl, 0, "123456789", 9) == 0xE3069283u, "%s", tfrec_crc32c_impl_name(impl));
        CHECKF(with(impl, 0, zeros, 32) == 0x8A9136AAu, "%s", tfrec_crc32c_impl_name(impl));
        CHECKF(with(impl, 0, ones, 32) == 0x62A8AB43u, "%s", tfrec_crc32c_impl_name(impl));
        CHECKF(with(impl, 0, inc, 32) == 0x46DD794Eu, "%s", tfrec_crc32c_impl_name(impl));
        CHECKF(with(impl, 0, dec, 32) == 0x113FDB5Cu, "%s", tfrec_crc32c_impl_name(impl));
        CHECKF(with(impl, 0, iscsi_read_pdu, 48) == 0xD9963A56u, "%s",
               tfrec_crc32c_impl_name(impl));
    }
    CHECK(tried >= 2); /* auto and portable at least */
}

/* ---- mask */

static void test_mask(void)
{
    uint8_t buf[4096];
    harness_random(buf, sizeof buf, 3);
    for (size_t i = 0; i + 4 <= sizeof buf; i += 4) {
        uint32_t v;
        memcpy(&v, buf + i, 4);
        CHECK_EQ(tfrec_crc32c_unmask(tfrec_crc32c_mask(v)), v);
    }
    /* A TFRecord header for an empty record stores mask(crc32c(8 zero
     * bytes)); value from Python's crc32c module with TensorFlow's formula. */
    const uint8_t len0[8] = { 0 };
    CHECK_EQ(tfrec_crc32c_mask(tfrec_crc32c(len0, 8)), 0x07980329u);
    CHECK_EQ(tfrec_crc32c_mask(tfrec_crc32c("hello", 5)), 0x191C1FBBu);
    CHECK_EQ(tfrec_crc32c_unmask(0x07980329u), tfrec_crc32c(len0, 8));
}

/* ---- every implementation against portable (and portable against the
 * bitwise reference), every length 0..4096 at every alignment 0..15 */

enum { CROSS_MAX = 4096 };

/* Lengths 0..4096, then the edges of the AVX-512 path's hybrid chunks. */
static int next_len(size_t *len)
{
    const size_t c = TFREC_CRC32C_HYB_CHUNK;
    if (*len == CROSS_MAX)
        *len = c - 70;
    else if (*len == c + 300)
        *len = 2 * c - 16;
    else if (*len == 2 * c + 80)
        return 0;
    else
        ++*len;
    return 1;
}

static void cross_check(int impl, uint32_t (*raw)(uint32_t, const uint8_t *, size_t),
                        const char *name)
{
    static uint8_t buf[2 * TFREC_CRC32C_HYB_CHUNK + 128];
    harness_random(buf, sizeof buf, 11);
    for (size_t align = 0; align < 16; align++)
        for (size_t len = 0;;) {
            const uint8_t *p = buf + align;
            uint32_t seed = (uint32_t)(len * 0x9E3779B1u + align); /* extend, not just start */
            uint32_t want = with(TFREC_CRC32C_PORTABLE, seed, p, len);
            uint32_t got = raw ? raw(seed, p, len) : with(impl, seed, p, len);
            if (got != want) {
                harness_fail(__FILE__, __LINE__, "%s: len %zu align %zu: %08x != portable %08x",
                             name, len, align, got, want);
                return;
            }
            if (!next_len(&len))
                break;
        }
}

static void test_portable_vs_bitwise(void)
{
    static uint8_t buf[CROSS_MAX + 16];
    harness_random(buf, sizeof buf, 5);
    for (size_t align = 0; align < 16; align++)
        for (size_t len = 0; len <= 300; len++)
            CHECK_EQ(with(TFREC_CRC32C_PORTABLE, 0x12345678u, buf + align, len),
                     crc_bitwise(0x12345678u, buf + align, len));
    for (size_t len = 300; len <= CROSS_MAX; len += 37)
        CHECK_EQ(with(TFREC_CRC32C_PORTABLE, 0, buf + 3, len), crc_bitwise(0, buf + 3, len));
}

static void test_every_impl_vs_portable(void)
{
    int tried = 0;
    for (int impl = TFREC_CRC32C_AUTO; impl <= IMPL_MAX; impl++) {
        if (impl == TFREC_CRC32C_PORTABLE || !available(impl))
            continue;
        tried++;
        cross_check(impl, NULL, tfrec_crc32c_impl_name(impl));
    }
#if defined(__x86_64__)
    /* What "sse42" runs on CPUs without PCLMULQDQ, not selectable here. */
    if (__builtin_cpu_supports("sse4.2")) {
        tried++;
        cross_check(0, tfrec_crc32c_sse42_soft_extend, "sse42-soft");
    }
    CHECK(tried >= 4); /* this suite runs on x86-64 with SSE4.2 + PCLMUL */
#endif
    CHECK(tried >= 1);
}

/* ---- large buffers (several folding rounds, the 3 KiB stream blocks,
 * unaligned starts and odd tails) */

static void test_large_buffers(void)
{
    const size_t sizes[] = { 1u << 20, (8u << 20) + 13, 3 * 1024 * 7 + 5, 256 * 33 + 63 };
    size_t max = (8u << 20) + 13 + 16;
    uint8_t *buf = malloc(max);
    CHECK(buf);
    harness_random(buf, max, 99);
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        for (size_t off = 0; off < 2; off++) {
            const uint8_t *p = buf + off * 7;
            uint32_t want = with(TFREC_CRC32C_PORTABLE, 0, p, sizes[s]);
            if (s == 0 && off == 0 && crc_bitwise(0, p, sizes[s]) != want) {
                free(buf);
                CHECKF(0, "portable disagrees with the bitwise reference at 1 MiB");
            }
            for (int impl = TFREC_CRC32C_AUTO; impl <= IMPL_MAX; impl++) {
                if (!available(impl))
                    continue;
                uint32_t got = with(impl, 0, p, sizes[s]);
                if (got != want) {
                    free(buf);
                    CHECKF(0, "%s: %zu bytes at +%zu: %08x != %08x", tfrec_crc32c_impl_name(impl),
                           sizes[s], off * 7, got, want);
                }
            }
        }
    }
    free(buf);
}

/* ---- buffers that end where the mapping ends: the loops prefetch several
 * KiB past their data (prefetches never fault) but must not load a byte
 * beyond it; a PROT_NONE page after the buffer turns any such load into a
 * crash. 5 MiB reaches the AVX-512 path's far prefetch (from 4 MiB). */

static void test_buffer_at_mapping_end(void)
{
    const long page = sysconf(_SC_PAGESIZE);
    const size_t data_pages = ((size_t)5 << 20) / (size_t)page;
    const size_t map_len = (data_pages + 1) * (size_t)page;
    uint8_t *map = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(map != MAP_FAILED);
    uint8_t *end = map + data_pages * (size_t)page;
    CHECK(mprotect(end, (size_t)page, PROT_NONE) == 0);
    harness_random(map, (size_t)(end - map), 21);
    const size_t c = TFREC_CRC32C_HYB_CHUNK;
    const size_t lens[] = { 1,
                            63,
                            64,
                            191,
                            255,
                            256,
                            4095,
                            c,
                            c + 1,
                            3 * c + 77,
                            40 * 1024 + 13,
                            data_pages * (size_t)page };
    int bad = 0;
    for (size_t i = 0; i < sizeof lens / sizeof lens[0] && !bad; i++) {
        const uint8_t *p = end - lens[i];
        uint32_t want = with(TFREC_CRC32C_PORTABLE, 7, p, lens[i]);
        for (int impl = TFREC_CRC32C_AUTO; impl <= IMPL_MAX; impl++)
            if (available(impl) && with(impl, 7, p, lens[i]) != want) {
                harness_fail(__FILE__, __LINE__, "%s: %zu bytes ending at a guard page",
                             tfrec_crc32c_impl_name(impl), lens[i]);
                bad = 1;
            }
    }
    munmap(map, map_len);
}

/* ---- extend at arbitrary split points equals one shot */

static void test_extend_splits(void)
{
    enum { LEN = 70000 };
    static uint8_t buf[LEN];
    harness_random(buf, LEN, 21);
    uint8_t cuts[64];
    harness_random(cuts, sizeof cuts, 22);
    for (int impl = TFREC_CRC32C_AUTO; impl <= IMPL_MAX; impl++) {
        if (!available(impl))
            continue;
        uint32_t whole = with(impl, 0, buf, LEN);
        CHECK_EQ(whole, with(TFREC_CRC32C_PORTABLE, 0, buf, LEN));
        /* Pieces of pseudo-random sizes from 0 to ~16 KiB, so every path
         * (short, three-stream, folding) sees arbitrary starting CRCs. */
        for (int trial = 0; trial < 8; trial++) {
            uint32_t crc = 0;
            size_t pos = 0;
            for (int k = 0; pos < LEN; k++) {
                size_t piece =
                    (size_t)cuts[(k + trial * 7) % 64] * (k % 3 == 0 ? 64 : 1) + (size_t)trial;
                if (piece > LEN - pos)
                    piece = LEN - pos;
                crc = with(impl, crc, buf + pos, piece);
                pos += piece;
            }
            CHECKF(crc == whole, "%s trial %d", tfrec_crc32c_impl_name(impl), trial);
        }
        /* And the public entry point, split once at every offset near the
         * edges of the paths' block sizes. */
        for (size_t cut = 0; cut <= 4200; cut += (cut < 300 ? 1 : 97))
            CHECK_EQ(tfrec_crc32c_extend(tfrec_crc32c(buf, cut), buf + cut, 5000 - cut),
                     tfrec_crc32c(buf, 5000));
    }
}

/* ---- selection through the API */

static void test_force_impl(void)
{
    CHECK_EQ(tfrec_crc32c_force_impl(TFREC_CRC32C_PORTABLE), TFREC_OK);
    CHECK_EQ(tfrec_crc32c_impl(), TFREC_CRC32C_PORTABLE);
    CHECK(strcmp(tfrec_crc32c_impl_name(tfrec_crc32c_impl()), "portable") == 0);
    CHECK_EQ(tfrec_crc32c("123456789", 9), 0xE3069283u);

#if defined(__x86_64__)
    const int missing = TFREC_CRC32C_ARM64;
#else
    const int missing = TFREC_CRC32C_SSE42;
#endif
    CHECK_EQ(tfrec_crc32c_force_impl(missing), TFREC_E_UNSUPPORTED);
    CHECK(strstr(tfrec_last_errmsg(), tfrec_crc32c_impl_name(missing)) != NULL);
    CHECK_EQ(tfrec_crc32c_impl(), TFREC_CRC32C_PORTABLE); /* unchanged */
    uint32_t c = 0;
    CHECK_EQ(tfrec_crc32c_extend_with(missing, &c, "x", 1), TFREC_E_UNSUPPORTED);
    CHECK_EQ(tfrec_crc32c_force_impl(99), TFREC_E_INVALID);
    CHECK_EQ(tfrec_crc32c_force_impl(-1), TFREC_E_INVALID);
    CHECK_EQ(tfrec_crc32c_extend_with(99, &c, "x", 1), TFREC_E_INVALID);
    CHECK_EQ(tfrec_crc32c_extend_with(TFREC_CRC32C_PORTABLE, NULL, "x", 1), TFREC_E_INVALID);

    CHECK_EQ(tfrec_crc32c_force_impl(TFREC_CRC32C_AUTO), TFREC_OK);
#if defined(__x86_64__)
    if (__builtin_cpu_supports("sse4.2"))
        CHECK(tfrec_crc32c_impl() != TFREC_CRC32C_PORTABLE);
#endif
    CHECK_EQ(tfrec_crc32c("123456789", 9), 0xE3069283u);
    CHECK(strcmp(tfrec_crc32c_impl_name(42), "unknown") == 0);
}

/* ---- selection through TFREC_CRC32C, which is read at first use: run
 * this binary again with the variable set and ask it what it chose. */

static int child_report(const char *env_value, char *out, size_t cap)
{
    const char *argv[] = { "test_crc32c", "--report-impl", NULL };
    const char *envs[] = { "TFREC_CRC32C", env_value };
    return harness_run_self(argv, envs, 1, out, cap);
}

static void test_env_var(void)
{
    char out[128], def[128];
    CHECK_EQ(child_report(NULL, def, sizeof def), 0);
    CHECK_EQ(child_report("portable", out, sizeof out), 0);
    CHECKF(strcmp(out, "portable e3069283\n") == 0, "child said '%s'", out);
    /* An unknown name keeps the default. */
    CHECK_EQ(child_report("no-such-impl", out, sizeof out), 0);
    CHECKF(strcmp(out, def) == 0, "'%s' vs default '%s'", out, def);
    CHECKF(strstr(def, "e3069283") != NULL, "default child said '%s'", def);
    for (int impl = TFREC_CRC32C_SSE42; impl <= IMPL_MAX; impl++) {
        if (!available(impl))
            continue;
        char want[64];
        snprintf(want, sizeof want, "%s e3069283\n", tfrec_crc32c_impl_name(impl));
        CHECK_EQ(child_report(tfrec_crc32c_impl_name(impl), out, sizeof out), 0);
        CHECKF(strcmp(out, want) == 0, "child said '%s', wanted '%s'", out, want);
    }
}

static void test_xpow(void)
{
    /* x^n mod P by repeated multiplication by x, against the table
     * generator's square-and-multiply. */
    uint32_t r = 0x80000000u; /* x^0 */
    for (uint64_t n = 0; n < 5000; n++) {
        CHECK_EQ(tfrec_crc32c_xpow(n), r);
        r = (r >> 1) ^ ((r & 1u) ? 0x82F63B78u : 0u);
    }
    CHECK_EQ(tfrec_crc32c_xpow(32), 0x82F63B78u); /* x^32 == P - x^32 */
}

/* CRC(A || B) from CRC(A), CRC(B) and |B|, for lengths around hex digit
 * boundaries; lengths too long to compute directly are checked by
 * composition and against the table generator. */
static void test_shift_combines(void)
{
    enum { MAX = 70000 };
    uint8_t *buf = malloc(MAX);
    harness_random(buf, MAX, 77);
    const size_t cuts[] = { 0, 1, 7, 15, 16, 17, 255, 256, 4095, 4096, 4097, 65535, 65536, 69999 };
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++)
        for (size_t j = 0; j < sizeof cuts / sizeof cuts[0]; j++) {
            size_t a = cuts[i], b = cuts[j];
            if (a + b > MAX)
                continue;
            uint32_t whole = tfrec_crc32c(buf, a + b);
            uint32_t ca = tfrec_crc32c(buf, a), cb = tfrec_crc32c(buf + a, b);
            CHECKF((tfrec_crc32c_shift(ca, b) ^ cb) == whole, "a=%zu b=%zu", a, b);
        }
    /* Long runs: composing shifts must equal one shift over the sum, up to
     * lengths whose top hex digit is the 16th. */
    uint32_t c = 0x12345678u;
    const uint64_t lens[] = { 1, 3, 1u << 20, 3u << 29, 1ull << 40, 0xfedcba9876543210ull };
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++)
        for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
            uint64_t x = lens[i], y = lens[k];
            if (x + y < x)
                continue;
            CHECKF(tfrec_crc32c_shift(tfrec_crc32c_shift(c, x), y) == tfrec_crc32c_shift(c, x + y),
                   "%llu + %llu", (unsigned long long)x, (unsigned long long)y);
        }
    /* and against x^(8n) from the generator itself */
    CHECK_EQ(tfrec_crc32c_shift(0x80000000u, 1000003), tfrec_crc32c_xpow(8000024));
    free(buf);
}

static const harness_test tests[] = {
    TEST(test_first_use_from_threads),
    TEST(test_known_vectors),
    TEST(test_mask),
    TEST(test_portable_vs_bitwise),
    TEST(test_every_impl_vs_portable),
    TEST(test_large_buffers),
    TEST(test_buffer_at_mapping_end),
    TEST(test_extend_splits),
    TEST(test_force_impl),
    TEST(test_env_var),
    TEST(test_xpow),
    TEST(test_shift_combines),
};

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--report-impl") == 0) {
        printf("%s %08x\n", tfrec_crc32c_impl_name(tfrec_crc32c_impl()),
               tfrec_crc32c("123456789", 9));
        return 0;
    }
    return harness_main(argc, argv, tests, sizeof tests / sizeof tests[0]);
}

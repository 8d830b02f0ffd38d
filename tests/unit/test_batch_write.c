/* Writing many records per call (tfrec_writer_write_batch and
 * tfrec_writer_write_vec): the same bytes as one tfrec_writer_write() per
 * record under every compression, checked against an independent framing
 * walk (a bitwise CRC-32C here) and zlib's own inflater; empty records and
 * empty batches; and failures in the middle of a batch, after which the
 * writer's record count says how much of the batch went in. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "harness.h"
#include "record_util.h"
#include "tfrec/tfrec.h"

/* Sizes with empty records, one byte, a record larger than a small output
 * buffer and one larger than the default 256 KiB buffer. */
static const size_t SIZES[] = { 0, 1, 5, 0, 1024, 3, 70000, 0, 12, 300000, 1, 0, 4095, 4096, 77 };
enum { NSIZES = sizeof SIZES / sizeof SIZES[0] };

/* Bitwise CRC-32C (Castagnoli, reflected 0x82F63B78), masked as TFRecord
 * stores it: written from the definition, not taken from the library. */
static uint32_t slow_masked_crc(const uint8_t *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1)));
    }
    c ^= 0xFFFFFFFFu;
    return ((c >> 15) | (c << 17)) + 0xA282EAD8u;
}

static uint64_t le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* Inflate a whole zlib or gzip file with zlib itself; NULL if it is not
 * one complete stream. */
static uint8_t *inflate_all(const uint8_t *in, size_t in_len, size_t *out_len)
{
    size_t cap = in_len * 4 + 1024, len = 0;
    uint8_t *out = malloc(cap);
    z_stream z;
    memset(&z, 0, sizeof z);
    if (!out || inflateInit2(&z, 15 + 32) != Z_OK) { /* +32: zlib or gzip header */
        free(out);
        return NULL;
    }
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)in_len;
    int rc;
    do {
        if (len == cap) {
            uint8_t *bigger = realloc(out, cap *= 2);
            if (!bigger)
                break;
            out = bigger;
        }
        z.next_out = out + len;
        z.avail_out = (uInt)(cap - len);
        rc = inflate(&z, Z_NO_FLUSH);
        len = cap - z.avail_out;
    } while (rc == Z_OK);
    inflateEnd(&z);
    if (rc != Z_STREAM_END || z.avail_in != 0) {
        free(out);
        return NULL;
    }
    *out_len = len;
    return out;
}

/* 1 when stream holds exactly the records recs[0..n) (sizes SIZES), each
 * framed with correct lengths and CRCs. */
static int holds_records(const uint8_t *s, size_t len, uint8_t *const *recs, size_t n)
{
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        if (len - at < 12)
            return 0;
        uint64_t rlen = le(s + at, 8);
        if (rlen != SIZES[i % NSIZES] || le(s + at + 8, 4) != slow_masked_crc(s + at, 8))
            return 0;
        if (len - at - 12 < rlen + 4 || memcmp(s + at + 12, recs[i], rlen) != 0 ||
            le(s + at + 12 + rlen, 4) != slow_masked_crc(s + at + 12, rlen))
            return 0;
        at += 16 + rlen;
    }
    return at == len;
}

enum { ROUNDS = 3, NRECS = ROUNDS * NSIZES };

static void fill(uint8_t **recs)
{
    for (size_t i = 0; i < NRECS; i++) {
        recs[i] = malloc(SIZES[i % NSIZES] + 1);
        harness_random(recs[i], SIZES[i % NSIZES], 1000 + i);
    }
}

static void drop(uint8_t **recs)
{
    for (size_t i = 0; i < NRECS; i++)
        free(recs[i]);
}

/* The stream of a written file: itself, or inflated when compressed. */
static uint8_t *stream_of(const char *path, int compression, size_t *len)
{
    size_t flen;
    uint8_t *file = rt_slurp(path, &flen);
    if (!file || compression == TFREC_COMPRESSION_NONE) {
        *len = flen;
        return file;
    }
    uint8_t *s = inflate_all(file, flen, len);
    free(file);
    return s;
}

enum how { ONE_BY_ONE, VEC, BATCH };

/* Write recs with one call per record, write_vec or write_batch (in chunks
 * of 4 with empty batches in between). */
static int write_file(const char *path, int compression, size_t buffer, enum how how,
                      uint8_t *const *recs, uint8_t *joined)
{
    tfrec_writer_options o = TFREC_WRITER_OPTIONS_INIT;
    o.compression = compression;
    o.buffer_size = buffer;
    tfrec_writer *w;
    int rc = tfrec_writer_open(&w, path, &o);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < NRECS && rc == 0; i += 4) {
        size_t n = NRECS - i < 4 ? NRECS - i : 4;
        const void *ptrs[4];
        size_t lens[4];
        uint64_t ends[4], at = 0;
        for (size_t k = 0; k < n; k++) {
            ptrs[k] = SIZES[(i + k) % NSIZES] ? recs[i + k] : NULL; /* NULL is fine when empty */
            lens[k] = SIZES[(i + k) % NSIZES];
            if (lens[k])
                memcpy(joined + at, recs[i + k], lens[k]);
            ends[k] = at += lens[k];
        }
        if (how == ONE_BY_ONE) {
            for (size_t k = 0; k < n && rc == 0; k++)
                rc = tfrec_writer_write(w, recs[i + k], lens[k]);
        } else if (how == VEC) {
            rc = tfrec_writer_write_vec(w, ptrs, lens, n);
            if (rc == 0)
                rc = tfrec_writer_write_vec(w, NULL, NULL, 0);
        } else {
            rc = tfrec_writer_write_batch(w, joined, ends, n);
            if (rc == 0)
                rc = tfrec_writer_write_batch(w, NULL, NULL, 0);
        }
    }
    if (rc == 0 && tfrec_writer_records(w) != NRECS)
        rc = -1000;
    if (rc == 0)
        rc = tfrec_writer_close(w);
    tfrec_writer_free(w);
    return rc;
}

static void test_same_bytes_every_compression(void)
{
    uint8_t *recs[NRECS];
    fill(recs);
    uint8_t *joined = malloc(4 * 300000);        /* room for 4 records back to back */
    static const size_t buffers[] = { 0, 4096 }; /* default, and smaller than some records */
    for (int comp = TFREC_COMPRESSION_NONE; comp <= TFREC_COMPRESSION_GZIP; comp++) {
        for (size_t b = 0; b < 2; b++) {
            size_t ref_len = 0;
            uint8_t *ref = NULL;
            for (int how = ONE_BY_ONE; how <= BATCH; how++) {
                const char *path = harness_path("many.tfrecord");
                int rc = write_file(path, comp, buffers[b], (enum how)how, recs, joined);
                CHECKF(rc == 0, "compression %d buffer %zu how %d: rc %d", comp, buffers[b], how,
                       rc);
                size_t len;
                uint8_t *s = stream_of(path, comp, &len);
                CHECKF(s && holds_records(s, len, recs, NRECS),
                       "compression %d buffer %zu how %d: records differ", comp, buffers[b], how);
                if (how == ONE_BY_ONE) {
                    ref = s;
                    ref_len = len;
                } else {
                    CHECKF(len == ref_len && memcmp(s, ref, len) == 0,
                           "compression %d buffer %zu how %d: not the one-by-one stream", comp,
                           buffers[b], how);
                    free(s);
                }
            }
            free(ref);
        }
    }
    free(joined);
    drop(recs);
}

/* A sink that takes `limit` bytes and then fails, like a full disk. */
typedef struct full_disk {
    size_t limit, taken;
    int closed, commit;
} full_disk;

static int full_write(void *ctx, const void *buf, size_t n)
{
    (void)buf;
    full_disk *d = ctx;
    if (d->taken + n > d->limit)
        return TFREC_E_IO;
    d->taken += n;
    return 0;
}

static int full_close(void *ctx, int commit)
{
    full_disk *d = ctx;
    d->closed++;
    d->commit = commit;
    return 0;
}

static const char *full_msg(void *ctx)
{
    (void)ctx;
    return "no space left (simulated)";
}

static void test_sink_failure_mid_batch(void)
{
    enum { RECS = 3000, LEN = 1000 }; /* 3 MB: past what a deflater holds back */
    uint8_t *data = malloc(RECS * LEN);
    harness_random(data, RECS * LEN, 7); /* incompressible */
    const void *ptrs[RECS];
    size_t lens[RECS];
    uint64_t ends[RECS];
    for (size_t i = 0; i < RECS; i++) {
        ptrs[i] = data + i * LEN;
        lens[i] = LEN;
        ends[i] = (i + 1) * LEN;
    }
    for (int comp = TFREC_COMPRESSION_NONE; comp <= TFREC_COMPRESSION_GZIP; comp++) {
        for (int vec = 0; vec < 2; vec++) {
            full_disk d = { .limit = 50000 };
            tfrec_io io = { .struct_size = sizeof io,
                            .ctx = &d,
                            .write = full_write,
                            .close = full_close,
                            .errmsg = full_msg };
            tfrec_writer_options o = TFREC_WRITER_OPTIONS_INIT;
            o.compression = comp;
            o.buffer_size = 4096;
            tfrec_writer *w;
            CHECK_EQ(tfrec_writer_open_io(&w, &io, "full", &o), TFREC_OK);
            CHECK_EQ(tfrec_writer_write(w, data, 10), TFREC_OK);
            int rc = vec ? tfrec_writer_write_vec(w, ptrs, lens, RECS)
                         : tfrec_writer_write_batch(w, data, ends, RECS);
            CHECKF(rc == TFREC_E_IO, "compression %d vec %d: rc %d", comp, vec, rc);
            /* some of the batch went in, not all of it */
            uint64_t in = tfrec_writer_records(w);
            CHECKF(in > 1 && in < 1 + RECS, "compression %d vec %d: %llu records", comp, vec,
                   (unsigned long long)in);
            /* the sink never got more than the records accepted */
            if (comp == TFREC_COMPRESSION_NONE)
                CHECK(10 + 16 + (in - 1) * (LEN + 16) >= d.taken);
            CHECK(strstr(tfrec_writer_errmsg(w), "no space left") != NULL);
            /* the writer stays failed: a later batch is refused without writing */
            CHECK_EQ(tfrec_writer_write_vec(w, ptrs, lens, 1), TFREC_E_IO);
            /* a bad argument now reports the failure, whose message stays */
            const void *null_rec[1] = { NULL };
            size_t three[1] = { 3 };
            CHECK_EQ(tfrec_writer_write_batch(w, NULL, NULL, 2), TFREC_E_IO);
            CHECK_EQ(tfrec_writer_write_vec(w, null_rec, three, 1), TFREC_E_IO);
            CHECK(strstr(tfrec_writer_errmsg(w), "no space left") != NULL);
            CHECK_EQ(tfrec_writer_records(w), in);
            CHECK_EQ(tfrec_writer_close(w), TFREC_E_IO);
            CHECK(d.closed == 1 && d.commit == 0); /* discarded */
            tfrec_writer_free(w);
        }
    }
    free(data);
}

static void test_refused_record_mid_batch(void)
{
    const char *path = harness_path("refused.tfrecord");
    tfrec_writer *w;
    CHECK_EQ(tfrec_writer_open(&w, path, NULL), TFREC_OK);
    /* write_vec: record 2 of 4 is NULL with a length */
    const void *ptrs[4] = { "ab", "", NULL, "zz" };
    size_t lens[4] = { 2, 0, 9, 2 };
    CHECK_EQ(tfrec_writer_write_vec(w, ptrs, lens, 4), TFREC_E_INVALID);
    CHECK_EQ(tfrec_writer_records(w), 2);
    CHECK(strstr(tfrec_writer_errmsg(w), path) != NULL);
    CHECK(strstr(tfrec_writer_errmsg(w), "record 2 of 4") != NULL);
    /* write_batch: record 1 of 3 ends before it starts */
    uint64_t ends[3] = { 3, 1, 4 };
    CHECK_EQ(tfrec_writer_write_batch(w, "cdef", ends, 3), TFREC_E_INVALID);
    CHECK_EQ(tfrec_writer_records(w), 3);
    CHECK(strstr(tfrec_writer_errmsg(w), "record 1 of 3") != NULL);
    /* NULL arrays for a non-empty batch: nothing written */
    CHECK_EQ(tfrec_writer_write_batch(w, NULL, ends, 1), TFREC_E_INVALID);
    CHECK_EQ(tfrec_writer_write_vec(w, ptrs, NULL, 1), TFREC_E_INVALID);
    CHECK_EQ(tfrec_writer_records(w), 3);
    /* a refused argument leaves the writer usable */
    CHECK_EQ(tfrec_writer_write_vec(w, ptrs + 3, lens + 3, 1), TFREC_OK);
    CHECK_EQ(tfrec_writer_close(w), TFREC_OK);
    tfrec_writer_free(w);

    static const char *want[] = { "ab", "", "cde", "zz" };
    tfrec_reader *r;
    CHECK_EQ(tfrec_reader_open(&r, path, NULL), TFREC_OK);
    const uint8_t *rec;
    size_t len;
    for (size_t i = 0; i < 4; i++) {
        CHECK_EQ(tfrec_reader_next(r, &rec, &len), TFREC_OK);
        CHECK(len == strlen(want[i]) && memcmp(rec, want[i], len) == 0);
    }
    CHECK_EQ(tfrec_reader_next(r, &rec, &len), TFREC_END);
    tfrec_reader_free(r);
    /* a NULL writer */
    CHECK_EQ(tfrec_writer_write_vec(NULL, ptrs, lens, 1), TFREC_E_INVALID);
    CHECK_EQ(tfrec_writer_write_batch(NULL, "a", ends, 1), TFREC_E_INVALID);
}

static void test_after_close(void)
{
    const char *path = harness_path("closed.tfrecord");
    tfrec_writer *w;
    CHECK_EQ(tfrec_writer_open(&w, path, NULL), TFREC_OK);
    CHECK_EQ(tfrec_writer_close(w), TFREC_OK);
    const void *ptrs[1] = { "a" };
    size_t lens[1] = { 1 };
    uint64_t ends[1] = { 1 };
    CHECK_EQ(tfrec_writer_write_vec(w, ptrs, lens, 1), TFREC_E_STATE);
    CHECK_EQ(tfrec_writer_write_batch(w, "a", ends, 1), TFREC_E_STATE);
    CHECK(strstr(tfrec_writer_errmsg(w), "closed") != NULL);
    CHECK_EQ(tfrec_writer_records(w), 0);
    tfrec_writer_free(w);
}

TESTS(TEST(test_same_bytes_every_compression), TEST(test_sink_failure_mid_batch),
      TEST(test_refused_record_mid_batch), TEST(test_after_close))

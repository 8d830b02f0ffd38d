/* Record indexes, random access and datasets (include/tfrec/dataset.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>

#include "harness.h"
#include "record_util.h"
#include "tfrec/dataset.h"

/* Record r of file f says so, padded to a size that varies with r. */
static size_t rec_text(char *buf, size_t f, uint64_t r)
{
    int n = snprintf(buf, 64, "f=%zu r=%llu ", f, (unsigned long long)r);
    size_t len = (size_t)n + (size_t)(r * 7 % 90);
    memset(buf + n, 'a' + (int)(f % 26), len - (size_t)n);
    return len;
}

static int write_file(const char *path, size_t f, uint64_t n, int with_index)
{
    tfrec_writer_options o = TFREC_WRITER_OPTIONS_INIT;
    o.write_index = with_index;
    tfrec_writer *w;
    int rc = tfrec_writer_open(&w, path, &o);
    char buf[256];
    for (uint64_t r = 0; r < n && rc == TFREC_OK; r++)
        rc = tfrec_writer_write(w, buf, rec_text(buf, f, r));
    if (rc == TFREC_OK)
        rc = tfrec_writer_close(w);
    tfrec_writer_free(w);
    return rc;
}

/* (f, r) back from a record written by write_file; -1 if it is not one. */
static int rec_parse(const uint8_t *data, size_t len, size_t *f, uint64_t *r)
{
    char s[64];
    size_t n = len < sizeof s - 1 ? len : sizeof s - 1;
    memcpy(s, data, n);
    s[n] = 0;
    unsigned long long rr;
    if (sscanf(s, "f=%zu r=%llu ", f, &rr) != 2)
        return -1;
    *r = rr;
    char want[256];
    return rec_text(want, *f, *r) == len && !memcmp(want, data, len) ? 0 : -1;
}

static void set_mtime(const char *path, long sec)
{
    struct timeval tv[2] = { { sec, 0 }, { sec, 0 } };
    utimes(path, tv);
}

static void test_writer_index_matches_tfrec_index_file(void)
{
    const char *a = harness_path("w.tfrecord");
    CHECK_EQ(write_file(a, 3, 500, 1), TFREC_OK);
    char ia[512];
    snprintf(ia, sizeof ia, "%s.idx", a);
    size_t n1, n2;
    uint8_t *from_writer = rt_slurp(ia, &n1);
    CHECK(from_writer && n1 > 0);
    uint64_t records = 0;
    CHECK_EQ(tfrec_index_file(a, &records), TFREC_OK);
    CHECK_EQ(records, 500);
    uint8_t *from_scan = rt_slurp(ia, &n2);
    CHECK(from_scan && n1 == n2 && !memcmp(from_writer, from_scan, n1));
    CHECK(!memcmp(from_scan, "0 16\n16 ", 8) || !memcmp(from_scan, "0 ", 2));
    free(from_writer);
    free(from_scan);
    tfrec_index *ix;
    CHECK_EQ(tfrec_index_load_fresh(&ix, a), TFREC_OK);
    CHECK_EQ(tfrec_index_records(ix), 500);
    uint64_t off, len, end = 0;
    for (uint64_t k = 0; k < 500; k++) {
        CHECK_EQ(tfrec_index_entry(ix, k, &off, &len), TFREC_OK);
        CHECK_EQ(off, end);
        char buf[256];
        CHECK_EQ(len, rec_text(buf, 3, k) + 16);
        end = off + len;
    }
    CHECK_EQ(tfrec_index_entry(ix, 500, &off, &len), TFREC_E_INVALID);
    tfrec_index_free(ix);
}

static void test_index_of_compressed_file_is_refused(void)
{
    const char *g = harness_path("c.tfrecord.gz");
    size_t sizes[] = { 10, 20 };
    CHECK_EQ(rt_write(g, TFREC_COMPRESSION_GZIP, sizes, 2, 1), TFREC_OK);
    CHECK_EQ(tfrec_index_file(g, NULL), TFREC_E_UNSUPPORTED);
    CHECK(strstr(tfrec_last_errmsg(), "c.tfrecord.gz") && strstr(tfrec_last_errmsg(), "GZIP"));
    tfrec_writer_options o = TFREC_WRITER_OPTIONS_INIT;
    o.write_index = 1;
    o.compression = TFREC_COMPRESSION_ZLIB;
    tfrec_writer *w;
    CHECK_EQ(tfrec_writer_open(&w, harness_path("c2.tfrecord"), &o), TFREC_E_UNSUPPORTED);
    CHECK(w == NULL);
    uint64_t n;
    int used = 1;
    CHECK_EQ(tfrec_reader_count(g, NULL, &n, &used), TFREC_OK);
    CHECK_EQ(n, 2);
    CHECK_EQ(used, 0);
}

/* A sink in memory that remembers how it was closed. */
typedef struct mem_sink {
    char buf[4096];
    size_t len;
    int closed, committed;
} mem_sink;

static int ms_write(void *ctx, const void *p, size_t n)
{
    mem_sink *m = ctx;
    if (n > sizeof m->buf - m->len)
        return TFREC_E_IO;
    memcpy(m->buf + m->len, p, n);
    m->len += n;
    return TFREC_OK;
}

static int ms_close(void *ctx, int commit)
{
    mem_sink *m = ctx;
    m->closed++;
    m->committed = commit;
    return TFREC_OK;
}

static tfrec_io mem_sink_io(mem_sink *m)
{
    tfrec_io io = TFREC_IO_INIT;
    io.ctx = m;
    io.write = ms_write;
    io.close = ms_close;
    return io;
}

/* index_sink belongs to the writer from the open on: committed after the
 * data, discarded when the open fails for any reason. */
static void test_writer_index_sink_ownership(void)
{
    mem_sink data = { .len = 0 }, idx = { .len = 0 };
    tfrec_io dio = mem_sink_io(&data), iio = mem_sink_io(&idx);
    tfrec_writer_options o = TFREC_WRITER_OPTIONS_INIT;
    o.index_sink = &iio;
    tfrec_writer *w;
    CHECK_EQ(tfrec_writer_open_io(&w, &dio, "m", &o), TFREC_OK);
    CHECK_EQ(tfrec_writer_write(w, "abc", 3), TFREC_OK);
    CHECK_EQ(tfrec_writer_write(w, "", 0), TFREC_OK);
    CHECK_EQ(tfrec_writer_close(w), TFREC_OK);
    tfrec_writer_free(w);
    CHECK(data.closed == 1 && data.committed == 1 && idx.closed == 1 && idx.committed == 1);
    CHECK_EQ(idx.len, strlen("0 19\n19 16\n"));
    CHECK(!memcmp(idx.buf, "0 19\n19 16\n", idx.len));
    for (int bad = 0; bad < 2; bad++) {
        memset(&data, 0, sizeof data);
        memset(&idx, 0, sizeof idx);
        o.compression = bad ? TFREC_COMPRESSION_NONE : TFREC_COMPRESSION_GZIP;
        o.level = bad ? 42 : 0;
        CHECK(tfrec_writer_open_io(&w, &dio, "m", &o) < 0);
        CHECK(w == NULL);
        CHECK(data.closed == 1 && data.committed == 0 && idx.closed == 1 && idx.committed == 0);
    }
    /* An aborted writer discards the index too. */
    memset(&idx, 0, sizeof idx);
    o.compression = 0;
    o.level = 0;
    CHECK_EQ(tfrec_writer_open_io(&w, &dio, "m", &o), TFREC_OK);
    tfrec_writer_abort(w);
    tfrec_writer_free(w);
    CHECK(idx.closed == 1 && idx.committed == 0);
}

static void test_stale_index_is_detected_and_count_falls_back(void)
{
    const char *a = harness_path("s.tfrecord");
    CHECK_EQ(write_file(a, 0, 40, 1), TFREC_OK);
    char ia[512];
    snprintf(ia, sizeof ia, "%s.idx", a);
    uint64_t n;
    int used = 0;
    CHECK_EQ(tfrec_reader_count(a, NULL, &n, &used), TFREC_OK);
    CHECK_EQ(n, 40);
    CHECK_EQ(used, 1);
    /* Same size, data newer than the index: stale by mtime. */
    set_mtime(ia, 1000000000);
    set_mtime(a, 1000000100);
    tfrec_index *ix = NULL;
    CHECK_EQ(tfrec_index_load_fresh(&ix, a), TFREC_E_STATE);
    CHECK(strstr(tfrec_last_errmsg(), "stale"));
    CHECK_EQ(tfrec_reader_count(a, NULL, &n, &used), TFREC_OK);
    CHECK_EQ(n, 40);
    CHECK_EQ(used, 0);
    /* A newer index of a file that grew since: stale by size. */
    size_t idx_len;
    uint8_t *idx = rt_slurp(ia, &idx_len);
    CHECK_EQ(write_file(a, 0, 41, 0), TFREC_OK);
    CHECK_EQ(rt_spit(ia, idx, idx_len), 0);
    free(idx);
    CHECK_EQ(tfrec_index_load_fresh(&ix, a), TFREC_E_STATE);
    CHECK(strstr(tfrec_last_errmsg(), "stale"));
    CHECK_EQ(tfrec_reader_count(a, NULL, &n, &used), TFREC_OK);
    CHECK_EQ(n, 41);
    CHECK_EQ(used, 0);
    /* No index at all. */
    remove(ia);
    CHECK_EQ(tfrec_index_load_fresh(&ix, a), TFREC_E_NOT_FOUND);
    CHECK_EQ(tfrec_reader_count(a, NULL, &n, &used), TFREC_OK);
    CHECK_EQ(n, 41);
}

static int load_text(const char *text, int64_t data_size, tfrec_index **ix)
{
    tfrec_io io = TFREC_IO_INIT;
    if (tfrec_io_open_memory(&io, text, strlen(text)) != TFREC_OK)
        return -100;
    return tfrec_index_load_io(ix, &io, "t.idx", data_size);
}

static void test_hostile_index_text(void)
{
    static const struct {
        const char *text;
        const char *says;
    } bad[] = {
        { "0 16\n8 16\n", "line 2: record at offset 8 overlaps" },
        { "0 16\n20 16\n", "line 2: record at offset 20 leaves a gap" },
        { "16 16\n", "line 1: record at offset 16 leaves a gap" },
        { "0 15\n", "line 1: length 15 is shorter" },
        { "0 16\n16 99999\n", "line 2: record [16, 100015) lies beyond the end" },
        { "0 x\n", "line 1: expected 'OFFSET LENGTH'" },
        { "0 16 7\n", "line 1: expected" },
        { "-1 16\n", "line 1: expected" },
        { "0 99999999999999999999999\n", "line 1: expected" },
        { "0 18446744073709551615\n", "line 1: record" },
        { "0                                                                     16\n",
          "longer than" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tfrec_index *ix = (tfrec_index *)1;
        int rc = load_text(bad[i].text, 1000, &ix);
        CHECKF(rc == TFREC_E_PARSE, "case %zu: rc %d", i, rc);
        CHECK(ix == NULL);
        CHECKF(strstr(tfrec_last_errmsg(), bad[i].says) && strstr(tfrec_last_errmsg(), "t.idx"),
               "case %zu: %s", i, tfrec_last_errmsg());
    }
    /* Fine: CRLF, blank lines, no final newline, unknown data size. */
    tfrec_index *ix;
    CHECK_EQ(load_text("0 16\r\n\n16 20", -1, &ix), TFREC_OK);
    CHECK_EQ(tfrec_index_records(ix), 2);
    CHECK_EQ(tfrec_index_data_size(ix), 36);
    tfrec_index_free(ix);
    /* Millions of lines claiming a 1 KiB file stop at the first line past
     * its end: memory follows the lines read, not the lines claimed. */
    size_t lines = 1000000, cap = lines * 24 + 1, used = 0;
    char *big = malloc(cap);
    CHECK(big);
    for (size_t k = 0; k < lines; k++)
        used += (size_t)snprintf(big + used, cap - used, "%zu 16\n", k * 16);
    CHECK_EQ(load_text(big, 1024, &ix), TFREC_E_PARSE);
    CHECK(strstr(tfrec_last_errmsg(), "line 65:"));
    free(big);
}

static void test_random_reader_checks_every_read(void)
{
    const char *a = harness_path("r.tfrecord");
    CHECK_EQ(write_file(a, 5, 300, 1), TFREC_OK);
    tfrec_random_reader *r;
    CHECK_EQ(tfrec_random_reader_open(&r, a), TFREC_OK);
    CHECK_EQ(tfrec_random_reader_records(r), 300);
    for (uint64_t i = 0; i < 300; i++) {
        uint64_t k = (i * 7919) % 300;
        const uint8_t *d;
        size_t len, f;
        uint64_t rr;
        CHECK_EQ(tfrec_random_reader_read(r, k, &d, &len), TFREC_OK);
        CHECK(rec_parse(d, len, &f, &rr) == 0 && f == 5 && rr == k);
    }
    const uint8_t *d;
    size_t len;
    CHECK_EQ(tfrec_random_reader_read(r, 300, &d, &len), TFREC_E_INVALID);
    tfrec_random_reader_free(r);

    /* One flipped data byte: that record fails its CRC, the others read. */
    size_t n;
    uint8_t *bytes = rt_slurp(a, &n);
    CHECK(bytes);
    tfrec_index *ix;
    CHECK_EQ(tfrec_index_load_fresh(&ix, a), TFREC_OK);
    uint64_t off, flen;
    CHECK_EQ(tfrec_index_entry(ix, 17, &off, &flen), TFREC_OK);
    tfrec_index_free(ix);
    bytes[off + 14] ^= 1;
    const char *b = harness_path("rb.tfrecord");
    CHECK_EQ(rt_spit(b, bytes, n), 0);
    free(bytes);
    char ia[512], ib[512];
    snprintf(ia, sizeof ia, "%s.idx", a);
    snprintf(ib, sizeof ib, "%s.idx", b);
    size_t il;
    uint8_t *itext = rt_slurp(ia, &il);
    CHECK_EQ(rt_spit(ib, itext, il), 0);
    free(itext);
    CHECK_EQ(tfrec_random_reader_open(&r, b), TFREC_OK);
    CHECK_EQ(tfrec_random_reader_read(r, 17, &d, &len), TFREC_E_BAD_DATA_CRC);
    CHECK(strstr(tfrec_random_reader_errmsg(r), "rb.tfrecord") &&
          strstr(tfrec_random_reader_errmsg(r), "offset"));
    CHECK_EQ(tfrec_random_reader_read(r, 18, &d, &len), TFREC_OK);
    tfrec_random_reader_free(r);
}

/* An index that tiles the file but with the wrong boundaries (two lengths
 * swapped) passes every check a load can make; reads catch it. */
static void test_wrong_but_tiling_index_is_caught_by_reads(void)
{
    const char *a = harness_path("t.tfrecord");
    CHECK_EQ(write_file(a, 1, 3, 0), TFREC_OK); /* lengths 16+6+..: all different */
    tfrec_reader *rd;
    CHECK_EQ(tfrec_reader_open(&rd, a, NULL), TFREC_OK);
    tfrec_index *good;
    CHECK_EQ(tfrec_index_build(&good, rd), TFREC_OK);
    tfrec_reader_free(rd);
    uint64_t o0, l0, o1, l1, o2, l2;
    tfrec_index_entry(good, 0, &o0, &l0);
    tfrec_index_entry(good, 1, &o1, &l1);
    tfrec_index_entry(good, 2, &o2, &l2);
    tfrec_index_free(good);
    CHECK(l0 != l1);
    char text[128];
    snprintf(text, sizeof text, "0 %llu\n%llu %llu\n%llu %llu\n", (unsigned long long)l1,
             (unsigned long long)l1, (unsigned long long)l0, (unsigned long long)o2,
             (unsigned long long)l2);
    tfrec_index *ix;
    CHECK_EQ(load_text(text, (int64_t)(o2 + l2), &ix), TFREC_OK);
    tfrec_io io = TFREC_IO_INIT;
    CHECK_EQ(tfrec_io_open_source(&io, a), TFREC_OK);
    tfrec_random_reader *r;
    CHECK_EQ(tfrec_random_reader_open_io(&r, &io, ix, a), TFREC_OK);
    const uint8_t *d;
    size_t len;
    CHECK_EQ(tfrec_random_reader_read(r, 0, &d, &len), TFREC_E_INVALID);
    CHECK(strstr(tfrec_random_reader_errmsg(r), "index says"));
    CHECK_EQ(tfrec_random_reader_read(r, 2, &d, &len), TFREC_OK);
    tfrec_random_reader_free(r);
}

/* ------------------------------------------------------------- datasets */

typedef struct layout {
    size_t nfiles;
    uint64_t counts[6];
} layout;

static const layout layouts[] = {
    { 1, { 1 } },    { 3, { 10, 0, 7 } }, { 4, { 100, 1, 33, 64 } }, { 6, { 5, 5, 5, 5, 5, 5 } },
    { 2, { 0, 0 } },
};

static const char **make_files(const layout *l, int idx_tag, int with_index)
{
    static const char *names[6];
    static char store[6][512];
    for (size_t f = 0; f < l->nfiles; f++) {
        char nm[64];
        snprintf(nm, sizeof nm, "ds%d-%zu.tfrecord", idx_tag, f);
        snprintf(store[f], sizeof store[f], "%s", harness_path(nm));
        names[f] = store[f];
        if (write_file(store[f], f, l->counts[f], with_index) != TFREC_OK)
            return NULL;
    }
    return names;
}

/* Read an epoch; seen[f][r] counts deliveries. Returns records or -1. */
static long read_epoch(tfrec_dataset *ds, uint64_t epoch, uint8_t seen[6][128], uint64_t *order,
                       size_t order_cap)
{
    if (tfrec_dataset_start_epoch(ds, epoch) != TFREC_OK)
        return -1;
    long n = 0;
    const uint8_t *d;
    size_t len;
    int rc;
    while ((rc = tfrec_dataset_next(ds, &d, &len)) == TFREC_OK) {
        size_t f, pf;
        uint64_t r, pr;
        if (rec_parse(d, len, &f, &r) < 0 || f >= 6 || r >= 128)
            return -1;
        if (tfrec_dataset_position(ds, &pf, &pr) != TFREC_OK || pf != f || pr != r)
            return -1;
        if (seen)
            seen[f][r]++;
        if (order && (size_t)n < order_cap)
            order[n] = f * 1000 + r;
        n++;
    }
    return rc == TFREC_END ? n : -1;
}

/* The property: for every layout, N and mode, the N shards of an epoch are
 * disjoint, cover every record, and differ in size by at most one. */
static void test_shards_are_disjoint_and_cover_everything(void)
{
    static const uint32_t ns[] = { 1, 2, 3, 5, 7, 16 };
    for (size_t li = 0; li < sizeof layouts / sizeof layouts[0]; li++) {
        const layout *l = &layouts[li];
        const char **files = make_files(l, (int)li, (int)(li % 2));
        CHECK(files);
        uint64_t total = 0;
        for (size_t f = 0; f < l->nfiles; f++)
            total += l->counts[f];
        /* in order, default (a block shuffle), block, global */
        for (int shuffle = 0; shuffle < 4; shuffle++)
            for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++) {
                static uint8_t seen[6][128];
                memset(seen, 0, sizeof seen);
                long min = -1, max = 0;
                for (uint32_t i = 0; i < ns[ni]; i++) {
                    tfrec_dataset_options o = TFREC_DATASET_OPTIONS_INIT;
                    o.shuffle = shuffle > 0;
                    if (shuffle == 2) { /* the same for every shard, as the order must be */
                        o.shuffle_block = 2 + (uint32_t)(ni % 5);
                        o.shuffle_buffer = ni % 2 ? 0 : 7;
                    }
                    if (shuffle == 3)
                        o.shuffle_block = 1;
                    o.seed = 42;
                    o.shard_index = i;
                    o.num_shards = ns[ni];
                    o.num_threads = 1 + i % 3;
                    o.block_records = 1 + i % 4;
                    o.use_mmap = (int)(i % 3) - 1; /* pread, the default, mapped */
                    tfrec_dataset *ds;
                    CHECKF(tfrec_dataset_open(&ds, files, l->nfiles, &o) == TFREC_OK, "%s",
                           tfrec_last_errmsg());
                    CHECK_EQ(tfrec_dataset_total_records(ds), total);
                    long n = read_epoch(ds, 3, seen, NULL, 0);
                    CHECK_EQ(n, (long)tfrec_dataset_shard_records(ds));
                    tfrec_dataset_free(ds);
                    CHECK(n >= 0);
                    if (min < 0 || n < min)
                        min = n;
                    if (n > max)
                        max = n;
                }
                CHECKF(max - min <= 1, "layout %zu N %u: shards of %ld..%ld records", li, ns[ni],
                       min, max);
                for (size_t f = 0; f < l->nfiles; f++)
                    for (uint64_t r = 0; r < l->counts[f]; r++)
                        CHECKF(seen[f][r] == 1,
                               "layout %zu N %u shuffle %d: file %zu record %llu read %d times", li,
                               ns[ni], shuffle, f, (unsigned long long)r, seen[f][r]);
            }
    }
}

/* shard_auto: each of WORLD_SIZE processes (RANK set) reads its share of
 * the job's task identity; a broken identity fails the open. */
static void test_shard_auto_follows_the_task_identity(void)
{
    const layout *l = &layouts[2];
    const char **files = make_files(l, 40, 1);
    CHECK(files);
    static uint8_t seen[6][128];
    memset(seen, 0, sizeof seen);
    unsetenv("TF_CONFIG");
    unsetenv("CLUSTER_SPEC");
    unsetenv("JOB_COMPLETION_INDEX");
    unsetenv("TFREC_NUM_TASKS");
    setenv("WORLD_SIZE", "3", 1);
    long sum = 0;
    for (int rank = 0; rank < 3; rank++) {
        char r[16];
        snprintf(r, sizeof r, "%d", rank);
        setenv("RANK", r, 1);
        tfrec_dataset_options o = TFREC_DATASET_OPTIONS_INIT;
        o.shard_auto = 1;
        o.shuffle = 1;
        tfrec_dataset *ds;
        CHECKF(tfrec_dataset_open(&ds, files, l->nfiles, &o) == TFREC_OK, "%s",
               tfrec_last_errmsg());
        long n = read_epoch(ds, 0, seen, NULL, 0);
        CHECK_EQ(n, (long)tfrec_dataset_shard_records(ds));
        CHECK(n >= 66 && n <= 66); /* 198 records in 3 shares */
        sum += n;
        tfrec_dataset_free(ds);
    }
    CHECK_EQ(sum, 198);
    for (size_t f = 0; f < l->nfiles; f++)
        for (uint64_t r = 0; r < l->counts[f]; r++)
            CHECK_EQ(seen[f][r], 1);
    setenv("RANK", "3", 1);
    tfrec_dataset_options o = TFREC_DATASET_OPTIONS_INIT;
    o.shard_auto = 1;
    tfrec_dataset *ds;
    CHECK_EQ(tfrec_dataset_open(&ds, files, l->nfiles, &o), TFREC_E_INVALID);
    CHECK(strstr(tfrec_last_errmsg(), "RANK=3 is not below WORLD_SIZE=3"));
    setenv("RANK", "0", 1);
    o.num_shards = 2;
    CHECK_EQ(tfrec_dataset_open(&ds, files, l->nfiles, &o), TFREC_E_INVALID);
    unsetenv("RANK");
    unsetenv("WORLD_SIZE");
}

static void test_shuffle_is_reproducible_and_new_each_epoch(void)
{
    const layout *l = &layouts[2];
    const char **files = make_files(l, 10, 1);
    CHECK(files);
    static uint64_t a[256], b[256], c[256], d[256];
    tfrec_dataset_options o = TFREC_DATASET_OPTIONS_INIT;
    o.shuffle = 1;
    o.seed = 7;
    tfrec_dataset *ds;
    CHECK_EQ(tfrec_dataset_open(&ds, files, l->nfiles, &o), TFREC_OK);
    CHECK_EQ(read_epoch(ds, 0, NULL, a, 256), 198);
    CHECK_EQ(read_epoch(ds, 1, NULL, b, 256), 198);
    tfrec_dataset_free(ds);
    o.num_threads = 5; /* the order does not depend on the threads */
    o.block_records = 3;
    CHECK_EQ(tfrec_dataset_open(&ds, files, l->nfiles, &o), TFREC_OK);
    CHECK_EQ(read_epoch(ds, 0, NULL, c, 256), 198);
    o.seed = 8;
    tfrec_dataset *ds2;
    CHECK_EQ(tfrec_dataset_open(&ds2, files, l->nfiles, &o), TFREC_OK);
    CHECK_EQ(read_epoch(ds2, 0, NULL, d, 256), 198);
    tfrec_dataset_free(ds);
    tfrec_dataset_free(ds2);
    CHECK(!memcmp(a, c, 198 * sizeof *a));
    CHECK(memcmp(a, b, 198 * sizeof *a) != 0);
    CHECK(memcmp(a, d, 198 * sizeof *a) != 0);
    /* Mixed across files: the first 20 come from more than one file. */
    int files_seen = 0;
    for (size_t f = 0; f < 4; f++)
        for (size_t i = 0; i < 20; i++)
            if (a[i] / 1000 == f) {
                files_seen++;
                break;
            }
    CHECK(files_seen >= 2);
}

/* The block shuffle: a function of (seed, epoch), not of the threads; not
 * the global shuffle's order; runs of consecutive records survive in part
 * (blocks of 8 through a buffer of 16). Bad combinations are refused. */
static void test_block_shuffle_is_reproducible(void)
{
    const layout *l = &layouts[2];
    const char **files = make_files(l, 11, 0);
    CHECK(files);
    static uint64_t a[256], b[256], c[256], g[256];
    tfrec_dataset_options o = TFREC_DATASET_OPTIONS_INIT;
    o.shuffle = 1;
    o.seed = 7;
    o.shuffle_block = 1; /* the global shuffle */
    tfrec_dataset *ds;
    CHECK_EQ(tfrec_dataset_open(&ds, files, l->nfiles, &o), TFREC_OK);
    CHECK_EQ(read_epoch(ds, 0, NULL, g, 256), 198);
    tfrec_dataset_free(ds);
    o.shuffle_block = 8;
    o.shuffle_buffer = 16;
    CHECK_EQ(tfrec_dataset_open(&ds, files, l->nfiles, &o), TFREC_OK);
    CHECK_EQ(read_epoch(ds, 0, NULL, a, 256), 198);
    CHECK_EQ(read_epoch(ds, 1, NULL, b, 256), 198);
    tfrec_dataset_free(ds);
    o.num_threads = 5;
    o.block_records = 3;
    CHECK_EQ(tfrec_dataset_open(&ds, files, l->nfiles, &o), TFREC_OK);
    CHECK_EQ(read_epoch(ds, 0, NULL, c, 256), 198);
    tfrec_dataset_free(ds);
    CHECK(!memcmp(a, c, 198 * sizeof *a));
    /* Read in place from mappings by the consumer, or by threads through
     * the consumer's buffer (pread): the same order. */
    static uint64_t m[256], p[256];
    o.use_mmap = 1;
    CHECK_EQ(tfrec_dataset_open(&ds, files, l->nfiles, &o), TFREC_OK);
    CHECK_EQ(read_epoch(ds, 0, NULL, m, 256), 198);
    tfrec_dataset_free(ds);
    o.use_mmap = -1;
    CHECK_EQ(tfrec_dataset_open(&ds, files, l->nfiles, &o), TFREC_OK);
    CHECK_EQ(read_epoch(ds, 0, NULL, p, 256), 198);
    tfrec_dataset_free(ds);
    o.use_mmap = 0;
    CHECK(!memcmp(a, m, 198 * sizeof *a));
    CHECK(!memcmp(a, p, 198 * sizeof *a));
    CHECK(memcmp(a, b, 198 * sizeof *a) != 0);
    CHECK(memcmp(a, g, 198 * sizeof *a) != 0);
    /* Each output's nearest neighbours in the input are closer than in a
     * global shuffle: sum of |key distance| between outputs i and i+1. */
    uint64_t da = 0, dg = 0;
    for (size_t i = 0; i + 1 < 198; i++) {
        da += a[i] > a[i + 1] ? a[i] - a[i + 1] : a[i + 1] - a[i];
        dg += g[i] > g[i + 1] ? g[i] - g[i + 1] : g[i + 1] - g[i];
    }
    CHECKF(da < dg, "neighbour distance %llu block, %llu global", (unsigned long long)da,
           (unsigned long long)dg);
    tfrec_dataset_options bad = TFREC_DATASET_OPTIONS_INIT;
    bad.shuffle_block = 4; /* without shuffle */
    CHECK_EQ(tfrec_dataset_open(&ds, files, l->nfiles, &bad), TFREC_E_INVALID);
    bad.shuffle = 1;
    bad.shuffle_block = 0;
    bad.shuffle_buffer = 10; /* a buffer without blocks */
    CHECK_EQ(tfrec_dataset_open(&ds, files, l->nfiles, &bad), TFREC_E_INVALID);
}

static void test_interleave_order_without_shuffle(void)
{
    const layout l = { 3, { 5, 2, 4 } };
    const char **files = make_files(&l, 11, 0);
    CHECK(files);
    tfrec_dataset_options o = TFREC_DATASET_OPTIONS_INIT;
    o.block_records = 2;
    o.num_threads = 3;
    o.index_policy = TFREC_INDEX_SCAN;
    tfrec_dataset *ds;
    CHECK_EQ(tfrec_dataset_open(&ds, files, 3, &o), TFREC_OK);
    uint64_t got[16];
    CHECK_EQ(read_epoch(ds, 0, NULL, got, 16), 11);
    static const uint64_t want[] = { 0, 1, 1000, 1001, 2000, 2001, 2, 3, 2002, 2003, 4 };
    for (size_t i = 0; i < 11; i++)
        CHECKF(got[i] == want[i], "position %zu: %llu, expected %llu", i,
               (unsigned long long)got[i], (unsigned long long)want[i]);
    /* The same epoch again, without shuffling: the same order. */
    uint64_t again[16];
    CHECK_EQ(read_epoch(ds, 1, NULL, again, 16), 11);
    CHECK(!memcmp(got, again, 11 * sizeof *got));
    tfrec_dataset_free(ds);
}

static void test_budget_smaller_than_a_record_still_progresses(void)
{
    const char *a = harness_path("big.tfrecord");
    size_t sizes[] = { 300000, 5, 200000, 7 };
    CHECK_EQ(rt_write(a, TFREC_COMPRESSION_NONE, sizes, 4, 9), TFREC_OK);
    tfrec_dataset_options o = TFREC_DATASET_OPTIONS_INIT;
    o.prefetch_bytes = 1000;
    o.block_records = 1;
    o.num_threads = 4;
    tfrec_dataset *ds;
    CHECK_EQ(tfrec_dataset_open(&ds, &a, 1, &o), TFREC_OK);
    const uint8_t *d;
    size_t len;
    uint8_t *want = malloc(300000);
    for (size_t i = 0; i < 4; i++) {
        CHECK_EQ(tfrec_dataset_next(ds, &d, &len), TFREC_OK);
        CHECK_EQ(len, sizes[i]);
        rt_payload(want, len, 9, i);
        CHECK(!memcmp(want, d, len));
    }
    free(want);
    CHECK_EQ(tfrec_dataset_next(ds, &d, &len), TFREC_END);
    CHECK_EQ(tfrec_dataset_next(ds, &d, &len), TFREC_END);
    tfrec_dataset_free(ds);
}

static void test_dataset_reports_corrupt_records_and_bad_options(void)
{
    const char *a = harness_path("dc.tfrecord");
    CHECK_EQ(write_file(a, 0, 50, 1), TFREC_OK);
    size_t n;
    uint8_t *bytes = rt_slurp(a, &n);
    bytes[n - 30] ^= 0x40; /* inside the last record's data */
    CHECK_EQ(rt_spit(a, bytes, n), 0);
    free(bytes);
    char ia[512];
    snprintf(ia, sizeof ia, "%s.idx", a);
    set_mtime(a, 1000000000); /* keep the index fresh: same size, index newer */
    tfrec_dataset_options o = TFREC_DATASET_OPTIONS_INIT;
    o.index_policy = TFREC_INDEX_REQUIRE;
    tfrec_dataset *ds;
    CHECK_EQ(tfrec_dataset_open(&ds, &a, 1, &o), TFREC_OK);
    const uint8_t *d;
    size_t len;
    int rc, k = 0;
    while ((rc = tfrec_dataset_next(ds, &d, &len)) == TFREC_OK)
        k++;
    CHECK_EQ(rc, TFREC_E_BAD_DATA_CRC);
    CHECK(k < 50);
    CHECK(strstr(tfrec_dataset_errmsg(ds), "dc.tfrecord"));
    CHECK_EQ(tfrec_dataset_next(ds, &d, &len), TFREC_E_BAD_DATA_CRC);
    tfrec_dataset_free(ds);

    /* REQUIRE without an index; shard beyond the count; struct sizes. */
    remove(ia);
    CHECK_EQ(tfrec_dataset_open(&ds, &a, 1, &o), TFREC_E_NOT_FOUND);
    CHECK(strstr(tfrec_last_errmsg(), "dc.tfrecord.idx"));
    o.index_policy = TFREC_INDEX_AUTO;
    o.shard_index = 2;
    o.num_shards = 2;
    CHECK_EQ(tfrec_dataset_open(&ds, &a, 1, &o), TFREC_E_INVALID);
    o.shard_index = 0;
    o.use_mmap = 2;
    CHECK_EQ(tfrec_dataset_open(&ds, &a, 1, &o), TFREC_E_INVALID);
    o.use_mmap = 0;
    tfrec_dataset_options zero = { 0 };
    CHECK_EQ(tfrec_dataset_open(&ds, &a, 1, &zero), TFREC_E_INVALID);
    struct {
        tfrec_dataset_options o;
        int future;
    } longer = { TFREC_DATASET_OPTIONS_INIT, 1 };
    longer.o.struct_size = sizeof longer;
    CHECK_EQ(tfrec_dataset_open(&ds, &a, 1, &longer.o), TFREC_E_UNSUPPORTED);
    const char *gz = harness_path("dz.tfrecord.gz");
    size_t sizes[] = { 3 };
    CHECK_EQ(rt_write(gz, TFREC_COMPRESSION_GZIP, sizes, 1, 1), TFREC_OK);
    CHECK_EQ(tfrec_dataset_open(&ds, &gz, 1, NULL), TFREC_E_UNSUPPORTED);
    CHECK(strstr(tfrec_last_errmsg(), "dz.tfrecord.gz"));
}

/* A caller's opener (as a gs:// client would be): freshness by tiling.
 * The dataset calls it from its threads, several at once. */
static int opens;
static int open_counting(void *ctx, const char *name, tfrec_io *io)
{
    (void)ctx;
    __atomic_add_fetch(&opens, 1, __ATOMIC_RELAXED);
    return tfrec_io_open_source(io, name);
}

static void test_dataset_through_a_caller_opener(void)
{
    const layout l = { 2, { 9, 4 } };
    const char **files = make_files(&l, 12, 1);
    CHECK(files);
    tfrec_dataset_options o = TFREC_DATASET_OPTIONS_INIT;
    o.open_source = open_counting;
    o.index_policy = TFREC_INDEX_REQUIRE;
    opens = 0;
    tfrec_dataset *ds;
    CHECKF(tfrec_dataset_open(&ds, files, 2, &o) == TFREC_OK, "%s", tfrec_last_errmsg());
    CHECK_EQ(opens, 4); /* each file's size, each index */
    static uint8_t seen[6][128];
    memset(seen, 0, sizeof seen);
    CHECK_EQ(read_epoch(ds, 0, seen, NULL, 0), 13);
    CHECK(opens >= 6);
    tfrec_dataset_free(ds);
    /* A stale index (the file grew) is an error under REQUIRE. */
    char ia[512];
    snprintf(ia, sizeof ia, "%s.idx", files[1]);
    size_t il;
    uint8_t *itext = rt_slurp(ia, &il);
    CHECK_EQ(write_file(files[1], 1, 5, 0), TFREC_OK);
    CHECK_EQ(rt_spit(ia, itext, il), 0);
    free(itext);
    CHECK_EQ(tfrec_dataset_open(&ds, files, 2, &o), TFREC_E_STATE);
    o.index_policy = TFREC_INDEX_AUTO;
    CHECK_EQ(tfrec_dataset_open(&ds, files, 2, &o), TFREC_OK);
    CHECK_EQ(tfrec_dataset_total_records(ds), 14);
    tfrec_dataset_free(ds);
}

/* A file system over mem:// that counts the bytes read of each of
 * KEEP_FILES objects "mem://keep-test/part-F" (a remote file system to the
 * dataset: it has ranges and is not the local one). */
enum { KEEP_FILES = 3 };
static uint64_t keep_read[KEEP_FILES];

typedef struct counted_io {
    tfrec_io in;
    size_t f; /* KEEP_FILES: not counted (an index probe) */
} counted_io;

static ptrdiff_t counted_read(void *ctx, void *buf, size_t n)
{
    counted_io *c = ctx;
    ptrdiff_t k = c->in.read(c->in.ctx, buf, n);
    if (k > 0 && c->f < KEEP_FILES)
        __atomic_add_fetch(&keep_read[c->f], (uint64_t)k, __ATOMIC_RELAXED);
    return k;
}

static int counted_seek(void *ctx, uint64_t off)
{
    counted_io *c = ctx;
    return c->in.seek(c->in.ctx, off);
}

static int64_t counted_size(void *ctx)
{
    counted_io *c = ctx;
    return c->in.size(c->in.ctx);
}

static int counted_close(void *ctx, int commit)
{
    counted_io *c = ctx;
    int rc = c->in.close(c->in.ctx, commit);
    free(c);
    return rc;
}

static int counted_wrap(const char *name, tfrec_io *io)
{
    counted_io *c = malloc(sizeof *c);
    if (!c) {
        io->close(io->ctx, 0);
        return TFREC_E_NOMEM;
    }
    c->in = *io;
    c->f = KEEP_FILES;
    const char *tail = strstr(name, "/part-");
    if (tail && !strchr(tail, '.'))
        c->f = (size_t)atoi(tail + 6);
    io->ctx = c;
    io->read = counted_read;
    io->seek = c->in.seek ? counted_seek : NULL;
    io->size = c->in.size ? counted_size : NULL;
    io->close = counted_close;
    io->errmsg = NULL;
    return TFREC_OK;
}

static int counted_open_source(void *ctx, const char *name, tfrec_io *io)
{
    (void)ctx;
    int rc = tfrec_fs_open_source(NULL, name, io);
    return rc < 0 ? rc : counted_wrap(name, io);
}

static int counted_open_range(void *ctx, const char *name, uint64_t off, uint64_t len, tfrec_io *io)
{
    (void)ctx;
    int rc = tfrec_fs_open_range(NULL, name, off, len, io);
    return rc < 0 ? rc : counted_wrap(name, io);
}

static int counted_stat(void *ctx, const char *name, tfrec_fs_info *info)
{
    (void)ctx;
    return tfrec_fs_stat(NULL, name, info);
}

/* Remote files without an index: the open scans each (reading it once)
 * and keeps its bytes within prefetch_bytes, the first epoch reads the
 * kept ones from memory, and the next epoch fetches them again. Files
 * beyond the budget are fetched as before. Every record comes once per
 * epoch, in order and shuffled. */
static void test_first_epoch_reads_kept_scan_bytes(void)
{
    static const uint64_t counts[KEEP_FILES] = { 40, 25, 33 };
    const char *names[KEEP_FILES];
    static char store[KEEP_FILES][64];
    uint64_t size[KEEP_FILES];
    for (size_t f = 0; f < KEEP_FILES; f++) {
        const char *local = harness_path("keep.tfrecord");
        CHECK_EQ(write_file(local, f, counts[f], 0), TFREC_OK);
        size_t len;
        uint8_t *bytes = rt_slurp(local, &len);
        CHECK(bytes);
        snprintf(store[f], sizeof store[f], "mem://keep-test/part-%zu", f);
        names[f] = store[f];
        tfrec_io sink = TFREC_IO_INIT;
        CHECK_EQ(tfrec_fs_open_sink(NULL, names[f], &sink), TFREC_OK);
        CHECK_EQ(sink.write(sink.ctx, bytes, len), TFREC_OK);
        CHECK_EQ(sink.close(sink.ctx, 1), TFREC_OK);
        size[f] = len;
        free(bytes);
    }
    tfrec_fs fs = TFREC_FS_INIT;
    fs.scheme = "mem";
    fs.open_source = counted_open_source;
    fs.open_range = counted_open_range;
    fs.stat = counted_stat;
    /* shuffle 0: in order; 1: the default block shuffle; 2: global */
    for (int shuffle = 0; shuffle < 3; shuffle++) {
        for (int small = 0; small < 2; small++) {
            tfrec_dataset_options o = TFREC_DATASET_OPTIONS_INIT;
            o.fs = &fs;
            o.shuffle = shuffle > 0;
            o.shuffle_block = shuffle == 2 ? 1 : 0;
            o.seed = 3;
            /* One scanning thread, files in turn: within the small budget
             * the first two are kept, the third is not. */
            o.num_threads = small ? 1 : 2;
            o.prefetch_bytes = small ? size[0] + size[1] : 0;
            memset(keep_read, 0, sizeof keep_read);
            tfrec_dataset *ds;
            CHECKF(tfrec_dataset_open(&ds, names, KEEP_FILES, &o) == TFREC_OK, "%s",
                   tfrec_last_errmsg());
            for (size_t f = 0; f < KEEP_FILES; f++)
                CHECK_EQ(keep_read[f], size[f]);
            for (uint64_t epoch = 0; epoch < 2; epoch++) {
                static uint8_t seen[6][128];
                memset(seen, 0, sizeof seen);
                CHECK_EQ(read_epoch(ds, epoch, seen, NULL, 0), 40 + 25 + 33);
                for (size_t f = 0; f < KEEP_FILES; f++)
                    for (uint64_t r = 0; r < counts[f]; r++)
                        CHECK_EQ(seen[f][r], 1);
                /* the scan, then once per epoch that fetched the file */
                for (size_t f = 0; f < KEEP_FILES; f++) {
                    uint64_t want = (1 + epoch + (small && f == 2)) * size[f];
                    CHECKF(keep_read[f] == want,
                           "shuffle %d small %d epoch %llu file %zu: %llu bytes read, want %llu",
                           shuffle, small, (unsigned long long)epoch, f,
                           (unsigned long long)keep_read[f], (unsigned long long)want);
                }
            }
            tfrec_dataset_free(ds);
        }
    }
}

/* A pattern's matches (sorted bytewise): X.idx is an index when X matched
 * too, whatever lies between them in the order; anything else is data. */
static void test_index_beside_match(void)
{
    const char *m[] = { "d/a",    "d/a-1",   "d/a.idx",      "d/a.idx.idx",      "d/b.idx",
                        "d/c",    "d/c.idx", "d/c.tfrecord", "d/c.tfrecord.idx", "d/e.IDX",
                        "d/x.idx" };
    size_t n = sizeof m / sizeof m[0];
    CHECK(tfrec_index_beside_match("d/a.idx", m, n));
    CHECK(tfrec_index_beside_match("d/a.idx.idx", m, n)); /* d/a.idx matched */
    CHECK(tfrec_index_beside_match("d/c.idx", m, n));
    CHECK(tfrec_index_beside_match("d/c.tfrecord.idx", m, n));
    CHECK(!tfrec_index_beside_match("d/b.idx", m, n)); /* no d/b: data */
    CHECK(!tfrec_index_beside_match("d/x.idx", m, n));
    CHECK(!tfrec_index_beside_match("d/a", m, n));
    CHECK(!tfrec_index_beside_match("d/a-1", m, n));
    CHECK(!tfrec_index_beside_match("d/e.IDX", m, n)); /* the suffix is exact */
    CHECK(!tfrec_index_beside_match("d/c.tfrecord", m, n));
    /* the first and last of the order are found; an empty or NULL list
     * and a bare ".idx" match nothing */
    const char *two[] = { "a", "a.idx" };
    CHECK(tfrec_index_beside_match("a.idx", two, 2));
    const char *last[] = { "a.idx", "b", "z" };
    CHECK(tfrec_index_beside_match("z.idx", last, 3));
    CHECK(!tfrec_index_beside_match("a.idx", two, 0));
    CHECK(!tfrec_index_beside_match("a.idx", NULL, 2));
    CHECK(!tfrec_index_beside_match(".idx", two, 2));
    CHECK(!tfrec_index_beside_match(NULL, two, 2));
    /* a prefix of a match is not that match: "a" is not in { "ab" } */
    const char *ab[] = { "ab", "ab.idx" };
    CHECK(!tfrec_index_beside_match("a.idx", ab, 2));
    CHECK(tfrec_index_beside_match("ab.idx", ab, 2));
}

/* More files than the in-place reader keeps open (256): files are closed
 * and reopened as the window moves, every record still comes once per
 * epoch, in the same order as read by threads (pread). */
/* Every record of a full grid of counts came exactly once. */
static void check_each_once(const uint8_t *seen, size_t n)
{
    for (size_t i = 0; i < n; i++)
        CHECK_EQ(seen[i], 1);
}

static void test_default_shuffle_over_many_files(void)
{
    enum { NF = 300, PER = 5 };
    static char store[NF][512];
    static const char *names[NF];
    for (size_t f = 0; f < NF; f++) {
        char nm[64];
        snprintf(nm, sizeof nm, "many-%zu.tfrecord", f);
        snprintf(store[f], sizeof store[f], "%s", harness_path(nm));
        names[f] = store[f];
        CHECK_EQ(write_file(store[f], f % 6, PER, 1), TFREC_OK);
    }
    static uint64_t order[2][NF * PER];
    for (int mm = 0; mm < 2; mm++) {
        tfrec_dataset_options o = TFREC_DATASET_OPTIONS_INIT;
        o.shuffle = 1;
        o.seed = 3;
        o.shuffle_block = 2; /* blocks from many files in the window */
        o.use_mmap = mm ? -1 : 1;
        tfrec_dataset *ds;
        CHECK_EQ(tfrec_dataset_open(&ds, names, NF, &o), TFREC_OK);
        static uint8_t seen[NF][PER];
        for (uint64_t epoch = 0; epoch < 2; epoch++) {
            memset(seen, 0, sizeof seen);
            CHECK_EQ(tfrec_dataset_start_epoch(ds, epoch), TFREC_OK);
            const uint8_t *d;
            size_t len, n = 0;
            int rc;
            while ((rc = tfrec_dataset_next(ds, &d, &len)) == TFREC_OK) {
                size_t f;
                uint64_t r;
                CHECK_EQ(tfrec_dataset_position(ds, &f, &r), TFREC_OK);
                CHECK(f < NF && r < PER);
                seen[f][r]++;
                if (epoch == 0 && n < NF * PER)
                    order[mm][n] = f * PER + r;
                n++;
            }
            CHECKF(rc == TFREC_END, "%s", tfrec_dataset_errmsg(ds));
            CHECK_EQ(n, (size_t)NF * PER);
            check_each_once(&seen[0][0], sizeof seen);
        }
        tfrec_dataset_free(ds);
    }
    CHECK(!memcmp(order[0], order[1], sizeof order[0]));
}

/* The map stage's result for a record: its (f, r) packed, from the record. */
static int map_to_position(void *ctx, const uint8_t *data, size_t len,
                           const tfrec_dataset_record_ref *ref, uint8_t *out)
{
    (void)ctx;
    size_t f;
    uint64_t r;
    if (rec_parse(data, len, &f, &r) != 0 || f != ref->file || r != ref->record)
        return TFREC_E_PARSE;
    uint64_t v = (uint64_t)f << 32 | r;
    memcpy(out, &v, sizeof v);
    return TFREC_OK;
}

/* Small records shuffled with the defaults are read in place by the
 * consumer, without threads; a map stage must still run on every record. */
static void test_map_stage_over_small_shuffled_records(void)
{
    enum { NF = 3, PER = 400 };
    char store[NF][512];
    const char *names[NF];
    for (size_t f = 0; f < NF; f++) {
        char nm[64];
        snprintf(nm, sizeof nm, "map-%zu.tfrecord", f);
        snprintf(store[f], sizeof store[f], "%s", harness_path(nm));
        names[f] = store[f];
        CHECK_EQ(write_file(store[f], f, PER, 1), TFREC_OK);
    }
    tfrec_dataset_options o = TFREC_DATASET_OPTIONS_INIT;
    o.shuffle = 1;
    o.seed = 5;
    o.use_mmap = 1;
    o.map = map_to_position;
    o.map_size = sizeof(uint64_t);
    tfrec_dataset *ds;
    CHECK_EQ(tfrec_dataset_open(&ds, names, NF, &o), TFREC_OK);
    static uint8_t seen[NF][PER];
    const uint8_t *d;
    size_t len, n = 0;
    int rc;
    while ((rc = tfrec_dataset_next(ds, &d, &len)) == TFREC_OK) {
        uint64_t v;
        CHECK_EQ(len, sizeof v);
        memcpy(&v, d, sizeof v);
        CHECK((v >> 32) < NF && (v & 0xffffffffu) < PER);
        seen[v >> 32][v & 0xffffffffu]++;
        n++;
    }
    CHECKF(rc == TFREC_END, "%s", tfrec_dataset_errmsg(ds));
    CHECK_EQ(n, (size_t)NF * PER);
    check_each_once(&seen[0][0], sizeof seen);
    tfrec_dataset_free(ds);
}

TESTS(TEST(test_index_beside_match), TEST(test_writer_index_matches_tfrec_index_file),
      TEST(test_index_of_compressed_file_is_refused), TEST(test_writer_index_sink_ownership),
      TEST(test_stale_index_is_detected_and_count_falls_back), TEST(test_hostile_index_text),
      TEST(test_random_reader_checks_every_read),
      TEST(test_wrong_but_tiling_index_is_caught_by_reads),
      TEST(test_shards_are_disjoint_and_cover_everything),
      TEST(test_shard_auto_follows_the_task_identity),
      TEST(test_shuffle_is_reproducible_and_new_each_epoch),
      TEST(test_block_shuffle_is_reproducible), TEST(test_interleave_order_without_shuffle),
      TEST(test_budget_smaller_than_a_record_still_progresses),
      TEST(test_dataset_reports_corrupt_records_and_bad_options),
      TEST(test_dataset_through_a_caller_opener), TEST(test_first_epoch_reads_kept_scan_bytes),
      TEST(test_default_shuffle_over_many_files), TEST(test_map_stage_over_small_shuffled_records))

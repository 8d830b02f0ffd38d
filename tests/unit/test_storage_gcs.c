/* The Cloud Storage client against a real storage server: the test server
 * of tests/storage/ (firebase-tools' emulator behind a layer that answers
 * resumable uploads like Cloud Storage and takes fault injections on an
 * admin port). Run by tests/integration/storage_client.sh through
 * tests/storage/with_emulator.sh, which sets STORAGE_EMULATOR_HOST and
 * TFREC_TEST_GCS_ADMIN; without them this program runs no test. */
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "storage/storage_internal.h"
#include "storage/transfer.h"
#include "tfrec/tfrec.h"

#define BUCKET "gs://tfrec-test"
#define KIB 1024u

static const char *admin_url;

/* ------------------------------------------------------------ helpers */

typedef struct membuf {
    char *p;
    size_t n;
} membuf;

static size_t collect(char *p, size_t size, size_t n, void *ud)
{
    membuf *m = ud;
    char *q = realloc(m->p, m->n + size * n + 1);
    if (!q)
        return 0;
    memcpy(q + m->n, p, size * n);
    m->p = q;
    m->n += size * n;
    q[m->n] = 0;
    return size * n;
}

/* POST json (or GET when json is NULL) to the admin port; the reply body
 * goes to reply (freed by the caller) when it is not NULL. HTTP status. */
static long admin(const char *path, const char *json, char **reply)
{
    char url[512];
    snprintf(url, sizeof url, "%s%s", admin_url, path);
    CURL *e = curl_easy_init();
    membuf m = { 0 };
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &m);
    if (json)
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, json);
    long status = 0;
    if (curl_easy_perform(e) == CURLE_OK)
        curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(h);
    curl_easy_cleanup(e);
    if (reply)
        *reply = m.p;
    else
        free(m.p);
    return status;
}

/* Every armed fault fired. */
static int nothing_pending(void)
{
    char *r = NULL;
    long s = admin("/pending", NULL, &r);
    int ok = s == 200 && r && strstr(r, "\"pending\":[]");
    if (!ok)
        fprintf(stderr, "    pending faults: %s\n", r ? r : "(no reply)");
    free(r);
    return ok;
}

static tfrec_storage *client(size_t chunk, size_t ahead, unsigned parallel)
{
    tfrec_storage_options o = TFREC_STORAGE_OPTIONS_INIT;
    o.upload_chunk_bytes = chunk;
    o.read_ahead_bytes = ahead;
    o.parallel_reads = parallel;
    o.retry_deadline_ms = 20000;
    tfrec_storage *st = NULL;
    if (tfrec_storage_new(&st, &o) != TFREC_OK)
        return NULL;
    tfrec_storage_set_backoff_ms(st, 20); /* quick retries against a local server */
    return st;
}

/* Upload data as one object through a raw sink; stats of the sink. */
static int put_object(tfrec_storage *st, const char *name, const void *data, size_t len,
                      size_t piece, gcs_sink_stats *stats)
{
    tfrec_io io = TFREC_IO_INIT;
    int rc = tfrec_storage_open_sink(st, &io, name);
    if (rc < 0)
        return rc;
    for (size_t off = 0; off < len && rc == 0; off += piece)
        rc = io.write(io.ctx, (const char *)data + off, len - off < piece ? len - off : piece);
    if (stats)
        tfrec_gcs_sink_stats(io.ctx, stats);
    int crc = io.close(io.ctx, rc == 0);
    return rc ? rc : crc;
}

/* Read a whole object through a raw source into a malloc'd buffer. */
static int get_object(tfrec_storage *st, const char *name, char **out, size_t *len, size_t piece,
                      gcs_source_stats *stats, char *msg, size_t msgcap)
{
    tfrec_io io = TFREC_IO_INIT;
    int rc = tfrec_storage_open_source(st, &io, name);
    if (rc < 0) {
        snprintf(msg, msgcap, "%s", tfrec_last_errmsg());
        return rc;
    }
    int64_t size = io.size(io.ctx);
    char *buf = malloc((size_t)size + 1);
    size_t n = 0;
    ptrdiff_t got;
    while ((got = io.read(io.ctx, buf + n, piece)) > 0)
        n += (size_t)got;
    if (got < 0)
        snprintf(msg, msgcap, "%s", io.errmsg(io.ctx));
    if (stats)
        tfrec_gcs_source_stats(io.ctx, stats);
    io.close(io.ctx, 0);
    *out = buf;
    *len = n;
    return got < 0 ? (int)got : TFREC_OK;
}

/* All of a range source into buf; bytes read or a negative code. */
static ptrdiff_t read_all(tfrec_io *io, char *buf, size_t cap)
{
    size_t n = 0;
    ptrdiff_t got;
    while (n < cap && (got = io->read(io->ctx, buf + n, cap - n)) > 0)
        n += (size_t)got;
    return got < 0 ? got : (ptrdiff_t)n;
}

/* ------------------------------------------------------------ round trips */

static void test_records_every_compression_and_size(void)
{
    tfrec_storage *st = client(256 * KIB, 0, 0);
    CHECK(st != NULL);
    static const size_t sizes[] = { 0, 1, 100, 5000, 300 * KIB };
    static const int comps[] = { TFREC_COMPRESSION_NONE, TFREC_COMPRESSION_ZLIB,
                                 TFREC_COMPRESSION_GZIP };
    char *rec = malloc(300 * KIB);
    CHECK(rec != NULL);
    for (size_t c = 0; c < 3; c++) {
        for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
            /* Enough records to pass one 256 KiB upload chunk for the
             * bigger sizes, so both upload paths are covered. */
            size_t count = sizes[k] >= 5000 ? 60 : 7;
            char name[128];
            snprintf(name, sizeof name, BUCKET "/records/c%zu-%zu.tfrecord", c, sizes[k]);
            tfrec_writer_options wo = TFREC_WRITER_OPTIONS_INIT;
            wo.compression = comps[c];
            tfrec_writer *w;
            CHECKF(tfrec_storage_writer_open(st, &w, name, &wo) == TFREC_OK, "%s",
                   tfrec_last_errmsg());
            for (size_t i = 0; i < count; i++) {
                harness_random(rec, sizes[k], 1000 * k + i);
                CHECK_EQ(tfrec_writer_write(w, rec, sizes[k]), TFREC_OK);
            }
            int rc = tfrec_writer_close(w);
            CHECKF(rc == TFREC_OK, "%s: %s", name, tfrec_writer_errmsg(w));
            tfrec_writer_free(w);

            tfrec_reader *r;
            CHECKF(tfrec_storage_reader_open(st, &r, name, NULL) == TFREC_OK, "%s",
                   tfrec_last_errmsg());
            const uint8_t *d;
            size_t len, i = 0;
            while ((rc = tfrec_reader_next(r, &d, &len)) == TFREC_OK) {
                harness_random(rec, sizes[k], 1000 * k + i);
                CHECKF(len == sizes[k] && memcmp(d, rec, len) == 0, "%s record %zu", name, i);
                i++;
            }
            CHECKF(rc == TFREC_END, "%s: %s", name, tfrec_reader_errmsg(r));
            CHECK_EQ(i, count);
            tfrec_reader_free(r);
        }
    }
    free(rec);
    tfrec_storage_free(st);
}

static void test_object_names_with_odd_characters(void)
{
    tfrec_storage *st = client(0, 0, 0);
    CHECK(st != NULL);
    static const char *names[] = {
        BUCKET "/odd/a b#c?d.tfrecord",
        BUCKET "/odd/\xc3\xa9t\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac.bin",
        BUCKET "/odd/100%+plus&amp=x;y",
    };
    for (size_t i = 0; i < 3; i++) {
        char data[64];
        int n = snprintf(data, sizeof data, "object %zu", i);
        CHECKF(put_object(st, names[i], data, (size_t)n, 5, NULL) == TFREC_OK, "%s: %s", names[i],
               tfrec_last_errmsg());
        tfrec_storage_object o = TFREC_STORAGE_OBJECT_INIT;
        CHECKF(tfrec_storage_stat(st, names[i], &o) == TFREC_OK, "%s", tfrec_last_errmsg());
        CHECK_EQ(o.size, n);
        CHECK(o.has_crc32c && o.crc32c == tfrec_crc32c(data, (size_t)n));
        CHECK(o.generation > 0);
        char *back, msg[512];
        size_t len;
        CHECKF(get_object(st, names[i], &back, &len, 3, NULL, msg, sizeof msg) == TFREC_OK, "%s",
               msg);
        CHECK(len == (size_t)n && memcmp(back, data, len) == 0);
        free(back);
    }
    /* The listing gives the names back byte for byte. */
    tfrec_storage_list *l;
    CHECKF(tfrec_storage_glob(st, BUCKET "/odd/*", &l) == TFREC_OK, "%s", tfrec_last_errmsg());
    CHECK_EQ(tfrec_storage_list_count(l), 3);
    CHECK(strcmp(tfrec_storage_list_get(l, 0)->name, names[2]) == 0); /* '1' < 'a' < 0xc3 */
    CHECK(strcmp(tfrec_storage_list_get(l, 1)->name, names[0]) == 0);
    CHECK(strcmp(tfrec_storage_list_get(l, 2)->name, names[1]) == 0);
    tfrec_storage_list_free(l);
    tfrec_storage_free(st);
}

/* ------------------------------------------------------------ listing */

static void test_listing_across_pages_and_globs(void)
{
    tfrec_storage *st = client(0, 0, 0);
    CHECK(st != NULL);
    static const char *rel[] = {
        "shards/train-00000", "shards/train-00001", "shards/train-00002",  "shards/train-00010",
        "shards/train-0001x", "shards/train-a",     "shards/val-00000",    "shards/sub/train-9",
        "shards/.train-hid",  "shards/train-[x]",   "shardsX/train-00000",
    };
    size_t nrel = sizeof rel / sizeof *rel;
    for (size_t i = 0; i < nrel; i++) {
        char name[128];
        snprintf(name, sizeof name, BUCKET "/%s", rel[i]);
        CHECKF(put_object(st, name, rel[i], strlen(rel[i]), 64, NULL) == TFREC_OK, "%s",
               tfrec_last_errmsg());
    }
    /* Two objects per page: every listing takes several pages. */
    tfrec_storage_set_list_page_size(st, 2);
    static const char *pats[] = { "shards/train-*",     "shards/train-0000?", "shards/*-0000[0-1]",
                                  "shards/train-[!0]*", "shards/*/*",         "shards/train-\\[x]",
                                  "shards*/train-00000" };
    for (size_t k = 0; k < sizeof pats / sizeof *pats; k++) {
        char pat[128];
        snprintf(pat, sizeof pat, BUCKET "/%s", pats[k]);
        unsigned long before = atomic_load(&st->requests);
        tfrec_storage_list *l;
        CHECKF(tfrec_storage_glob(st, pat, &l) == TFREC_OK, "%s: %s", pat, tfrec_last_errmsg());
        unsigned long pages = atomic_load(&st->requests) - before;
        /* The expected names: glob(3) rules on each name, bytewise order
         * (rel[] is not sorted: sort what matched). */
        const char *want[16];
        size_t nw = 0;
        for (size_t i = 0; i < nrel; i++)
            if (tfrec_gcs_glob_match(pats[k], rel[i]))
                want[nw++] = rel[i];
        for (size_t a = 1; a < nw; a++)
            for (size_t b = a; b > 0 && strcmp(want[b - 1], want[b]) > 0; b--) {
                const char *t = want[b];
                want[b] = want[b - 1];
                want[b - 1] = t;
            }
        CHECKF(tfrec_storage_list_count(l) == nw, "%s: %zu names, want %zu", pat,
               tfrec_storage_list_count(l), nw);
        for (size_t i = 0; i < nw; i++) {
            const tfrec_storage_object *o = tfrec_storage_list_get(l, i);
            CHECKF(strcmp(o->name + strlen(BUCKET) + 1, want[i]) == 0, "%s: [%zu] %s, want %s", pat,
                   i, o->name, want[i]);
            CHECK_EQ(o->size, strlen(want[i]));
            CHECK(o->has_crc32c && o->crc32c == tfrec_crc32c(want[i], strlen(want[i])));
        }
        if (nw > 2)
            CHECKF(pages >= 2, "%s: %lu requests for %zu names at 2 per page", pat, pages, nw);
        tfrec_storage_list_free(l);
    }
    tfrec_storage_list *l;
    CHECK_EQ(tfrec_storage_glob(st, BUCKET "/shards/none-*", &l), TFREC_E_NOT_FOUND);
    CHECK(strstr(tfrec_last_errmsg(), "shards/none-*") != NULL);
    CHECK_EQ(tfrec_storage_glob(st, BUCKET "/shards/train-00001", &l), TFREC_OK);
    CHECK_EQ(tfrec_storage_list_count(l), 1);
    tfrec_storage_list_free(l);
    tfrec_storage_free(st);
}

/* ------------------------------------------------------------ downloads */

static void test_ranged_parallel_reads_and_seek(void)
{
    /* 3 MiB + 5 read with 1 MiB of read-ahead in 4 ranges: 256 KiB each. */
    size_t size = 3 * 1024 * KIB + 5;
    char *data = malloc(size);
    CHECK(data != NULL);
    harness_random(data, size, 42);
    tfrec_storage *st = client(1024 * KIB, 1024 * KIB, 4);
    CHECK(st != NULL);
    const char *name = BUCKET "/big/parallel.bin";
    CHECKF(put_object(st, name, data, size, 100000, NULL) == TFREC_OK, "%s", tfrec_last_errmsg());
    char *back, msg[512];
    size_t len;
    gcs_source_stats ss;
    /* Read from the start to the end: one streamed GET. */
    CHECKF(get_object(st, name, &back, &len, 70000, &ss, msg, sizeof msg) == TFREC_OK, "%s", msg);
    CHECK(len == size && memcmp(back, data, size) == 0);
    free(back);
    CHECKF(ss.requests == 1, "%lu requests", ss.requests);
    CHECK(ss.crc_checked);
    /* A slice: ranged blocks, several in flight. */
    tfrec_io rio = TFREC_IO_INIT;
    CHECK_EQ(tfrec_storage_open_source_range(st, &rio, name, 0, size), TFREC_OK);
    back = malloc(size);
    CHECK_EQ(read_all(&rio, back, size), (ptrdiff_t)size);
    CHECK(memcmp(back, data, size) == 0);
    free(back);
    tfrec_gcs_source_stats(rio.ctx, &ss);
    rio.close(rio.ctx, 0);
    CHECKF(ss.max_in_flight >= 2, "at most %u ranges in flight", ss.max_in_flight);
    CHECKF(ss.requests >= 13, "%lu requests for 13 ranges", ss.requests);

    /* Seeks: back, forward past the read-ahead, to the end. */
    tfrec_io io = TFREC_IO_INIT;
    CHECK_EQ(tfrec_storage_open_source(st, &io, name), TFREC_OK);
    CHECK_EQ(io.size(io.ctx), (int64_t)size);
    static const uint64_t offs[] = { 2000000, 10, 2999999, 262143, 262144, 3 * 1024 * KIB };
    for (size_t i = 0; i < sizeof offs / sizeof *offs; i++) {
        char buf[4096];
        CHECK_EQ(io.seek(io.ctx, offs[i]), TFREC_OK);
        size_t want = size - offs[i] < sizeof buf ? size - offs[i] : sizeof buf, have = 0;
        while (have < want) {
            ptrdiff_t got = io.read(io.ctx, buf + have, want - have);
            CHECKF(got > 0, "read at %llu: %s", (unsigned long long)(offs[i] + have),
                   io.errmsg(io.ctx));
            have += (size_t)got;
        }
        CHECKF(memcmp(buf, data + offs[i], want) == 0, "bytes at %llu",
               (unsigned long long)offs[i]);
    }
    char c;
    CHECK_EQ(io.seek(io.ctx, size), TFREC_OK);
    CHECK_EQ(io.read(io.ctx, &c, 1), 0);
    CHECK_EQ(io.seek(io.ctx, size + 1), TFREC_E_INVALID);
    io.close(io.ctx, 0);

    /* parallel_reads = 1: one range at a time. */
    tfrec_storage *serial = client(0, 512 * KIB, 1);
    CHECK(serial != NULL);
    CHECK(get_object(serial, name, &back, &len, 1 << 20, &ss, msg, sizeof msg) == TFREC_OK);
    CHECK(len == size && memcmp(back, data, size) == 0);
    CHECK_EQ(ss.max_in_flight, 1);
    free(back);
    tfrec_storage_free(serial);
    tfrec_storage_free(st);
    free(data);
}

static void test_missing_object_is_not_found(void)
{
    tfrec_storage *st = client(0, 0, 0);
    CHECK(st != NULL);
    tfrec_storage_object o = TFREC_STORAGE_OBJECT_INIT;
    CHECK_EQ(tfrec_storage_stat(st, BUCKET "/no/such object", &o), TFREC_E_NOT_FOUND);
    CHECKF(strstr(tfrec_last_errmsg(), BUCKET "/no/such object: not found") != NULL, "%s",
           tfrec_last_errmsg());
    tfrec_reader *r;
    CHECK_EQ(tfrec_storage_reader_open(st, &r, BUCKET "/no/such.tfrecord", NULL),
             TFREC_E_NOT_FOUND);
    CHECK(strstr(tfrec_last_errmsg(), "no/such.tfrecord") != NULL);
    CHECK_EQ(tfrec_storage_remove(st, BUCKET "/no/such object"), TFREC_E_NOT_FOUND);
    tfrec_storage_free(st);
}

static void test_open_needs_no_metadata_request(void)
{
    /* 300 KiB read in blocks of 128 KiB. */
    size_t size = 300 * KIB;
    char *data = malloc(size);
    CHECK(data != NULL);
    harness_random(data, size, 7);
    tfrec_storage *st = client(0, 256 * KIB, 2);
    CHECK(st != NULL);
    const char *name = BUCKET "/pinned/obj.bin";
    CHECK_EQ(put_object(st, name, data, size, size, NULL), TFREC_OK);
    tfrec_storage_object meta = TFREC_STORAGE_OBJECT_INIT;
    CHECK_EQ(tfrec_storage_stat(st, name, &meta), TFREC_OK);

    /* The open is one request: block 0's, which tells size and hashes. */
    unsigned long before = atomic_load(&st->requests);
    tfrec_io io = TFREC_IO_INIT;
    CHECK_EQ(tfrec_storage_open_source(st, &io, name), TFREC_OK);
    CHECK_EQ(atomic_load(&st->requests) - before, 1);
    CHECK_EQ(io.size(io.ctx), (int64_t)size);
    char *back = malloc(size);
    CHECK(back != NULL);
    size_t n = 0;
    ptrdiff_t got;
    while ((got = io.read(io.ctx, back + n, size - n)) > 0)
        n += (size_t)got;
    CHECK_EQ(got, 0);
    CHECK(n == size && memcmp(back, data, size) == 0);
    gcs_source_stats ss;
    tfrec_gcs_source_stats(io.ctx, &ss);
    CHECK(ss.crc_checked);
    CHECK_EQ(ss.requests, 1); /* read from start to end: streamed */
    io.close(io.ctx, 0);

    /* Replaced after the open: the later ranges ask for the generation the
     * open saw, and its loss is an error, not a mix of two objects. (A
     * slice, read in ranged blocks; a streamed read resumes the same way,
     * test_sequential_read_is_one_get.) */
    CHECK_EQ(tfrec_storage_open_source_range(st, &io, name, 0, size), TFREC_OK);
    char *other = malloc(size);
    CHECK(other != NULL);
    harness_random(other, size, 8);
    CHECK_EQ(put_object(st, name, other, size, size, NULL), TFREC_OK);
    n = 0;
    while ((got = io.read(io.ctx, back + n, size - n)) > 0)
        n += (size_t)got;
    CHECK_EQ(got, TFREC_E_STATE);
    CHECKF(strstr(io.errmsg(io.ctx), "pinned/obj.bin: generation ") &&
               strstr(io.errmsg(io.ctx), "replaced or deleted while being read"),
           "%s", io.errmsg(io.ctx));
    /* What came before the failure is the old object's (a failed
     * read-ahead range may end the read before block 0 is used up). */
    CHECK(n < size && memcmp(back, data, n) == 0);
    io.close(io.ctx, 0);
    CHECK_EQ(tfrec_storage_remove(st, name), TFREC_OK);
    CHECK_EQ(tfrec_storage_open_source(st, &io, name), TFREC_E_NOT_FOUND);
    CHECKF(strstr(tfrec_last_errmsg(), "pinned/obj.bin: not found"), "%s", tfrec_last_errmsg());
    free(other);
    free(back);
    free(data);
    tfrec_storage_free(st);
}

static void test_ranges_of_an_object_and_a_file(void)
{
    size_t size = 300 * KIB;
    char *data = malloc(size), *back = malloc(size);
    CHECK(data && back);
    harness_random(data, size, 11);
    tfrec_storage *st = client(0, 256 * KIB, 2);
    CHECK(st != NULL);
    const char *name = BUCKET "/range/obj.bin";
    CHECK_EQ(put_object(st, name, data, size, size, NULL), TFREC_OK);
    char path[] = "/tmp/tfrec-range-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    CHECK_EQ(write(fd, data, size), (ssize_t)size);
    close(fd);
    const char *names[] = { name, path };
    static const uint64_t offs[][2] = {
        { 1000, 5000 }, { 0, 300 * KIB }, { 200 * KIB, 100 * KIB }, { 299 * KIB, UINT64_MAX },
        { 100, 0 },
    };
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < sizeof offs / sizeof *offs; i++) {
            uint64_t off = offs[i][0];
            size_t len = offs[i][1] == UINT64_MAX ? size - off : (size_t)offs[i][1];
            unsigned long before = atomic_load(&st->requests);
            tfrec_io io = TFREC_IO_INIT;
            CHECKF(tfrec_storage_open_source_range(st, &io, names[k], off, offs[i][1]) == TFREC_OK,
                   "%s [%llu, +%zu): %s", names[k], (unsigned long long)off, len,
                   tfrec_last_errmsg());
            CHECK_EQ(io.size(io.ctx), (int64_t)len);
            CHECK_EQ(read_all(&io, back, size), (ptrdiff_t)len);
            CHECK(memcmp(back, data + off, len) == 0);
            if (k == 0 && len && len <= 128 * KIB) /* one request: exactly the part */
                CHECK_EQ(atomic_load(&st->requests) - before, 1);
            if (len > 10) { /* offsets are the range's */
                CHECK_EQ(io.seek(io.ctx, len - 10), TFREC_OK);
                CHECK_EQ(read_all(&io, back, size), 10);
                CHECK(memcmp(back, data + off + len - 10, 10) == 0);
            }
            io.close(io.ctx, 0);
        }
        tfrec_io io = TFREC_IO_INIT;
        CHECK_EQ(tfrec_storage_open_source_range(st, &io, names[k], 299 * KIB, 2 * KIB),
                 TFREC_E_INVALID);
        CHECKF(strstr(tfrec_last_errmsg(), "past the end of the 307200-byte"), "%s",
               tfrec_last_errmsg());
        CHECK_EQ(tfrec_storage_open_source_range(st, &io, names[k], size + 1, 1), TFREC_E_INVALID);
    }
    tfrec_io io = TFREC_IO_INIT;
    CHECK_EQ(tfrec_storage_open_source_range(st, &io, BUCKET "/range/none", 10, 10),
             TFREC_E_NOT_FOUND);
    unlink(path);
    CHECK_EQ(tfrec_storage_remove(st, name), TFREC_OK);
    free(data);
    free(back);
    tfrec_storage_free(st);
}

static void test_corrupt_object_fails_its_crc32c(void)
{
    tfrec_storage *st = client(0, 256 * KIB, 2);
    CHECK(st != NULL);
    size_t size = 700 * KIB;
    char *data = malloc(size);
    harness_random(data, size, 7);
    const char *name = BUCKET "/crc/flipped.bin";
    CHECK_EQ(put_object(st, name, data, size, size, NULL), TFREC_OK);
    CHECK_EQ(admin("/corrupt",
                   "{\"bucket\":\"tfrec-test\",\"object\":\"crc/flipped.bin\","
                   "\"offset\":500000}",
                   NULL),
             200);
    char *back, msg[512];
    size_t len;
    gcs_source_stats ss;
    int rc = get_object(st, name, &back, &len, 65536, &ss, msg, sizeof msg);
    free(back);
    CHECK_EQ(rc, TFREC_E_IO);
    CHECKF(strstr(msg, name) && strstr(msg, "CRC32C mismatch"), "%s", msg);
    /* Reading the start twice (a seek back, as format detection does) still
     * checks the whole object. */
    tfrec_io io = TFREC_IO_INIT;
    CHECK_EQ(tfrec_storage_open_source(st, &io, name), TFREC_OK);
    char head[100];
    CHECK_EQ(io.read(io.ctx, head, sizeof head), (ptrdiff_t)sizeof head);
    CHECK_EQ(io.seek(io.ctx, 0), TFREC_OK);
    char *all = malloc(size);
    ptrdiff_t got = 0;
    size_t have = 0;
    while ((got = io.read(io.ctx, all + have, 65536)) > 0)
        have += (size_t)got;
    free(all);
    CHECK_EQ(got, TFREC_E_IO);
    CHECKF(strstr(io.errmsg(io.ctx), "CRC32C mismatch"), "%s", io.errmsg(io.ctx));
    io.close(io.ctx, 0);
    /* Unchecked when asked. */
    tfrec_storage_options o = TFREC_STORAGE_OPTIONS_INIT;
    o.no_checksum = 1;
    tfrec_storage *unchecked;
    CHECK_EQ(tfrec_storage_new(&unchecked, &o), TFREC_OK);
    CHECK(get_object(unchecked, name, &back, &len, 65536, &ss, msg, sizeof msg) == TFREC_OK);
    CHECK(len == size && back[500000] == (char)~data[500000]);
    CHECK(!ss.crc_checked);
    free(back);
    tfrec_storage_free(unchecked);
    free(data);
    tfrec_storage_free(st);
}

static void test_broken_download_resumes_where_it_stopped(void)
{
    size_t size = 900 * KIB;
    char *data = malloc(size);
    harness_random(data, size, 9);
    tfrec_storage *st = client(0, 8 * 1024 * KIB, 1); /* one request for the object */
    CHECK(st != NULL);
    const char *name = BUCKET "/cut/download.bin";
    CHECK_EQ(put_object(st, name, data, size, size, NULL), TFREC_OK);
    CHECK_EQ(admin("/cut",
                   "{\"direction\":\"download\",\"after\":300000,\"count\":2,"
                   "\"path\":\"alt=media\"}",
                   NULL),
             200);
    char *back, msg[512];
    size_t len;
    gcs_source_stats ss;
    CHECKF(get_object(st, name, &back, &len, 65536, &ss, msg, sizeof msg) == TFREC_OK, "%s", msg);
    CHECK(len == size && memcmp(back, data, size) == 0);
    free(back);
    CHECK(nothing_pending());
    CHECKF(ss.resumes == 2, "%lu resumes", ss.resumes);
    CHECK(ss.crc_checked);
    /* The second attempt asked for the bytes from 300000 on, not from 0. */
    char *log = NULL;
    CHECK_EQ(admin("/log", NULL, &log), 200);
    CHECKF(log && strstr(log, "bytes=300000-") && strstr(log, "bytes=600000-"), "log: %.400s",
           log ? log : "");
    free(log);
    free(data);
    tfrec_storage_free(st);
}

/* GETs of the object's media in the server's log since the last reset. */
static int media_gets(void)
{
    char *log = NULL;
    int n = -1;
    if (admin("/log", NULL, &log) == 200 && log)
        for (const char *p = log, *q; (q = strstr(p, "alt=media")); p = q + 1)
            n = n < 0 ? 1 : n + 1;
    free(log);
    return n < 0 ? 0 : n;
}

/* A 64 MiB object read from start to end with the default options: one
 * open-ended GET (ranged blocks of 2 MiB took 32), and a cut connection
 * resumes from the byte reached with the same bytes in the end. */
static void test_sequential_read_is_one_get(void)
{
    size_t size = 64 * 1024 * KIB;
    char *data = malloc(size), *back = NULL, msg[512];
    CHECK(data != NULL);
    harness_random(data, size, 64);
    tfrec_storage *st = client(0, 0, 0);
    CHECK(st != NULL);
    tfrec_storage_set_backoff_ms(st, 1);
    const char *name = BUCKET "/seq/64mib.bin";
    CHECK_EQ(put_object(st, name, data, size, 4 * 1024 * KIB, NULL), TFREC_OK);
    size_t len;
    gcs_source_stats ss;

    CHECK_EQ(admin("/reset", "{\"objects\":false}", NULL), 200);
    tfrec_io io = TFREC_IO_INIT;
    CHECK_EQ(tfrec_storage_open_source_range(st, &io, name, 0, size), TFREC_OK);
    back = malloc(size);
    CHECK_EQ(read_all(&io, back, size), (ptrdiff_t)size);
    CHECK(memcmp(back, data, size) == 0);
    free(back);
    io.close(io.ctx, 0);
    CHECKF(media_gets() == 32, "%d GETs in ranged blocks", media_gets());

    CHECK_EQ(admin("/reset", "{\"objects\":false}", NULL), 200);
    CHECKF(get_object(st, name, &back, &len, 1 << 20, &ss, msg, sizeof msg) == TFREC_OK, "%s", msg);
    CHECK(len == size && memcmp(back, data, size) == 0);
    free(back);
    CHECK_EQ(ss.requests, 1);
    CHECK(ss.crc_checked);
    CHECKF(media_gets() == 1, "%d GETs streamed", media_gets());

    /* Cut after 20 MiB: the second GET asks for the rest, same generation. */
    CHECK_EQ(admin("/reset", "{\"objects\":false}", NULL), 200);
    CHECK_EQ(admin("/cut", "{\"direction\":\"download\",\"after\":20971520,\"path\":\"alt=media\"}",
                   NULL),
             200);
    CHECKF(get_object(st, name, &back, &len, 1 << 20, &ss, msg, sizeof msg) == TFREC_OK, "%s", msg);
    CHECK(len == size && memcmp(back, data, size) == 0);
    free(back);
    CHECK(nothing_pending());
    CHECKF(ss.requests == 2 && ss.resumes == 1, "%lu requests, %lu resumes", ss.requests,
           ss.resumes);
    CHECK(ss.crc_checked);
    char *log = NULL;
    CHECK_EQ(admin("/log", NULL, &log), 200);
    CHECKF(log && strstr(log, "bytes=20971520-\"") && strstr(log, "generation="), "log: %.600s",
           log ? log : "");
    free(log);
    CHECK_EQ(tfrec_storage_remove(st, name), TFREC_OK);
    free(data);
    tfrec_storage_free(st);
}

static void test_retry_then_success(void)
{
    tfrec_storage *st = client(0, 0, 0);
    CHECK(st != NULL);
    const char *name = BUCKET "/retry/x.bin";
    CHECK_EQ(admin("/inject", "{\"status\":503,\"count\":2,\"method\":\"POST\"}", NULL), 200);
    CHECKF(put_object(st, name, "hello", 5, 5, NULL) == TFREC_OK, "%s", tfrec_last_errmsg());
    CHECK(nothing_pending());
    CHECK_EQ(admin("/inject", "{\"status\":429,\"count\":1,\"method\":\"GET\"}", NULL), 200);
    CHECK_EQ(admin("/inject", "{\"status\":500,\"count\":1,\"method\":\"GET\"}", NULL), 200);
    unsigned long before = atomic_load(&st->retries);
    char *back, msg[512];
    size_t len;
    CHECKF(get_object(st, name, &back, &len, 64, NULL, msg, sizeof msg) == TFREC_OK, "%s", msg);
    CHECK(len == 5 && memcmp(back, "hello", 5) == 0);
    free(back);
    CHECK(nothing_pending());
    CHECK_EQ(atomic_load(&st->retries) - before, 2);
    /* A status that is not transient is not retried. */
    CHECK_EQ(admin("/inject", "{\"status\":403,\"count\":1,\"method\":\"GET\"}", NULL), 200);
    tfrec_storage_object o = TFREC_STORAGE_OBJECT_INIT;
    CHECK_EQ(tfrec_storage_stat(st, name, &o), TFREC_E_IO);
    CHECKF(strstr(tfrec_last_errmsg(), "permission denied") &&
               strstr(tfrec_last_errmsg(), "storage.objects.get"),
           "%s", tfrec_last_errmsg());
    /* Transient failures past the deadline give up with a clear message. */
    tfrec_storage_options opt = TFREC_STORAGE_OPTIONS_INIT;
    opt.retry_deadline_ms = 300;
    tfrec_storage *quick;
    CHECK_EQ(tfrec_storage_new(&quick, &opt), TFREC_OK);
    tfrec_storage_set_backoff_ms(quick, 50);
    CHECK_EQ(admin("/inject", "{\"status\":503,\"count\":100,\"method\":\"GET\"}", NULL), 200);
    CHECK_EQ(tfrec_storage_stat(quick, name, &o), TFREC_E_NETWORK);
    CHECKF(strstr(tfrec_last_errmsg(), "HTTP 503") != NULL, "%s", tfrec_last_errmsg());
    CHECK_EQ(admin("/reset", "{\"objects\":false}", NULL), 200);
    tfrec_storage_free(quick);
    tfrec_storage_free(st);
}

/* ------------------------------------------------------------ uploads */

static void test_resumable_upload_in_chunks(void)
{
    tfrec_storage *st = client(256 * KIB, 0, 0);
    CHECK(st != NULL);
    size_t size = 1024 * KIB + 1000;
    char *data = malloc(size);
    harness_random(data, size, 11);
    const char *name = BUCKET "/up/chunked.bin";
    tfrec_io io = TFREC_IO_INIT;
    CHECK_EQ(tfrec_storage_open_sink(st, &io, name), TFREC_OK);
    for (size_t off = 0; off < size; off += 33333) {
        size_t n = size - off < 33333 ? size - off : 33333;
        CHECKF(io.write(io.ctx, data + off, n) == TFREC_OK, "%s", io.errmsg(io.ctx));
    }
    gcs_sink_stats ks;
    tfrec_gcs_sink_stats(io.ctx, &ks);
    CHECK(ks.resumable);
    CHECKF(ks.chunks == 4, "%lu chunks before close", ks.chunks);
    /* Not visible before the writer commits. */
    tfrec_storage_object o = TFREC_STORAGE_OBJECT_INIT;
    CHECK_EQ(tfrec_storage_stat(st, name, &o), TFREC_E_NOT_FOUND);
    CHECKF(io.close(io.ctx, 1) == TFREC_OK, "%s", tfrec_last_errmsg());
    CHECK_EQ(tfrec_storage_stat(st, name, &o), TFREC_OK);
    CHECK_EQ(o.size, size);
    CHECK(o.has_crc32c && o.crc32c == tfrec_crc32c(data, size));
    char *back, msg[512];
    size_t len;
    CHECK(get_object(st, name, &back, &len, 1 << 20, NULL, msg, sizeof msg) == TFREC_OK);
    CHECK(len == size && memcmp(back, data, size) == 0);
    free(back);
    /* Every chunk went up as a multiple of 256 KiB, the last one with the
     * total. */
    char *log = NULL;
    CHECK_EQ(admin("/log", NULL, &log), 200);
    CHECKF(log && strstr(log, "bytes 0-262143/*") && strstr(log, "bytes 786432-1048575/*") &&
               strstr(log, "bytes 1048576-1049575/1049576"),
           "log: %.600s", log ? log : "");
    free(log);
    free(data);
    tfrec_storage_free(st);
}

static void test_upload_exactly_one_chunk_and_empty(void)
{
    tfrec_storage *st = client(256 * KIB, 0, 0);
    CHECK(st != NULL);
    char *data = malloc(512 * KIB);
    harness_random(data, 512 * KIB, 12);
    gcs_sink_stats ks;
    CHECK_EQ(put_object(st, BUCKET "/up/two-chunks.bin", data, 512 * KIB, 512 * KIB, &ks),
             TFREC_OK);
    CHECK(ks.resumable);
    CHECK_EQ(put_object(st, BUCKET "/up/empty.bin", "", 0, 1, &ks), TFREC_OK);
    CHECK(!ks.resumable);
    tfrec_storage_object o = TFREC_STORAGE_OBJECT_INIT;
    CHECK_EQ(tfrec_storage_stat(st, BUCKET "/up/two-chunks.bin", &o), TFREC_OK);
    CHECK(o.size == 512 * KIB && o.crc32c == tfrec_crc32c(data, 512 * KIB));
    CHECK_EQ(tfrec_storage_stat(st, BUCKET "/up/empty.bin", &o), TFREC_OK);
    CHECK_EQ(o.size, 0);
    char *back, msg[512];
    size_t len;
    CHECK(get_object(st, BUCKET "/up/empty.bin", &back, &len, 10, NULL, msg, sizeof msg) == 0);
    CHECK_EQ(len, 0);
    free(back);
    free(data);
    tfrec_storage_free(st);
}

static void test_aborted_upload_leaves_nothing(void)
{
    tfrec_storage *st = client(256 * KIB, 0, 0);
    CHECK(st != NULL);
    size_t size = 700 * KIB;
    char *data = malloc(size);
    harness_random(data, size, 13);
    /* Through the record writer: abort, and free without close. */
    const char *names[] = { BUCKET "/abort/aborted.tfrecord", BUCKET "/abort/dropped.tfrecord" };
    for (int k = 0; k < 2; k++) {
        tfrec_writer *w;
        CHECK_EQ(tfrec_storage_writer_open(st, &w, names[k], NULL), TFREC_OK);
        for (int i = 0; i < 7; i++)
            CHECK_EQ(tfrec_writer_write(w, data + i * 100 * KIB, 100 * KIB), TFREC_OK);
        if (k == 0)
            tfrec_writer_abort(w);
        tfrec_writer_free(w);
        tfrec_storage_object o = TFREC_STORAGE_OBJECT_INIT;
        CHECK_EQ(tfrec_storage_stat(st, names[k], &o), TFREC_E_NOT_FOUND);
    }
    /* The sessions were cancelled, not left open. */
    char *s = NULL;
    CHECK_EQ(admin("/sessions", NULL, &s), 200);
    CHECKF(s && !strstr(s, "\"active\""), "sessions: %s", s ? s : "");
    free(s);
    free(data);
    tfrec_storage_free(st);
}

static void test_broken_upload_resumes_from_the_session(void)
{
    tfrec_storage *st = client(256 * KIB, 0, 0);
    CHECK(st != NULL);
    size_t size = 800 * KIB;
    char *data = malloc(size);
    harness_random(data, size, 14);
    const char *name = BUCKET "/cut/upload.bin";
    /* The first chunk is cut after 100000 of its bytes twice: libcurl
     * itself resends a request whose reused connection died before any
     * answer, so the second cut is the one the client sees. */
    CHECK_EQ(admin("/cut",
                   "{\"direction\":\"upload\",\"after\":100000,\"method\":\"PUT\",\"count\":2}",
                   NULL),
             200);
    gcs_sink_stats ks;
    CHECKF(put_object(st, name, data, size, 50000, &ks) == TFREC_OK, "%s", tfrec_last_errmsg());
    CHECK(nothing_pending());
    CHECKF(ks.status_queries >= 1, "%lu status queries", ks.status_queries);
    tfrec_storage_object o = TFREC_STORAGE_OBJECT_INIT;
    CHECK_EQ(tfrec_storage_stat(st, name, &o), TFREC_OK);
    CHECK(o.size == size && o.crc32c == tfrec_crc32c(data, size));
    char *back, msg[512];
    size_t len;
    CHECK(get_object(st, name, &back, &len, 1 << 20, NULL, msg, sizeof msg) == TFREC_OK);
    CHECK(len == size && memcmp(back, data, size) == 0);
    free(back);

    CHECK_EQ(admin("/inject", "{\"status\":503,\"count\":1,\"method\":\"PUT\"}", NULL), 200);
    CHECKF(put_object(st, name, data, size, 50000, &ks) == TFREC_OK, "%s", tfrec_last_errmsg());
    CHECK(nothing_pending());
    CHECK(ks.status_queries >= 1);
    free(data);
    tfrec_storage_free(st);

    /* 1 MiB chunks, the second cut after 600000 bytes: the server keeps the
     * two whole 256 KiB units it got, and the client goes on from there. */
    st = client(1024 * KIB, 0, 0);
    CHECK(st != NULL);
    size = 2560 * KIB;
    data = malloc(size);
    harness_random(data, size, 15);
    CHECK_EQ(admin("/reset", "{\"objects\":false}", NULL), 200);
    CHECK_EQ(admin("/cut",
                   "{\"direction\":\"upload\",\"after\":600000,\"method\":\"PUT\",\"count\":2,"
                   "\"path\":\"upload_id\"}",
                   NULL),
             200);
    CHECKF(put_object(st, name, data, size, 1 << 20, &ks) == TFREC_OK, "%s", tfrec_last_errmsg());
    CHECK(nothing_pending());
    CHECK_EQ(tfrec_storage_stat(st, name, &o), TFREC_OK);
    CHECK(o.size == size && o.crc32c == tfrec_crc32c(data, size));
    char *log = NULL;
    CHECK_EQ(admin("/log", NULL, &log), 200);
    CHECKF(log && strstr(log, "bytes 524288-1048575/*") && strstr(log, "bytes */*"), "log: %.900s",
           log ? log : "");
    free(log);
    free(data);
    tfrec_storage_free(st);
}

static void test_remove(void)
{
    tfrec_storage *st = client(0, 0, 0);
    CHECK(st != NULL);
    const char *name = BUCKET "/rm/x";
    CHECK_EQ(put_object(st, name, "x", 1, 1, NULL), TFREC_OK);
    CHECK_EQ(tfrec_storage_remove(st, name), TFREC_OK);
    tfrec_storage_object o = TFREC_STORAGE_OBJECT_INIT;
    CHECK_EQ(tfrec_storage_stat(st, name, &o), TFREC_E_NOT_FOUND);
    tfrec_storage_free(st);
}

/* One client shared by threads: connections and DNS entries are shared
 * under the client's locks, each source and sink belongs to one thread. */
typedef struct worker {
    tfrec_storage *st;
    int id, ok;
    char msg[512];
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    size_t size = 600 * KIB + (size_t)w->id;
    char *data = malloc(size), *back = NULL, name[64];
    harness_random(data, size, 100 + (uint64_t)w->id);
    for (int round = 0; round < 3; round++) {
        snprintf(name, sizeof name, BUCKET "/threads/w%d-%d", w->id, round);
        size_t len;
        if (put_object(w->st, name, data, size, 40000, NULL) != TFREC_OK) {
            snprintf(w->msg, sizeof w->msg, "put %s: %s", name, tfrec_last_errmsg());
            break;
        }
        if (get_object(w->st, name, &back, &len, 50000, NULL, w->msg, sizeof w->msg) != 0)
            break;
        w->ok = len == size && memcmp(back, data, size) == 0;
        free(back);
        back = NULL;
        if (!w->ok) {
            snprintf(w->msg, sizeof w->msg, "%s: different bytes back", name);
            break;
        }
    }
    free(back);
    free(data);
    return NULL;
}

static void test_one_client_many_threads(void)
{
    tfrec_storage *st = client(256 * KIB, 256 * KIB, 3);
    CHECK(st != NULL);
    pthread_t t[4];
    worker w[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (worker){ .st = st, .id = i };
        CHECK_EQ(pthread_create(&t[i], NULL, work, &w[i]), 0);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < 4; i++)
        CHECKF(w[i].ok, "worker %d: %s", i, w[i].msg);
    tfrec_storage_free(st);
}

static const harness_test tests[] = {
    TEST(test_one_client_many_threads),
    TEST(test_records_every_compression_and_size),
    TEST(test_object_names_with_odd_characters),
    TEST(test_listing_across_pages_and_globs),
    TEST(test_ranged_parallel_reads_and_seek),
    TEST(test_missing_object_is_not_found),
    TEST(test_open_needs_no_metadata_request),
    TEST(test_ranges_of_an_object_and_a_file),
    TEST(test_corrupt_object_fails_its_crc32c),
    TEST(test_broken_download_resumes_where_it_stopped),
    TEST(test_sequential_read_is_one_get),
    TEST(test_retry_then_success),
    TEST(test_resumable_upload_in_chunks),
    TEST(test_upload_exactly_one_chunk_and_empty),
    TEST(test_aborted_upload_leaves_nothing),
    TEST(test_broken_upload_resumes_from_the_session),
    TEST(test_remove),
};

int main(int argc, char **argv)
{
    admin_url = getenv("TFREC_TEST_GCS_ADMIN");
    if (!getenv("STORAGE_EMULATOR_HOST") || !admin_url) {
        printf("test_storage_gcs: no storage server here; tests/integration/storage_client.sh "
               "runs this program under tests/storage/with_emulator.sh\n");
        return 0;
    }
    return harness_main(argc, argv, tests, sizeof tests / sizeof *tests);
}

/* The reader against an in-process fake ReadRows server: streams cut with
 * every retryable status (and a row half sent), parallel scans in key order
 * and as they come, worker shards, row sets, row limits across resumes,
 * paused buffers, the filter sent, and the errors that must not be retried.
 * The fake decodes every request with the generated protobuf-c code and
 * answers from a sorted table, so a resumed request that asks for the
 * wrong rows shows up as a row missing or seen twice. */
#include <grpc/slice.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bigtable/plan_internal.h"
#include "bigtable/read_transport.h"
#include "bigtable/reader_internal.h"
#include "bigtable/retry.h"
#include "google/bigtable/v2/bigtable.pb-c.h"
#include "harness.h"
#include "tfrec/bigtable.h"

#define ROWS 1200
#define MAX_CALLS 1024

typedef struct fev {
    int kind;
    uint8_t *data;
    size_t len;
    int code;
    const char *details;
    int64_t retry_delay_ms; /* DONE: the RetryInfo delay it names */
} fev;

typedef struct fcall {
    void *user;
    fev *ev;
    size_t n, head;
    int live;
} fcall;

typedef struct fake {
    size_t nrows;
    size_t chunks_per_msg;
    /* faults: calls cut after cut_after messages, cuts_left times */
    int cuts_left, cut_code;
    const char *cut_msg;
    int64_t cut_retry_delay_ms; /* RetryInfo delay on each cut (0: none) */
    size_t cut_after;
    int fail_code;  /* every call fails at once with this */
    int hang_calls; /* the first hang_calls calls go silent after hang_after messages */
    size_t hang_after;
    const char *fail_msg;
    bt_samples samples;
    /* observations */
    int ncalls, live, max_live, empty_rowsets, samples_asked;
    int64_t limits[MAX_CALLS];
    size_t first_row[MAX_CALLS]; /* first row index each call was asked for */
    Google__Bigtable__V2__ReadRowsRequest *first_req;
    fcall calls[MAX_CALLS];
    size_t rr;
} fake;

static size_t value_len(size_t i)
{
    return i % 7 == 0 ? 3000 : 20 + i % 100;
}

static void value_of(size_t i, uint8_t *v)
{
    for (size_t j = 0; j < value_len(i); j++)
        v[j] = (uint8_t)(i * 31 + j);
}

static void key_of(size_t i, char *k)
{
    snprintf(k, 16, "row_%06u", (unsigned)(i % 1000000));
}

static int cmpk(const char *k, const ProtobufCBinaryData *b)
{
    return tfrec_bt_key_cmp((const uint8_t *)k, strlen(k), b->data, b->len);
}

static int row_in_range(const char *k, const Google__Bigtable__V2__RowRange *r)
{
    switch (r->start_key_case) {
    case GOOGLE__BIGTABLE__V2__ROW_RANGE__START_KEY_START_KEY_CLOSED:
        if (cmpk(k, &r->start_key_closed) < 0)
            return 0;
        break;
    case GOOGLE__BIGTABLE__V2__ROW_RANGE__START_KEY_START_KEY_OPEN:
        if (cmpk(k, &r->start_key_open) <= 0)
            return 0;
        break;
    default: break;
    }
    switch (r->end_key_case) {
    case GOOGLE__BIGTABLE__V2__ROW_RANGE__END_KEY_END_KEY_OPEN:
        return cmpk(k, &r->end_key_open) < 0;
    case GOOGLE__BIGTABLE__V2__ROW_RANGE__END_KEY_END_KEY_CLOSED:
        return cmpk(k, &r->end_key_closed) <= 0;
    default: return 1;
    }
}

static int wanted(fake *f, const Google__Bigtable__V2__RowSet *s, const char *k)
{
    if (!s || (!s->n_row_keys && !s->n_row_ranges))
        return 1;
    for (size_t i = 0; i < s->n_row_keys; i++)
        if (!cmpk(k, &s->row_keys[i]))
            return 1;
    for (size_t i = 0; i < s->n_row_ranges; i++)
        if (row_in_range(k, s->row_ranges[i]))
            return 1;
    (void)f;
    return 0;
}

static void push(fcall *c, fev e)
{
    c->ev = realloc(c->ev, (c->n + 1) * sizeof *c->ev);
    c->ev[c->n++] = e;
}

/* Serialize chunks [a, b) of the call's chunk list as one message. */
static void push_msg(fcall *c, Google__Bigtable__V2__ReadRowsResponse__CellChunk **ch, size_t n)
{
    Google__Bigtable__V2__ReadRowsResponse resp = GOOGLE__BIGTABLE__V2__READ_ROWS_RESPONSE__INIT;
    resp.n_chunks = n;
    resp.chunks = ch;
    fev e = { BT_EV_MESSAGE, NULL, 0, 0, NULL, 0 };
    e.len = google__bigtable__v2__read_rows_response__get_packed_size(&resp);
    e.data = malloc(e.len ? e.len : 1);
    google__bigtable__v2__read_rows_response__pack(&resp, e.data);
    push(c, e);
}

static void *fake_start(void *ctx, void *user, size_t stream, const uint8_t *req, size_t len,
                        tfrec_err *err)
{
    (void)stream;
    (void)err;
    fake *f = ctx;
    if (f->ncalls >= MAX_CALLS)
        return NULL;
    fcall *c = &f->calls[f->ncalls];
    memset(c, 0, sizeof *c);
    c->user = user;
    c->live = 1;
    Google__Bigtable__V2__ReadRowsRequest *r =
        google__bigtable__v2__read_rows_request__unpack(NULL, len, req);
    f->limits[f->ncalls] = r ? r->rows_limit : -1;
    f->first_row[f->ncalls] = (size_t)-1;
    f->ncalls++;
    if (++f->live > f->max_live)
        f->max_live = f->live;
    if (!r) {
        push(c, (fev){ BT_EV_DONE, NULL, 0, BT_INVALID_ARGUMENT, "unparsable", 0 });
        return c;
    }
    if (!r->rows || (!r->rows->n_row_keys && !r->rows->n_row_ranges))
        f->empty_rowsets++;
    if (f->fail_code) {
        push(c, (fev){ BT_EV_DONE, NULL, 0, f->fail_code, f->fail_msg, 0 });
        google__bigtable__v2__read_rows_request__free_unpacked(r, NULL);
        return c;
    }
    /* the chunks of every wanted row, values over 1000 bytes split in two */
    size_t cap = 2 * f->nrows + 2, nch = 0, rows = 0;
    Google__Bigtable__V2__ReadRowsResponse__CellChunk *chunks = calloc(cap, sizeof *chunks);
    Google__Protobuf__StringValue fam = GOOGLE__PROTOBUF__STRING_VALUE__INIT;
    Google__Protobuf__BytesValue qual = GOOGLE__PROTOBUF__BYTES_VALUE__INIT;
    fam.value = "tfexample";
    qual.value = (ProtobufCBinaryData){ 7, (uint8_t *)"example" };
    char(*keys)[16] = calloc(f->nrows, 16);
    uint8_t *vals = malloc(f->nrows * 3000);
    for (size_t i = 0; i < f->nrows; i++) {
        key_of(i, keys[i]);
        if (!wanted(f, r->rows, keys[i]) || (r->rows_limit && (int64_t)rows >= r->rows_limit))
            continue;
        if (f->first_row[f->ncalls - 1] == (size_t)-1)
            f->first_row[f->ncalls - 1] = i;
        rows++;
        uint8_t *v = vals + i * 3000;
        value_of(i, v);
        size_t vl = value_len(i), part = vl > 1000 ? vl / 2 : vl;
        Google__Bigtable__V2__ReadRowsResponse__CellChunk *a = &chunks[nch++];
        google__bigtable__v2__read_rows_response__cell_chunk__init(a);
        a->row_key = (ProtobufCBinaryData){ strlen(keys[i]), (uint8_t *)keys[i] };
        a->family_name = &fam;
        a->qualifier = &qual;
        a->timestamp_micros = 1000;
        a->value = (ProtobufCBinaryData){ part, v };
        if (part < vl) {
            a->value_size = (int32_t)vl;
            a = &chunks[nch++];
            google__bigtable__v2__read_rows_response__cell_chunk__init(a);
            a->value = (ProtobufCBinaryData){ vl - part, v + part };
        }
        a->row_status_case =
            GOOGLE__BIGTABLE__V2__READ_ROWS_RESPONSE__CELL_CHUNK__ROW_STATUS_COMMIT_ROW;
        a->commit_row = 1;
    }
    Google__Bigtable__V2__ReadRowsResponse__CellChunk **ptrs = calloc(cap, sizeof *ptrs);
    for (size_t i = 0; i < nch; i++)
        ptrs[i] = &chunks[i];
    size_t msgs = 0;
    int cut = 0;
    for (size_t a = 0; a < nch; a += f->chunks_per_msg) {
        if (f->cuts_left > 0 && msgs == f->cut_after) {
            cut = 1;
            break;
        }
        size_t n = nch - a < f->chunks_per_msg ? nch - a : f->chunks_per_msg;
        push_msg(c, ptrs + a, n);
        msgs++;
    }
    if (f->ncalls <= f->hang_calls) {
        /* a dead connection: some messages, then nothing, not even a status */
        while (c->n > f->hang_after) {
            free(c->ev[c->n - 1].data);
            c->n--;
        }
    } else if (cut) {
        f->cuts_left--;
        push(c, (fev){ BT_EV_DONE, NULL, 0, f->cut_code, f->cut_msg, f->cut_retry_delay_ms });
    } else {
        push(c, (fev){ BT_EV_DONE, NULL, 0, 0, "", 0 });
    }
    free(ptrs);
    free(chunks);
    free(keys);
    free(vals);
    if (!f->first_req)
        f->first_req = r;
    else
        google__bigtable__v2__read_rows_request__free_unpacked(r, NULL);
    return c;
}

/* Events of the calls in turn, one at a time, as concurrent streams come. */
static int fake_next(void *ctx, int64_t deadline_ms, bt_event *ev)
{
    fake *f = ctx;
    for (int k = 0; k < f->ncalls; k++) {
        fcall *c = &f->calls[(f->rr + (size_t)k) % (size_t)f->ncalls];
        if (!c->live || c->head == c->n)
            continue;
        f->rr = (f->rr + (size_t)k + 1) % (size_t)f->ncalls;
        fev e = c->ev[c->head++];
        memset(ev, 0, sizeof *ev);
        ev->kind = e.kind;
        ev->user = c->user;
        if (e.kind == BT_EV_MESSAGE) {
            ev->slice = grpc_slice_from_copied_buffer((const char *)e.data, e.len);
            ev->data = GRPC_SLICE_START_PTR(ev->slice);
            ev->len = e.len;
            free(e.data);
        } else {
            ev->code = e.code;
            ev->retry_delay_ms = e.retry_delay_ms;
            snprintf(ev->details, sizeof ev->details, "%s", e.details ? e.details : "");
            c->live = 0;
            f->live--;
            free(c->ev);
            c->ev = NULL;
        }
        return 1;
    }
    int64_t wait = deadline_ms - tfrec_bt_now_ms(); /* a backoff: sleep it */
    if (wait > 0) {
        struct timespec ts = { wait / 1000, (wait % 1000) * 1000000L };
        nanosleep(&ts, NULL);
    }
    return 0;
}

static void fake_cancel(void *ctx, void *call)
{
    (void)ctx;
    fcall *c = call;
    for (size_t i = c->head; i < c->n; i++)
        free(c->ev[i].data);
    c->n = c->head;
    push(c, (fev){ BT_EV_DONE, NULL, 0, BT_CANCELLED, "Cancelled", 0 });
}

static int fake_sample(void *ctx, bt_samples *out, tfrec_err *err)
{
    (void)err;
    fake *f = ctx;
    f->samples_asked++;
    out->n = f->samples.n;
    out->v = calloc(out->n + 1, sizeof *out->v);
    for (size_t i = 0; i < out->n; i++) {
        out->v[i] = f->samples.v[i];
        out->v[i].key.p = malloc(f->samples.v[i].key.n + 1);
        memcpy(out->v[i].key.p, f->samples.v[i].key.p, f->samples.v[i].key.n);
    }
    return TFREC_OK;
}

static void fake_destroy(void *ctx)
{
    (void)ctx; /* the test frees the fake after looking at it */
}

static fake *fake_new(size_t nrows)
{
    fake *f = calloc(1, sizeof *f);
    f->nrows = nrows;
    f->chunks_per_msg = 7;
    /* about 1% of the keys, offsets in bytes before them, as the emulator */
    f->samples.v = calloc(nrows / 10 + 2, sizeof(bt_sample));
    int64_t off = 0;
    for (size_t i = 0; i < nrows; i++) {
        if (i % 37 == 5) {
            bt_sample *s = &f->samples.v[f->samples.n++];
            s->key.p = malloc(16);
            key_of(i, (char *)s->key.p);
            s->key.n = strlen((char *)s->key.p);
            s->offset_bytes = off;
        }
        off += (int64_t)value_len(i) + 10;
    }
    return f;
}

static void fake_free(fake *f)
{
    for (int i = 0; i < f->ncalls; i++) {
        for (size_t j = f->calls[i].head; j < f->calls[i].n; j++)
            free(f->calls[i].ev[j].data);
        free(f->calls[i].ev);
    }
    tfrec_bt_samples_free(&f->samples);
    if (f->first_req)
        google__bigtable__v2__read_rows_request__free_unpacked(f->first_req, NULL);
    free(f);
}

static int open_reader(fake *f, tfrec_bt_reader **r, const tfrec_bt_read_options *o)
{
    bt_read_transport t = { f,      fake_start, fake_next, fake_cancel, fake_sample, fake_destroy,
                            "fake", NULL,       NULL,      NULL };
    return tfrec_bt_reader_open_transport(r, &t, "projects/p/instances/i/tables/t", "", o);
}

/* Read everything: seen[i] counts row i; order 1 if keys rose throughout.
 * Returns the final code (TFREC_END on success). */
static int drain(tfrec_bt_reader *r, unsigned *seen, int *order, size_t *nrows)
{
    tfrec_bt_row row = TFREC_BT_ROW_INIT;
    int rc;
    char last[32] = "";
    *order = 1;
    *nrows = 0;
    uint8_t v[3000];
    while ((rc = tfrec_bt_reader_next(r, &row)) == TFREC_OK) {
        char k[32] = { 0 };
        memcpy(k, row.key, row.key_len < 31 ? row.key_len : 31);
        size_t i = strtoul(k + 4, NULL, 10);
        if (strcmp(k, last) <= 0)
            *order = 0;
        strcpy(last, k);
        value_of(i, v);
        if (i >= ROWS || row.ncells != 1 || row.cells[0]->value_len != value_len(i) ||
            memcmp(row.cells[0]->value, v, value_len(i)))
            return -999; /* a row merged wrongly */
        seen[i]++;
        (*nrows)++;
    }
    return rc;
}

static int all_once(const unsigned *seen, size_t a, size_t b)
{
    for (size_t i = 0; i < ROWS; i++)
        if (seen[i] != (i >= a && i < b))
            return 0;
    return 1;
}

/* Cut the fake's calls after `after` messages with code and msg, `cuts`
 * times in all. */
static fake *fake_cuts(fake *f, int cuts, size_t after, int code, const char *msg)
{
    f->cuts_left = cuts;
    f->cut_after = after;
    f->cut_code = code;
    f->cut_msg = msg;
    return f;
}

/* One reader over a fake, read to the end (see drain). */
typedef struct scan {
    fake *f;
    tfrec_bt_reader *r;
    unsigned seen[ROWS]; /* times each row came */
    int order;           /* keys rose throughout */
    size_t rows;
} scan;

/* Open a reader over f (which the scan then owns) and read it all; returns
 * the open failure or drain()'s final code (TFREC_END on success). */
static int scan_run(scan *s, fake *f, const tfrec_bt_read_options *o)
{
    memset(s, 0, sizeof *s);
    s->f = f;
    int rc = open_reader(f, &s->r, o);
    return rc != TFREC_OK ? rc : drain(s->r, s->seen, &s->order, &s->rows);
}

static tfrec_bt_read_stats scan_stats(const scan *s)
{
    tfrec_bt_read_stats st = TFREC_BT_READ_STATS_INIT;
    if (tfrec_bt_reader_stats_get(s->r, &st) != TFREC_OK)
        harness_fail(__FILE__, __LINE__, "tfrec_bt_reader_stats_get failed");
    return st;
}

static void scan_free(scan *s)
{
    tfrec_bt_reader_free(s->r);
    fake_free(s->f);
}

/* Each retryable status, ten cuts apiece, a row in progress at each cut:
 * every row once, in order, every resumed call starting after the last row. */
static void test_resume_every_retryable_code(void)
{
    static const struct {
        int code;
        const char *msg;
    } codes[] = { { BT_UNAVAILABLE, "connection reset" },
                  { BT_ABORTED, "aborted" },
                  { BT_DEADLINE_EXCEEDED, "Deadline Exceeded" },
                  { BT_INTERNAL, "Received RST_STREAM with error code 2" },
                  { BT_RESOURCE_EXHAUSTED, "Quota exceeded for quota metric 'Read requests'" } };
    for (size_t c = 0; c < sizeof codes / sizeof codes[0]; c++) {
        tfrec_bt_read_options o = TFREC_BT_READ_OPTIONS_INIT;
        o.retry_initial_ms = 1;
        scan s;
        CHECK_EQ(scan_run(&s, fake_cuts(fake_new(ROWS), 10, 9, codes[c].code, codes[c].msg), &o),
                 TFREC_END);
        CHECK(all_once(s.seen, 0, ROWS));
        CHECK(s.order);
        tfrec_bt_read_stats st = scan_stats(&s);
        CHECK_EQ(st.rows, ROWS);
        CHECK_EQ(st.resumed, 10);
        CHECK_EQ(st.streams, 11);
        CHECK_EQ(s.f->empty_rowsets, 0);
        /* each call resumed where the one before stopped: first rows rise */
        for (int i = 1; i < s.f->ncalls; i++)
            CHECKF(s.f->first_row[i] > s.f->first_row[i - 1] && s.f->first_row[i] != (size_t)-1,
                   "code %d call %d starts at row %zu after %zu", codes[c].code, i,
                   s.f->first_row[i], s.f->first_row[i - 1]);
        scan_free(&s);
    }
}

/* N streams at once; rows still come in key order over all ranges. */
static void test_parallel_ordered_with_cuts(void)
{
    tfrec_bt_read_options o = TFREC_BT_READ_OPTIONS_INIT;
    o.parallel_scans = 4;
    o.retry_initial_ms = 1;
    scan s;
    CHECK_EQ(scan_run(&s, fake_cuts(fake_new(ROWS), 12, 4, BT_UNAVAILABLE, "Socket closed"), &o),
             TFREC_END);
    CHECK(all_once(s.seen, 0, ROWS));
    CHECK(s.order);
    CHECK_EQ(s.f->samples_asked, 1);
    CHECK_EQ(s.f->max_live, 4); /* four streams at once */
    tfrec_bt_read_stats st = scan_stats(&s);
    CHECK_EQ(st.ranges, 4);
    CHECK_EQ(st.resumed, 12);
    CHECK_EQ(st.samples, s.f->samples.n);
    scan_free(&s);
}

/* Streams cut RESOURCE_EXHAUSTED with a RetryInfo of 150 ms: two cuts in
 * turn on one stream wait at least 300 ms in all, not the 1 ms backoff. */
static void test_retry_info_delay_replaces_backoff(void)
{
    tfrec_bt_read_options o = TFREC_BT_READ_OPTIONS_INIT;
    o.retry_initial_ms = 1;
    fake *f = fake_cuts(fake_new(ROWS), 2, 4, BT_RESOURCE_EXHAUSTED, "quota exceeded");
    f->cut_retry_delay_ms = 150;
    scan s;
    int64_t t0 = tfrec_bt_now_ms();
    CHECK_EQ(scan_run(&s, f, &o), TFREC_END);
    int64_t took = tfrec_bt_now_ms() - t0;
    CHECK(all_once(s.seen, 0, ROWS));
    CHECK_EQ(scan_stats(&s).resumed, 2);
    CHECKF(took >= 300, "took %lld ms", (long long)took);
    scan_free(&s);
}

/* Rows as they arrive: every row once, the streams interleaved. */
static void test_parallel_unordered(void)
{
    tfrec_bt_read_options o = TFREC_BT_READ_OPTIONS_INIT;
    o.parallel_scans = 3;
    o.unordered = 1;
    o.retry_initial_ms = 1;
    scan s;
    CHECK_EQ(scan_run(&s, fake_cuts(fake_new(ROWS), 5, 3, BT_ABORTED, "aborted"), &o), TFREC_END);
    CHECK(all_once(s.seen, 0, ROWS));
    CHECK(!s.order); /* interleaved, so not in global key order */
    CHECK_EQ(s.f->max_live, 3);
    scan_free(&s);
}

/* shuffle_ranges: 16 ranges of [row_000000, row_001200), cut in decimal
 * digits, read par at a time in the (seed, epoch) order, a few streams cut
 * and resumed. Fills blocks[] with the ranges in the order their first row
 * came, *nblocks the number of ranges seen. */
static void shuffled(uint64_t seed, uint64_t epoch, int par, size_t *blocks, size_t *nblocks)
{
    tfrec_bt_read_options o = TFREC_BT_READ_OPTIONS_INIT;
    o.start_key = "row_000000";
    o.start_key_len = 10;
    o.end_key = "row_001200";
    o.end_key_len = 10;
    o.parallel_scans = par;
    o.shuffle_ranges = 16;
    o.shuffle_seed = seed;
    o.shuffle_epoch = epoch;
    o.retry_initial_ms = 1;
    fake *f = fake_cuts(fake_new(ROWS), 6, 3, BT_UNAVAILABLE, "Socket closed");
    tfrec_bt_reader *r = NULL;
    CHECK_EQ(open_reader(f, &r, &o), TFREC_OK);
    unsigned seen[ROWS] = { 0 };
    size_t nb = 0, rows = 0;
    int started[16] = { 0 };
    tfrec_bt_row row = TFREC_BT_ROW_INIT;
    int rc;
    while ((rc = tfrec_bt_reader_next(r, &row)) == TFREC_OK) {
        char k[32] = { 0 };
        memcpy(k, row.key, row.key_len < 31 ? row.key_len : 31);
        size_t i = strtoul(k + 4, NULL, 10);
        CHECK(i < ROWS && row.range < 16);
        seen[i]++;
        rows++;
        if (!started[row.range]) {
            started[row.range] = 1;
            blocks[nb++] = row.range;
        }
    }
    CHECK_EQ(rc, TFREC_END);
    CHECK(all_once(seen, 0, ROWS));
    tfrec_bt_read_stats st = TFREC_BT_READ_STATS_INIT;
    CHECK_EQ(tfrec_bt_reader_stats_get(r, &st), TFREC_OK);
    CHECK_EQ(st.ranges, 16);
    CHECK_EQ(st.rows, ROWS);
    CHECK_EQ(f->samples_asked, 0); /* never SampleRowKeys */
    CHECK_EQ(f->max_live, par);    /* parallel_scans streams at once, never more */
    tfrec_bt_reader_free(r);
    fake_free(f);
    *nblocks = nb;
}

static void test_shuffled_ranges(void)
{
    size_t a[16], b[16], c[16], d[16], n;
    shuffled(1, 0, 1, a, &n);
    CHECK_EQ(n, 16); /* every range holds rows: even decimal cuts */
    shuffled(1, 0, 1, b, &n);
    CHECK_EQ(n, 16);
    CHECK(!memcmp(a, b, sizeof a)); /* the same (seed, epoch), the same order */
    size_t in_order = 0;
    for (size_t i = 0; i < 16; i++)
        in_order += a[i] == i;
    CHECK(in_order < 16);
    shuffled(1, 1, 1, c, &n);
    CHECK_EQ(n, 16);
    CHECK(memcmp(a, c, sizeof a)); /* a new epoch, a new order */
    shuffled(1, 0, 3, d, &n);
    CHECK_EQ(n, 16); /* three streams at most, every row once */
}

/* Workers 0..n-1 with the same split points: disjoint shares covering all. */
static void test_shards_disjoint_and_covering(void)
{
    const char *splits[] = { "row_000100", "row_000333", "row_000777", "row_000900", "row_001100" };
    size_t lens[5];
    for (int i = 0; i < 5; i++)
        lens[i] = strlen(splits[i]);
    for (int shards = 1; shards <= 5; shards++) {
        for (int par = 1; par <= 3; par++) {
            unsigned seen[ROWS] = { 0 };
            for (int w = 0; w < shards; w++) {
                tfrec_bt_read_options o = TFREC_BT_READ_OPTIONS_INIT;
                o.prefix = "row_";
                o.parallel_scans = par;
                o.num_shards = shards;
                o.shard_index = w;
                o.split_keys = (const void *const *)splits;
                o.split_key_lens = lens;
                o.n_split_keys = 5;
                scan s;
                CHECK_EQ(scan_run(&s, fake_new(ROWS), &o), TFREC_END);
                CHECK(s.order);
                CHECK_EQ(s.f->samples_asked, 0);
                for (size_t i = 0; i < ROWS; i++)
                    seen[i] += s.seen[i];
                scan_free(&s);
            }
            CHECKF(all_once(seen, 0, ROWS), "%d shards x %d scans", shards, par);
        }
    }
}

/* Ranges with open and closed ends, a key list, and the empty key list,
 * which must not reach the server (an empty RowSet reads the whole table). */
static void test_row_sets(void)
{
    tfrec_bt_range ranges[2] = {
        { "row_000010", 10, "row_000020", 10, 1, 1 }, /* (10, 20] */
        { "row_000500", 10, "row_000600", 10, 0, 0 }, /* [500, 600) */
    };
    tfrec_bt_read_options o = TFREC_BT_READ_OPTIONS_INIT;
    o.ranges = ranges;
    o.n_ranges = 2;
    scan s;
    CHECK_EQ(scan_run(&s, fake_new(ROWS), &o), TFREC_END);
    CHECK_EQ(s.rows, 10 + 100);
    for (size_t i = 0; i < ROWS; i++)
        CHECK_EQ(s.seen[i], (i > 10 && i <= 20) || (i >= 500 && i < 600));
    scan_free(&s);

    const char *keys[] = { "row_000042", "row_000007", "row_000042", "row_001199", "nope" };
    size_t klens[5];
    for (int i = 0; i < 5; i++)
        klens[i] = strlen(keys[i]);
    o = (tfrec_bt_read_options)TFREC_BT_READ_OPTIONS_INIT;
    o.keys = (const void *const *)keys;
    o.key_lens = klens;
    o.n_keys = 5;
    o.parallel_scans = 2;
    CHECK_EQ(scan_run(&s, fake_new(ROWS), &o), TFREC_END);
    CHECK_EQ(s.rows, 3);
    CHECK(s.seen[7] == 1 && s.seen[42] == 1 && s.seen[1199] == 1);
    CHECK(s.order);
    scan_free(&s);

    o.n_keys = 0;
    CHECK_EQ(scan_run(&s, fake_new(ROWS), &o), TFREC_END);
    CHECK_EQ(s.rows, 0);
    CHECK_EQ(s.f->ncalls, 0);
    scan_free(&s);
}

/* A row limit holds across resumes: each resumed call asks for what is left. */
static void test_limit_across_resumes(void)
{
    tfrec_bt_read_options o = TFREC_BT_READ_OPTIONS_INIT;
    o.rows_limit = 250;
    o.retry_initial_ms = 1;
    scan s;
    CHECK_EQ(scan_run(&s, fake_cuts(fake_new(ROWS), 3, 5, BT_UNAVAILABLE, "x"), &o), TFREC_END);
    CHECK_EQ(s.rows, 250);
    CHECK(all_once(s.seen, 0, 250));
    CHECK_EQ(s.f->ncalls, 4);
    CHECK_EQ(s.f->limits[0], 250);
    for (int i = 1; i < 4; i++)
        CHECK_EQ(s.f->limits[i], 250 - (int64_t)s.f->first_row[i]);
    scan_free(&s);
}

/* Ranges ahead of the one being returned fill their buffer, are paused and
 * resumed later: still every row once, in order. */
static void test_pause_full_buffers(void)
{
    tfrec_bt_read_options o = TFREC_BT_READ_OPTIONS_INIT;
    o.parallel_scans = 4;
    o.max_buffer_bytes = 4000;
    scan s;
    CHECK_EQ(scan_run(&s, fake_new(ROWS), &o), TFREC_END);
    CHECK(all_once(s.seen, 0, ROWS));
    CHECK(s.order);
    tfrec_bt_read_stats st = scan_stats(&s);
    CHECK(st.paused >= 3);
    CHECK_EQ(st.resumed, 0); /* a pause is not a failure */
    scan_free(&s);
}

/* "Latest cell of family:column": a chain of a column range [column,
 * column] in the family and a cells-per-column limit (no regular
 * expressions: they cost the server more per cell). */
static void test_latest_cell_filter(void)
{
    fake *f = fake_new(10);
    tfrec_bt_read_options o = TFREC_BT_READ_OPTIONS_INIT;
    o.family = "tfexample";
    o.column = "ex.ample";
    tfrec_bt_reader *r;
    CHECK_EQ(open_reader(f, &r, &o), TFREC_OK);
    tfrec_bt_row row = TFREC_BT_ROW_INIT;
    CHECK_EQ(tfrec_bt_reader_next(r, &row), TFREC_OK);
    const Google__Bigtable__V2__RowFilter *flt = f->first_req->filter;
    CHECK(flt && flt->filter_case == GOOGLE__BIGTABLE__V2__ROW_FILTER__FILTER_CHAIN);
    CHECK_EQ(flt->chain->n_filters, 2);
    CHECK_EQ(flt->chain->filters[0]->filter_case,
             GOOGLE__BIGTABLE__V2__ROW_FILTER__FILTER_COLUMN_RANGE_FILTER);
    const Google__Bigtable__V2__ColumnRange *cr = flt->chain->filters[0]->column_range_filter;
    CHECK(!strcmp(cr->family_name, "tfexample"));
    CHECK_EQ(cr->start_qualifier_case,
             GOOGLE__BIGTABLE__V2__COLUMN_RANGE__START_QUALIFIER_START_QUALIFIER_CLOSED);
    CHECK_EQ(cr->end_qualifier_case,
             GOOGLE__BIGTABLE__V2__COLUMN_RANGE__END_QUALIFIER_END_QUALIFIER_CLOSED);
    CHECK(cr->start_qualifier_closed.len == 8 &&
          !memcmp(cr->start_qualifier_closed.data, "ex.ample", 8));
    CHECK(cr->end_qualifier_closed.len == 8 &&
          !memcmp(cr->end_qualifier_closed.data, "ex.ample", 8));
    CHECK_EQ(flt->chain->filters[1]->cells_per_column_limit_filter, 1);
    tfrec_bt_reader_free(r);
    fake_free(f);

    /* a family alone: its name quoted as a regular expression */
    f = fake_new(10);
    o.family = "tf.example";
    o.column = NULL;
    CHECK_EQ(open_reader(f, &r, &o), TFREC_OK);
    CHECK_EQ(tfrec_bt_reader_next(r, &row), TFREC_OK);
    flt = f->first_req->filter;
    CHECK(flt && flt->filter_case == GOOGLE__BIGTABLE__V2__ROW_FILTER__FILTER_CHAIN);
    CHECK_EQ(flt->chain->n_filters, 2);
    CHECK(!strcmp(flt->chain->filters[0]->family_name_regex_filter, "tf\\.example"));
    tfrec_bt_reader_free(r);
    fake_free(f);
}

/* Values in batches: every row's value exactly once and intact across
 * broken, resumed streams, batches bounded by count and bytes, offsets the
 * row's range; rows without the column are skipped; a reader opened
 * without a column is refused. */
static void batch_values(tfrec_bt_read_options *o, unsigned *seen, size_t *max_count, int *final,
                         size_t *total)
{
    tfrec_bt_reader *r = NULL;
    fake *f = fake_cuts(fake_new(ROWS), 5, 3, BT_ABORTED, "aborted");
    CHECK_EQ(open_reader(f, &r, o), TFREC_OK);
    tfrec_record_batch *b;
    CHECK_EQ(tfrec_record_batch_new(&b), TFREC_OK);
    *total = 0;
    uint8_t v[3000];
    int rc;
    *max_count = 0;
    while ((rc = tfrec_bt_reader_next_values(r, b, 50, 20000)) == TFREC_OK) {
        size_t n = tfrec_record_batch_count(b);
        const uint8_t *d = tfrec_record_batch_data(b);
        const uint64_t *ends = tfrec_record_batch_ends(b), *offs = tfrec_record_batch_offsets(b);
        CHECK(n >= 1 && n <= 50);
        CHECK(n == 1 || ends[n - 2] < 20000); /* stopped once at least max_bytes */
        if (n > *max_count)
            *max_count = n;
        for (size_t k = 0; k < n; k++) {
            uint64_t start = k ? ends[k - 1] : 0, len = ends[k] - start;
            size_t i = 0; /* which row: the value's first byte and length tell */
            while (i < ROWS) {
                value_of(i, v);
                if (value_len(i) == len && !memcmp(v, d + start, len))
                    break;
                i++;
            }
            CHECK(i < ROWS);
            CHECK(offs[k] < 3);
            seen[i]++;
        }
        *total += n;
    }
    *final = rc;
    CHECK_EQ(tfrec_record_batch_count(b), 0);
    tfrec_record_batch_free(b);
    tfrec_bt_reader_free(r);
    fake_free(f);
}

static void test_next_values_in_batches(void)
{
    tfrec_bt_read_options o = TFREC_BT_READ_OPTIONS_INIT;
    o.parallel_scans = 3;
    o.unordered = 1;
    o.retry_initial_ms = 1;
    o.family = "tfexample";
    o.column = "example";
    unsigned seen[ROWS] = { 0 };
    size_t max_count, total;
    int rc;
    batch_values(&o, seen, &max_count, &rc, &total);
    CHECK_EQ(total, ROWS);
    CHECK_EQ(rc, TFREC_END);
    CHECK(all_once(seen, 0, ROWS));
    CHECK(max_count >= 2); /* many rows per call */

    /* the rows hold tfexample:example only: another column gives nothing */
    o.column = "other";
    memset(seen, 0, sizeof seen);
    batch_values(&o, seen, &max_count, &rc, &total);
    CHECK_EQ(total, 0);
    CHECK_EQ(rc, TFREC_END);

    /* one value at a time, not copied */
    o.column = "example";
    memset(seen, 0, sizeof seen);
    fake *f = fake_cuts(fake_new(ROWS), 5, 3, BT_ABORTED, "aborted");
    tfrec_bt_reader *r;
    CHECK_EQ(open_reader(f, &r, &o), TFREC_OK);
    const uint8_t *val;
    size_t len, n = 0;
    uint8_t v[3000];
    while ((rc = tfrec_bt_reader_next_value(r, &val, &len)) == TFREC_OK) {
        size_t i = 0;
        while (i < ROWS && !(value_of(i, v), value_len(i) == len && !memcmp(v, val, len)))
            i++;
        CHECK(i < ROWS);
        seen[i]++;
        n++;
    }
    CHECK_EQ(rc, TFREC_END);
    CHECK_EQ(n, ROWS);
    CHECK(all_once(seen, 0, ROWS));
    tfrec_bt_reader_free(r);
    fake_free(f);

    o.family = NULL;
    o.column = NULL;
    f = fake_new(10);
    CHECK_EQ(open_reader(f, &r, &o), TFREC_OK);
    tfrec_record_batch *b;
    CHECK_EQ(tfrec_record_batch_new(&b), TFREC_OK);
    CHECK_EQ(tfrec_bt_reader_next_value(r, &val, &len), TFREC_E_INVALID);
    CHECK_EQ(tfrec_bt_reader_next_values(r, b, 0, 0), TFREC_E_INVALID);
    CHECK(strstr(tfrec_bt_reader_errmsg(r), "without a family and a column"));
    CHECK_EQ(tfrec_bt_reader_next_values(NULL, b, 0, 0), TFREC_E_INVALID);
    tfrec_record_batch_free(b);
    tfrec_bt_reader_free(r);
    fake_free(f);
}

/* Not retried: a bad request, an INTERNAL that is no stream reset. And a
 * retryable failure that never ends gives up at retry_timeout_ms. */
static void test_errors_not_retried(void)
{
    static const struct {
        int code;
        const char *msg;
    } codes[] = { { BT_INVALID_ARGUMENT, "bad filter" }, { BT_INTERNAL, "server bug" } };
    for (size_t c = 0; c < 2; c++) {
        fake *f = fake_new(ROWS);
        f->fail_code = codes[c].code;
        f->fail_msg = codes[c].msg;
        tfrec_bt_read_options o = TFREC_BT_READ_OPTIONS_INIT;
        tfrec_bt_reader *r;
        CHECK_EQ(open_reader(f, &r, &o), TFREC_OK);
        tfrec_bt_row row = TFREC_BT_ROW_INIT;
        CHECK_EQ(tfrec_bt_reader_next(r, &row), TFREC_E_NETWORK);
        CHECK_EQ(f->ncalls, 1);
        CHECK(strstr(tfrec_bt_reader_errmsg(r), codes[c].msg));
        CHECK(strstr(tfrec_bt_reader_errmsg(r), "tables/t"));
        tfrec_bt_reader_free(r);
        fake_free(f);
    }
    fake *f = fake_new(ROWS);
    f->fail_code = BT_UNAVAILABLE;
    f->fail_msg = "connection refused";
    tfrec_bt_read_options o = TFREC_BT_READ_OPTIONS_INIT;
    o.retry_timeout_ms = 300;
    o.retry_initial_ms = 20;
    tfrec_bt_reader *r;
    CHECK_EQ(open_reader(f, &r, &o), TFREC_OK);
    tfrec_bt_row row = TFREC_BT_ROW_INIT;
    int64_t t0 = tfrec_bt_now_ms();
    CHECK_EQ(tfrec_bt_reader_next(r, &row), TFREC_E_NETWORK);
    int64_t took = tfrec_bt_now_ms() - t0;
    CHECKF(took >= 300 && took < 3000, "gave up after %lld ms", (long long)took);
    CHECK(f->ncalls > 2);
    /* Never reached: reported as such, naming the endpoint and how long. */
    CHECKF(strstr(tfrec_bt_reader_errmsg(r), "cannot reach Bigtable at fake") &&
               strstr(tfrec_bt_reader_errmsg(r), "tried for"),
           "%s", tfrec_bt_reader_errmsg(r));
    tfrec_bt_reader_free(r);
    fake_free(f);
}

/* A stream that goes silent (a connection dropped without a reset) is
 * cancelled after the stall time and resumed like a broken one. */
static void test_silent_stream_resumed(void)
{
    scan s = { .f = fake_new(ROWS) };
    s.f->hang_calls = 2;
    s.f->hang_after = 6;
    tfrec_bt_read_options o = TFREC_BT_READ_OPTIONS_INIT;
    o.retry_initial_ms = 1;
    CHECK_EQ(open_reader(s.f, &s.r, &o), TFREC_OK);
    s.r->stall_ms = 100; /* not an option: set between open and the first read */
    int64_t t0 = tfrec_bt_now_ms();
    CHECK_EQ(drain(s.r, s.seen, &s.order, &s.rows), TFREC_END);
    CHECK(tfrec_bt_now_ms() - t0 >= 200);
    CHECK(all_once(s.seen, 0, ROWS));
    CHECK(s.order);
    CHECK_EQ(s.f->ncalls, 3);
    CHECK_EQ(scan_stats(&s).resumed, 2);
    scan_free(&s);
}

static void test_bad_options(void)
{
    fake *f = fake_new(10);
    tfrec_bt_read_options o = TFREC_BT_READ_OPTIONS_INIT;
    tfrec_bt_reader *r;
    o.num_shards = 3;
    o.shard_index = 3;
    CHECK_EQ(open_reader(f, &r, &o), TFREC_E_INVALID);
    CHECK(strstr(tfrec_last_errmsg(), "shard_index 3 of num_shards 3"));
    o.shard_index = 0;
    o.parallel_scans = -1;
    CHECK_EQ(open_reader(f, &r, &o), TFREC_E_INVALID);
    fake_free(f);
}

/* A program built before tfrec_bt_row.range passes the shorter struct: it
 * is filled up to its size and not a byte further; a current one learns the
 * range each row came from. */
static void test_row_range_and_old_row_struct(void)
{
    fake *f = fake_new(ROWS);
    tfrec_bt_read_options o = TFREC_BT_READ_OPTIONS_INIT;
    o.parallel_scans = 3;
    o.unordered = 1;
    tfrec_bt_reader *r;
    CHECK_EQ(open_reader(f, &r, &o), TFREC_OK);
    size_t old_size = offsetof(tfrec_bt_row, range);
    unsigned char buf[sizeof(tfrec_bt_row) + 16];
    memset(buf, 0xab, sizeof buf);
    tfrec_bt_row *old = (tfrec_bt_row *)buf;
    old->struct_size = old_size;
    CHECK_EQ(tfrec_bt_reader_next(r, old), TFREC_OK);
    CHECK(old->key_len == 10 && old->ncells == 1);
    for (size_t i = old_size; i < sizeof buf; i++)
        CHECK_EQ(buf[i], 0xab);
    size_t last_range[3] = { 0 }, per_range[3] = { 0 };
    tfrec_bt_row row = TFREC_BT_ROW_INIT;
    while (tfrec_bt_reader_next(r, &row) == TFREC_OK) {
        CHECK(row.range < 3);
        char k[16] = { 0 };
        memcpy(k, row.key, row.key_len < 15 ? row.key_len : 15);
        size_t i = strtoul(k + 4, NULL, 10);
        CHECK(i >= last_range[row.range]); /* key order within a range */
        last_range[row.range] = i;
        per_range[row.range]++;
    }
    CHECK(per_range[0] && per_range[1] && per_range[2]);
    CHECK(last_range[0] < last_range[1] && last_range[1] < last_range[2]);
    tfrec_bt_reader_free(r);
    fake_free(f);
}

/* A range read split into shards: refused without a plan, split_keys or
 * sample_split; with one plan (made from the fake's samples), the workers
 * cover every row once, whatever their parallel scans. */
static void test_sharded_reads_need_a_plan(void)
{
    tfrec_bt_read_options o = TFREC_BT_READ_OPTIONS_INIT;
    o.prefix = "row_";
    o.num_shards = 3;
    o.shard_index = 1;
    scan s;
    CHECK_EQ(scan_run(&s, fake_new(ROWS), &o), TFREC_E_INVALID);
    CHECK(strstr(tfrec_last_errmsg(), "needs a split plan shared by every worker"));
    CHECK_EQ(s.f->samples_asked, 0);
    scan_free(&s);
    o.sample_split = 1;
    CHECK_EQ(scan_run(&s, fake_new(ROWS), &o), TFREC_END);
    CHECK_EQ(s.f->samples_asked, 1);
    scan_free(&s);
    o.sample_split = 0;

    fake *f = fake_new(ROWS);
    bt_rowset set;
    tfrec_err err = { 0 };
    CHECK_EQ(tfrec_bt_rowset_from_options(&set, &o, &err), TFREC_OK);
    for (size_t shards = 2; shards <= 7; shards += 5) {
        tfrec_bt_plan *p = NULL;
        CHECK_EQ(tfrec_bt_plan_make(&p, "projects/p/instances/i/tables/t", &set, &f->samples,
                                    shards, "sample", &err),
                 TFREC_OK);
        unsigned seen[ROWS] = { 0 };
        for (size_t w = 0; w < shards; w++) {
            o.plan = p;
            o.num_shards = (int)shards;
            o.shard_index = (int)w;
            o.parallel_scans = 1 + (int)(w % 3);
            CHECK_EQ(scan_run(&s, fake_new(ROWS), &o), TFREC_END);
            CHECK(s.order);
            CHECK_EQ(s.f->samples_asked, o.parallel_scans > 1);
            for (size_t i = 0; i < ROWS; i++)
                seen[i] += s.seen[i];
            scan_free(&s);
        }
        CHECKF(all_once(seen, 0, ROWS), "%zu shards with one plan", shards);
        /* the same plan for another count is refused */
        o.num_shards = (int)shards + 1;
        o.shard_index = 0;
        CHECK_EQ(scan_run(&s, fake_new(ROWS), &o), TFREC_E_INVALID);
        CHECK(strstr(tfrec_last_errmsg(), "make the plan for"));
        scan_free(&s);
        tfrec_bt_plan_free(p);
    }
    tfrec_bt_rowset_free(&set);
    fake_free(f);
}

/* A server never reached (every call UNAVAILABLE at once, as for a closed
 * port) is reported after the connect timeout, not retried for the whole
 * retry_timeout_ms: the message names the endpoint and how long it was
 * tried. */
static void test_unreachable_reported_early(void)
{
    fake *f = fake_new(ROWS);
    f->fail_code = BT_UNAVAILABLE;
    f->fail_msg = "failed to connect to all addresses";
    tfrec_bt_read_options o = TFREC_BT_READ_OPTIONS_INIT;
    o.retry_initial_ms = 20; /* retry_timeout_ms: the default ten minutes */
    tfrec_bt_reader *r;
    CHECK_EQ(open_reader(f, &r, &o), TFREC_OK);
    r->connect_timeout_ms = 400; /* not an option: set between open and the first read */
    tfrec_bt_row row = TFREC_BT_ROW_INIT;
    int64_t t0 = tfrec_bt_now_ms();
    CHECK_EQ(tfrec_bt_reader_next(r, &row), TFREC_E_NETWORK);
    int64_t took = tfrec_bt_now_ms() - t0;
    CHECKF(took >= 400 && took < 3000, "gave up after %lld ms", (long long)took);
    const char *msg = tfrec_bt_reader_errmsg(r);
    CHECKF(strstr(msg, "cannot reach Bigtable at fake") && strstr(msg, "tried for 0.") &&
               strstr(msg, "failed to connect"),
           "%s", msg);
    tfrec_bt_reader_free(r);
    fake_free(f);
}

/* A server that takes the call and never answers (a black hole: no
 * message, no status) is reported the same way once the connect timeout
 * passes; one that answered once is not (its silence is a stall). */
static void test_silent_server_reported_early(void)
{
    fake *f = fake_new(ROWS);
    f->hang_calls = 100;
    f->hang_after = 0;
    tfrec_bt_read_options o = TFREC_BT_READ_OPTIONS_INIT;
    tfrec_bt_reader *r;
    CHECK_EQ(open_reader(f, &r, &o), TFREC_OK);
    r->connect_timeout_ms = 300;
    tfrec_bt_row row = TFREC_BT_ROW_INIT;
    int64_t t0 = tfrec_bt_now_ms();
    CHECK_EQ(tfrec_bt_reader_next(r, &row), TFREC_E_NETWORK);
    int64_t took = tfrec_bt_now_ms() - t0;
    CHECKF(took >= 300 && took < 3000, "gave up after %lld ms", (long long)took);
    CHECKF(strstr(tfrec_bt_reader_errmsg(r), "cannot reach Bigtable at fake"), "%s",
           tfrec_bt_reader_errmsg(r));
    tfrec_bt_reader_free(r);
    fake_free(f);

    scan s = { .f = fake_new(ROWS) };
    s.f->hang_calls = 1;
    s.f->hang_after = 3; /* answered, then silent: resumed after the stall */
    o.retry_initial_ms = 1;
    CHECK_EQ(open_reader(s.f, &s.r, &o), TFREC_OK);
    s.r->connect_timeout_ms = 50;
    s.r->stall_ms = 200;
    CHECK_EQ(drain(s.r, s.seen, &s.order, &s.rows), TFREC_END);
    CHECK(all_once(s.seen, 0, ROWS));
    scan_free(&s);
}

static void *stop_later(void *arg)
{
    struct timespec ts = { 0, 200 * 1000000L };
    nanosleep(&ts, NULL);
    tfrec_bt_reader_stop(arg);
    return NULL;
}

/* tfrec_bt_reader_stop (async-signal-safe: what bt2tfrec's SIGINT handler
 * calls) ends a read blocked on a silent server within a bounded time,
 * with TFREC_E_STATE; the reader stays stopped. */
static void test_stop_ends_a_blocked_read(void)
{
    fake *f = fake_new(ROWS);
    f->hang_calls = 100;
    f->hang_after = 0;
    tfrec_bt_read_options o = TFREC_BT_READ_OPTIONS_INIT;
    tfrec_bt_reader *r;
    CHECK_EQ(open_reader(f, &r, &o), TFREC_OK);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, stop_later, r) == 0);
    tfrec_bt_row row = TFREC_BT_ROW_INIT;
    int64_t t0 = tfrec_bt_now_ms();
    CHECK_EQ(tfrec_bt_reader_next(r, &row), TFREC_E_STATE);
    int64_t took = tfrec_bt_now_ms() - t0;
    pthread_join(t, NULL);
    /* Far below the 120 s stall timeout it would otherwise wait for, with
     * room for a loaded machine under the sanitizers. */
    CHECKF(took >= 150 && took < 10000, "stopped after %lld ms", (long long)took);
    CHECKF(strstr(tfrec_bt_reader_errmsg(r), "stopped"), "%s", tfrec_bt_reader_errmsg(r));
    CHECK_EQ(tfrec_bt_reader_next(r, &row), TFREC_E_STATE);
    CHECK_EQ(f->live, 0);       /* the call was cancelled and its end collected */
    tfrec_bt_reader_stop(NULL); /* harmless */
    tfrec_bt_reader_free(r);
    fake_free(f);
}

TESTS(TEST(test_sharded_reads_need_a_plan), TEST(test_resume_every_retryable_code),
      TEST(test_parallel_ordered_with_cuts), TEST(test_retry_info_delay_replaces_backoff),
      TEST(test_parallel_unordered), TEST(test_shards_disjoint_and_covering), TEST(test_row_sets),
      TEST(test_limit_across_resumes), TEST(test_pause_full_buffers), TEST(test_latest_cell_filter),
      TEST(test_errors_not_retried), TEST(test_bad_options), TEST(test_silent_stream_resumed),
      TEST(test_row_range_and_old_row_struct), TEST(test_unreachable_reported_early),
      TEST(test_silent_server_reported_early), TEST(test_stop_ends_a_blocked_read),
      TEST(test_shuffled_ranges), TEST(test_next_values_in_batches))

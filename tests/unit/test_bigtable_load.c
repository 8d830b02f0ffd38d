/* tfrec_bt_load (include/tfrec/bigtable_load.h) against an in-process fake
 * MutateRows server: the reference's keys and widths, num_records,
 * start_index (resume), reversed keys, progress reports and cancelling,
 * corrupt input, rows the server refuses, dry runs, and the growable
 * options/stats structs (older and newer callers). */
#include <grpc/grpc.h>
#include <grpc/slice.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bigtable/transport.h"
#include "google/bigtable/v2/bigtable.pb-c.h"
#include "harness.h"
#include "tfrec/tfrec.h"

#define MAX_ROWS 256

/* ------------------------------------------------------------ fake server */

typedef struct fake_ev {
    int kind;
    void *user;
    uint8_t *data;
    size_t len;
    int code; /* DONE: the call's status */
} fake_ev;

typedef struct fake {
    int refuse_from; /* refuse (INVALID_ARGUMENT) rows whose value says index >= this; -1 never */
    int deny_from;   /* fail a whole call holding such a row: PERMISSION_DENIED; 0 never */
    char keys[MAX_ROWS][48];
    char values[MAX_ROWS][32];
    size_t nrows;
    fake_ev ev[1024];
    size_t nev, head;
} fake;

static int fake_start(void *ctx, void *user, const grpc_slice *sl, size_t n, tfrec_err *err)
{
    (void)err;
    fake *f = ctx;
    size_t len = 0;
    for (size_t i = 0; i < n; i++)
        len += GRPC_SLICE_LENGTH(sl[i]);
    uint8_t *buf = malloc(len), *p = buf;
    for (size_t i = 0; i < n; i++) {
        memcpy(p, GRPC_SLICE_START_PTR(sl[i]), GRPC_SLICE_LENGTH(sl[i]));
        p += GRPC_SLICE_LENGTH(sl[i]);
    }
    Google__Bigtable__V2__MutateRowsRequest *req =
        google__bigtable__v2__mutate_rows_request__unpack(NULL, len, buf);
    free(buf);
    Google__Bigtable__V2__MutateRowsResponse resp =
        GOOGLE__BIGTABLE__V2__MUTATE_ROWS_RESPONSE__INIT;
    Google__Bigtable__V2__MutateRowsResponse__Entry ents[MAX_ROWS], *ptrs[MAX_ROWS];
    Google__Rpc__Status st[MAX_ROWS];
    for (size_t i = 0; f->deny_from && req && i < req->n_entries; i++) {
        const ProtobufCBinaryData *v = &req->entries[i]->mutations[0]->set_cell->value;
        char value[32] = "";
        memcpy(value, v->data, v->len < 31 ? v->len : 31);
        if (atoi(value + 6) >= f->deny_from) { /* the whole call fails: the writer stops */
            f->ev[f->nev++] = (fake_ev){ BT_EV_DONE, user, NULL, 0, 7 };
            google__bigtable__v2__mutate_rows_request__free_unpacked(req, NULL);
            return 0;
        }
    }
    for (size_t i = 0; req && i < req->n_entries && i < MAX_ROWS; i++) {
        const Google__Bigtable__V2__MutateRowsRequest__Entry *e = req->entries[i];
        const ProtobufCBinaryData *v = &e->mutations[0]->set_cell->value;
        char value[32] = "";
        memcpy(value, v->data, v->len < 31 ? v->len : 31);
        google__bigtable__v2__mutate_rows_response__entry__init(&ents[i]);
        google__rpc__status__init(&st[i]);
        /* values are "value-N": N is the record's index */
        int refused = f->refuse_from >= 0 && atoi(value + 6) >= f->refuse_from;
        st[i].code = refused ? 3 /* INVALID_ARGUMENT: not retried */ : 0;
        st[i].message = refused ? "refused by the fake" : "";
        ents[i].index = (int64_t)i;
        ents[i].status = &st[i];
        ptrs[i] = &ents[i];
        if (!refused && f->nrows < MAX_ROWS) {
            snprintf(f->keys[f->nrows], sizeof f->keys[0], "%.*s", (int)e->row_key.len,
                     (const char *)e->row_key.data);
            snprintf(f->values[f->nrows], sizeof f->values[0], "%s", value);
            f->nrows++;
        }
    }
    resp.n_entries = req ? req->n_entries : 0;
    resp.entries = ptrs;
    fake_ev m = { BT_EV_MESSAGE, user, NULL, 0, 0 };
    m.len = google__bigtable__v2__mutate_rows_response__get_packed_size(&resp);
    m.data = malloc(m.len);
    google__bigtable__v2__mutate_rows_response__pack(&resp, m.data);
    f->ev[f->nev++] = m;
    f->ev[f->nev++] = (fake_ev){ BT_EV_DONE, user, NULL, 0, 0 };
    if (req)
        google__bigtable__v2__mutate_rows_request__free_unpacked(req, NULL);
    return 0;
}

static int fake_next(void *ctx, int64_t deadline_ms, bt_event *ev)
{
    (void)deadline_ms;
    fake *f = ctx;
    if (f->head == f->nev)
        return 0;
    fake_ev e = f->ev[f->head++];
    memset(ev, 0, sizeof *ev);
    ev->kind = e.kind;
    ev->user = e.user;
    if (e.kind == BT_EV_MESSAGE) {
        ev->slice = grpc_slice_from_copied_buffer((const char *)e.data, e.len);
        ev->data = GRPC_SLICE_START_PTR(ev->slice);
        ev->len = e.len;
        free(e.data);
    } else {
        ev->code = e.code;
        if (e.code)
            snprintf(ev->details, sizeof ev->details, "denied by the fake");
    }
    if (f->head == f->nev)
        f->head = f->nev = 0;
    return 1;
}

static tfrec_bt_writer *open_writer(fake *f)
{
    bt_transport t = { f, fake_start, fake_next, NULL, NULL, NULL, NULL };
    tfrec_bt_writer_options o = TFREC_BT_WRITER_OPTIONS_INIT;
    o.batch_rows = 7; /* several requests per file */
    tfrec_bt_writer *w = NULL;
    tfrec_bt_writer_open_transport(&w, &t, "projects/p/instances/i/tables/t", NULL, "tfexample",
                                   &o);
    return w;
}

/* ------------------------------------------------------------ inputs */

/* Files with counts[i] records "value-<global index>"; returns the paths. */
static const char **make_files(const char *stem, const int *counts, int nfiles)
{
    static char names[8][512];
    static const char *paths[8];
    int idx = 0;
    for (int i = 0; i < nfiles; i++) {
        char name[64];
        snprintf(name, sizeof name, "%s-%d", stem, i);
        snprintf(names[i], sizeof names[i], "%s", harness_path(name));
        paths[i] = names[i];
        tfrec_writer *w;
        tfrec_writer_open(&w, names[i], NULL);
        for (int k = 0; k < counts[i]; k++, idx++) {
            char v[32];
            int n = snprintf(v, sizeof v, "value-%d", idx);
            tfrec_writer_write(w, v, (size_t)n);
        }
        tfrec_writer_close(w);
        tfrec_writer_free(w);
    }
    return paths;
}

/* ------------------------------------------------------------ tests */

static void test_reference_keys_over_all_files(void)
{
    static const int counts[] = { 10, 0, 20 };
    const char **files = make_files("keys", counts, 3);
    fake *f = calloc(1, sizeof *f);
    f->refuse_from = -1;
    tfrec_bt_writer *w = open_writer(f);
    tfrec_bt_load_options o = TFREC_BT_LOAD_OPTIONS_INIT;
    o.row_prefix = "train_";
    tfrec_bt_load_stats st = TFREC_BT_LOAD_STATS_INIT;
    CHECK_EQ(tfrec_bt_load(w, files, 3, &o, &st), TFREC_OK);
    CHECK_EQ(f->nrows, 30);
    for (size_t i = 0; i < 30; i++) {
        char want[48], val[32];
        snprintf(want, sizeof want, "train_%010zu", i); /* no num_records: 10 digits */
        snprintf(val, sizeof val, "value-%zu", i);
        CHECKF(!strcmp(f->keys[i], want) && !strcmp(f->values[i], val), "row %zu: %s = %s", i,
               f->keys[i], f->values[i]);
    }
    CHECK_EQ(st.records_read, 30);
    CHECK_EQ(st.rows_acked, 30);
    CHECK_EQ(st.next_index, 30);
    CHECK_EQ(st.rows_failed, 0);
    CHECK_EQ(st.bytes_read, 10 * 7 + 20 * 8);
    CHECK(st.bytes_acked > st.bytes_read); /* keys too */
    CHECK_EQ(tfrec_bt_writer_close(w), TFREC_OK);
    tfrec_bt_writer_free(w);
    free(f);
}

static void test_num_records_start_index_reversed(void)
{
    static const int counts[] = { 10, 20 };
    const char **files = make_files("limit", counts, 2);
    fake *f = calloc(1, sizeof *f);
    f->refuse_from = -1;
    tfrec_bt_writer *w = open_writer(f);
    tfrec_bt_load_options o = TFREC_BT_LOAD_OPTIONS_INIT;
    o.row_prefix = "v_";
    o.column = "col";
    o.num_records = 25; /* width: digits of 24 */
    o.start_index = 7;  /* records 0..6 were loaded before */
    o.reversed_keys = 1;
    tfrec_bt_load_stats st = TFREC_BT_LOAD_STATS_INIT;
    CHECK_EQ(tfrec_bt_load(w, files, 2, &o, &st), TFREC_OK);
    CHECK_EQ(f->nrows, 18);
    CHECK(!strcmp(f->keys[0], "v_70") && !strcmp(f->values[0], "value-7"));
    CHECK(!strcmp(f->keys[5], "v_21") && !strcmp(f->values[5], "value-12"));
    CHECK(!strcmp(f->keys[17], "v_42") && !strcmp(f->values[17], "value-24"));
    CHECK_EQ(st.records_skipped, 7);
    CHECK_EQ(st.records_read, 18);
    CHECK_EQ(st.next_index, 25);
    tfrec_bt_writer_free(w);
    free(f);
}

typedef struct watch {
    int calls, done_calls, stop_after;
    uint64_t last_read, last_next;
    int monotonic;
    size_t last_file;
} watch;

static int on_progress(void *ctx, const tfrec_bt_load_progress *p)
{
    watch *wt = ctx;
    wt->calls++;
    if (p->struct_size != sizeof *p || !p->stats)
        wt->monotonic = 0;
    if (p->stats->records_read < wt->last_read || p->stats->next_index < wt->last_next)
        wt->monotonic = 0;
    wt->last_read = p->stats->records_read;
    wt->last_next = p->stats->next_index;
    wt->last_file = p->file_index;
    if (p->done) {
        wt->done_calls++;
        if (p->file)
            wt->monotonic = 0;
    }
    return wt->stop_after && wt->calls >= wt->stop_after;
}

static void test_progress_and_cancel(void)
{
    static const int counts[] = { 40, 40 };
    const char **files = make_files("progress", counts, 2);
    fake *f = calloc(1, sizeof *f);
    f->refuse_from = -1;
    tfrec_bt_writer *w = open_writer(f);
    watch wt = { 0 };
    wt.monotonic = 1;
    tfrec_bt_load_options o = TFREC_BT_LOAD_OPTIONS_INIT;
    o.progress = on_progress;
    o.progress_ctx = &wt;
    o.progress_interval = -1; /* every record */
    tfrec_bt_load_stats st = TFREC_BT_LOAD_STATS_INIT;
    CHECK_EQ(tfrec_bt_load(w, files, 2, &o, &st), TFREC_OK);
    CHECK_EQ(wt.calls, 81);
    CHECK_EQ(wt.done_calls, 1);
    CHECK(wt.monotonic);
    CHECK_EQ(wt.last_next, 80);
    CHECK_EQ(wt.last_file, 2);
    tfrec_bt_writer_free(w);

    /* stopped by the callback after 30 records: what was put is flushed */
    memset(f, 0, sizeof *f);
    f->refuse_from = -1;
    w = open_writer(f);
    memset(&wt, 0, sizeof wt);
    wt.stop_after = 30;
    CHECK_EQ(tfrec_bt_load(w, files, 2, &o, &st), TFREC_E_STATE);
    CHECK(strstr(tfrec_last_errmsg(), "load stopped at record 30"));
    CHECK_EQ(st.records_read, 30);
    CHECK_EQ(st.next_index, 30);
    CHECK_EQ(f->nrows, 30);
    CHECK_EQ(wt.done_calls, 1); /* the final report still comes */
    tfrec_bt_writer_free(w);
    free(f);
}

static void test_corrupt_input_named(void)
{
    static const int counts[] = { 12, 12 };
    const char **files = make_files("corrupt", counts, 2);
    /* flip a payload byte of the second file's fourth record (record 15) */
    FILE *fp = fopen(files[1], "r+b");
    long off = 3 * (16 + 8) + 12 + 2;
    fseek(fp, off, SEEK_SET);
    int c = fgetc(fp);
    fseek(fp, off, SEEK_SET);
    fputc(c ^ 0x20, fp);
    fclose(fp);
    fake *f = calloc(1, sizeof *f);
    f->refuse_from = -1;
    tfrec_bt_writer *w = open_writer(f);
    tfrec_bt_load_options o = TFREC_BT_LOAD_OPTIONS_INIT;
    o.row_prefix = "t_";
    o.num_records = 24;
    tfrec_bt_load_stats st = TFREC_BT_LOAD_STATS_INIT;
    CHECK_EQ(tfrec_bt_load(w, files, 2, &o, &st), TFREC_E_BAD_DATA_CRC);
    const char *msg = tfrec_last_errmsg();
    CHECKF(strstr(msg, files[1]) && strstr(msg, "offset 72") &&
               strstr(msg, "record 15 would have been row t_15"),
           "%s", msg);
    CHECK_EQ(st.next_index, 15); /* the good records before it are acknowledged */
    CHECK_EQ(f->nrows, 15);
    tfrec_bt_writer_free(w);

    /* a file that cannot be opened */
    const char *missing[] = { harness_path("no-such-file") };
    w = open_writer(f);
    CHECK_EQ(tfrec_bt_load(w, missing, 1, NULL, NULL), TFREC_E_NOT_FOUND);
    CHECK(strstr(tfrec_last_errmsg(), "no-such-file"));
    tfrec_bt_writer_free(w);
    free(f);
}

static void test_refused_rows_stop_the_resume_point(void)
{
    static const int counts[] = { 30 };
    const char **files = make_files("refused", counts, 1);
    fake *f = calloc(1, sizeof *f);
    f->refuse_from = 12;
    tfrec_bt_writer *w = open_writer(f);
    tfrec_bt_load_stats st = TFREC_BT_LOAD_STATS_INIT;
    CHECK_EQ(tfrec_bt_load(w, files, 1, NULL, &st), TFREC_E_NETWORK);
    CHECK(strstr(tfrec_last_errmsg(), "18 of 30 rows not written"));
    CHECK_EQ(st.rows_acked, 12);
    CHECK_EQ(st.rows_failed, 18);
    CHECK_EQ(st.next_index, 12);
    CHECK_EQ(tfrec_bt_writer_failed_count(w), 18);
    tfrec_bt_writer_free(w);
    free(f);
}

/* A writer that stops (the server gone) leaves rows never sent: the load
 * reads on to count them, so rows_failed + records_not_sent is every row
 * of the input not acknowledged. */
static void test_rows_not_sent_are_counted(void)
{
    static const int counts[] = { 30, 20 };
    const char **files = make_files("unsent", counts, 2);
    fake *f = calloc(1, sizeof *f);
    f->refuse_from = -1;
    f->deny_from = 14;
    tfrec_bt_writer *w = open_writer(f);
    tfrec_bt_load_stats st = TFREC_BT_LOAD_STATS_INIT;
    CHECK_EQ(tfrec_bt_load(w, files, 2, NULL, &st), TFREC_E_NETWORK);
    CHECK(strstr(tfrec_last_errmsg(), "PERMISSION_DENIED"));
    CHECK_EQ(st.rows_acked, 14);
    CHECK_EQ(st.next_index, 14);
    CHECKF(st.records_not_sent > 0, "records_not_sent %llu",
           (unsigned long long)st.records_not_sent);
    CHECK_EQ(st.rows_failed + st.records_not_sent, 50 - 14);
    CHECK_EQ(st.records_read + st.records_not_sent, 50);
    CHECK_EQ(tfrec_bt_writer_failed_count(w), st.rows_failed);
    tfrec_bt_writer_free(w);
    free(f);

    /* with num_records, counting stops there too */
    f = calloc(1, sizeof *f);
    f->refuse_from = -1;
    f->deny_from = 14;
    w = open_writer(f);
    tfrec_bt_load_options o = TFREC_BT_LOAD_OPTIONS_INIT;
    o.num_records = 40;
    CHECK_EQ(tfrec_bt_load(w, files, 2, &o, &st), TFREC_E_NETWORK);
    CHECK_EQ(st.records_read + st.records_not_sent, 40);
    CHECK_EQ(st.input_left, 1);
    tfrec_bt_writer_free(w);
    free(f);
}

/* input_left: num_records ended the load while records remained. */
static void test_num_records_before_the_end_is_reported(void)
{
    static const int counts[] = { 5, 6 };
    const char **files = make_files("left", counts, 2);
    static const struct {
        uint64_t num_records;
        int left;
    } cases[] = { { 4, 1 }, { 5, 1 }, { 10, 1 }, { 11, 0 }, { 12, 0 }, { 0, 0 } };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tfrec_bt_load_options o = TFREC_BT_LOAD_OPTIONS_INIT;
        o.num_records = cases[i].num_records;
        tfrec_bt_load_stats st = TFREC_BT_LOAD_STATS_INIT;
        CHECK_EQ(tfrec_bt_load(NULL, files, 2, &o, &st), TFREC_OK);
        CHECKF(st.input_left == cases[i].left, "num_records %llu: input_left %d",
               (unsigned long long)cases[i].num_records, st.input_left);
    }
}

static void test_dry_run(void)
{
    static const int counts[] = { 5, 6 };
    const char **files = make_files("dry", counts, 2);
    tfrec_bt_load_options o = TFREC_BT_LOAD_OPTIONS_INIT;
    o.start_index = 2;
    tfrec_bt_load_stats st = TFREC_BT_LOAD_STATS_INIT;
    CHECK_EQ(tfrec_bt_load(NULL, files, 2, &o, &st), TFREC_OK);
    CHECK_EQ(st.records_read, 9);
    CHECK_EQ(st.records_skipped, 2);
    CHECK_EQ(st.rows_acked, 0);
    CHECK_EQ(st.next_index, 2); /* nothing written, nothing acknowledged */
}

/* open_source: every input (and only through it) comes from the caller's
 * transport, named as given; a failure there is the load's, with its code. */
typedef struct opener {
    int calls;
    const char *prefix; /* names start with it; the rest is a local path */
} opener;

static int open_prefixed(void *ctx, tfrec_io *io, const char *name)
{
    opener *op = ctx;
    op->calls++;
    size_t n = strlen(op->prefix);
    if (strncmp(name, op->prefix, n) != 0)
        return TFREC_E_NOT_FOUND;
    return tfrec_io_open_source(io, name + n);
}

/* Two local files of 3 and 4 records named "mem:PATH" for the callback. */
typedef struct cb_load {
    const char **local;
    char names[2][600];
    const char *files[2];
    opener op;
    tfrec_bt_load_options o;
} cb_load;

static void cb_load_init(cb_load *c, const char *stem)
{
    static const int counts[] = { 3, 4 };
    c->local = make_files(stem, counts, 2);
    for (int i = 0; i < 2; i++) {
        snprintf(c->names[i], sizeof c->names[i], "mem:%s", c->local[i]);
        c->files[i] = c->names[i];
    }
    c->op = (opener){ 0, "mem:" };
    tfrec_bt_load_options_init(&c->o);
    c->o.open_source = open_prefixed;
    c->o.open_ctx = &c->op;
}

static void test_open_source_callback(void)
{
    cb_load c;
    cb_load_init(&c, "cb");
    const char **local = c.local, **files = c.files;
    opener *op = &c.op;
    tfrec_bt_load_options *o = &c.o;
    tfrec_bt_load_stats st = TFREC_BT_LOAD_STATS_INIT;
    CHECK_EQ(tfrec_bt_load(NULL, files, 2, o, &st), TFREC_OK);
    CHECK_EQ(st.records_read, 7);
    CHECK_EQ(op->calls, 2);
    /* without the callback the same names are missing local files */
    o->open_source = NULL;
    CHECK(tfrec_bt_load(NULL, files, 2, o, &st) < 0);
    o->open_source = open_prefixed;
    files[1] = local[1]; /* refused by the callback: its code, not a local open */
    CHECK_EQ(tfrec_bt_load(NULL, files, 2, o, &st), TFREC_E_NOT_FOUND);
}

/* A split load through open_source counts from the indexes beside the
 * files, read through the callback as well (as NAME.idx); a stale index
 * there counts nothing and the file is read instead. */
static void test_open_source_indexes(void)
{
    cb_load c;
    cb_load_init(&c, "cb_idx");
    const char **local = c.local, **files = c.files;
    for (int i = 0; i < 2; i++)
        CHECK_EQ(tfrec_index_file(local[i], NULL), TFREC_OK);
    tfrec_bt_load_options o = c.o;
    o.num_tasks = 2;
    tfrec_bt_load_stats st = TFREC_BT_LOAD_STATS_INIT;
    CHECK_EQ(tfrec_bt_load(NULL, files, 2, &o, &st), TFREC_OK);
    CHECK_EQ(st.total_source, TFREC_BT_TOTAL_INDEXES);
    CHECK_EQ(st.files_indexed, 2);
    CHECK_EQ(st.total_records, 7);
    CHECK(st.share_begin == 0 && st.share_end == 3 && st.records_read == 3);

    /* the second file grows by one record: its index no longer tiles it */
    char more[640];
    snprintf(more, sizeof more, "%s.more", local[1]);
    tfrec_writer *w = NULL;
    CHECK_EQ(tfrec_writer_open(&w, more, NULL), TFREC_OK);
    CHECK_EQ(tfrec_writer_write(w, (const uint8_t *)"extra", 5), TFREC_OK);
    CHECK_EQ(tfrec_writer_close(w), TFREC_OK);
    tfrec_writer_free(w);
    FILE *in = fopen(more, "rb"), *out = fopen(local[1], "ab");
    CHECK(in && out);
    char buf[256];
    size_t n;
    while (in && out && (n = fread(buf, 1, sizeof buf, in)) > 0)
        CHECK_EQ(fwrite(buf, 1, n, out), n);
    if (in)
        fclose(in);
    if (out)
        CHECK_EQ(fclose(out), 0);
    remove(more);
    st.struct_size = sizeof st;
    CHECK_EQ(tfrec_bt_load(NULL, files, 2, &o, &st), TFREC_OK);
    CHECK_EQ(st.files_indexed, 1);
    CHECK_EQ(st.files_counted, 1);
    CHECK_EQ(st.total_records, 8);
}

/* Options and stats as an older program (built when the structs ended
 * earlier) and a newer one (fields this library does not know) pass them. */
typedef struct old_options { /* the layout up to start_index */
    size_t struct_size;
    const char *row_prefix, *column;
    uint64_t num_records, start_index;
} old_options;

typedef struct old_stats {
    size_t struct_size;
    uint64_t records_read;
    uint64_t canary; /* where bytes_read is today: must not be written */
} old_stats;

static void test_growable_structs(void)
{
    static const int counts[] = { 8 };
    const char **files = make_files("abi", counts, 1);

    tfrec_bt_load_options o = { 0 };
    CHECK_EQ(tfrec_bt_load(NULL, files, 1, &o, NULL), TFREC_E_INVALID);
    CHECK(strstr(tfrec_last_errmsg(), "TFREC_BT_LOAD_OPTIONS_INIT"));
    tfrec_bt_load_stats zero_stats = { 0 };
    CHECK_EQ(tfrec_bt_load(NULL, files, 1, NULL, &zero_stats), TFREC_E_INVALID);
    CHECK(strstr(tfrec_last_errmsg(), "TFREC_BT_LOAD_STATS_INIT"));

    /* an older, shorter layout: later fields take their defaults */
    old_options old = { sizeof old, "x_", NULL, 0, 3 };
    struct {
        old_stats s;
        uint64_t after;
    } out = { { sizeof(old_stats), 0, 0xdeadbeef }, 0x5a5a };
    out.s.struct_size = offsetof(old_stats, canary);
    CHECK_EQ(tfrec_bt_load(NULL, files, 1, (const tfrec_bt_load_options *)&old,
                           (tfrec_bt_load_stats *)&out.s),
             TFREC_OK);
    CHECK_EQ(out.s.records_read, 5);
    CHECK(out.s.canary == 0xdeadbeef && out.after == 0x5a5a);
    CHECK_EQ(out.s.struct_size, offsetof(old_stats, canary));

    /* a newer, longer layout: fine while the unknown tail is zero */
    struct {
        tfrec_bt_load_options o;
        uint64_t future;
    } newer;
    memset(&newer, 0, sizeof newer);
    newer.o.struct_size = sizeof newer;
    newer.o.start_index = 1;
    tfrec_bt_load_stats st;
    tfrec_bt_load_stats_init(&st);
    CHECK_EQ(tfrec_bt_load(NULL, files, 1, &newer.o, &st), TFREC_OK);
    CHECK_EQ(st.records_read, 7);
    newer.future = 1;
    CHECK_EQ(tfrec_bt_load(NULL, files, 1, &newer.o, &st), TFREC_E_UNSUPPORTED);
    CHECK(strstr(tfrec_last_errmsg(), "newer version"));

    tfrec_bt_load_options_init(&o);
    CHECK_EQ(o.struct_size, sizeof o);
    o.key_width = 21;
    CHECK_EQ(tfrec_bt_load(NULL, files, 1, &o, NULL), TFREC_E_INVALID);
}

/* Load task t of n over files with the given counts; the rows it wrote. */
static fake *load_task(const char **files, int nfiles, uint64_t num_records, uint32_t t, uint32_t n,
                       uint64_t start, tfrec_bt_load_stats *st, int *rc)
{
    fake *f = calloc(1, sizeof *f);
    f->refuse_from = -1;
    tfrec_bt_writer *w = open_writer(f);
    tfrec_bt_load_options o = TFREC_BT_LOAD_OPTIONS_INIT;
    o.row_prefix = "train_";
    o.num_records = num_records;
    o.task_index = t;
    o.num_tasks = n;
    o.start_index = start;
    tfrec_bt_load_stats_init(st);
    *rc = tfrec_bt_load(w, files, (size_t)nfiles, &o, st);
    tfrec_bt_writer_free(w);
    return f;
}

/* The union of every task's rows is the one-call load, each row once, in
 * order when the tasks are taken by index; the shares are balanced. */
static void test_tasks_cover_the_load_once(void)
{
    static const int counts[] = { 13, 0, 9, 21 }; /* 43 records */
    const char **files = make_files("tasks", counts, 4);
    static const uint32_t task_counts[] = { 1, 2, 4, 5, 43, 50 };
    for (size_t c = 0; c < sizeof task_counts / sizeof *task_counts; c++) {
        uint32_t n = task_counts[c];
        uint64_t next = 0;
        for (uint32_t t = 0; t < n; t++) {
            tfrec_bt_load_stats st;
            int rc;
            fake *f = load_task(files, 4, 0, t, n, 0, &st, &rc);
            CHECK_EQ(rc, TFREC_OK);
            CHECK_EQ(st.total_records, n > 1 ? 43 : 0);
            CHECK_EQ(st.share_begin, next);
            /* one task is the plain load: to the end of the input */
            if (n == 1)
                CHECK_EQ(st.share_end, UINT64_MAX);
            uint64_t size = (n > 1 ? st.share_end : 43) - st.share_begin;
            CHECKF(size == 43 / n || size == 43 / n + 1, "%u tasks: task %u has %llu", n, t,
                   (unsigned long long)size);
            CHECK_EQ(st.records_read, size);
            CHECK_EQ(f->nrows, size);
            CHECK_EQ(st.next_index, st.share_begin + size);
            for (size_t i = 0; i < f->nrows; i++, next++) {
                char want[48], val[32];
                snprintf(want, sizeof want, "train_%010llu", (unsigned long long)next);
                snprintf(val, sizeof val, "value-%llu", (unsigned long long)next);
                CHECKF(!strcmp(f->keys[i], want) && !strcmp(f->values[i], val),
                       "%u tasks, task %u: %s = %s, want %s", n, t, f->keys[i], f->values[i], want);
            }
            CHECK_EQ(st.input_left, 0);
            free(f);
        }
        CHECK_EQ(next, 43);
    }
}

/* num_records given: the total is not counted, the keys keep its width,
 * the last task alone says whether input is left. */
static void test_tasks_with_num_records(void)
{
    static const int counts[] = { 10, 10, 10 };
    const char **files = make_files("tasks_n", counts, 3);
    uint64_t next = 0;
    for (uint32_t t = 0; t < 3; t++) {
        tfrec_bt_load_stats st;
        int rc;
        fake *f = load_task(files, 3, 25, t, 3, 0, &st, &rc);
        CHECK_EQ(rc, TFREC_OK);
        CHECK_EQ(st.total_source, TFREC_BT_TOTAL_GIVEN);
        CHECK_EQ(st.files_counted + st.files_indexed, 0);
        for (size_t i = 0; i < f->nrows; i++, next++) {
            char want[48];
            snprintf(want, sizeof want, "train_%02llu", (unsigned long long)next);
            CHECKF(!strcmp(f->keys[i], want), "task %u: %s, want %s", t, f->keys[i], want);
        }
        CHECK_EQ(st.input_left, t == 2);
        free(f);
    }
    CHECK_EQ(next, 25);
}

/* Counting: from fresh indexes without reading, else by reading; whole
 * files before the share are not opened when their counts are known. */
static void test_tasks_count_and_skip_files(void)
{
    static const int counts[] = { 10, 10, 10, 10 };
    const char **files = make_files("tasks_c", counts, 4);
    tfrec_bt_load_stats st;
    int rc;
    fake *f = load_task(files, 4, 0, 3, 4, 0, &st, &rc);
    CHECK_EQ(rc, TFREC_OK);
    CHECK_EQ(st.total_source, TFREC_BT_TOTAL_READ);
    CHECK_EQ(st.files_counted, 4);
    CHECK_EQ(st.files_skipped, 3);
    CHECK_EQ(st.records_skipped, 30);
    CHECK(f->nrows == 10 && !strcmp(f->keys[0], "train_0000000030"));
    free(f);

    for (int i = 0; i < 4; i++)
        CHECK_EQ(tfrec_index_file(files[i], NULL), TFREC_OK);
    f = load_task(files, 4, 0, 2, 4, 0, &st, &rc);
    CHECK_EQ(rc, TFREC_OK);
    CHECK_EQ(st.total_source, TFREC_BT_TOTAL_INDEXES);
    CHECK_EQ(st.files_indexed, 4);
    CHECK_EQ(st.files_skipped, 2);
    CHECK(f->nrows == 10 && !strcmp(f->keys[0], "train_0000000020"));
    free(f);

    /* num_records given: the fresh indexes still let the task pass over
     * files; a resume point (start_index) inside the share is honoured */
    f = load_task(files, 4, 40, 1, 2, 33, &st, &rc);
    CHECK_EQ(rc, TFREC_OK);
    CHECK_EQ(st.files_skipped, 3);
    CHECK_EQ(st.records_skipped, 33);
    CHECK(f->nrows == 7 && !strcmp(f->keys[0], "train_33") && !strcmp(f->keys[6], "train_39"));
    CHECK_EQ(st.next_index, 40);
    free(f);

    /* a resume point at the share's end: nothing read, nothing written */
    f = load_task(files, 4, 40, 0, 2, 20, &st, &rc);
    CHECK_EQ(rc, TFREC_OK);
    CHECK(f->nrows == 0 && st.records_read == 0 && st.next_index == 20);
    free(f);
}

static int stop_now(void *ctx, const tfrec_bt_load_progress *p)
{
    int *calls = ctx;
    (*calls)++;
    return !p->done && *calls >= 2; /* the poll before the file goes on */
}

/* The progress callback is asked while counting, and stopping there ends
 * the load before anything is written (a large file is polled within). */
static void test_tasks_counting_can_be_stopped(void)
{
    static const int counts[] = { 9000 };
    const char **files = make_files("tasks_stop", counts, 1);
    fake *f = calloc(1, sizeof *f);
    f->refuse_from = -1;
    tfrec_bt_writer *w = open_writer(f);
    tfrec_bt_load_options o = TFREC_BT_LOAD_OPTIONS_INIT;
    o.num_tasks = 2;
    o.task_index = 1;
    o.progress_interval = -1;
    int calls = 0;
    o.progress = stop_now;
    o.progress_ctx = &calls;
    tfrec_bt_load_stats st = TFREC_BT_LOAD_STATS_INIT;
    CHECK_EQ(tfrec_bt_load(w, files, 1, &o, &st), TFREC_E_STATE);
    CHECK(strstr(tfrec_last_errmsg(), "while counting the records of"));
    CHECK(strstr(tfrec_last_errmsg(), "tasks_stop-0"));
    /* the poll before the file, one after 4096 records, the final report */
    CHECK_EQ(calls, 3);
    CHECK(f->nrows == 0 && st.records_read == 0 && st.next_index == 0);
    tfrec_bt_writer_free(w);
    free(f);
}

/* Bad task identities and unreadable input are errors naming the cause. */
static void test_tasks_refused(void)
{
    static const int counts[] = { 4 };
    const char **files = make_files("tasks_bad", counts, 1);
    tfrec_bt_load_stats st;
    int rc;
    fake *f = load_task(files, 1, 0, 4, 4, 0, &st, &rc);
    CHECK_EQ(rc, TFREC_E_INVALID);
    CHECK(strstr(tfrec_last_errmsg(), "task index 4"));
    CHECK_EQ(f->nrows, 0);
    free(f);
    const char *missing[] = { files[0], harness_path("tasks_no_such_file") };
    f = load_task(missing, 2, 0, 0, 2, 0, &st, &rc);
    CHECK(rc < 0);
    CHECK(strstr(tfrec_last_errmsg(), "tasks_no_such_file"));
    CHECK_EQ(f->nrows, 0);
    free(f);
    const char *stdin_files[] = { "-" };
    f = load_task(stdin_files, 1, 0, 0, 2, 0, &st, &rc);
    CHECK_EQ(rc, TFREC_E_INVALID);
    CHECK(strstr(tfrec_last_errmsg(), "standard input"));
    free(f);
}

TESTS(TEST(test_reference_keys_over_all_files), TEST(test_num_records_start_index_reversed),
      TEST(test_progress_and_cancel), TEST(test_corrupt_input_named),
      TEST(test_refused_rows_stop_the_resume_point), TEST(test_dry_run),
      TEST(test_growable_structs), TEST(test_rows_not_sent_are_counted),
      TEST(test_num_records_before_the_end_is_reported), TEST(test_open_source_callback),
      TEST(test_open_source_indexes), TEST(test_tasks_cover_the_load_once),
      TEST(test_tasks_with_num_records), TEST(test_tasks_count_and_skip_files),
      TEST(test_tasks_refused), TEST(test_tasks_counting_can_be_stopped))

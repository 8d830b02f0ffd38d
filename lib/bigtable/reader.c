/* Reader setup: the row set from the options, the plan that splits it into
 * parallel scans and worker shards, and the ReadRows request of each call. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bigtable/client_internal.h"
#include "bigtable/plan_internal.h"
#include "bigtable/reader_internal.h"
#include "bigtable/shuffle.h"
#include "util/struct_size.h"

#define MAX_PARALLEL 256
#define MAX_CONNECTIONS 8
#define MAX_SHUFFLE_RANGES 65536

TFREC_DEFINE_STRUCT_INIT(tfrec_bt_read_options)
TFREC_DEFINE_STRUCT_INIT(tfrec_bt_read_stats)
TFREC_DEFINE_STRUCT_INIT(tfrec_bt_row)
TFREC_DEFINE_STRUCT_INIT(tfrec_bt_cell)

/* RE2 pattern matching exactly the bytes p[0..n): punctuation escaped,
 * bytes outside printable ASCII as \xHH. */
static char *quote_re(const void *p, size_t n)
{
    const unsigned char *s = p;
    char *q = malloc(4 * n + 1), *o = q;
    if (!q)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = s[i];
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
            ch == '_')
            *o++ = (char)ch;
        else if (ch > 0x20 && ch < 0x7f) {
            *o++ = '\\';
            *o++ = (char)ch;
        } else {
            o += sprintf(o, "\\x%02X", ch);
        }
    }
    *o = 0;
    return q;
}

int tfrec_bt_scan_start(tfrec_bt_reader *r, bt_scan *s)
{
    if (s->m.have_last && tfrec_bt_rowset_after(&s->set, s->m.last_key, s->m.last_len))
        return tfrec_fail(&r->err, TFREC_E_NOMEM, "out of memory");
    if (!s->set.n || (r->rows_limit > 0 && r->returned >= r->rows_limit)) {
        s->state = SCAN_DONE; /* never send an empty row set: it means every row */
        return TFREC_OK;
    }
    Google__Bigtable__V2__RowSet set = GOOGLE__BIGTABLE__V2__ROW_SET__INIT;
    Google__Bigtable__V2__RowRange *rr, **rp;
    ProtobufCBinaryData *kp;
    int rc = tfrec_bt_rowset_to_proto(&s->set, &set, &rr, &rp, &kp);

    Google__Bigtable__V2__RowFilter f[3], chain = GOOGLE__BIGTABLE__V2__ROW_FILTER__INIT;
    Google__Bigtable__V2__RowFilter__Chain links = GOOGLE__BIGTABLE__V2__ROW_FILTER__CHAIN__INIT;
    Google__Bigtable__V2__RowFilter *parts[3];
    size_t nparts = 0;
    char *qfam = NULL, *qcol = NULL;
    for (int i = 0; i < 3; i++)
        google__bigtable__v2__row_filter__init(&f[i]);
    /* One column: a column range [column, column] of the family, not two
     * regular expressions, which cost the server far more per cell (see
     * bench/RESULTS.md, "1 KB rows: where the CPU goes"). */
    Google__Bigtable__V2__ColumnRange col;
    google__bigtable__v2__column_range__init(&col);
    if (r->family && r->column) {
        col.family_name = r->family;
        col.start_qualifier_case =
            GOOGLE__BIGTABLE__V2__COLUMN_RANGE__START_QUALIFIER_START_QUALIFIER_CLOSED;
        col.start_qualifier_closed =
            (ProtobufCBinaryData){ strlen(r->column), (uint8_t *)r->column };
        col.end_qualifier_case =
            GOOGLE__BIGTABLE__V2__COLUMN_RANGE__END_QUALIFIER_END_QUALIFIER_CLOSED;
        col.end_qualifier_closed = col.start_qualifier_closed;
        f[nparts].filter_case = GOOGLE__BIGTABLE__V2__ROW_FILTER__FILTER_COLUMN_RANGE_FILTER;
        f[nparts].column_range_filter = &col;
        parts[nparts] = &f[nparts];
        nparts++;
    } else if (r->family) {
        if (!(qfam = quote_re(r->family, strlen(r->family))))
            rc = TFREC_E_NOMEM;
        f[nparts].filter_case = GOOGLE__BIGTABLE__V2__ROW_FILTER__FILTER_FAMILY_NAME_REGEX_FILTER;
        f[nparts].family_name_regex_filter = qfam;
        parts[nparts] = &f[nparts];
        nparts++;
    }
    if (r->column && !r->family) {
        if (!(qcol = quote_re(r->column, strlen(r->column))))
            rc = TFREC_E_NOMEM;
        f[nparts].filter_case =
            GOOGLE__BIGTABLE__V2__ROW_FILTER__FILTER_COLUMN_QUALIFIER_REGEX_FILTER;
        f[nparts].column_qualifier_regex_filter =
            (ProtobufCBinaryData){ qcol ? strlen(qcol) : 0, (uint8_t *)qcol };
        parts[nparts] = &f[nparts];
        nparts++;
    }
    if (!r->all_versions) {
        f[nparts].filter_case =
            GOOGLE__BIGTABLE__V2__ROW_FILTER__FILTER_CELLS_PER_COLUMN_LIMIT_FILTER;
        f[nparts].cells_per_column_limit_filter = 1;
        parts[nparts] = &f[nparts];
        nparts++;
    }
    links.n_filters = nparts;
    links.filters = parts;
    chain.filter_case = GOOGLE__BIGTABLE__V2__ROW_FILTER__FILTER_CHAIN;
    chain.chain = &links;
    Google__Bigtable__V2__RowFilter *filter = nparts == 1 ? parts[0] : nparts ? &chain : NULL;

    /* Rows without the column: the union of the column's cells with one
     * cell of any column, its value stripped, so that every row comes back */
    Google__Bigtable__V2__RowFilter mark[2], mchain = GOOGLE__BIGTABLE__V2__ROW_FILTER__INIT,
                                             both = GOOGLE__BIGTABLE__V2__ROW_FILTER__INIT;
    Google__Bigtable__V2__RowFilter *mparts[2], *bparts[2];
    Google__Bigtable__V2__RowFilter__Chain mlinks = GOOGLE__BIGTABLE__V2__ROW_FILTER__CHAIN__INIT;
    Google__Bigtable__V2__RowFilter__Interleave blinks =
        GOOGLE__BIGTABLE__V2__ROW_FILTER__INTERLEAVE__INIT;
    if (r->rows_without_column && filter) {
        google__bigtable__v2__row_filter__init(&mark[0]);
        google__bigtable__v2__row_filter__init(&mark[1]);
        mark[0].filter_case = GOOGLE__BIGTABLE__V2__ROW_FILTER__FILTER_CELLS_PER_ROW_LIMIT_FILTER;
        mark[0].cells_per_row_limit_filter = 1;
        mark[1].filter_case = GOOGLE__BIGTABLE__V2__ROW_FILTER__FILTER_STRIP_VALUE_TRANSFORMER;
        mark[1].strip_value_transformer = 1;
        mparts[0] = &mark[0];
        mparts[1] = &mark[1];
        mlinks.n_filters = 2;
        mlinks.filters = mparts;
        mchain.filter_case = GOOGLE__BIGTABLE__V2__ROW_FILTER__FILTER_CHAIN;
        mchain.chain = &mlinks;
        bparts[0] = filter;
        bparts[1] = &mchain;
        blinks.n_filters = 2;
        blinks.filters = bparts;
        both.filter_case = GOOGLE__BIGTABLE__V2__ROW_FILTER__FILTER_INTERLEAVE;
        both.interleave = &blinks;
        filter = &both;
    }

    Google__Bigtable__V2__ReadRowsRequest req = GOOGLE__BIGTABLE__V2__READ_ROWS_REQUEST__INIT;
    req.table_name = r->name;
    req.app_profile_id = r->app_profile;
    req.rows = &set;
    req.filter = filter; /* one filter alone: a chain needs two or more links */
    if (r->rows_limit > 0)
        req.rows_limit = r->rows_limit - r->returned;
    uint8_t *buf = NULL;
    size_t n = 0;
    if (!rc) {
        n = google__bigtable__v2__read_rows_request__get_packed_size(&req);
        if (!(buf = malloc(n ? n : 1)))
            rc = TFREC_E_NOMEM;
        else
            google__bigtable__v2__read_rows_request__pack(&req, buf);
    }
    free(rr);
    free(rp);
    free(kp);
    free(qfam);
    free(qcol);
    if (rc) {
        free(buf);
        return tfrec_fail(&r->err, TFREC_E_NOMEM, "out of memory");
    }
    r->last_event_ms = tfrec_bt_now_ms();
    if (!r->first_call_ms)
        r->first_call_ms = r->last_event_ms;
    if (!r->reached)
        r->connect_attempts++;
    s->auth_epoch = r->ra.epoch;
    s->call = r->t.start(r->t.ctx, s, s->index, buf, n, &r->err);
    free(buf);
    if (!s->call)
        return r->err.code ? r->err.code : TFREC_E_NETWORK;
    tfrec_bt_merger_drop_partial(&s->m); /* a fresh start of the row in progress */
    s->state = SCAN_RUNNING;
    s->pausing = 0;
    r->running++;
    r->st.streams++;
    return TFREC_OK;
}

/* A read split into shards over ranges must cut where every other worker
 * cuts: from a shared plan or given split keys, or at the caller's risk. */
static int check_sharding(tfrec_bt_reader *r, const tfrec_bt_read_options *o, const bt_rowset *set)
{
    size_t shards = o->num_shards > 0 ? (size_t)o->num_shards : 1;
    if (o->plan) {
        if (o->split_keys && o->shuffle_ranges < 2)
            return tfrec_fail(&r->err, TFREC_E_INVALID,
                              "read options: plan and split_keys are exclusive");
        return tfrec_bt_plan_check(o->plan, r->name, set, shards, &r->err);
    }
    if (shards > 1 && !set->is_keys && !o->split_keys && !o->sample_split)
        return tfrec_fail(&r->err, TFREC_E_INVALID,
                          "shard %d of %zu needs a split plan shared by every worker (read "
                          "options .plan, made once by tfrec_bt_plan_create) or .split_keys: "
                          "workers that each ask SampleRowKeys may cut the rows at different "
                          "keys and lose or repeat rows (.sample_split = 1 accepts that risk)",
                          o->shard_index, shards);
    return TFREC_OK;
}

/* The plan of a range read: a copy of the one given, else one made here
 * (from split_keys, from this worker's samples, or one shard). */
static int own_plan(tfrec_bt_reader *r, const tfrec_bt_read_options *o, const bt_rowset *set,
                    size_t shards, bt_samples *samples)
{
    if (o->plan)
        return tfrec_bt_plan_parse(&r->plan, o->plan->text, o->plan->text_len)
                   ? tfrec_fail(&r->err, TFREC_E_NOMEM, "out of memory")
                   : TFREC_OK;
    int rc = TFREC_OK;
    if (shards > 1 && set->n && o->split_keys)
        rc = tfrec_bt_samples_from_keys(o->split_keys, o->split_key_lens, o->n_split_keys, samples);
    else if (shards > 1 && set->n)
        rc = r->t.sample(r->t.ctx, samples, &r->err);
    if (rc)
        return rc == TFREC_E_NOMEM ? tfrec_fail(&r->err, rc, "out of memory") : rc;
    r->st.samples = samples->n;
    return tfrec_bt_plan_make(&r->plan, r->name, set, samples, shards,
                              o->split_keys ? "split_keys" : "sample", &r->err);
}

/* Cut points of a shuffled share: split_keys, else evenly spaced keys. */
static int shuffle_samples(const tfrec_bt_read_options *o, const bt_rowset *share, size_t pieces,
                           bt_samples *samples)
{
    tfrec_bt_samples_free(samples); /* never SampleRowKeys: they change between runs */
    if (o->split_keys)
        return tfrec_bt_samples_from_keys(o->split_keys, o->split_key_lens, o->n_split_keys,
                                          samples);
    return tfrec_bt_shuffle_cut_keys(tfrec_bt_rowset_lo(share), tfrec_bt_rowset_hi(share), pieces,
                                     samples);
}

/* The scans of this worker: its share of the row set (a key list: by
 * count; ranges: by the plan), cut into parallel_scans pieces at the
 * split keys or the table's samples, or into shuffle_ranges pieces read
 * in a seeded order. */
static int plan(tfrec_bt_reader *r, const tfrec_bt_read_options *o, bt_rowset *set)
{
    size_t streams = o->parallel_scans > 0 ? (size_t)o->parallel_scans : 1;
    int shuffle = o->shuffle_ranges > 1;
    size_t par = shuffle ? o->shuffle_ranges : streams;
    size_t shards = o->num_shards > 0 ? (size_t)o->num_shards : 1;
    bt_samples samples = { 0 };
    bt_rowset share = { 0 }, *parts = NULL;
    r->shard = (size_t)o->shard_index;
    int rc = check_sharding(r, o, set);
    if (!rc && set->is_keys) { /* by count: the same in every worker */
        bt_rowset *all;
        rc = tfrec_bt_plan_pieces(set, &samples, shards, &all);
        if (!rc) {
            share = all[r->shard];
            for (size_t i = 0; i < shards; i++)
                if (i != r->shard)
                    tfrec_bt_rowset_free(&all[i]);
            free(all);
        }
    } else if (!rc) {
        rc = own_plan(r, o, set, shards, &samples);
        if (!rc && tfrec_bt_plan_piece(r->plan, r->shard, &share))
            rc = TFREC_E_NOMEM;
    }
    /* the share into par pieces, at boundaries strictly inside it */
    if (!rc && shuffle && !share.is_keys && share.n) {
        rc = shuffle_samples(o, &share, par, &samples);
    } else if (!rc && par > 1 && !share.is_keys && share.n && !samples.n) {
        if (o->split_keys)
            rc = tfrec_bt_samples_from_keys(o->split_keys, o->split_key_lens, o->n_split_keys,
                                            &samples);
        else
            rc = r->t.sample(r->t.ctx, &samples, &r->err);
        r->st.samples = samples.n;
    }
    if (!rc)
        rc = tfrec_bt_plan_pieces(&share, &samples, par, &parts);
    tfrec_bt_samples_free(&samples);
    tfrec_bt_rowset_free(&share);
    if (rc)
        return r->err.code ? r->err.code
                           : tfrec_fail(&r->err, rc, "out of memory planning the scan");
    r->scans = calloc(par, sizeof *r->scans);
    if (!r->scans)
        rc = tfrec_fail(&r->err, TFREC_E_NOMEM, "out of memory");
    for (size_t p = 0; p < par; p++) {
        if (!rc) { /* an empty one ends at once */
            bt_scan *s = &r->scans[r->nscans];
            s->index = r->nscans++;
            s->set = parts[p];
            tfrec_bt_merger_init(&s->m, r->max_row_bytes);
        } else {
            tfrec_bt_rowset_free(&parts[p]);
        }
    }
    free(parts);
    r->st.ranges = r->nscans;
    if (!rc && shuffle) {
        if (!(r->order = malloc(r->nscans * sizeof *r->order)))
            return tfrec_fail(&r->err, TFREC_E_NOMEM, "out of memory");
        tfrec_bt_shuffle_order(r->order, r->nscans, o->shuffle_seed, o->shuffle_epoch);
        r->max_active = streams;
        r->unordered = 1;
    }
    return rc;
}

static int check_options(const tfrec_bt_read_options *o)
{
    if (o->parallel_scans < 0 || o->parallel_scans > MAX_PARALLEL)
        return tfrec_fail(NULL, TFREC_E_INVALID, "parallel_scans %d: must be 1 to %d",
                          o->parallel_scans, MAX_PARALLEL);
    int shards = o->num_shards > 0 ? o->num_shards : 1;
    if (o->num_shards < 0 || o->num_shards > 65536 || o->shard_index < 0 ||
        o->shard_index >= shards)
        return tfrec_fail(NULL, TFREC_E_INVALID,
                          "shard_index %d of num_shards %d: need 0 <= shard_index < num_shards",
                          o->shard_index, o->num_shards);
    if (o->keys && o->n_keys && !o->key_lens)
        return tfrec_fail(NULL, TFREC_E_INVALID, "read options: keys without key_lens");
    if (o->split_keys && o->n_split_keys && !o->split_key_lens)
        return tfrec_fail(NULL, TFREC_E_INVALID, "read options: split_keys without lengths");
    if (o->shuffle_ranges > MAX_SHUFFLE_RANGES)
        return tfrec_fail(NULL, TFREC_E_INVALID, "shuffle_ranges %zu: at most %d",
                          o->shuffle_ranges, MAX_SHUFFLE_RANGES);
    if (o->ranges == NULL && o->n_ranges)
        return tfrec_fail(NULL, TFREC_E_INVALID, "read options: n_ranges without ranges");
    return TFREC_OK;
}

int tfrec_bt_reader_open_transport(tfrec_bt_reader **out, const bt_read_transport *t,
                                   const char *table_name, const char *app_profile,
                                   const tfrec_bt_read_options *opts)
{
    *out = NULL;
    tfrec_bt_read_options o;
    int rc = TFREC_STRUCT_IN(tfrec_bt_read_options, &o, opts, NULL);
    if (!rc)
        rc = check_options(&o);
    tfrec_bt_reader *r = rc ? NULL : calloc(1, sizeof *r);
    if (!r) {
        t->destroy(t->ctx);
        return rc ? rc : tfrec_fail(NULL, TFREC_E_NOMEM, "out of memory");
    }
    r->t = *t;
    r->have_t = 1;
    tfrec_bt_read_stats_init(&r->st);
    snprintf(r->name, sizeof r->name, "%s", table_name);
    r->rows_limit = o.rows_limit;
    r->all_versions = o.all_versions;
    r->unordered = o.unordered;
    r->max_buffer = o.max_buffer_bytes ? o.max_buffer_bytes : (size_t)64 << 20;
    r->max_row_bytes = o.max_row_bytes;
    r->retry_timeout_ms = o.retry_timeout_ms ? o.retry_timeout_ms : 600000;
    r->stall_ms = 3600000;
    r->connect_timeout_ms =
        r->retry_timeout_ms < BT_CONNECT_TIMEOUT_MS ? r->retry_timeout_ms : BT_CONNECT_TIMEOUT_MS;
    r->backoff = (bt_backoff){ o.retry_initial_ms > 0 ? o.retry_initial_ms : 100, 2000, 1.5,
                               (uint64_t)(uintptr_t)r ^ (uint64_t)tfrec_bt_now_ms() };
    if ((app_profile && !(r->app_profile = strdup(app_profile))) ||
        (o.family && !(r->family = strdup(o.family))) ||
        (o.column && !(r->column = strdup(o.column))))
        rc = tfrec_fail(&r->err, TFREC_E_NOMEM, "out of memory");
    bt_rowset set = { 0 };
    if (!rc)
        rc = tfrec_bt_rowset_from_options(&set, &o, &r->err);
    if (!rc)
        rc = plan(r, &o, &set);
    tfrec_bt_rowset_free(&set);
    if (rc) {
        tfrec_fail(NULL, rc, "could not set up a ReadRows scan of %s: %s", table_name, r->err.msg);
        tfrec_bt_reader_free(r);
        return rc;
    }
    *out = r;
    return TFREC_OK;
}

int tfrec_bt_reader_open_flags(tfrec_bt_reader **out, tfrec_bt_client *c, const char *table,
                               const tfrec_bt_read_options *opts, int flags)
{
    if (out)
        *out = NULL;
    if (!out || !c || !table || !*table)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_bt_reader_open needs a client and a table");
    tfrec_bt_read_options o;
    int rc = TFREC_STRUCT_IN(tfrec_bt_read_options, &o, opts, NULL);
    if (rc)
        return rc;
    char name[2 * BT_NAME_MAX];
    if (tfrec_bt_table_name(c, table, name, sizeof name))
        return tfrec_fail(NULL, TFREC_E_INVALID, "table name %s is too long", table);
    int par = o.parallel_scans > 1 ? o.parallel_scans : 1;
    bt_read_transport t;
    tfrec_err err = { 0 };
    rc = tfrec_bt_read_transport_grpc(&t, c, name, par < MAX_CONNECTIONS ? par : MAX_CONNECTIONS,
                                      &err);
    if (rc)
        return tfrec_fail(NULL, rc, "%s", err.msg);
    rc = tfrec_bt_reader_open_transport(out, &t, name, c->app_profile, &o);
    if (!rc) { /* servers send progress at least this often on a live stream */
        (*out)->stall_ms = c->rpc_timeout_ms;
        (*out)->rows_without_column = (flags & BT_READ_ROWS_WITHOUT_COLUMN) && o.family && o.column;
    }
    return rc;
}

int tfrec_bt_reader_open(tfrec_bt_reader **out, tfrec_bt_client *c, const char *table,
                         const tfrec_bt_read_options *opts)
{
    return tfrec_bt_reader_open_flags(out, c, table, opts, 0);
}

void tfrec_bt_reader_stop(tfrec_bt_reader *r)
{
    if (r)
        atomic_store_explicit(&r->stop, 1, memory_order_relaxed); /* the next wait sees it */
}

const char *tfrec_bt_reader_errmsg(const tfrec_bt_reader *r)
{
    return r ? r->err.msg : tfrec_last_errmsg();
}

int tfrec_bt_reader_stats_get(const tfrec_bt_reader *r, tfrec_bt_read_stats *stats)
{
    if (!r)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_bt_reader_stats_get: NULL reader");
    return TFREC_STRUCT_OUT(tfrec_bt_read_stats, stats, &r->st, NULL);
}

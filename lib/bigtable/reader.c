/* Reader setup: the row set from the options, the plan that splits it into
 * parallel scans and worker shards, and the ReadRows request of each call. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bigtable/client_internal.h"
#include "bigtable/reader_internal.h"
#include "util/struct_size.h"

#define MAX_PARALLEL 256
#define MAX_CONNECTIONS 8

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
    if (r->family) {
        if (!(qfam = quote_re(r->family, strlen(r->family))))
            rc = TFREC_E_NOMEM;
        f[nparts].filter_case = GOOGLE__BIGTABLE__V2__ROW_FILTER__FILTER_FAMILY_NAME_REGEX_FILTER;
        f[nparts].family_name_regex_filter = qfam;
        parts[nparts] = &f[nparts];
        nparts++;
    }
    if (r->column) {
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

    Google__Bigtable__V2__ReadRowsRequest req = GOOGLE__BIGTABLE__V2__READ_ROWS_REQUEST__INIT;
    req.table_name = r->name;
    req.app_profile_id = r->app_profile;
    req.rows = &set;
    if (nparts == 1)
        req.filter = parts[0]; /* a chain needs two or more links */
    else if (nparts)
        req.filter = &chain;
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

/* Split points given by the caller, as samples weighted by position. */
static int given_samples(const tfrec_bt_read_options *o, bt_samples *out)
{
    out->v = calloc(o->n_split_keys ? o->n_split_keys : 1, sizeof *out->v);
    out->n = 0;
    if (!out->v)
        return TFREC_E_NOMEM;
    for (size_t i = 0; i < o->n_split_keys; i++) {
        bt_sample *s = &out->v[out->n++];
        s->offset_bytes = (int64_t)i;
        s->key.n = o->split_key_lens ? o->split_key_lens[i] : 0;
        if (s->key.n && !(s->key.p = malloc(s->key.n)))
            return TFREC_E_NOMEM;
        if (s->key.n)
            memcpy(s->key.p, o->split_keys[i], s->key.n);
    }
    return TFREC_OK;
}

/* The scans of this worker: its parallel_scans pieces of the row set cut
 * into num_shards * parallel_scans. */
static int plan(tfrec_bt_reader *r, const tfrec_bt_read_options *o, bt_rowset *set)
{
    size_t par = o->parallel_scans > 0 ? (size_t)o->parallel_scans : 1;
    size_t shards = o->num_shards > 0 ? (size_t)o->num_shards : 1;
    size_t pieces = par * shards;
    bt_samples samples = { 0 };
    int rc = TFREC_OK;
    if (pieces > 1 && !set->is_keys && set->n) {
        if (o->split_keys)
            rc = given_samples(o, &samples);
        else
            rc = r->t.sample(r->t.ctx, &samples, &r->err);
        if (rc) {
            tfrec_bt_samples_free(&samples);
            return rc == TFREC_E_NOMEM ? tfrec_fail(&r->err, rc, "out of memory") : rc;
        }
        r->st.samples = samples.n;
    }
    bt_rowset *parts;
    rc = tfrec_bt_plan(set, &samples, pieces, &parts);
    tfrec_bt_samples_free(&samples);
    if (rc)
        return tfrec_fail(&r->err, rc, "out of memory planning the scan");
    r->scans = calloc(par, sizeof *r->scans);
    if (!r->scans)
        rc = tfrec_fail(&r->err, TFREC_E_NOMEM, "out of memory");
    size_t first = (size_t)o->shard_index * par;
    for (size_t p = 0; p < pieces; p++) {
        if (!rc && p >= first && p < first + par) { /* an empty one ends at once */
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

int tfrec_bt_reader_open(tfrec_bt_reader **out, tfrec_bt_client *c, const char *table,
                         const tfrec_bt_read_options *opts)
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
    if (!rc) /* servers send progress at least this often on a live stream */
        (*out)->stall_ms = c->rpc_timeout_ms;
    return rc;
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

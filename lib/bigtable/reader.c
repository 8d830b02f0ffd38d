/* Row iterator over ReadRows: one streaming call at a time, chunks merged
 * into rows, a broken stream resumed after the last row returned. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bigtable/call.h"
#include "bigtable/client_internal.h"
#include "bigtable/retry.h"
#include "bigtable/row_merger.h"
#include "util/struct_size.h"

#define READ_ROWS "/google.bigtable.v2.Bigtable/ReadRows"
#define MAX_ATTEMPTS 6

typedef struct keybuf {
    uint8_t *p;
    size_t n;
    int set;
} keybuf;

struct tfrec_bt_reader {
    tfrec_err err;
    tfrec_bt_client *c;
    char name[2 * BT_NAME_MAX];
    char params[3 * BT_NAME_MAX + 64];
    keybuf start, end; /* [start, end), end unset = open */
    int64_t rows_limit;
    int all_versions;
    char *family;
    grpc_completion_queue *cq;
    bt_call *call; /* running call, NULL between calls */
    Google__Bigtable__V2__ReadRowsResponse *resp;
    size_t chunk;
    bt_merger m;
    int64_t returned;
    int done, failures;
};

static int set_key(keybuf *k, const void *p, size_t n)
{
    k->p = malloc(n ? n : 1);
    if (!k->p)
        return TFREC_E_NOMEM;
    if (n)
        memcpy(k->p, p, n);
    k->n = n;
    k->set = 1;
    return TFREC_OK;
}

/* Smallest key greater than every key with this prefix; unset if none. */
static int prefix_end(keybuf *k, const uint8_t *p, size_t n)
{
    while (n && p[n - 1] == 0xff)
        n--;
    if (!n)
        return TFREC_OK;
    int rc = set_key(k, p, n);
    if (!rc)
        k->p[n - 1]++;
    return rc;
}

/* RE2 pattern matching exactly `family`. */
static char *quote_family(const char *f)
{
    char *q = malloc(2 * strlen(f) + 1), *o = q;
    if (!q)
        return NULL;
    for (; *f; f++) {
        if (!((*f >= 'a' && *f <= 'z') || (*f >= 'A' && *f <= 'Z') || (*f >= '0' && *f <= '9') ||
              *f == '_'))
            *o++ = '\\';
        *o++ = *f;
    }
    *o = 0;
    return q;
}

static int start_call(tfrec_bt_reader *r)
{
    Google__Bigtable__V2__RowRange range;
    google__bigtable__v2__row_range__init(&range); /* the INIT macro trips -Wmissing-braces */
    Google__Bigtable__V2__RowRange *ranges[1] = { &range };
    Google__Bigtable__V2__RowSet set = GOOGLE__BIGTABLE__V2__ROW_SET__INIT;
    set.n_row_ranges = 1;
    set.row_ranges = ranges;
    if (r->m.have_last) { /* resume after the last row handed out */
        range.start_key_case = GOOGLE__BIGTABLE__V2__ROW_RANGE__START_KEY_START_KEY_OPEN;
        range.start_key_open.data = r->m.last_key;
        range.start_key_open.len = r->m.last_len;
    } else if (r->start.set) {
        range.start_key_case = GOOGLE__BIGTABLE__V2__ROW_RANGE__START_KEY_START_KEY_CLOSED;
        range.start_key_closed.data = r->start.p;
        range.start_key_closed.len = r->start.n;
    }
    if (r->end.set) {
        range.end_key_case = GOOGLE__BIGTABLE__V2__ROW_RANGE__END_KEY_END_KEY_OPEN;
        range.end_key_open.data = r->end.p;
        range.end_key_open.len = r->end.n;
    }

    Google__Bigtable__V2__RowFilter fam = GOOGLE__BIGTABLE__V2__ROW_FILTER__INIT;
    Google__Bigtable__V2__RowFilter latest = GOOGLE__BIGTABLE__V2__ROW_FILTER__INIT;
    Google__Bigtable__V2__RowFilter chain = GOOGLE__BIGTABLE__V2__ROW_FILTER__INIT;
    Google__Bigtable__V2__RowFilter__Chain links = GOOGLE__BIGTABLE__V2__ROW_FILTER__CHAIN__INIT;
    Google__Bigtable__V2__RowFilter *parts[2];
    size_t nparts = 0;
    char *quoted = NULL;
    if (r->family) {
        quoted = quote_family(r->family);
        if (!quoted)
            return tfrec_fail(&r->err, TFREC_E_NOMEM, "out of memory");
        fam.filter_case = GOOGLE__BIGTABLE__V2__ROW_FILTER__FILTER_FAMILY_NAME_REGEX_FILTER;
        fam.family_name_regex_filter = quoted;
        parts[nparts++] = &fam;
    }
    if (!r->all_versions) {
        latest.filter_case = GOOGLE__BIGTABLE__V2__ROW_FILTER__FILTER_CELLS_PER_COLUMN_LIMIT_FILTER;
        latest.cells_per_column_limit_filter = 1;
        parts[nparts++] = &latest;
    }
    links.n_filters = nparts;
    links.filters = parts;
    chain.filter_case = GOOGLE__BIGTABLE__V2__ROW_FILTER__FILTER_CHAIN;
    chain.chain = &links;

    Google__Bigtable__V2__ReadRowsRequest req = GOOGLE__BIGTABLE__V2__READ_ROWS_REQUEST__INIT;
    req.table_name = r->name;
    req.app_profile_id = r->c->app_profile;
    req.rows = &set;
    if (nparts == 1)
        req.filter = parts[0]; /* a chain needs two or more links */
    else if (nparts)
        req.filter = &chain;
    if (r->rows_limit > 0)
        req.rows_limit = r->rows_limit - r->returned;

    size_t n = google__bigtable__v2__read_rows_request__get_packed_size(&req);
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf) {
        free(quoted);
        return tfrec_fail(&r->err, TFREC_E_NOMEM, "out of memory");
    }
    google__bigtable__v2__read_rows_request__pack(&req, buf);
    free(quoted);
    grpc_slice s = grpc_slice_new(buf, n, free);
    /* A scan may run long: its deadline is generous, stalls end it anyway. */
    r->call = tfrec_bt_call_start(r->c->data, r->cq, READ_ROWS, r->params, &s, 1,
                                  r->c->rpc_timeout_ms * 30, r, &r->err);
    grpc_slice_unref(s);
    return r->call ? TFREC_OK : r->err.code;
}

TFREC_DEFINE_STRUCT_INIT(tfrec_bt_read_options)
TFREC_DEFINE_STRUCT_INIT(tfrec_bt_row)
TFREC_DEFINE_STRUCT_INIT(tfrec_bt_cell)

int tfrec_bt_reader_open(tfrec_bt_reader **out, tfrec_bt_client *c, const char *table,
                         const tfrec_bt_read_options *opts)
{
    if (out)
        *out = NULL;
    if (!out || !c || !table || !*table)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_bt_reader_open needs a client and a table");
    tfrec_bt_read_options obuf;
    int rc = TFREC_STRUCT_IN(tfrec_bt_read_options, &obuf, opts, NULL);
    if (rc)
        return rc;
    opts = &obuf;
    tfrec_bt_reader *r = calloc(1, sizeof *r);
    if (!r)
        return tfrec_fail(NULL, TFREC_E_NOMEM, "out of memory");
    r->c = c;
    tfrec_bt_merger_init(&r->m, opts->max_row_bytes);
    rc = tfrec_bt_table_name(c, table, r->name, sizeof r->name) ? TFREC_E_INVALID : TFREC_OK;
    char enc[3 * BT_NAME_MAX];
    tfrec_bt_url_encode(r->name, enc, sizeof enc);
    snprintf(r->params, sizeof r->params, "table_name=%s", enc);
    if (!rc && opts->prefix) {
        size_t pl = opts->prefix_len ? opts->prefix_len : strlen(opts->prefix);
        if (pl)
            rc = set_key(&r->start, opts->prefix, pl);
        if (!rc)
            rc = prefix_end(&r->end, opts->prefix, pl);
    } else if (!rc) {
        if (opts->start_key && opts->start_key_len)
            rc = set_key(&r->start, opts->start_key, opts->start_key_len);
        if (!rc && opts->end_key && opts->end_key_len)
            rc = set_key(&r->end, opts->end_key, opts->end_key_len);
    }
    r->rows_limit = opts->rows_limit;
    r->all_versions = opts->all_versions;
    if (!rc && opts->family && !(r->family = strdup(opts->family)))
        rc = TFREC_E_NOMEM;
    if (rc) {
        tfrec_fail(NULL, rc, "could not set up a ReadRows scan of %s", table);
        tfrec_bt_reader_free(r);
        return rc;
    }
    r->cq = grpc_completion_queue_create_for_next(NULL);
    *out = r;
    return TFREC_OK;
}

static void stop_call(tfrec_bt_reader *r)
{
    bt_event ev;
    if (!r->call)
        return;
    tfrec_bt_call_cancel(r->call);
    while (tfrec_bt_cq_next(r->cq, tfrec_bt_now_ms() + 60000, &ev) == 1) {
        int done = ev.kind == BT_EV_DONE;
        tfrec_bt_event_release(&ev);
        if (done)
            break;
    }
    r->call = NULL;
}

static void drop_resp(tfrec_bt_reader *r)
{
    if (r->resp)
        google__bigtable__v2__read_rows_response__free_unpacked(r->resp, NULL);
    r->resp = NULL;
    r->chunk = 0;
}

int tfrec_bt_reader_next(tfrec_bt_reader *r, tfrec_bt_row *row)
{
    if (!r)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_bt_reader_next: NULL reader");
    if (TFREC_STRUCT_CHECK_OUT(tfrec_bt_row, row, NULL))
        return TFREC_E_INVALID;
    if (r->err.code)
        return r->err.code;
    for (;;) {
        while (r->resp && r->chunk < r->resp->n_chunks) {
            tfrec_err merr; /* the merger's message, to be prefixed with the call */
            merr.msg[0] = 0;
            int rc = tfrec_bt_merger_feed(&r->m, r->resp->chunks[r->chunk++], &merr);
            if (rc < 0) {
                stop_call(r);
                return tfrec_fail(&r->err, rc, "ReadRows on %s at %s: %s", r->name, r->c->endpoint,
                                  merr.msg);
            }
            if (rc == 1) {
                r->returned++;
                r->failures = 0;
                return TFREC_STRUCT_OUT(tfrec_bt_row, row, &r->m.row, NULL);
            }
        }
        drop_resp(r);
        if (r->done || (r->rows_limit > 0 && r->returned >= r->rows_limit && !r->m.in_row)) {
            stop_call(r);
            return TFREC_END;
        }
        if (!r->call) {
            int rc = start_call(r);
            if (rc)
                return rc;
        }
        bt_event ev;
        if (tfrec_bt_cq_next(r->cq, tfrec_bt_now_ms() + r->c->rpc_timeout_ms * 31, &ev) != 1) {
            stop_call(r);
            return tfrec_fail(&r->err, TFREC_E_NETWORK, "ReadRows on %s stalled", r->name);
        }
        if (ev.kind == BT_EV_MESSAGE) {
            r->resp = google__bigtable__v2__read_rows_response__unpack(NULL, ev.len, ev.data);
            tfrec_bt_event_release(&ev);
            if (!r->resp) {
                stop_call(r);
                return tfrec_fail(&r->err, TFREC_E_PARSE, "unparsable ReadRows response from %s",
                                  r->c->endpoint);
            }
            continue;
        }
        r->call = NULL;
        if (ev.code == BT_OK) {
            tfrec_err merr;
            int rc = tfrec_bt_merger_finish(&r->m, &merr);
            if (rc)
                return tfrec_fail(&r->err, rc, "ReadRows on %s at %s: %s", r->name, r->c->endpoint,
                                  merr.msg);
            r->done = 1;
            continue;
        }
        if (tfrec_bt_retryable(ev.code, ev.details) && ++r->failures < MAX_ATTEMPTS) {
            tfrec_bt_merger_drop_partial(&r->m);
            struct timespec ts = { 0, 100000000L << (r->failures < 3 ? r->failures : 3) };
            nanosleep(&ts, NULL);
            continue;
        }
        return tfrec_fail(&r->err, ev.code == BT_NOT_FOUND ? TFREC_E_NOT_FOUND : TFREC_E_NETWORK,
                          "ReadRows on %s at %s: %s: %s", r->name, r->c->endpoint,
                          tfrec_bt_code_name(ev.code), ev.details);
    }
}

const char *tfrec_bt_reader_errmsg(const tfrec_bt_reader *r)
{
    return r ? r->err.msg : tfrec_last_errmsg();
}

void tfrec_bt_reader_free(tfrec_bt_reader *r)
{
    if (!r)
        return;
    stop_call(r);
    drop_resp(r);
    if (r->cq)
        tfrec_bt_cq_destroy(r->cq);
    tfrec_bt_merger_free(&r->m);
    free(r->start.p);
    free(r->end.p);
    free(r->family);
    free(r);
}

/* The bulk writer's row bookkeeping: the send queue, the state of every row
 * (for the acknowledged prefix that --resume relies on), the failed rows and
 * the figures callers query. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bigtable/writer_internal.h"
#include "util/struct_size.h"
#include "util/vec.h"

TFREC_DEFINE_STRUCT_INIT(tfrec_bt_writer_options)
TFREC_DEFINE_STRUCT_INIT(tfrec_bt_writer_stats)

/* ------------------------------------------------------------ bookkeeping */

static void mark(tfrec_bt_writer *w, uint64_t seq, int state)
{
    w->win[w->win_off + (size_t)(seq - w->win_base)] = (uint8_t)state;
    while (w->win_off < w->win_len && w->win[w->win_off] == ROW_ACKED) {
        w->win_off++;
        w->win_base++;
    }
    w->st.acked_prefix = w->win_base;
}

int tfrec_bt_w_track(tfrec_bt_writer *w)
{
    if (w->win_off > 4096 && w->win_off * 2 > w->win_len) {
        memmove(w->win, w->win + w->win_off, w->win_len - w->win_off);
        w->win_len -= w->win_off;
        w->win_off = 0;
    }
    if (tfrec_vec_reserve(&w->win, &w->win_cap, w->win_len + 1, 4096))
        return TFREC_E_NOMEM;
    w->win[w->win_len++] = ROW_PENDING;
    return TFREC_OK;
}

static void resolve(tfrec_bt_writer *w, bt_entry *e, int state)
{
    mark(w, e->seq, state);
    w->buffered -= e->enc_len;
    tfrec_bt_entry_unref(e);
}

void tfrec_bt_w_ack(tfrec_bt_writer *w, bt_entry *e)
{
    w->st.rows_acked++;
    w->st.bytes_acked += e->payload;
    resolve(w, e, ROW_ACKED);
}

void tfrec_bt_w_fail(tfrec_bt_writer *w, bt_entry *e, int code, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* Out of memory here only loses this row's details, not its count. */
    (void)tfrec_vec_reserve(&w->failed, &w->failed_cap, w->nfailed + 1, 64);
    if (w->nfailed < w->failed_cap) {
        failed_row *f = &w->failed[w->nfailed++];
        f->key = malloc(e->key_len ? e->key_len : 1);
        if (f->key)
            memcpy(f->key, e->key, e->key_len);
        f->key_len = f->key ? e->key_len : 0;
        f->seq = e->seq;
        f->index = e->index;
        f->code = code;
        f->message = strdup(msg);
    }
    w->st.rows_failed++;
    resolve(w, e, ROW_FAILED);
}

void tfrec_bt_w_queue_push_back(tfrec_bt_writer *w, bt_entry *e)
{
    e->next = NULL;
    if (w->q_tail)
        w->q_tail->next = e;
    else
        w->q_head = e;
    w->q_tail = e;
    w->q_rows++;
    w->q_bytes += e->enc_len;
    w->q_mutations += e->ncells;
}

void tfrec_bt_w_queue_push_front(tfrec_bt_writer *w, bt_entry *e)
{
    e->next = w->q_head;
    w->q_head = e;
    if (!w->q_tail)
        w->q_tail = e;
    w->q_rows++;
    w->q_bytes += e->enc_len;
    w->q_mutations += e->ncells;
}

bt_entry *tfrec_bt_w_queue_pop(tfrec_bt_writer *w)
{
    bt_entry *e = w->q_head;
    w->q_head = e->next;
    if (!w->q_head)
        w->q_tail = NULL;
    w->q_rows--;
    w->q_bytes -= e->enc_len;
    w->q_mutations -= e->ncells;
    e->next = NULL;
    return e;
}

static int by_seq(const void *a, const void *b)
{
    const failed_row *x = a, *y = b;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

int tfrec_bt_w_report(tfrec_bt_writer *w)
{
    if (!w->nfailed && !w->st.rows_failed)
        return TFREC_OK;
    /* Rows fail in retry order; callers want them in put order. */
    qsort(w->failed, w->nfailed, sizeof *w->failed, by_seq);
    const failed_row *f = w->nfailed ? &w->failed[0] : NULL;
    return tfrec_fail(&w->err, TFREC_E_NETWORK,
                      "%llu of %llu rows not written; first: row '%.*s' (index %llu): %s",
                      (unsigned long long)w->st.rows_failed, (unsigned long long)w->st.rows_put,
                      f ? (int)(f->key_len > 200 ? 200 : f->key_len) : 0,
                      f ? (const char *)f->key : "", f ? (unsigned long long)f->index : 0ULL,
                      f && f->message ? f->message : "");
}

int tfrec_bt_writer_stats_get(const tfrec_bt_writer *w, tfrec_bt_writer_stats *stats)
{
    if (!w)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_bt_writer_stats_get: NULL writer");
    return TFREC_STRUCT_OUT(tfrec_bt_writer_stats, stats, &w->st, NULL);
}

const char *tfrec_bt_writer_errmsg(const tfrec_bt_writer *w)
{
    return w ? w->err.msg : tfrec_last_errmsg();
}
int64_t tfrec_bt_writer_timestamp(const tfrec_bt_writer *w)
{
    return w ? w->ts : 0;
}
size_t tfrec_bt_writer_failed_count(const tfrec_bt_writer *w)
{
    return w ? w->nfailed : 0;
}

int tfrec_bt_writer_failed_row(const tfrec_bt_writer *w, size_t i, const uint8_t **key,
                               size_t *key_len, uint64_t *index, int *grpc_code,
                               const char **message)
{
    if (!w || i >= w->nfailed)
        return TFREC_E_INVALID;
    const failed_row *f = &w->failed[i];
    if (key)
        *key = f->key;
    if (key_len)
        *key_len = f->key_len;
    if (index)
        *index = f->index;
    if (grpc_code)
        *grpc_code = f->code;
    if (message)
        *message = f->message ? f->message : "";
    return TFREC_OK;
}

void tfrec_bt_w_free_rows(tfrec_bt_writer *w)
{
    for (size_t i = 0; i < w->nfailed; i++) {
        free(w->failed[i].key);
        free(w->failed[i].message);
    }
    free(w->failed);
    free(w->win);
}

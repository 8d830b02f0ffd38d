/* Internal: the bulk writer's state, shared by writer.c (batching, calls,
 * retries) and writer_rows.c (row bookkeeping: queue, acknowledged prefix,
 * failed rows, the figures the caller can query). */
#ifndef TFREC_BT_WRITER_INTERNAL_H
#define TFREC_BT_WRITER_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "bigtable/entry.h"
#include "bigtable/retry.h"
#include "bigtable/transport.h"
#include "bigtable/writer_testing.h"
#include "util/errors.h"

#define MAX_MUTATIONS 99999 /* Bigtable takes fewer than 100,000 per request */
#define MAX_KEY 4096
#define MAX_QUALIFIER 16384

enum { ROW_PENDING = 0, ROW_ACKED = 1, ROW_FAILED = 2 };

typedef struct failed_row {
    uint64_t seq;
    uint8_t *key;
    size_t key_len;
    uint64_t index;
    int code;
    char *message;
} failed_row;

typedef struct wcall {
    struct tfrec_bt_writer *w;
    size_t n;
    size_t req_bytes;
    bt_entry **e;
    uint8_t *seen;       /* a result for entry i has arrived */
    unsigned auth_epoch; /* w->ra.epoch when the call started */
} wcall;

struct tfrec_bt_writer {
    tfrec_err err;
    bt_transport tr;
    tfrec_bt_writer_options o;
    tfrec_bt_status_hook status_hook; /* tests only (writer_testing.h) */
    void *status_hook_ctx;
    size_t batch_bytes; /* current limit, lowered after a too-large refusal */
    int64_t ts;         /* cell timestamp, -1 = server time */
    char *family;
    uint8_t *hdr; /* table_name (+ app_profile_id) fields */
    size_t hdr_len;

    bt_entry *q_head, *q_tail; /* ready to send, put order (retries in front) */
    size_t q_rows, q_bytes, q_mutations;
    bt_entry *backoff; /* waiting for their retry time */
    int inflight;
    size_t buffered; /* encoded bytes of unresolved rows */

    uint8_t *win; /* ROW_* of seq win_base + i - win_off */
    size_t win_off, win_len, win_cap;
    uint64_t win_base, next_seq;

    failed_row *failed;
    size_t nfailed, failed_cap;
    char broken_reason[384]; /* set: stop sending, fail what is left */
    int closed;
    /* tfrec_bt_writer_stop, from a signal handler or another thread: a
     * lock-free atomic is safe for both (volatile sig_atomic_t is not for
     * a second thread). */
    atomic_int stop_requested;
    int64_t stop_deadline_ms; /* when calls in flight get cancelled; 0: not stopping */
    int cancelled;            /* calls in flight were cancelled */
    bt_backoff bo;
    bt_reauth ra; /* one token refresh per run of UNAUTHENTICATED */
    tfrec_bt_writer_stats st;
};

/* writer_rows.c */
int tfrec_bt_w_track(tfrec_bt_writer *w); /* room for the next row's state */
void tfrec_bt_w_ack(tfrec_bt_writer *w, bt_entry *e);
void tfrec_bt_w_fail(tfrec_bt_writer *w, bt_entry *e, int code, const char *fmt, ...)
    TFREC_PRINTF(4, 5);
void tfrec_bt_w_queue_push_back(tfrec_bt_writer *w, bt_entry *e);
void tfrec_bt_w_queue_push_front(tfrec_bt_writer *w, bt_entry *e);
bt_entry *tfrec_bt_w_queue_pop(tfrec_bt_writer *w);
int tfrec_bt_w_report(tfrec_bt_writer *w);     /* TFREC_OK or the failure summary */
void tfrec_bt_w_free_rows(tfrec_bt_writer *w); /* failed list and row states */

#endif

/* Internal: the reader's state, shared by reader.c (setup, requests) and
 * reader_next.c (the event loop).
 *
 * A reader scans one or more ranges ("scans"), each with its own ReadRows
 * stream, chunk merger and queue of received messages, all on one
 * transport (one completion queue). A scan's stream is (re)started only
 * when everything it received has been merged, so the merger's last
 * committed key is exactly where a resumed stream must begin. */
#ifndef TFREC_BT_READER_INTERNAL_H
#define TFREC_BT_READER_INTERNAL_H

#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "bigtable/read_transport.h"
#include "bigtable/retry.h"
#include "bigtable/row_merger.h"
#include "bigtable/rowset.h"

enum {
    SCAN_IDLE,    /* no call: start one when drained and past retry_at */
    SCAN_RUNNING, /* a call is streaming */
    SCAN_EOS,     /* the server ended the call OK: finish once drained */
    SCAN_DONE     /* every row of the range returned */
};

typedef struct bt_scan {
    size_t index; /* stream number for the transport */
    int state;
    bt_rowset set; /* what is left to read, narrowed on resume */
    bt_merger m;
    void *call;
    int pausing; /* we cancelled the call: the buffer was full */
    int stalled; /* we cancelled the call: nothing arrived for stall_ms */
    bt_event *q; /* received messages not yet merged (a ring) */
    size_t qhead, qlen, qcap, qbytes;
    /* The message being merged (kind 0: none) and its next chunk's offset;
     * the merger's rows point into it (row_merger.h). */
    bt_event cur;
    size_t pos;
    unsigned failures;   /* consecutive retryable failures */
    int64_t fail_since;  /* monotonic ms of the first of them */
    int64_t retry_at;    /* monotonic ms: not before */
    unsigned auth_epoch; /* r->ra.epoch when its call started */
    int begun;           /* its first call was started (shuffled scans) */
} bt_scan;

struct tfrec_bt_reader {
    tfrec_err err;
    bt_read_transport t;
    int have_t;
    char name[1024];
    char *app_profile;
    char *family, *column;
    int all_versions;
    int64_t rows_limit, returned;
    int unordered;
    size_t max_buffer;
    int64_t retry_timeout_ms, stall_ms;
    bt_backoff backoff;
    size_t max_row_bytes;
    /* With family and column: rows lacking that column come back too (an
     * extra empty-valued cell marks every row; tfrec_bt_export). */
    int rows_without_column;
    /* The plan of a range read (NULL for a key list): given, or made here
     * from split_keys, the samples, or as one shard; and this worker's share. */
    struct tfrec_bt_plan *plan;
    size_t shard;
    bt_scan *scans;
    size_t nscans, cur;
    /* Shuffled scans: the order scans start in, at most max_active
     * begun and not done at a time (NULL: all at once, in key order). */
    size_t *order;
    size_t max_active;
    int running;  /* calls without their DONE yet */
    bt_reauth ra; /* one token refresh per run of UNAUTHENTICATED */
    tfrec_bt_read_stats st;
    /* Until the server is reached (a message, a status that is not
     * tfrec_bt_unreachable, or a connection up), failures are bounded by
     * connect_timeout_ms from the first call, not retry_timeout_ms: a wrong
     * address is reported in seconds. */
    int reached;
    int64_t connect_timeout_ms, first_call_ms;
    int64_t last_event_ms; /* a call started or an event came: stalls count from it */
    unsigned connect_attempts;
    /* tfrec_bt_reader_stop: set by another thread or a signal handler; a
     * lock-free atomic is safe for both (volatile sig_atomic_t is not for
     * threads: TSan reported the race with a stopping thread). */
    atomic_int stop;
};

/* tfrec_bt_reader_open with internal flags. */
#define BT_READ_ROWS_WITHOUT_COLUMN 1
int tfrec_bt_reader_open_flags(tfrec_bt_reader **out, tfrec_bt_client *c, const char *table,
                               const tfrec_bt_read_options *opts, int flags);

/* Start scan s's next ReadRows call for what is left of its row set;
 * SCAN_DONE instead when nothing is left. */
int tfrec_bt_scan_start(tfrec_bt_reader *r, bt_scan *s);

#endif

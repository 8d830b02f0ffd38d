/* Internal: the split plan handle (include/tfrec/bigtable_plan.h), shared
 * by plan.c (making, printing, parsing), the reader (a worker's share) and
 * the export (its part file). */
#ifndef TFREC_BT_PLAN_INTERNAL_H
#define TFREC_BT_PLAN_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "bigtable/planner.h"
#include "bigtable/rowset.h"
#include "tfrec/bigtable_plan.h"
#include "util/errors.h"

#define BT_PLAN_MAGIC "tfrec-bigtable-split-plan"
#define BT_PLAN_VERSION 1
#define BT_PLAN_MAX_SHARDS 65536
#define BT_PLAN_MAX_RANGES 1000000
#define BT_PLAN_MAX_KEY 4096
#define BT_PLAN_MAX_TEXT ((size_t)64 << 20)

struct tfrec_bt_plan {
    char *table;      /* projects/P/instances/I/tables/T */
    bt_rowset set;    /* ranges, normal form */
    size_t shards;    /* >= 1 */
    bt_key *cuts;     /* shards - 1, never decreasing, non-empty */
    char source[16];  /* "sample" or "split_keys" */
    uint64_t nsource; /* samples or split keys planned from */
    char *text;       /* the file, sealed */
    size_t text_len;
    uint32_t id; /* CRC32C of text */
};

/* A plan of `shards` shares of set (ranges) cut from samples (split keys
 * as samples weighted by position when source is "split_keys"). */
int tfrec_bt_plan_make(tfrec_bt_plan **out, const char *table_name, const bt_rowset *set,
                       const bt_samples *samples, size_t shards, const char *source,
                       tfrec_err *err);

/* (Re)print p's text from its fields, sealed, and set its id. */
int tfrec_bt_plan_print(tfrec_bt_plan *p);

/* Shard i's rows: the plan's row set within [cut i-1, cut i). */
int tfrec_bt_plan_piece(const tfrec_bt_plan *p, size_t i, bt_rowset *out);

/* Whether a read of table_name over set split num_shards ways may use p;
 * TFREC_E_INVALID (err names the difference) if not. */
int tfrec_bt_plan_check(const tfrec_bt_plan *p, const char *table_name, const bt_rowset *set,
                        size_t num_shards, tfrec_err *err);

/* Key bytes as text for messages: printable ASCII as is, others \xHH,
 * cut at cap; "" shown as `empty`. */
const char *tfrec_bt_key_show(const uint8_t *p, size_t n, const char *empty, char *buf, size_t cap);

#endif

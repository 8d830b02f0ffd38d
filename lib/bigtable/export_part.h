/* Internal: the part file an export task writes next to its outputs
 * (include/tfrec/bigtable_export.h), printed and parsed in the line format
 * of plan_text.h:
 *
 *   tfrec-bigtable-export-part 1
 *   table projects/P/instances/I/tables/T
 *   plan 0123abcd               (the id of the plan the task ran)
 *   ranges 1
 *   range train_ train`         (the row set the plan cuts)
 *   shards 3
 *   task 1
 *   share train_0001667 train_0003334   (its window; "-": open)
 *   rows 1667
 *   bytes 123456
 *   skipped 0
 *   outputs 1
 *   output train-00001-of-00003 130128 1667 89abcdef   (name, size, records, crc32c)
 *   crc32c ...
 *
 * Output names are the file names alone: they live in the part's directory. */
#ifndef TFREC_BT_EXPORT_PART_H
#define TFREC_BT_EXPORT_PART_H

#include <stddef.h>
#include <stdint.h>

#include "bigtable/plan_text.h"
#include "bigtable/rowset.h"

#define BT_PART_MAGIC "tfrec-bigtable-export-part"
#define BT_PART_MAX_OUTPUTS 256
#define BT_PART_MAX_TEXT ((size_t)64 << 20)

typedef struct bt_part_output {
    char *name;
    uint64_t size, records;
    uint32_t crc;
} bt_part_output;

typedef struct bt_part {
    char *table;
    uint32_t plan_id;
    bt_rowset set;
    size_t shards, task;
    bt_key lo, hi; /* empty: open */
    uint64_t rows, bytes, skipped;
    bt_part_output *out;
    size_t nout;
} bt_part;

/* Append the part's text (sealed) to t. */
void tfrec_bt_part_print(const bt_part *p, bt_text *t);
/* Parse one part file; TFREC_E_PARSE with why filled otherwise. */
int tfrec_bt_part_parse(bt_part *p, const void *text, size_t len, char *why, size_t whycap);
void tfrec_bt_part_free(bt_part *p);

#endif

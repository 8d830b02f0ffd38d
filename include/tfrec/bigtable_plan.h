/* libtfrec: split plans, so that the workers of a sharded Bigtable read or
 * export cover every row exactly once.
 *
 * A read split into num_shards worker shares (tfrec_bt_read_options
 * shard_index / num_shards) must cut the row set at the same keys in every
 * worker. SampleRowKeys cannot promise that: the server answers from its
 * current tablets (the emulator at random), so two workers that each ask
 * may cut at different keys and lose or repeat rows without any error. A
 * plan is made once, from SampleRowKeys or from given split keys, saved as
 * a small checksummed text file, and handed to every worker:
 *
 *   tfrec_bt_read_options o = TFREC_BT_READ_OPTIONS_INIT;
 *   o.prefix = "train_";
 *   o.num_shards = 8;
 *   tfrec_bt_plan *p;
 *   tfrec_bt_plan_create(&p, client, "imagenet", &o);   // once
 *   tfrec_bt_plan_write(p, NULL, "gs://bucket/plan.txt");
 *   ...
 *   tfrec_bt_plan_read(&p, NULL, "gs://bucket/plan.txt");                  // in each worker
 *   o.plan = p;
 *   o.shard_index = i;
 *   tfrec_bt_reader_open(&r, client, "imagenet", &o);
 *
 * The plan records the table (its full name), the row set (prefix, start /
 * end, ranges, normalised to half-open ranges) and the shard count it was
 * made for; a reader given a plan for another table, row set or count
 * refuses it (TFREC_E_INVALID naming the difference). A reader split into
 * shards with neither a plan nor split_keys refuses to start unless the
 * caller opts in with sample_split (see include/tfrec/bigtable.h).
 *
 * The file (version 1):
 *
 *   tfrec-bigtable-split-plan 1
 *   table projects/P/instances/I/tables/T
 *   ranges 1
 *   range train_ train`          (start, end of each range; "-": open)
 *   shards 3
 *   source sample 57             (or: source split_keys 2)
 *   cut train_0001667            (shards - 1 cuts, never decreasing)
 *   cut train_0003334
 *   crc32c 0123abcd              (CRC32C of every byte above)
 *
 * Keys are escaped: bytes outside '!'..'~' and '%' as %XX, "" as "-".
 * Shard i reads the row set's rows in [cut i-1, cut i) (the first from the
 * start, the last to the end). Parsing refuses a wrong checksum, a
 * truncated file, counts above the limits (65536 shards, 1,000,000 ranges,
 * 4 KiB keys, 64 MiB of text) and cuts that go down.
 */
#ifndef TFREC_BIGTABLE_PLAN_H
#define TFREC_BIGTABLE_PLAN_H

#include "common.h"

#include <stddef.h>
#include <stdint.h>

#include "bigtable.h"
#include "fs.h"

TFREC_BEGIN_DECLS

/* Plan opts->num_shards shares (at least 1) of the row set opts describes
 * (prefix, start_key / end_key, ranges; not a key list, which is split by
 * count and needs no plan) in table, from opts->split_keys when given,
 * else from the table's SampleRowKeys, balanced by the sampled offsets.
 * Shares may be empty when the table has fewer split points than shards.
 * On failure *out is NULL and tfrec_last_errmsg() says why. */
int tfrec_bt_plan_create(tfrec_bt_plan **out, tfrec_bt_client *c, const char *table,
                         const tfrec_bt_read_options *opts);

/* Parse a plan file's bytes (not kept). TFREC_E_PARSE with the reason
 * (and line) in tfrec_last_errmsg() for anything but a valid plan. */
int tfrec_bt_plan_parse(tfrec_bt_plan **out, const void *text, size_t len);
/* Read / write a plan file through file system fs (include/tfrec/fs.h;
 * NULL: tfrec_fs_default(), so a local path, gs:// or mem://). */
int tfrec_bt_plan_read(tfrec_bt_plan **out, const tfrec_fs *fs, const char *name);
int tfrec_bt_plan_write(const tfrec_bt_plan *p, const tfrec_fs *fs, const char *name);

/* The plan's file text (valid while p lives). */
int tfrec_bt_plan_text(const tfrec_bt_plan *p, const char **text, size_t *len);
/* The CRC32C of the text: what part files record as the plan they ran. */
uint32_t tfrec_bt_plan_id(const tfrec_bt_plan *p);
size_t tfrec_bt_plan_num_shards(const tfrec_bt_plan *p);
/* The full table name the plan was made for. */
const char *tfrec_bt_plan_table(const tfrec_bt_plan *p);
/* Bounds of shard i's window: rows in [start, end) of the row set
 * (start_len 0: from the start of the row set; end_len 0: to its end).
 * The pointers stay valid while p lives. */
int tfrec_bt_plan_shard(const tfrec_bt_plan *p, size_t i, tfrec_bt_range *out);

void tfrec_bt_plan_free(tfrec_bt_plan *p);

TFREC_END_DECLS
#endif

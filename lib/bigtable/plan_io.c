/* Split plans made against a table, and read from / written to files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bigtable/bt_files.h"
#include "bigtable/client_internal.h"
#include "bigtable/plan_internal.h"
#include "bigtable/read_transport.h"
#include "util/struct_size.h"

int tfrec_bt_plan_create(tfrec_bt_plan **out, tfrec_bt_client *c, const char *table,
                         const tfrec_bt_read_options *opts)
{
    if (out)
        *out = NULL;
    if (!out || !c || !table || !*table)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_bt_plan_create needs a client and a table");
    tfrec_bt_read_options o;
    int rc = TFREC_STRUCT_IN(tfrec_bt_read_options, &o, opts, NULL);
    if (rc)
        return rc;
    if (o.plan)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_bt_plan_create: options carry a plan");
    if (o.split_keys && o.n_split_keys && !o.split_key_lens)
        return tfrec_fail(NULL, TFREC_E_INVALID, "read options: split_keys without lengths");
    size_t shards = o.num_shards > 0 ? (size_t)o.num_shards : 1;
    char name[2 * BT_NAME_MAX];
    if (tfrec_bt_table_name(c, table, name, sizeof name))
        return tfrec_fail(NULL, TFREC_E_INVALID, "table name %s is too long", table);
    tfrec_err err = { 0 };
    bt_rowset set = { 0 };
    bt_samples samples = { 0 };
    rc = tfrec_bt_rowset_from_options(&set, &o, &err);
    if (!rc && set.is_keys)
        rc = tfrec_fail(&err, TFREC_E_INVALID,
                        "a key list is split by count in every worker alike: it needs no plan");
    const char *source = o.split_keys ? "split_keys" : "sample";
    if (!rc && o.split_keys) {
        if (tfrec_bt_samples_from_keys(o.split_keys, o.split_key_lens, o.n_split_keys, &samples))
            rc = tfrec_fail(&err, TFREC_E_NOMEM, "out of memory");
    } else if (!rc && shards > 1 && set.n) {
        bt_read_transport t;
        rc = tfrec_bt_read_transport_grpc(&t, c, name, 1, &err);
        if (!rc) {
            rc = t.sample(t.ctx, &samples, &err);
            t.destroy(t.ctx);
        }
    }
    if (!rc)
        rc = tfrec_bt_plan_make(out, name, &set, &samples, shards, source, &err);
    tfrec_bt_samples_free(&samples);
    tfrec_bt_rowset_free(&set);
    if (rc)
        return tfrec_fail(NULL, rc, "could not plan %zu shards of %s: %s", shards, name, err.msg);
    return TFREC_OK;
}

int tfrec_bt_plan_read(tfrec_bt_plan **out, const tfrec_fs *fs, const char *name)
{
    if (out)
        *out = NULL;
    if (!out || !name)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_bt_plan_read: NULL argument");
    char *text;
    size_t len;
    int rc = tfrec_fs_read_all(fs, name, BT_PLAN_MAX_TEXT, &text, &len);
    if (rc)
        return rc;
    rc = tfrec_bt_plan_parse(out, text, len);
    free(text);
    if (rc) {
        char why[TFREC_ERRMSG_MAX];
        snprintf(why, sizeof why, "%s", tfrec_last_errmsg());
        return tfrec_fail(NULL, rc, "%s: %s", name, why);
    }
    return TFREC_OK;
}

int tfrec_bt_plan_write(const tfrec_bt_plan *p, const tfrec_fs *fs, const char *name)
{
    if (!p || !name)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_bt_plan_write: NULL argument");
    return tfrec_bt_write_file(fs, name, p->text, p->text_len);
}

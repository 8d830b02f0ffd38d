/* Table admin: GetTable to detect a missing table or family with a clear
 * message, CreateTable / ModifyColumnFamilies when asked to create them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bigtable/call.h"
#include "bigtable/client_internal.h"
#include "bigtable/retry.h"
#include "google/bigtable/admin/v2/bigtable_table_admin.pb-c.h"

#define ADMIN "/google.bigtable.admin.v2.BigtableTableAdmin/"

typedef struct unary_result {
    int code;
    char details[384];
    uint8_t *data;
    size_t len;
} unary_result;

/* One admin call, waited for on a private queue. Fails only locally. */
static int unary_once(tfrec_bt_client *c, const char *method, const char *param_key,
                      const char *param_value, const ProtobufCMessage *req, unary_result *res)
{
    memset(res, 0, sizeof *res);
    grpc_channel *ch = tfrec_bt_admin_channel(c);
    if (!ch)
        return c->err.code;
    size_t n = protobuf_c_message_get_packed_size(req);
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf)
        return tfrec_fail(&c->err, TFREC_E_NOMEM, "out of memory");
    protobuf_c_message_pack(req, buf);
    grpc_slice s = grpc_slice_new(buf, n, free);

    char enc[3 * BT_NAME_MAX], params[3 * BT_NAME_MAX + 32], path[128];
    tfrec_bt_url_encode(param_value, enc, sizeof enc);
    snprintf(params, sizeof params, "%s=%s", param_key, enc);
    snprintf(path, sizeof path, ADMIN "%s", method);
    grpc_completion_queue *cq = grpc_completion_queue_create_for_next(NULL);
    /* Admin calls are small: a short deadline turns "nothing listening" into
     * a prompt, clear error instead of a long hang. */
    int64_t timeout = c->rpc_timeout_ms < 30000 ? c->rpc_timeout_ms : 30000;
    bt_call *call = tfrec_bt_call_start(ch, cq, path, params, &s, 1, timeout, NULL, &c->err);
    grpc_slice_unref(s);
    if (!call) {
        tfrec_bt_cq_destroy(cq);
        return c->err.code;
    }
    bt_event ev;
    for (;;) {
        if (tfrec_bt_cq_next(cq, tfrec_bt_now_ms() + timeout + 5000, &ev) != 1) {
            tfrec_bt_call_cancel(call);
            continue;
        }
        if (ev.kind == BT_EV_MESSAGE) {
            if (!res->data) {
                res->data = malloc(ev.len ? ev.len : 1);
                if (res->data)
                    memcpy(res->data, ev.data, ev.len);
                res->len = ev.len;
            }
            tfrec_bt_event_release(&ev);
            continue;
        }
        res->code = ev.code;
        snprintf(res->details, sizeof res->details, "%s", ev.details);
        break;
    }
    tfrec_bt_cq_destroy(cq);
    return TFREC_OK;
}

/* The call, and after UNAUTHENTICATED (an expired or revoked token) the
 * same call once more with a freshly fetched token. */
static int unary(tfrec_bt_client *c, const char *method, const char *param_key,
                 const char *param_value, const ProtobufCMessage *req, unary_result *res)
{
    int rc = unary_once(c, method, param_key, param_value, req, res);
    char why[512];
    if (rc || res->code != BT_UNAUTHENTICATED || !c->auth || tfrec_bt_reauth(c, why, sizeof why))
        return rc;
    free(res->data);
    return unary_once(c, method, param_key, param_value, req, res);
}

static int call_failed(tfrec_bt_client *c, const char *what, const char *name,
                       const unary_result *r)
{
    char hint[640];
    tfrec_bt_auth_hint(c, r->code, r->details, hint, sizeof hint);
    if (tfrec_bt_unreachable(r->code))
        return tfrec_fail(&c->err, TFREC_E_NETWORK,
                          "%s %s: cannot reach Bigtable at %s: %s: %.200s%s", what, name,
                          c->admin_endpoint, tfrec_bt_code_name(r->code), r->details, hint);
    return tfrec_fail(&c->err, r->code == BT_NOT_FOUND ? TFREC_E_NOT_FOUND : TFREC_E_NETWORK,
                      "%s %s: %s: %.200s%s", what, name, tfrec_bt_code_name(r->code), r->details,
                      hint);
}

static int create_table(tfrec_bt_client *c, const char *table, const char *family)
{
    Google__Bigtable__Admin__V2__GcRule gc = GOOGLE__BIGTABLE__ADMIN__V2__GC_RULE__INIT;
    gc.rule_case = GOOGLE__BIGTABLE__ADMIN__V2__GC_RULE__RULE_MAX_NUM_VERSIONS;
    gc.max_num_versions = 1; /* one version: retries and re-runs replace cells */
    Google__Bigtable__Admin__V2__ColumnFamily cf = GOOGLE__BIGTABLE__ADMIN__V2__COLUMN_FAMILY__INIT;
    cf.gc_rule = &gc;
    Google__Bigtable__Admin__V2__Table__ColumnFamiliesEntry fe =
        GOOGLE__BIGTABLE__ADMIN__V2__TABLE__COLUMN_FAMILIES_ENTRY__INIT;
    fe.key = (char *)family;
    fe.value = &cf;
    Google__Bigtable__Admin__V2__Table__ColumnFamiliesEntry *fes[1] = { &fe };
    Google__Bigtable__Admin__V2__Table t = GOOGLE__BIGTABLE__ADMIN__V2__TABLE__INIT;
    if (family) {
        t.n_column_families = 1;
        t.column_families = fes;
    }
    Google__Bigtable__Admin__V2__CreateTableRequest req =
        GOOGLE__BIGTABLE__ADMIN__V2__CREATE_TABLE_REQUEST__INIT;
    req.parent = c->instance_name;
    req.table_id = (char *)table;
    req.table = &t;
    unary_result r;
    int rc = unary(c, "CreateTable", "parent", c->instance_name, &req.base, &r);
    free(r.data);
    if (rc)
        return rc;
    if (r.code != BT_OK && r.code != BT_ALREADY_EXISTS)
        return call_failed(c, "creating table", table, &r);
    return TFREC_OK;
}

static int create_family(tfrec_bt_client *c, const char *name, const char *family)
{
    Google__Bigtable__Admin__V2__GcRule gc = GOOGLE__BIGTABLE__ADMIN__V2__GC_RULE__INIT;
    gc.rule_case = GOOGLE__BIGTABLE__ADMIN__V2__GC_RULE__RULE_MAX_NUM_VERSIONS;
    gc.max_num_versions = 1;
    Google__Bigtable__Admin__V2__ColumnFamily cf = GOOGLE__BIGTABLE__ADMIN__V2__COLUMN_FAMILY__INIT;
    cf.gc_rule = &gc;
    Google__Bigtable__Admin__V2__ModifyColumnFamiliesRequest__Modification m =
        GOOGLE__BIGTABLE__ADMIN__V2__MODIFY_COLUMN_FAMILIES_REQUEST__MODIFICATION__INIT;
    m.id = (char *)family;
    m.mod_case =
        GOOGLE__BIGTABLE__ADMIN__V2__MODIFY_COLUMN_FAMILIES_REQUEST__MODIFICATION__MOD_CREATE;
    m.create = &cf;
    Google__Bigtable__Admin__V2__ModifyColumnFamiliesRequest__Modification *ms[1] = { &m };
    Google__Bigtable__Admin__V2__ModifyColumnFamiliesRequest req =
        GOOGLE__BIGTABLE__ADMIN__V2__MODIFY_COLUMN_FAMILIES_REQUEST__INIT;
    req.name = (char *)name;
    req.n_modifications = 1;
    req.modifications = ms;
    unary_result r;
    int rc = unary(c, "ModifyColumnFamilies", "name", name, &req.base, &r);
    free(r.data);
    if (rc)
        return rc;
    if (r.code != BT_OK && r.code != BT_ALREADY_EXISTS)
        return call_failed(c, "creating column family in", name, &r);
    return TFREC_OK;
}

int tfrec_bt_ensure_table(tfrec_bt_client *c, const char *table, const char *family, int create)
{
    char name[2 * BT_NAME_MAX];
    if (!c)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_bt_ensure_table: NULL client");
    if (!table || !*table)
        return tfrec_fail(&c->err, TFREC_E_INVALID, "no table given");
    if (tfrec_bt_table_name(c, table, name, sizeof name))
        return tfrec_fail(&c->err, TFREC_E_INVALID, "table name too long");

    Google__Bigtable__Admin__V2__GetTableRequest req =
        GOOGLE__BIGTABLE__ADMIN__V2__GET_TABLE_REQUEST__INIT;
    req.name = name;
    req.view = GOOGLE__BIGTABLE__ADMIN__V2__TABLE__VIEW__SCHEMA_VIEW;
    unary_result r;
    int rc = unary(c, "GetTable", "name", name, &req.base, &r);
    if (rc)
        return rc;
    if (r.code == BT_NOT_FOUND) {
        free(r.data);
        if (create)
            return create_table(c, table, family);
        return tfrec_fail(&c->err, TFREC_E_NOT_FOUND,
                          "table %s does not exist (%s); create it with "
                          "`cbt -project %s -instance %s createtable %s`",
                          name, r.details, c->project, c->instance, table);
    }
    if (r.code != BT_OK) {
        free(r.data);
        return call_failed(c, "looking up table", name, &r);
    }
    if (!family) {
        free(r.data);
        return TFREC_OK;
    }
    Google__Bigtable__Admin__V2__Table *t =
        google__bigtable__admin__v2__table__unpack(NULL, r.len, r.data);
    free(r.data);
    if (!t)
        return tfrec_fail(&c->err, TFREC_E_PARSE, "unparsable GetTable reply for %s", name);
    int found = 0;
    for (size_t i = 0; i < t->n_column_families; i++)
        if (t->column_families[i]->key && !strcmp(t->column_families[i]->key, family))
            found = 1;
    google__bigtable__admin__v2__table__free_unpacked(t, NULL);
    if (found)
        return TFREC_OK;
    if (create)
        return create_family(c, name, family);
    return tfrec_fail(&c->err, TFREC_E_NOT_FOUND,
                      "table %s has no column family '%s'; create it with "
                      "`cbt -project %s -instance %s createfamily %s %s`",
                      name, family, c->project, c->instance, table, family);
}

/* Single-object calls over the client: metadata (stat, and the object
 * resource every reply with objects carries) and remove. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/storage_internal.h"
#include "tfrec/fs.h"
#include "util/struct_size.h"

int tfrec_gcs_object_from_json(const tfrec_json_value *o, tfrec_storage_object *info)
{
    uint64_t size, gen = 0;
    if (tfrec_json_member_u64(o, "size", &size))
        return -1;
    if (tfrec_json_member_u64(o, "generation", &gen) == 0 && gen > (uint64_t)INT64_MAX)
        return -1;
    info->size = size;
    info->generation = (int64_t)gen;
    const char *crc = tfrec_json_member_str(o, "crc32c");
    info->has_crc32c = crc && tfrec_gcs_crc_from_base64(crc, strlen(crc), &info->crc32c) == 0;
    if (!info->has_crc32c)
        info->crc32c = 0;
    return 0;
}

int tfrec_gcs_metadata_reply(const gcs_resp *resp, const char *shown, tfrec_storage_object *info,
                             tfrec_err *err)
{
    tfrec_json_value *doc = NULL;
    char why[128];
    int rc = tfrec_json_parse(resp->body ? resp->body : "", resp->body_len, GCS_JSON_LIMITS, &doc,
                              why, sizeof why);
    if (rc < 0)
        tfrec_fail(err, rc, "%s: bad metadata reply: %s", shown, why);
    else if (tfrec_gcs_object_from_json(doc, info) != 0)
        rc = tfrec_fail(err, TFREC_E_PARSE, "%s: metadata reply without a valid size", shown);
    tfrec_json_value_free(doc);
    return rc;
}

int tfrec_gcs_stat(tfrec_storage *st, const gcs_name *n, const char *shown,
                   tfrec_storage_object *info, tfrec_err *err)
{
    char *url = tfrec_gcs_object_url(st, "/storage/v1", n->bucket, n->object);
    if (!url)
        return tfrec_fail(err, TFREC_E_NOMEM, "%s: out of memory", shown);
    if (tfrec_gcs_url_param(&url, "fields", "name,size,generation,crc32c")) {
        free(url);
        return tfrec_fail(err, TFREC_E_NOMEM, "%s: out of memory", shown);
    }
    gcs_call call = {
        .method = "GET", .url = url, .what = shown, .permission = "storage.objects.get"
    };
    gcs_resp resp = { 0 };
    int rc = tfrec_gcs_call(st, &call, &resp, err);
    if (rc == TFREC_OK)
        rc = tfrec_gcs_metadata_reply(&resp, shown, info, err);
    tfrec_gcs_resp_free(&resp);
    free(url);
    return rc;
}

int tfrec_storage_stat(tfrec_storage *st, const char *name, tfrec_storage_object *info)
{
    int rc = TFREC_STRUCT_CHECK_OUT(tfrec_storage_object, info, NULL);
    if (rc)
        return rc;
    if (!name)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_storage_stat: NULL name");
    tfrec_storage_object o = TFREC_STORAGE_OBJECT_INIT;
    o.name = name;
    if (!tfrec_storage_is_remote(name)) {
        tfrec_fs_info li = TFREC_FS_INFO_INIT;
        if ((rc = tfrec_fs_stat(tfrec_fs_local(), name, &li)) < 0)
            return rc;
        o.size = li.size;
        return TFREC_STRUCT_OUT(tfrec_storage_object, info, &o, NULL);
    }
    gcs_name n;
    if ((rc = tfrec_gcs_parse(name, &n, NULL)) < 0)
        return rc;
    if (!(st = tfrec_gcs_client(st, NULL)))
        return TFREC_E_IO;
    if ((rc = tfrec_gcs_stat(st, &n, name, &o, NULL)) < 0)
        return rc;
    return TFREC_STRUCT_OUT(tfrec_storage_object, info, &o, NULL);
}

int tfrec_storage_remove(tfrec_storage *st, const char *name)
{
    if (!name)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_storage_remove: NULL name");
    if (!tfrec_storage_is_remote(name)) {
        if (remove(name) == 0)
            return TFREC_OK;
        return tfrec_fail(NULL, errno == ENOENT ? TFREC_E_NOT_FOUND : TFREC_E_IO,
                          "%s: cannot remove: %s", name, strerror(errno));
    }
    gcs_name n;
    int rc = tfrec_gcs_parse(name, &n, NULL);
    if (rc < 0)
        return rc;
    if (!(st = tfrec_gcs_client(st, NULL)))
        return TFREC_E_IO;
    char *url = tfrec_gcs_object_url(st, "/storage/v1", n.bucket, n.object);
    if (!url)
        return tfrec_fail(NULL, TFREC_E_NOMEM, "%s: out of memory", name);
    gcs_call call = {
        .method = "DELETE", .url = url, .what = name, .permission = "storage.objects.delete"
    };
    gcs_resp resp = { 0 };
    rc = tfrec_gcs_call(st, &call, &resp, NULL);
    tfrec_gcs_resp_free(&resp);
    free(url);
    return rc;
}

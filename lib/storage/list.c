/* Globbing: the core's local file system for local paths, objects.list plus the same matching
 * rules for gs:// names, results sorted bytewise either way. */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/storage_internal.h"
#include "tfrec/fs.h"
#include "util/vec.h"

struct tfrec_storage_list {
    tfrec_storage_object *v;
    size_t n, cap;
};

int tfrec_gcs_glob_match(const char *pattern, const char *name)
{
    /* glob(3) matches each path component with fnmatch(3) under these very
     * flags; one call over the whole name is the same thing, since neither
     * side can let a wildcard cross '/'. */
    return fnmatch(pattern, name, FNM_PATHNAME | FNM_PERIOD) == 0;
}

size_t tfrec_gcs_glob_prefix(const char *pattern)
{
    return strcspn(pattern, "*?[\\");
}

static int has_wildcard(const char *s)
{
    return strpbrk(s, "*?[") != NULL;
}

static int add(tfrec_storage_list *l, const char *name, size_t name_len,
               const tfrec_storage_object *meta)
{
    if (tfrec_vec_reserve(&l->v, &l->cap, l->n + 1, 16))
        return TFREC_E_NOMEM;
    char *copy = malloc(name_len + 1);
    if (!copy)
        return TFREC_E_NOMEM;
    memcpy(copy, name, name_len);
    copy[name_len] = 0;
    tfrec_storage_object *o = &l->v[l->n++];
    *o = *meta;
    o->struct_size = sizeof *o;
    o->name = copy;
    return TFREC_OK;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const tfrec_storage_object *)a)->name, ((const tfrec_storage_object *)b)->name);
}

void tfrec_storage_list_free(tfrec_storage_list *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++)
        free((char *)l->v[i].name);
    free(l->v);
    free(l);
}

size_t tfrec_storage_list_count(const tfrec_storage_list *l)
{
    return l ? l->n : 0;
}

const tfrec_storage_object *tfrec_storage_list_get(const tfrec_storage_list *l, size_t i)
{
    return l && i < l->n ? &l->v[i] : NULL;
}

/* Local patterns: the core's local file system lists them (glob(3)
 * semantics, sorted bytewise). */
static int add_local(void *ctx, const char *name, const tfrec_fs_info *info)
{
    tfrec_storage_object meta = TFREC_STORAGE_OBJECT_INIT;
    meta.size = info->size;
    return add(ctx, name, strlen(name), &meta) ? tfrec_fail(NULL, TFREC_E_NOMEM, "out of memory")
                                               : 0;
}

static int glob_local(tfrec_storage_list *l, const char *pattern)
{
    return tfrec_fs_list(tfrec_fs_local(), pattern, add_local, l);
}

/* One page of objects.list: matching items are added, *token is replaced
 * by the next page's token (NULL at the end). */
static int list_page(tfrec_storage *st, const gcs_name *n, const char *pattern, const char *shown,
                     int use_delimiter, char **token, tfrec_storage_list *l)
{
    size_t plen = tfrec_gcs_glob_prefix(n->object);
    char prefix[GCS_MAX_OBJECT + 1];
    memcpy(prefix, n->object, plen);
    prefix[plen] = 0;
    char *url = tfrec_gcs_object_url(st, "/storage/v1", n->bucket, NULL);
    char num[16];
    snprintf(num, sizeof num, "%u", st->list_page_size);
    int bad = !url || tfrec_gcs_url_param(&url, "prefix", prefix) ||
              (use_delimiter && tfrec_gcs_url_param(&url, "delimiter", "/")) ||
              (*token && tfrec_gcs_url_param(&url, "pageToken", *token)) ||
              (st->list_page_size && tfrec_gcs_url_param(&url, "maxResults", num));
    if (bad) {
        free(url);
        return tfrec_fail(NULL, TFREC_E_NOMEM, "%s: out of memory", shown);
    }
    char what[GCS_MAX_BUCKET + 16];
    snprintf(what, sizeof what, "gs://%s", n->bucket);
    gcs_call call = {
        .method = "GET", .url = url, .what = what, .permission = "storage.objects.list"
    };
    gcs_resp resp = { 0 };
    int rc = tfrec_gcs_call(st, &call, &resp, NULL);
    free(url);
    if (rc < 0) {
        tfrec_gcs_resp_free(&resp);
        return rc;
    }
    tfrec_json_value *doc = NULL;
    char why[128];
    rc = tfrec_json_parse(resp.body ? resp.body : "", resp.body_len, GCS_JSON_LIMITS, &doc, why,
                          sizeof why);
    tfrec_gcs_resp_free(&resp);
    if (rc < 0)
        return tfrec_fail(NULL, rc, "%s: bad listing reply: %s", shown, why);
    const tfrec_json_value *items = tfrec_json_member(doc, "items");
    if (items && items->type != TFREC_JSON_ARR)
        rc = tfrec_fail(NULL, TFREC_E_PARSE, "%s: bad listing reply: items is not an array", shown);
    for (const tfrec_json_value *it = items ? items->child : NULL; it && rc == 0; it = it->next) {
        const char *name = tfrec_json_member_str(it, "name");
        tfrec_storage_object meta = TFREC_STORAGE_OBJECT_INIT;
        if (!name || tfrec_gcs_object_from_json(it, &meta) != 0) {
            rc = tfrec_fail(NULL, TFREC_E_PARSE,
                            "%s: bad listing reply: an item without a "
                            "name or size",
                            shown);
            break;
        }
        if (!tfrec_gcs_glob_match(pattern, name))
            continue;
        char full[GCS_MAX_BUCKET + GCS_MAX_OBJECT + 8];
        int len = snprintf(full, sizeof full, "gs://%s/%s", n->bucket, name);
        if (len < 0 || (size_t)len >= sizeof full || add(l, full, (size_t)len, &meta))
            rc = tfrec_fail(NULL, TFREC_E_NOMEM, "%s: out of memory", shown);
    }
    const char *next = tfrec_json_member_str(doc, "nextPageToken");
    if (rc == 0 && next && *token && strcmp(next, *token) == 0)
        rc = tfrec_fail(NULL, TFREC_E_PARSE, "%s: the server repeated page token %s", shown, next);
    free(*token);
    *token = NULL;
    if (rc == 0 && next && *next && !(*token = strdup(next)))
        rc = tfrec_fail(NULL, TFREC_E_NOMEM, "%s: out of memory", shown);
    tfrec_json_value_free(doc);
    return rc;
}

static int glob_remote(tfrec_storage *st, tfrec_storage_list *l, const char *pattern)
{
    gcs_name n;
    int rc = tfrec_gcs_parse(pattern, &n, NULL);
    if (rc < 0)
        return rc;
    if (!(st = tfrec_gcs_client(st, NULL)))
        return TFREC_E_IO;
    if (!has_wildcard(n.object)) {
        tfrec_storage_object meta = TFREC_STORAGE_OBJECT_INIT;
        if ((rc = tfrec_gcs_stat(st, &n, pattern, &meta, NULL)) < 0)
            return rc;
        return add(l, pattern, strlen(pattern), &meta)
                   ? tfrec_fail(NULL, TFREC_E_NOMEM, "out of memory")
                   : TFREC_OK;
    }
    /* Wildcards never match '/': when the rest of the pattern has none,
     * the server can stop at the next '/' instead of listing every object
     * below. */
    size_t plen = tfrec_gcs_glob_prefix(n.object);
    int use_delimiter = strchr(n.object + plen, '/') == NULL;
    char *token = NULL;
    do {
        rc = list_page(st, &n, n.object, pattern, use_delimiter, &token, l);
    } while (rc == 0 && token);
    free(token);
    if (rc == 0 && l->n == 0)
        rc = tfrec_fail(NULL, TFREC_E_NOT_FOUND, "%s: no object matches", pattern);
    return rc;
}

int tfrec_storage_glob(tfrec_storage *st, const char *pattern, tfrec_storage_list **out)
{
    if (!pattern || !out)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_storage_glob: NULL argument");
    *out = NULL;
    tfrec_storage_list *l = calloc(1, sizeof *l);
    if (!l)
        return tfrec_fail(NULL, TFREC_E_NOMEM, "out of memory");
    int rc =
        tfrec_storage_is_remote(pattern) ? glob_remote(st, l, pattern) : glob_local(l, pattern);
    if (rc < 0) {
        tfrec_storage_list_free(l);
        return rc;
    }
    if (l->n > 1)
        qsort(l->v, l->n, sizeof *l->v, by_name);
    *out = l;
    return TFREC_OK;
}

int tfrec_storage_glob_each(tfrec_storage *st, const char *pattern,
                            int (*fn)(void *ctx, const char *name, uint64_t size), void *ctx)
{
    if (!fn)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_storage_glob_each: NULL function");
    tfrec_storage_list *l;
    int rc = tfrec_storage_glob(st, pattern, &l);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < l->n; i++)
        if (fn(ctx, l->v[i].name, l->v[i].size))
            break;
    tfrec_storage_list_free(l);
    return TFREC_OK;
}

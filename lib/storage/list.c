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

tfrec_storage_list *tfrec_gcs_list_new(void)
{
    return calloc(1, sizeof(tfrec_storage_list));
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

int tfrec_gcs_list_parse_page(const char *body, size_t len, const char *bucket, const char *pattern,
                              const char *shown, tfrec_storage_list *l, char **next,
                              size_t *entries)
{
    *next = NULL;
    *entries = 0;
    tfrec_json_value *doc = NULL;
    char why[128];
    int rc = tfrec_json_parse(body ? body : "", len, GCS_JSON_LIMITS, &doc, why, sizeof why);
    if (rc < 0)
        return tfrec_fail(NULL, rc, "%s: bad listing reply: %s", shown, why);
    if (doc->type != TFREC_JSON_OBJ)
        rc = tfrec_fail(NULL, TFREC_E_PARSE, "%s: bad listing reply: not an object", shown);
    const tfrec_json_value *items = rc ? NULL : tfrec_json_member(doc, "items");
    const tfrec_json_value *prefixes = rc ? NULL : tfrec_json_member(doc, "prefixes");
    if (items && items->type != TFREC_JSON_ARR)
        rc = tfrec_fail(NULL, TFREC_E_PARSE, "%s: bad listing reply: items is not an array", shown);
    for (const tfrec_json_value *it = items && !rc ? items->child : NULL; it; it = it->next) {
        const char *name = tfrec_json_member_str(it, "name");
        tfrec_storage_object meta = TFREC_STORAGE_OBJECT_INIT;
        ++*entries;
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
        int n = snprintf(full, sizeof full, "gs://%s/%s", bucket, name);
        if (n < 0 || (size_t)n >= sizeof full) {
            rc = tfrec_fail(NULL, TFREC_E_PARSE,
                            "%s: bad listing reply: an object name longer than %d bytes", shown,
                            GCS_MAX_OBJECT);
            break;
        }
        if (add(l, full, (size_t)n, &meta)) {
            rc = tfrec_fail(NULL, TFREC_E_NOMEM, "%s: out of memory", shown);
            break;
        }
    }
    if (!rc && prefixes && prefixes->type == TFREC_JSON_ARR)
        for (const tfrec_json_value *p = prefixes->child; p; p = p->next)
            ++*entries;
    const char *tok = rc ? NULL : tfrec_json_member_str(doc, "nextPageToken");
    if (tok && *tok && !(*next = strdup(tok)))
        rc = tfrec_fail(NULL, TFREC_E_NOMEM, "%s: out of memory", shown);
    tfrec_json_value_free(doc);
    return rc;
}

/* One page of objects.list: matching items are added, *token is replaced
 * by the next page's token (NULL at the end); *entries counts the page's
 * items and prefixes. */
static int list_page(tfrec_storage *st, const gcs_name *n, const char *pattern, const char *shown,
                     int use_delimiter, char **token, tfrec_storage_list *l, size_t *entries)
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
    char *next = NULL;
    rc = tfrec_gcs_list_parse_page(resp.body, resp.body_len, n->bucket, pattern, shown, l, &next,
                                   entries);
    tfrec_gcs_resp_free(&resp);
    free(*token);
    *token = next;
    return rc;
}

/* The page tokens a listing was given, to catch a server whose tokens go
 * round in a circle (A, B, A, ...): a set of strings by hash. */
typedef struct token_set {
    char **slot;
    size_t cap, n;
} token_set;

static uint64_t token_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* 1 if t was there already, 0 if added, -1 when out of memory. */
static int token_seen(token_set *ts, const char *t)
{
    if ((ts->n + 1) * 2 > ts->cap) {
        size_t cap = ts->cap ? ts->cap * 2 : 64;
        char **slot = calloc(cap, sizeof *slot);
        if (!slot)
            return -1;
        for (size_t i = 0; i < ts->cap; i++)
            if (ts->slot[i]) {
                size_t j = token_hash(ts->slot[i]) & (cap - 1);
                while (slot[j])
                    j = (j + 1) & (cap - 1);
                slot[j] = ts->slot[i];
            }
        free(ts->slot);
        ts->slot = slot;
        ts->cap = cap;
    }
    size_t j = token_hash(t) & (ts->cap - 1);
    for (; ts->slot[j]; j = (j + 1) & (ts->cap - 1))
        if (strcmp(ts->slot[j], t) == 0)
            return 1;
    if (!(ts->slot[j] = strdup(t)))
        return -1;
    ts->n++;
    return 0;
}

static void token_set_free(token_set *ts)
{
    for (size_t i = 0; i < ts->cap; i++)
        free(ts->slot[i]);
    free(ts->slot);
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
    /* A listing must end: page tokens never seen before, at most
     * max_pages pages, and at most GCS_LIST_MAX_EMPTY_PAGES pages in a row
     * that hold neither an object nor a prefix. */
    unsigned long max_pages = st->list_max_pages ? st->list_max_pages : GCS_LIST_MAX_PAGES;
    unsigned long pages = 0, empty_run = 0;
    token_set seen = { 0 };
    char *token = NULL;
    do {
        size_t entries = 0;
        rc = list_page(st, &n, n.object, pattern, use_delimiter, &token, l, &entries);
        pages++;
        empty_run = entries ? 0 : empty_run + 1;
        if (rc < 0 || !token)
            break;
        int again = token_seen(&seen, token);
        if (again < 0)
            rc = tfrec_fail(NULL, TFREC_E_NOMEM, "%s: out of memory", pattern);
        else if (again)
            rc = tfrec_fail(NULL, TFREC_E_PARSE,
                            "%s: listing gs://%s (prefix \"%.*s\"): the server repeated page "
                            "token %.64s after %lu pages (its page tokens go round in a circle); "
                            "giving up",
                            pattern, n.bucket, (int)plen, n.object, token, pages);
        else if (pages >= max_pages)
            rc = tfrec_fail(NULL, TFREC_E_PARSE,
                            "%s: listing gs://%s (prefix \"%.*s\"): still more pages after %lu "
                            "(the limit); giving up",
                            pattern, n.bucket, (int)plen, n.object, pages);
        else if (empty_run >= GCS_LIST_MAX_EMPTY_PAGES)
            rc = tfrec_fail(NULL, TFREC_E_PARSE,
                            "%s: listing gs://%s (prefix \"%.*s\"): %lu pages in a row without "
                            "an object or a prefix, each with a new page token; giving up",
                            pattern, n.bucket, (int)plen, n.object, empty_run);
    } while (rc == 0 && token);
    free(token);
    token_set_free(&seen);
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

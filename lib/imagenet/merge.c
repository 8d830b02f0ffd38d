/* The manifest of a conversion split into tasks, from the tasks' parts:
 * every part is checked against the others (same plan, same task count,
 * each task once, each share where tfrec_task_share puts it) and against
 * the shard files, then the parts become one manifest shaped like a
 * one-process run's. */
#include "imagenet/run.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfrec/crc32c.h"
#include "tfrec/task.h"
#include "tfrec/version.h"
#include "util/ioerr.h"
#include "util/json_read.h"
#include "util/struct_size.h"
#include "util/vec.h"

TFREC_DEFINE_STRUCT_INIT(tfrec_imagenet_merge_options)

#define MAX_PART_BYTES ((size_t)64 * 1024 * 1024)

/* A part lists a task's shards and its fixed and rejected images: far below
 * these bounds. Bytes of names that are not UTF-8 come back from the
 * writer's \udcXX escapes. */
const tfrec_json_limits tfrec_in_part_limits = { MAX_PART_BYTES, 64, 4000000, 1 };

typedef struct part {
    char *name;
    tfrec_json_value *root;
    const tfrec_json_value *task, *counts;
    uint64_t index, count, begin, end, total;
    const char *fingerprint;
    const char *listing, *listing_fp; /* NULL: the task scanned the tree */
} part;

typedef struct merge {
    tfrec_imagenet_merge_options o;
    tfrec_imagenet_result *res;
    part *v;
    size_t n, cap;
    part **by_index;     /* count entries */
    tfrec_strlist files; /* every listed shard, to find one listed twice */
    /* Reading the parts and shards, writing the manifest: fs, or the
     * deprecated callbacks through the one shim (lib/fs/opener.c), the
     * local file system standing in for a callback not set. */
    const tfrec_fs *rfs, *wfs;
    int legacy;
    tfrec_fs_opener shim;
} merge;

static int open_source(merge *m, tfrec_io *io, const char *name)
{
    return tfrec_fs_open_source(m->rfs, name, io);
}

static void resolve_fs(merge *m)
{
    const tfrec_imagenet_merge_options *x = &m->o;
    m->rfs = m->wfs = x->fs;
    m->legacy = x->open_source || x->open_sink;
    if (!m->legacy)
        return;
    m->shim.ctx = x->io_ctx;
    m->shim.open_io = x->open_source;
    m->shim.open_sink_io = x->open_sink;
    const tfrec_fs *shim = tfrec_fs_opener_make(&m->shim);
    m->rfs = x->open_source ? shim : tfrec_fs_local();
    m->wfs = x->open_sink ? shim : tfrec_fs_local();
}

typedef struct part_names {
    merge *m;
    tfrec_strlist *names;
    int nomem;
} part_names;

static int add_part_name(void *ctx, const char *name, const tfrec_fs_info *info)
{
    (void)info;
    part_names *l = ctx;
    l->nomem = tfrec_strlist_add(l->names, name) != 0;
    return l->nomem;
}

/* OUTPUT/manifest-task-*-of-*.json through fs (a bucket, mem://): listed
 * sorted by the file system; none found leaves names empty. */
static int list_parts(merge *m, tfrec_strlist *names)
{
    const char *dir = m->o.output_dir;
    char *pat = tfrec_in_pattern_under(dir, IN_PART_PREFIX "*-of-*.json");
    if (!pat)
        return tfrec_fail(&m->res->err, TFREC_E_NOMEM, "out of memory");
    part_names l = { m, names, 0 };
    int rc = tfrec_fs_list(m->rfs, pat, add_part_name, &l);
    free(pat);
    if (l.nomem)
        return tfrec_fail(&m->res->err, TFREC_E_NOMEM, "out of memory");
    if (rc == TFREC_E_NOT_FOUND)
        return TFREC_OK;
    if (rc < 0)
        return tfrec_fail(&m->res->err, rc, "cannot list the manifest parts in %s: %s", dir,
                          tfrec_last_errmsg());
    return TFREC_OK;
}

static int read_all(merge *m, const char *name, char **out, size_t *len)
{
    int rc = tfrec_fs_read_all(m->rfs, name, MAX_PART_BYTES, out, len);
    return rc ? tfrec_fail(&m->res->err, rc, "%s", tfrec_last_errmsg()) : TFREC_OK;
}

/* A part's "fixed" and "rejected" lists, when present: arrays of objects
 * whose "path" is a string and whose other field (the source format, the
 * reason), if any, is one too. The merge copies them and reports the
 * rejected images by path, so an entry without one is refused here, naming
 * the part, instead of reaching the notes as a NULL path. */
static int check_notes(merge *m, const part *p, const char *key, const char *field)
{
    const tfrec_json_value *a = tfrec_json_member(p->root, key);
    if (!a)
        return TFREC_OK;
    if (a->type != TFREC_JSON_ARR)
        return tfrec_fail(&m->res->err, TFREC_E_PARSE, "%s: \"%s\" is not an array", p->name, key);
    size_t i = 0;
    for (const tfrec_json_value *e = a->child; e; e = e->next, i++) {
        const tfrec_json_value *w = e->type == TFREC_JSON_OBJ ? tfrec_json_member(e, field) : NULL;
        if (e->type != TFREC_JSON_OBJ || !tfrec_json_member_str(e, "path") ||
            (w && w->type != TFREC_JSON_STR))
            return tfrec_fail(&m->res->err, TFREC_E_PARSE,
                              "%s: entry %zu of \"%s\" is not {\"path\": string, \"%s\": "
                              "string}",
                              p->name, i, key, field);
    }
    return TFREC_OK;
}

static int load_part(merge *m, const char *name)
{
    if (tfrec_vec_reserve(&m->v, &m->cap, m->n + 1, 16))
        return tfrec_fail(&m->res->err, TFREC_E_NOMEM, "out of memory");
    part *p = &m->v[m->n];
    memset(p, 0, sizeof *p);
    p->name = strdup(name);
    if (!p->name)
        return tfrec_fail(&m->res->err, TFREC_E_NOMEM, "out of memory");
    m->n++;
    char *text = NULL;
    size_t len = 0;
    int rc = read_all(m, name, &text, &len);
    if (rc)
        return rc;
    char why[128];
    int bad = tfrec_json_parse(text, len, &tfrec_in_part_limits, &p->root, why, sizeof why);
    free(text);
    if (bad)
        return tfrec_fail(&m->res->err, TFREC_E_PARSE, "%s: not a manifest part: %s", name, why);
    const char *status = tfrec_json_member_str(p->root, "status");
    p->task = tfrec_json_member(p->root, "task");
    p->counts = tfrec_json_member(p->root, "counts");
    p->fingerprint = tfrec_json_member_str(p->task, "fingerprint");
    p->listing = tfrec_json_member_str(p->task, "listing");
    p->listing_fp = tfrec_json_member_str(p->task, "listing_fingerprint");
    const tfrec_json_value *shards = tfrec_json_member(p->root, "shards");
    if (!status || strcmp(status, "ok") != 0 || !p->fingerprint || !p->counts || !shards ||
        shards->type != TFREC_JSON_ARR || tfrec_json_member_u64(p->task, "index", &p->index) ||
        tfrec_json_member_u64(p->task, "count", &p->count) ||
        tfrec_json_member_u64(p->task, "shards_begin", &p->begin) ||
        tfrec_json_member_u64(p->task, "shards_end", &p->end) ||
        tfrec_json_member_u64(p->task, "shards_total", &p->total) || p->count == 0 ||
        p->count > TFREC_TASK_MAX || p->index >= p->count)
        return tfrec_fail(&m->res->err, TFREC_E_PARSE,
                          "%s: not the manifest part of a finished task (no \"task\" fields, "
                          "or status is not ok)",
                          name);
    /* A part copied under another task's name would hide that task. */
    char want[IN_PART_NAME_MAX];
    tfrec_in_part_name(want, p->index, p->count);
    const char *base = tfrec_in_basename(name);
    if (strcmp(base, want) != 0)
        return tfrec_fail(&m->res->err, TFREC_E_STATE,
                          "%s holds the part of task %llu of %llu, which is named %s", name,
                          (unsigned long long)p->index, (unsigned long long)p->count, want);
    uint64_t b, e;
    size_t listed = 0;
    for (const tfrec_json_value *s = shards->child; s; s = s->next)
        listed++;
    tfrec_task_share(p->total, (uint32_t)p->index, (uint32_t)p->count, &b, &e);
    if (b != p->begin || e != p->end || listed != e - b)
        return tfrec_fail(&m->res->err, TFREC_E_PARSE,
                          "%s: task %llu of %llu should list shards %llu..%llu of %llu, not "
                          "%zu shards from %llu",
                          name, (unsigned long long)p->index, (unsigned long long)p->count,
                          (unsigned long long)b, (unsigned long long)e,
                          (unsigned long long)p->total, listed, (unsigned long long)p->begin);
    int rc2 = check_notes(m, p, "fixed", "from");
    return rc2 ? rc2 : check_notes(m, p, "rejected", "reason");
}

/* manifest-task-IIIII-of-NNNNN.json in a local output directory. */
static int list_local(merge *m, tfrec_strlist *names)
{
    DIR *d = opendir(m->o.output_dir);
    if (!d)
        return tfrec_fail_errno(&m->res->err, TFREC_E_NOT_FOUND, errno, m->o.output_dir,
                                "cannot list the manifest parts");
    struct dirent *e;
    int rc = TFREC_OK;
    while (!rc && (e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name), pl = strlen(IN_PART_PREFIX);
        if (n <= pl + 5 || strncmp(e->d_name, IN_PART_PREFIX, pl) != 0 ||
            strcmp(e->d_name + n - 5, ".json") != 0 || !strstr(e->d_name, "-of-"))
            continue;
        char *full = tfrec_in_join(m->o.output_dir, e->d_name);
        if (!full || !tfrec_strlist_take(names, full))
            rc = tfrec_fail(&m->res->err, TFREC_E_NOMEM, "out of memory");
    }
    closedir(d);
    if (!rc)
        tfrec_strlist_sort(names);
    return rc;
}

static int check_parts(merge *m)
{
    part *first = &m->v[0];
    for (size_t i = 1; i < m->n; i++) {
        part *p = &m->v[i];
        if (p->count != first->count)
            return tfrec_fail(&m->res->err, TFREC_E_STATE,
                              "%s is a part of a run split into %llu tasks, %s of one split "
                              "into %llu: remove the parts of the older run",
                              p->name, (unsigned long long)p->count, first->name,
                              (unsigned long long)first->count);
        /* Tasks must plan from one listing: two listings of a tree that
         * changed between them are two different sets of images. The rule
         * and the fix come first: with long paths the message is cut at
         * TFREC_ERRMSG_MAX, and the names of the parts are what may go. */
        const char *lf = p->listing_fp ? p->listing_fp : "",
                   *ff = first->listing_fp ? first->listing_fp : "";
        if (strcmp(lf, ff) != 0)
            return tfrec_fail(&m->res->err, TFREC_E_STATE,
                              "the tasks of one conversion must plan from one listing file; "
                              "re-run task %llu with --listing=%s: %s was planned from "
                              "%s%s%s%s, %s from %s%s%s%s",
                              (unsigned long long)p->index,
                              first->listing ? first->listing : "<the others' listing>", p->name,
                              p->listing ? "listing " : "a scan of the tree",
                              p->listing ? p->listing : "", *lf ? " fingerprint " : "", lf,
                              first->name, first->listing ? "listing " : "a scan of the tree",
                              first->listing ? first->listing : "", *ff ? " fingerprint " : "", ff);
        if (strcmp(p->fingerprint, first->fingerprint) != 0 || p->total != first->total)
            return tfrec_fail(&m->res->err, TFREC_E_STATE,
                              "%s was written for another plan than %s (fingerprint %s, not %s): "
                              "the tasks ran with different flags or input; re-run task %llu "
                              "with the same command line as the others",
                              p->name, first->name, p->fingerprint, first->fingerprint,
                              (unsigned long long)p->index);
    }
    m->by_index = calloc((size_t)first->count, sizeof *m->by_index);
    if (!m->by_index)
        return tfrec_fail(&m->res->err, TFREC_E_NOMEM, "out of memory");
    for (size_t i = 0; i < m->n; i++) {
        part *p = &m->v[i];
        if (m->by_index[p->index])
            return tfrec_fail(&m->res->err, TFREC_E_STATE, "%s and %s are both task %llu",
                              m->by_index[p->index]->name, p->name, (unsigned long long)p->index);
        m->by_index[p->index] = p;
    }
    for (uint64_t t = 0; t < first->count; t++) {
        if (m->by_index[t])
            continue;
        char *want = tfrec_in_part_path(m->o.output_dir, (uint32_t)t, (uint32_t)first->count);
        size_t missing = 0;
        for (uint64_t k = t; k < first->count; k++)
            missing += !m->by_index[k];
        tfrec_fail(&m->res->err, TFREC_E_NOT_FOUND,
                   "task %llu of %llu has no manifest part (%s): re-run it with "
                   "--task_index=%llu%s",
                   (unsigned long long)t, (unsigned long long)first->count, want ? want : "?",
                   (unsigned long long)t,
                   missing > 1 ? " (and the other tasks without a part)" : "");
        free(want);
        return TFREC_E_NOT_FOUND;
    }
    return TFREC_OK;
}

/* CRC32C of the rest of a source (read from where it stands). The buffer
 * is no larger than the source when its size is known: a merge over many
 * small shards does not map and unmap a large buffer for each. */
static int source_crc(tfrec_io *io, uint32_t *crc)
{
    enum { BUF = 1 << 20 };
    size_t cap = BUF;
    int64_t size = io->size ? io->size(io->ctx) : -1;
    if (size >= 0 && size < BUF)
        cap = size > 0 ? (size_t)size : 1;
    char *buf = malloc(cap);
    if (!buf)
        return TFREC_E_NOMEM;
    uint32_t c = 0;
    ptrdiff_t got;
    while ((got = io->read(io->ctx, buf, cap)) > 0)
        c = tfrec_crc32c_extend(c, buf, (size_t)got);
    free(buf);
    if (got < 0)
        return (int)got;
    *crc = c;
    return TFREC_OK;
}

/* Every listed shard is where its part says, with the size it says and,
 * when the part records one (a task's part does), its CRC32C: a shard
 * rewritten with the same size by a task of another run is caught. */
static int check_shards(merge *m)
{
    uint64_t count = m->v[0].count;
    for (uint64_t t = 0; t < count; t++) {
        const part *p = m->by_index[t];
        for (const tfrec_json_value *s = tfrec_json_member(p->root, "shards")->child; s;
             s = s->next) {
            const char *file = tfrec_json_member_str(s, "file");
            uint64_t bytes;
            if (!file || tfrec_json_member_u64(s, "bytes", &bytes))
                return tfrec_fail(&m->res->err, TFREC_E_PARSE, "%s: a shard without file/bytes",
                                  p->name);
            /* Inside the output directory, and no other part's. */
            if (!*file || file[0] == '/' || !strcmp(file, "..") || !strncmp(file, "../", 3) ||
                strstr(file, "/../") ||
                (strlen(file) >= 3 && !strcmp(file + strlen(file) - 3, "/..")))
                return tfrec_fail(&m->res->err, TFREC_E_PARSE,
                                  "%s: shard \"%s\" is not a file inside the output directory",
                                  p->name, file);
            if (tfrec_strlist_add(&m->files, file))
                return tfrec_fail(&m->res->err, TFREC_E_NOMEM, "out of memory");
            uint64_t want_crc = 0;
            int has_crc = tfrec_json_member(s, "crc32c") != NULL;
            if (has_crc && (tfrec_json_member_u64(s, "crc32c", &want_crc) || want_crc > UINT32_MAX))
                return tfrec_fail(&m->res->err, TFREC_E_PARSE, "%s: shard \"%s\": bad crc32c",
                                  p->name, file);
            char *path = tfrec_in_join(m->o.output_dir, file);
            if (!path)
                return tfrec_fail(&m->res->err, TFREC_E_NOMEM, "out of memory");
            tfrec_io io = TFREC_IO_INIT;
            int rc = open_source(m, &io, path);
            int64_t size = -1;
            uint32_t crc = 0;
            int crc_rc = TFREC_OK;
            char crc_msg[256] = "";
            if (!rc) {
                size = io.size ? io.size(io.ctx) : -1;
                if (has_crc && size >= 0 && (uint64_t)size == bytes &&
                    (crc_rc = source_crc(&io, &crc)) < 0)
                    snprintf(crc_msg, sizeof crc_msg, "%s",
                             io.errmsg ? io.errmsg(io.ctx) : "read failed");
                io.close(io.ctx, 0);
            }
            if (rc)
                rc = tfrec_fail(&m->res->err, TFREC_E_STATE,
                                "shard %s (task %llu) is missing: %s; re-run task %llu", path,
                                (unsigned long long)t, tfrec_last_errmsg(), (unsigned long long)t);
            else if (size < 0)
                rc = tfrec_fail(&m->res->err, TFREC_E_UNSUPPORTED,
                                "shard %s: its size cannot be read here", path);
            else if ((uint64_t)size != bytes)
                rc = tfrec_fail(&m->res->err, TFREC_E_STATE,
                                "shard %s is %lld bytes, task %llu's part says %llu: re-run "
                                "task %llu",
                                path, (long long)size, (unsigned long long)t,
                                (unsigned long long)bytes, (unsigned long long)t);
            else if (crc_rc < 0)
                rc = tfrec_fail(&m->res->err, crc_rc, "shard %s (task %llu) cannot be read: %s",
                                path, (unsigned long long)t, crc_msg);
            else if (has_crc && crc != (uint32_t)want_crc)
                rc = tfrec_fail(&m->res->err, TFREC_E_STATE,
                                "shard %s has CRC32C 0x%08x, task %llu's part says 0x%08x (the "
                                "same size, other bytes: written by another run?): re-run task "
                                "%llu",
                                path, crc, (unsigned long long)t, (unsigned)want_crc,
                                (unsigned long long)t);
            free(path);
            if (rc)
                return rc;
        }
    }
    tfrec_strlist_sort(&m->files);
    for (size_t i = 1; i < m->files.n; i++)
        if (!strcmp(m->files.v[i - 1], m->files.v[i]))
            return tfrec_fail(&m->res->err, TFREC_E_STATE, "shard %s is listed by two parts",
                              m->files.v[i]);
    return TFREC_OK;
}

static uint64_t count_of(const part *p, const char *key)
{
    uint64_t v = 0;
    tfrec_json_member_u64(p->counts, key, &v);
    return v;
}

static double seconds_of(const part *p)
{
    const tfrec_json_value *v = tfrec_json_member(p->counts, "seconds");
    return v && v->type == TFREC_JSON_NUM ? v->num : 0;
}

/* The elements of array member key of every part, in task order. */
static void concat(merge *m, tfrec_json *j, const char *key)
{
    tfrec_json_key(j, key);
    tfrec_json_array_begin(j);
    for (uint64_t t = 0; t < m->v[0].count; t++) {
        const tfrec_json_value *a = tfrec_json_member(m->by_index[t]->root, key);
        for (const tfrec_json_value *e = a && a->type == TFREC_JSON_ARR ? a->child : NULL; e;
             e = e->next)
            tfrec_json_emit(j, e);
    }
    tfrec_json_array_end(j);
}

static int build(merge *m)
{
    const part *p0 = m->by_index[0];
    uint64_t count = p0->count;
    tfrec_imagenet_counts *c = &m->res->counts;
    c->images_total = count_of(p0, "images_total");
    c->classes = (uint32_t)count_of(p0, "classes");
    c->shards_planned = c->shards_end = (uint32_t)p0->total;
    for (uint64_t t = 0; t < count; t++) {
        const part *p = m->by_index[t];
        c->images_written += count_of(p, "images_written");
        c->images_fixed += count_of(p, "images_fixed");
        c->images_rejected += count_of(p, "images_rejected");
        c->bytes_in += count_of(p, "bytes_in");
        c->bytes_out += count_of(p, "bytes_out");
        c->shards += (uint32_t)count_of(p, "shards");
        c->stale_removed += (uint32_t)count_of(p, "stale_removed");
        double s = seconds_of(p);
        if (s > c->seconds)
            c->seconds = s; /* the tasks ran side by side */
    }
    tfrec_json j;
    tfrec_json_init(&j, NULL);
    tfrec_json_object_begin(&j);
    tfrec_json_field_str(&j, "tool", "libtfrec imagenet converter");
    tfrec_json_field_str(&j, "version", tfrec_version());
    tfrec_json_field_str(&j, "status", "ok");
    tfrec_json_field_str(&j, "error", NULL);
    const tfrec_json_value *opts = tfrec_json_member(p0->root, "options");
    if (opts)
        tfrec_json_emit(&j, opts);
    tfrec_in_manifest_counts(&j, c);
    const tfrec_json_value *labels = tfrec_json_member(p0->root, "labels");
    if (labels)
        tfrec_json_emit(&j, labels);
    tfrec_json_key(&j, "shards");
    tfrec_json_array_begin(&j);
    for (uint64_t t = 0; t < count; t++)
        for (const tfrec_json_value *s = tfrec_json_member(m->by_index[t]->root, "shards")->child;
             s; s = s->next) {
            /* The one-process shape: without the part's crc32c. */
            tfrec_json_object_begin(&j);
            for (const tfrec_json_value *f = s->child; f; f = f->next)
                if (strcmp(f->key, "crc32c") != 0)
                    tfrec_json_emit(&j, f);
            tfrec_json_object_end(&j);
        }
    tfrec_json_array_end(&j);
    concat(m, &j, "fixed");
    concat(m, &j, "rejected");
    concat(m, &j, "stale_removed");
    tfrec_json_object_end(&j);
    tfrec_json_newline(&j);
    m->res->json = tfrec_json_take(&j);
    /* tfrec_imagenet_result_rejected() as after a one-process run. */
    for (uint64_t t = 0; t < count; t++) {
        const tfrec_json_value *a = tfrec_json_member(m->by_index[t]->root, "rejected");
        for (const tfrec_json_value *e = a && a->type == TFREC_JSON_ARR ? a->child : NULL; e;
             e = e->next)
            if (tfrec_in_notes_add(&m->res->rejected, tfrec_json_member_str(e, "path"),
                                   tfrec_json_member_str(e, "reason")))
                return tfrec_fail(&m->res->err, TFREC_E_NOMEM, "out of memory");
    }
    return TFREC_OK;
}

static int write_manifest(merge *m, const char *path)
{
    const char *json = m->res->json;
    if (!json)
        return tfrec_fail(&m->res->err, TFREC_E_NOMEM, "out of memory");
    if (tfrec_in_is_local(m->wfs, path))
        return tfrec_in_write_manifest_file(path, json, &m->res->err);
    return tfrec_in_write_fs(m->wfs, path, json, "the manifest", &m->res->err);
}

static int run(merge *m, const tfrec_imagenet_merge_options *opts, char **manifest)
{
    int rc = TFREC_STRUCT_IN(tfrec_imagenet_merge_options, &m->o, opts, &m->res->err);
    if (rc)
        return rc;
    if (!m->o.output_dir || !*m->o.output_dir)
        return tfrec_fail(&m->res->err, TFREC_E_INVALID, "merging needs the output directory");
    *manifest = m->o.manifest_path && *m->o.manifest_path
                    ? strdup(m->o.manifest_path)
                    : tfrec_in_join(m->o.output_dir, "manifest.json");
    if (!*manifest)
        return tfrec_fail(&m->res->err, TFREC_E_NOMEM, "out of memory");
    resolve_fs(m);
    tfrec_strlist names = { 0 };
    if (m->o.parts) {
        for (size_t i = 0; !rc && i < m->o.nparts; i++)
            rc = load_part(m, m->o.parts[i]);
    } else if (!(rc = m->legacy || tfrec_in_is_local(m->o.fs, m->o.output_dir)
                          ? list_local(m, &names)
                          : list_parts(m, &names))) {
        for (size_t i = 0; !rc && i < names.n; i++)
            rc = load_part(m, names.v[i]);
    }
    tfrec_strlist_free(&names);
    if (!rc && m->n == 0)
        rc = tfrec_fail(&m->res->err, TFREC_E_NOT_FOUND,
                        "%s holds no manifest part (" IN_PART_PREFIX "*-of-*.json): run the "
                        "tasks (--task_index, --num_tasks) first",
                        m->o.output_dir);
    if (!rc)
        rc = check_parts(m);
    if (!rc)
        rc = check_shards(m);
    if (!rc)
        rc = build(m);
    if (!rc)
        rc = write_manifest(m, *manifest);
    return rc;
}

int tfrec_imagenet_merge_manifests(const tfrec_imagenet_merge_options *opts,
                                   tfrec_imagenet_result **out)
{
    if (out)
        *out = NULL;
    merge m;
    memset(&m, 0, sizeof m);
    m.res = calloc(1, sizeof *m.res);
    if (!m.res)
        return tfrec_fail(NULL, TFREC_E_NOMEM, "out of memory");
    char *manifest = NULL;
    int rc = opts ? run(&m, opts, &manifest)
                  : tfrec_fail(&m.res->err, TFREC_E_INVALID, "merging needs options");
    m.res->status = rc;
    if (rc) {
        tfrec_fail(NULL, rc, "%s", m.res->err.msg);
        free(m.res->json);
        m.res->json = NULL;
    }
    for (size_t i = 0; i < m.n; i++) {
        free(m.v[i].name);
        tfrec_json_value_free(m.v[i].root);
    }
    free(m.v);
    free(m.by_index);
    tfrec_strlist_free(&m.files);
    free(manifest);
    if (out)
        *out = m.res;
    else
        tfrec_imagenet_result_free(m.res);
    return rc;
}

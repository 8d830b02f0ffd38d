/* The task identity of a training job: which of count readers this process
 * is, from the caller's flags or from the variables the job's launcher sets
 * (TF_CONFIG, CLUSTER_SPEC, torch.distributed, a Kubernetes Indexed Job).
 * Every source set must agree, so a job launched with two of them never
 * reads with two different splits. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfrec/task.h"
#include "util/config.h"
#include "util/errors.h"
#include "util/json_read.h"
#include "util/struct_size.h"

TFREC_DEFINE_STRUCT_INIT(tfrec_task_options)
TFREC_DEFINE_STRUCT_INIT(tfrec_task_identity)

/* TF_CONFIG lists every host of the cluster: room for thousands. */
#define CLUSTER_TEXT_MAX (1u << 20)

/* One source's reading: set, or not. */
typedef struct found {
    int set;
    uint32_t index, count;
    int32_t local_rank;
    char type[32];
    int source;
} found;

const char *tfrec_task_source_name(int source)
{
    switch (source) {
    case TFREC_TASK_SOURCE_NONE: return "no task variable";
    case TFREC_TASK_SOURCE_EXPLICIT: return "the given index and count";
    case TFREC_TASK_SOURCE_TF_CONFIG: return "TF_CONFIG";
    case TFREC_TASK_SOURCE_CLUSTER_SPEC: return "CLUSTER_SPEC";
    case TFREC_TASK_SOURCE_TORCH: return "RANK/WORLD_SIZE";
    case TFREC_TASK_SOURCE_INDEXED_JOB: return "JOB_COMPLETION_INDEX/TFREC_NUM_TASKS";
    }
    return "?";
}

/* A decimal number 0..max; 0 on success, -1 otherwise. */
static int decimal(const char *text, uint64_t max, uint64_t *out)
{
    if (*text < '0' || *text > '9')
        return -1;
    char *stop = NULL;
    errno = 0;
    unsigned long long v = strtoull(text, &stop, 10);
    if (errno || *stop != '\0' || v > max)
        return -1;
    *out = v;
    return 0;
}

/* A setting as a number 0..max: 1 set, 0 unset, or an error naming it. */
static int cfg_number(tfrec_cfg_id id, const char *name, uint64_t max, uint64_t *out)
{
    char buf[64];
    int rc = tfrec_cfg(id, buf, sizeof buf);
    if (rc == 0)
        return 0;
    if (rc < 0 || decimal(buf, max, out) != 0)
        return tfrec_fail(NULL, TFREC_E_INVALID, "%s=\"%s\": not a number in 0..%llu", name,
                          rc < 0 ? "(too long)" : buf, (unsigned long long)max);
    return 1;
}

/* The role of a task type in the count of readers. */
enum role { ROLE_CHIEF, ROLE_WORKER, ROLE_EVALUATOR, ROLE_PS, ROLE_OTHER };

static enum role role_of(const char *type)
{
    if (!strcmp(type, "chief") || !strcmp(type, "master") || !strcmp(type, "workerpool0"))
        return ROLE_CHIEF;
    if (!strcmp(type, "worker") || !strcmp(type, "workerpool1"))
        return ROLE_WORKER;
    if (!strcmp(type, "evaluator") || !strcmp(type, "workerpool3"))
        return ROLE_EVALUATOR;
    if (!strcmp(type, "ps") || !strcmp(type, "workerpool2"))
        return ROLE_PS;
    return ROLE_OTHER;
}

/* Hosts of one role in the cluster object; -1 when a list is not an array. */
static long hosts_of(const tfrec_json_value *cluster, enum role role, const char **bad)
{
    long n = 0;
    for (const tfrec_json_value *m = cluster->child; m; m = m->next) {
        if (role_of(m->key) != role)
            continue;
        if (m->type != TFREC_JSON_ARR) {
            *bad = m->key;
            return -1;
        }
        for (const tfrec_json_value *h = m->child; h; h = h->next)
            n++;
    }
    return n;
}

/* TF_CONFIG or CLUSTER_SPEC: {"cluster": {type: [hosts]}, "task": {"type":
 * t, "index": i}}. Returns 1 with *f set, 0 unset, or an error. */
static int read_cluster(tfrec_cfg_id id, const char *name, int source, found *f)
{
    char *text = malloc(CLUSTER_TEXT_MAX);
    if (!text)
        return tfrec_fail(NULL, TFREC_E_NOMEM, "out of memory");
    int rc = tfrec_cfg(id, text, CLUSTER_TEXT_MAX);
    if (rc <= 0) {
        free(text);
        return rc == 0 ? 0
                       : tfrec_fail(NULL, TFREC_E_INVALID, "%s: longer than %u bytes", name,
                                    CLUSTER_TEXT_MAX - 1);
    }
    static const tfrec_json_limits limits = { CLUSTER_TEXT_MAX, 16, 1u << 20, 0 };
    tfrec_json_value *doc = NULL;
    char why[160];
    rc = tfrec_json_parse(text, strlen(text), &limits, &doc, why, sizeof why);
    free(text);
    if (rc != TFREC_OK)
        return tfrec_fail(NULL, TFREC_E_INVALID, "%s is not JSON: %s", name, why);
    const tfrec_json_value *cluster = tfrec_json_member(doc, "cluster");
    const tfrec_json_value *task = tfrec_json_member(doc, "task");
    const char *type = task ? tfrec_json_member_str(task, "type") : NULL;
    uint64_t index = 0;
    const char *bad = NULL;
    long chiefs = 0, workers = 0;
    if (!cluster || cluster->type != TFREC_JSON_OBJ || !task || !type) {
        rc = tfrec_fail(NULL, TFREC_E_INVALID,
                        "%s needs {\"cluster\": {...}, \"task\": {\"type\": ..., \"index\": "
                        "...}}",
                        name);
        goto done;
    }
    if (tfrec_json_member(task, "index") && tfrec_json_member_u64(task, "index", &index) != 0) {
        rc = tfrec_fail(NULL, TFREC_E_INVALID, "%s: task index is not a number", name);
        goto done;
    }
    chiefs = hosts_of(cluster, ROLE_CHIEF, &bad);
    workers = chiefs < 0 ? -1 : hosts_of(cluster, ROLE_WORKER, &bad);
    if (chiefs < 0 || workers < 0) {
        rc = tfrec_fail(NULL, TFREC_E_INVALID, "%s: cluster \"%s\" is not a list of hosts", name,
                        bad);
        goto done;
    }
    enum role role = role_of(type);
    long own = role == ROLE_CHIEF ? chiefs : role == ROLE_WORKER ? workers : 0;
    if (role == ROLE_PS || role == ROLE_OTHER) {
        rc = tfrec_fail(NULL, TFREC_E_INVALID,
                        "%s: a \"%s\" task reads no training data (the readers are the chief "
                        "and the workers); give the share explicitly",
                        name, type);
        goto done;
    }
    if (role != ROLE_EVALUATOR && (uint64_t)own <= index) {
        rc = tfrec_fail(NULL, TFREC_E_INVALID,
                        "%s: task %s %llu, but the cluster lists %ld \"%s\" host(s)", name, type,
                        (unsigned long long)index, own, type);
        goto done;
    }
    if (chiefs + workers > (long)TFREC_TASK_MAX) {
        rc = tfrec_fail(NULL, TFREC_E_INVALID, "%s: more than %u tasks", name, TFREC_TASK_MAX);
        goto done;
    }
    memset(f, 0, sizeof *f);
    f->set = 1;
    f->source = source;
    f->local_rank = -1;
    snprintf(f->type, sizeof f->type, "%s", type);
    if (role == ROLE_EVALUATOR) { /* it evaluates on all of its data */
        f->index = 0;
        f->count = 1;
    } else {
        f->index = (uint32_t)((role == ROLE_WORKER ? (uint64_t)chiefs : 0) + index);
        f->count = (uint32_t)(chiefs + workers);
    }
    rc = 1;
done:
    tfrec_json_value_free(doc);
    return rc;
}

/* A pair of variables (index, count): 1 both set, 0 neither, or an error.
 * A missing half is taken from the caller's given value when there is one. */
static int read_pair(tfrec_cfg_id id_i, const char *name_i, tfrec_cfg_id id_n, const char *name_n,
                     const tfrec_task_options *o, const char *count_hint, found *f)
{
    uint64_t i = 0, n = 0;
    int has_i = cfg_number(id_i, name_i, TFREC_TASK_MAX, &i);
    if (has_i < 0)
        return has_i;
    int has_n = cfg_number(id_n, name_n, TFREC_TASK_MAX, &n);
    if (has_n < 0)
        return has_n;
    if (!has_i && !has_n)
        return 0;
    if (has_n && n == 0)
        return tfrec_fail(NULL, TFREC_E_INVALID, "%s=\"0\": there must be at least one task",
                          name_n);
    if (!has_n && !o->has_count) {
        if (o->count_name)
            return tfrec_fail(NULL, TFREC_E_INVALID, "%s is set but neither %s nor %s is: give %s",
                              name_i, o->count_name, name_n, count_hint);
        return tfrec_fail(NULL, TFREC_E_INVALID, "%s is set but %s is not: set it to %s", name_i,
                          name_n, count_hint);
    }
    if (!has_i && !o->has_index)
        return tfrec_fail(NULL, TFREC_E_INVALID,
                          "%s is set but %s is not: set it to this task's index", name_n, name_i);
    memset(f, 0, sizeof *f);
    f->set = 1;
    f->index = has_i ? (uint32_t)i : o->index;
    f->count = has_n ? (uint32_t)n : o->count;
    f->local_rank = -1;
    /* A half given by the caller is checked against the other later. */
    if (has_i && has_n && i >= n)
        return tfrec_fail(NULL, TFREC_E_INVALID, "%s=%llu is not below %s=%llu", name_i,
                          (unsigned long long)i, name_n, (unsigned long long)n);
    return 1;
}

static int read_torch(const tfrec_task_options *o, found *f)
{
    int rc = read_pair(TFREC_CFG_RANK, "RANK", TFREC_CFG_WORLD_SIZE, "WORLD_SIZE", o,
                       "the number of processes", f);
    if (rc != 1)
        return rc;
    f->source = TFREC_TASK_SOURCE_TORCH;
    uint64_t local = 0;
    int has = cfg_number(TFREC_CFG_LOCAL_RANK, "LOCAL_RANK", TFREC_TASK_MAX, &local);
    if (has < 0)
        return has;
    f->local_rank = has ? (int32_t)local : -1;
    return 1;
}

static int read_indexed_job(const tfrec_task_options *o, found *f)
{
    int rc = read_pair(TFREC_CFG_TASK_INDEX, TFREC_TASK_INDEX_ENV, TFREC_CFG_TASK_COUNT,
                       TFREC_TASK_COUNT_ENV, o,
                       "the number of tasks (the Indexed Job's completions)", f);
    if (rc == 1)
        f->source = TFREC_TASK_SOURCE_INDEXED_JOB;
    return rc;
}

/* 1 when b, a torch identity, refines cluster identity a: WORLD_SIZE =
 * a.count * k and RANK / k = a.index (k processes per machine). */
static int refines(const found *a, const found *b)
{
    if (b->source != TFREC_TASK_SOURCE_TORCH || a->source == TFREC_TASK_SOURCE_TORCH ||
        a->source == TFREC_TASK_SOURCE_INDEXED_JOB || a->count == 0 || b->count % a->count)
        return 0;
    return b->index / (b->count / a->count) == a->index;
}

/* How messages name where a source keeps the index and the count. */
static const char *index_name(int source)
{
    switch (source) {
    case TFREC_TASK_SOURCE_TORCH: return "RANK";
    case TFREC_TASK_SOURCE_INDEXED_JOB: return TFREC_TASK_INDEX_ENV;
    }
    return tfrec_task_source_name(source);
}

static const char *count_name(int source)
{
    switch (source) {
    case TFREC_TASK_SOURCE_TORCH: return "WORLD_SIZE";
    case TFREC_TASK_SOURCE_INDEXED_JOB: return TFREC_TASK_COUNT_ENV;
    }
    return tfrec_task_source_name(source);
}

int tfrec_task_resolve(const tfrec_task_options *opts, tfrec_task_identity *id)
{
    tfrec_task_options o;
    int rc = TFREC_STRUCT_IN(tfrec_task_options, &o, opts, NULL);
    if (rc != TFREC_OK)
        return rc;
    if (!id)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_task_resolve: NULL identity");
    if ((rc = TFREC_STRUCT_CHECK_OUT(tfrec_task_identity, id, NULL)) != TFREC_OK)
        return rc;
    const char *iname = o.index_name ? o.index_name : "the given index";
    const char *nname = o.count_name ? o.count_name : "the given count";
    if (o.has_count && (o.count == 0 || o.count > TFREC_TASK_MAX))
        return tfrec_fail(NULL, TFREC_E_INVALID, "%s=%u: must be 1..%u", nname, o.count,
                          TFREC_TASK_MAX);

    found best = { 0 };
    best.local_rank = -1;
    if (!(o.has_index && o.has_count)) {
        found all[4];
        int n = 0;
        memset(all, 0, sizeof all);
        if ((rc = read_cluster(TFREC_CFG_TF_CONFIG, "TF_CONFIG", TFREC_TASK_SOURCE_TF_CONFIG,
                               &all[n])) < 0)
            return rc;
        n += rc;
        if ((rc = read_cluster(TFREC_CFG_CLUSTER_SPEC, "CLUSTER_SPEC",
                               TFREC_TASK_SOURCE_CLUSTER_SPEC, &all[n])) < 0)
            return rc;
        n += rc;
        if ((rc = read_torch(&o, &all[n])) < 0)
            return rc;
        n += rc;
        if ((rc = read_indexed_job(&o, &all[n])) < 0)
            return rc;
        n += rc;
        if (n > 0)
            best = all[0];
        for (int k = 1; k < n; k++) {
            const found *b = &all[k];
            if (b->index == best.index && b->count == best.count) {
                if (b->local_rank >= 0)
                    best.local_rank = b->local_rank;
                continue;
            }
            if (refines(&best, b)) {
                char type[sizeof best.type];
                memcpy(type, best.type, sizeof type);
                best = *b;
                memcpy(best.type, type, sizeof type);
                continue;
            }
            return tfrec_fail(NULL, TFREC_E_INVALID,
                              "%s says task %u of %u but %s says task %u of %u: unset one, or "
                              "give the share explicitly",
                              tfrec_task_source_name(all[0].source), all[0].index, all[0].count,
                              tfrec_task_source_name(b->source), b->index, b->count);
        }
    }

    tfrec_task_identity out;
    memset(&out, 0, sizeof out);
    out.struct_size = sizeof out;
    out.index = o.has_index ? o.index : best.set ? best.index : 0;
    out.count = o.has_count ? o.count : best.set ? best.count : 1;
    out.local_rank = best.local_rank;
    out.source = o.has_index || (o.has_count && !best.set) ? TFREC_TASK_SOURCE_EXPLICIT
                 : best.set                                ? best.source
                                                           : TFREC_TASK_SOURCE_NONE;
    memcpy(out.task_type, best.type, sizeof out.task_type);
    if (out.index >= out.count) {
        const char *from_i = o.has_index ? iname : index_name(best.source);
        if (!o.has_count && !best.set)
            return tfrec_fail(NULL, TFREC_E_INVALID,
                              "%s=%u is not below the task count 1 (no count is set)", from_i,
                              out.index);
        const char *from_n = o.has_count ? nname : count_name(best.source);
        return tfrec_fail(NULL, TFREC_E_INVALID, "%s=%u is not below %s=%u", from_i, out.index,
                          from_n, out.count);
    }
    return TFREC_STRUCT_OUT(tfrec_task_identity, id, &out, NULL);
}

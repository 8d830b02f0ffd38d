/* libtfrec: splitting a long job into deterministic tasks.
 *
 * A job (convert an image tree into N shards, load M records into Bigtable,
 * export K key ranges) runs as `count` tasks, numbered 0..count-1, that may
 * run anywhere: processes on one machine, Dask workers, the pods of a
 * Kubernetes Indexed Job. Every task computes the same global plan and does
 * only its share of it, so the union of the tasks' outputs is the output of
 * one process running the whole job, and any task can be re-run alone.
 *
 * A share is a contiguous slice of the job's units (shards, records, ranges)
 * in plan order: the shares of one job are disjoint, cover every unit, and
 * differ in size by at most one unit. See docs/scale-out.md.
 */
#ifndef TFREC_TASK_H
#define TFREC_TASK_H

#include "common.h"

#include <stddef.h>
#include <stdint.h>

#include "error.h"

TFREC_BEGIN_DECLS

/* The environment variables a task reads its identity from:
 * JOB_COMPLETION_INDEX is set by Kubernetes for each pod of an Indexed Job;
 * TFREC_NUM_TASKS is set by the job's manifest (the Job's completions). */
#define TFREC_TASK_INDEX_ENV "JOB_COMPLETION_INDEX"
#define TFREC_TASK_COUNT_ENV "TFREC_NUM_TASKS"

/* Largest task count accepted. */
#define TFREC_TASK_MAX 1000000u

/* Task `index` of `count` gets units [*begin, *end) of units 0..units-1:
 * begin = floor(units * index / count), end likewise for index + 1 (exact
 * for every uint64_t units). TFREC_E_INVALID (nothing written) when count
 * is 0 or above TFREC_TASK_MAX, or index >= count. A task may get no unit
 * (units < count): *begin == *end. */
int tfrec_task_share(uint64_t units, uint32_t index, uint32_t count, uint64_t *begin,
                     uint64_t *end);

/* The task identity from the environment: JOB_COMPLETION_INDEX and
 * TFREC_NUM_TASKS. Neither set: *index = 0, *count = 1 (the whole job),
 * TFREC_OK. Both set to decimal integers with index < count: TFREC_OK.
 * Otherwise (one without the other, not a number, out of range)
 * TFREC_E_INVALID with a message naming the variable
 * (tfrec_last_errmsg()), *index and *count unchanged. */
int tfrec_task_from_env(uint32_t *index, uint32_t *count);

/* Where a task identity came from (tfrec_task_identity.source). */
typedef enum tfrec_task_source {
    TFREC_TASK_SOURCE_NONE = 0,         /* nothing set: task 0 of 1, the whole job */
    TFREC_TASK_SOURCE_EXPLICIT = 1,     /* the caller's index and count (flags, arguments) */
    TFREC_TASK_SOURCE_TF_CONFIG = 2,    /* TF_CONFIG (TensorFlow, AI Platform, Vertex AI) */
    TFREC_TASK_SOURCE_CLUSTER_SPEC = 3, /* CLUSTER_SPEC (Vertex AI custom jobs) */
    TFREC_TASK_SOURCE_TORCH = 4,        /* RANK and WORLD_SIZE (torch.distributed) */
    TFREC_TASK_SOURCE_INDEXED_JOB = 5   /* JOB_COMPLETION_INDEX and TFREC_NUM_TASKS */
} tfrec_task_source;

/* The environment variables of the other sources. */
#define TFREC_TASK_TF_CONFIG_ENV "TF_CONFIG"
#define TFREC_TASK_CLUSTER_SPEC_ENV "CLUSTER_SPEC"
#define TFREC_TASK_RANK_ENV "RANK"
#define TFREC_TASK_WORLD_SIZE_ENV "WORLD_SIZE"
#define TFREC_TASK_LOCAL_RANK_ENV "LOCAL_RANK"

/* What the caller knows already (since 1.1). Zero-filled (its INIT macro):
 * nothing, every part comes from the environment. */
typedef struct tfrec_task_options {
    size_t struct_size;
    int has_index; /* 1: index below is given (a flag, an argument) */
    uint32_t index;
    int has_count; /* 1: count below is given */
    uint32_t count;
    const char *index_name; /* how messages name the given index ["the given index"] */
    const char *count_name; /* ... and the given count ["the given count"] */
} tfrec_task_options;

#define TFREC_TASK_OPTIONS_INIT TFREC_STRUCT_INIT(tfrec_task_options)
void tfrec_task_options_init(tfrec_task_options *opts);

/* A resolved task identity (since 1.1). */
typedef struct tfrec_task_identity {
    size_t struct_size;
    uint32_t index;     /* 0 .. count-1 */
    uint32_t count;     /* tasks sharing the job */
    int32_t local_rank; /* LOCAL_RANK with the torch source (the device of a
                            per-device reader), else -1 */
    int32_t source;     /* tfrec_task_source of the index */
    char task_type[32]; /* TF_CONFIG / CLUSTER_SPEC task type ("chief",
                            "worker", "workerpool1", "evaluator"), else "" */
} tfrec_task_identity;

#define TFREC_TASK_IDENTITY_INIT TFREC_STRUCT_INIT(tfrec_task_identity)
void tfrec_task_identity_init(tfrec_task_identity *id);

/* This task's identity (since 1.1; docs/training.md), from, in order:
 *   1. opts: a given index and count win over every variable; a part not
 *      given comes from the environment (so a manifest may pass
 *      --num_tasks and leave the index to JOB_COMPLETION_INDEX);
 *   2. TF_CONFIG: {"cluster": {"chief": [..], "worker": [..], ..},
 *      "task": {"type": .., "index": i}}. The readers are the chief (or
 *      "master") then the workers, as AI Platform and Vertex AI count them:
 *      the chief is task 0, worker i is task chief_count + i. An
 *      evaluator is not a reader of the training data: it gets task 0 of
 *      1 (all of it) with task_type "evaluator"; a "ps" task is refused;
 *   3. CLUSTER_SPEC (Vertex AI): the same shape, where workerpool0 is the
 *      chief, workerpool1 the workers, workerpool2 parameter servers (or a
 *      reduction server) and workerpool3 evaluators;
 *   4. RANK and WORLD_SIZE (torch.distributed), LOCAL_RANK reported;
 *   5. JOB_COMPLETION_INDEX and TFREC_NUM_TASKS (Kubernetes Indexed Job).
 * The first source set gives the identity; every other one set must agree
 * with it, else TFREC_E_INVALID with a message naming both. RANK/WORLD_SIZE
 * agree with a cluster source of count tasks when they refine it (torchrun
 * with k processes per machine: WORLD_SIZE = count * k and RANK / k is the
 * cluster index); the finer torch identity is then the one returned.
 * Nothing set: task 0 of 1, source TFREC_TASK_SOURCE_NONE. opts may be
 * NULL. On error *id is unchanged. */
int tfrec_task_resolve(const tfrec_task_options *opts, tfrec_task_identity *id);

/* "TF_CONFIG", "CLUSTER_SPEC", "RANK/WORLD_SIZE", ...: a source's name in
 * messages; "?" for an unknown value. */
const char *tfrec_task_source_name(int source);

TFREC_END_DECLS
#endif

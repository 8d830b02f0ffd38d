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

TFREC_END_DECLS
#endif

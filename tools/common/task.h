/* --task_index / --num_tasks, shared by the tools that split a job into
 * tasks (include/tfrec/task.h): the flags, and their defaults from
 * JOB_COMPLETION_INDEX and TFREC_NUM_TASKS when run as a Kubernetes
 * Indexed Job. */
#ifndef TFREC_TOOLS_TASK_H
#define TFREC_TOOLS_TASK_H

#include <stdint.h>

#include "flags.h"

typedef struct cli_task {
    int64_t index; /* 0 .. count-1 */
    int64_t count; /* 1: the whole job in this process */
} cli_task;

/* The two flag table entries, for a table of cli_flag. */
#define CLI_TASK_FLAGS(t)                                                                      \
    { .name = "task_index",                                                                    \
      .type = CLI_INT64,                                                                       \
      .dest = &(t)->index,                                                                     \
      .min = 0,                                                                                \
      .max = 999999,                                                                           \
      .value_name = "I",                                                                       \
      .section = "Tasks (one share of the job; docs/scale-out.md)",                            \
      .help = "this task's share, 0 .. num_tasks-1 [from TF_CONFIG, CLUSTER_SPEC,\n"           \
              "RANK or JOB_COMPLETION_INDEX (docs/training.md), else 0]" },                    \
    {                                                                                          \
        .name = "num_tasks", .type = CLI_INT64, .dest = &(t)->count, .min = 1, .max = 1000000, \
        .value_name = "N",                                                                     \
        .help = "tasks the job is split into, each running this command with\n"                \
                "its own --task_index [from the same variables or\n"                           \
                "TFREC_NUM_TASKS, else 1]"                                                     \
    }

/* After cli_parse: fill what the flags left unset from the environment
 * and check index < count. Returns CLI_PARSED, or EXIT_USAGE after a
 * message naming the flag or variable. */
int cli_task_resolve(const cli_cmdline *cl, cli_task *t);

#endif

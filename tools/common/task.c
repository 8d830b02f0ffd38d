/* --task_index / --num_tasks with their defaults from the training job's
 * environment (tfrec_task_resolve: TF_CONFIG, CLUSTER_SPEC, RANK and
 * WORLD_SIZE, JOB_COMPLETION_INDEX and TFREC_NUM_TASKS). */
#include "task.h"

#include "tfrec/error.h"
#include "tfrec/task.h"

int cli_task_resolve(const cli_cmdline *cl, cli_task *t)
{
    /* A flag wins over the environment, one by one, so a Kubernetes
     * manifest may give --num_tasks on the command line and leave the
     * index to JOB_COMPLETION_INDEX. */
    tfrec_task_options o = TFREC_TASK_OPTIONS_INIT;
    o.index_name = "--task_index";
    o.count_name = "--num_tasks";
    if (cli_flag_seen(cl, "task_index")) {
        o.has_index = 1;
        o.index = (uint32_t)t->index;
    }
    if (cli_flag_seen(cl, "num_tasks")) {
        o.has_count = 1;
        o.count = (uint32_t)t->count;
    }
    tfrec_task_identity id = TFREC_TASK_IDENTITY_INIT;
    if (tfrec_task_resolve(&o, &id) != TFREC_OK) {
        cli_usage_error(cl, "%s", tfrec_last_errmsg());
        return EXIT_USAGE;
    }
    t->index = id.index;
    t->count = id.count;
    return CLI_PARSED;
}

/* --task_index / --num_tasks with their defaults from the environment. */
#include "task.h"

#include "tfrec/task.h"

int cli_task_resolve(const cli_cmdline *cl, cli_task *t)
{
    int index_given = cli_flag_seen(cl, "task_index");
    int count_given = cli_flag_seen(cl, "num_tasks");
    if (!index_given || !count_given) {
        uint32_t env_index, env_count;
        if (tfrec_task_from_env(&env_index, &env_count) != TFREC_OK) {
            cli_usage_error(cl, "%s", tfrec_last_errmsg());
            return EXIT_USAGE;
        }
        if (!index_given)
            t->index = env_index;
        if (!count_given)
            t->count = env_count;
    }
    if (t->count < 1)
        t->count = 1;
    if (t->index >= t->count) {
        cli_usage_error(cl, "--task_index=%lld must be below --num_tasks=%lld", (long long)t->index,
                        (long long)t->count);
        return EXIT_USAGE;
    }
    return CLI_PARSED;
}

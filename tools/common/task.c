/* --task_index / --num_tasks with their defaults from the environment. */
#include "task.h"

#include <stdlib.h>

#include "tfrec/task.h"

/* A task variable of the environment, as a number within [min, max]:
 * 1 found, 0 unset or empty, -1 after a usage message. */
static int env_value(const cli_cmdline *cl, const char *name, int64_t min, int64_t max,
                     int64_t *out)
{
    const char *text = getenv(name);
    if (!text || !*text)
        return 0;
    char *stop = NULL;
    long long v = strtoll(text, &stop, 10);
    if (*text < '0' || *text > '9' || *stop != '\0' || v < min || v > max) {
        cli_usage_error(cl, "%s=\"%s\": not a number in %lld..%lld", name, text, (long long)min,
                        (long long)max);
        return -1;
    }
    *out = v;
    return 1;
}

int cli_task_resolve(const cli_cmdline *cl, cli_task *t)
{
    /* A flag wins over its variable, one by one, so a Kubernetes manifest
     * may give --num_tasks on the command line and leave the index to
     * JOB_COMPLETION_INDEX. */
    int index_from_env = 0;
    if (!cli_flag_seen(cl, "task_index")) {
        index_from_env = env_value(cl, TFREC_TASK_INDEX_ENV, 0, TFREC_TASK_MAX - 1, &t->index);
        if (index_from_env < 0)
            return EXIT_USAGE;
    }
    int count_from_env = 0;
    if (!cli_flag_seen(cl, "num_tasks")) {
        count_from_env = env_value(cl, TFREC_TASK_COUNT_ENV, 1, TFREC_TASK_MAX, &t->count);
        if (count_from_env < 0)
            return EXIT_USAGE;
        if (!count_from_env && index_from_env) {
            cli_usage_error(cl,
                            "%s is set but neither --num_tasks nor %s is: give the number of "
                            "tasks (the Indexed Job's completions)",
                            TFREC_TASK_INDEX_ENV, TFREC_TASK_COUNT_ENV);
            return EXIT_USAGE;
        }
    }
    if (t->count < 1)
        t->count = 1;
    if (t->index >= t->count) {
        const char *index_name = index_from_env ? TFREC_TASK_INDEX_ENV : "--task_index";
        const char *count_name = count_from_env ? TFREC_TASK_COUNT_ENV : "--num_tasks";
        cli_usage_error(cl, "%s=%lld is not below %s=%lld", index_name, (long long)t->index,
                        count_name, (long long)t->count);
        return EXIT_USAGE;
    }
    return CLI_PARSED;
}

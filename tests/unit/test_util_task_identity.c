/* tfrec_task_resolve (include/tfrec/task.h): each source of a training
 * job's task identity, their order, and conflicts between them. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "tfrec/task.h"

static const char *const vars[] = { "TF_CONFIG",      "CLUSTER_SPEC", "RANK",
                                    "WORLD_SIZE",     "LOCAL_RANK",   "JOB_COMPLETION_INDEX",
                                    "TFREC_NUM_TASKS" };

static void clear_env(void)
{
    for (size_t k = 0; k < sizeof vars / sizeof vars[0]; k++)
        unsetenv(vars[k]);
}

/* Resolve with no given parts; returns the status, *id filled on success. */
static int resolve(tfrec_task_identity *id)
{
    tfrec_task_identity_init(id);
    return tfrec_task_resolve(NULL, id);
}

static int errmsg_has(const char *a, const char *b)
{
    const char *m = tfrec_last_errmsg();
    return strstr(m, a) != NULL && (!b || strstr(m, b) != NULL);
}

#define TF_CLUSTER                                                                      \
    "{\"cluster\": {\"chief\": [\"c:1\"], \"worker\": [\"w0:1\", \"w1:1\", \"w2:1\"], " \
    "\"ps\": [\"p:1\"], \"evaluator\": [\"e:1\"]}, "

static void test_nothing_set_is_the_whole_job(void)
{
    clear_env();
    tfrec_task_identity id;
    CHECK_EQ(resolve(&id), TFREC_OK);
    CHECK_EQ(id.index, 0);
    CHECK_EQ(id.count, 1);
    CHECK_EQ(id.source, TFREC_TASK_SOURCE_NONE);
    CHECK_EQ(id.local_rank, -1);
    CHECK(strcmp(id.task_type, "") == 0);
}

static void test_tf_config_counts_the_chief_first(void)
{
    clear_env();
    tfrec_task_identity id;
    setenv("TF_CONFIG", TF_CLUSTER "\"task\": {\"type\": \"chief\", \"index\": 0}}", 1);
    CHECK_EQ(resolve(&id), TFREC_OK);
    CHECK_EQ(id.index, 0);
    CHECK_EQ(id.count, 4); /* chief + 3 workers; ps and evaluator read nothing */
    CHECK_EQ(id.source, TFREC_TASK_SOURCE_TF_CONFIG);
    CHECK(strcmp(id.task_type, "chief") == 0);
    setenv("TF_CONFIG", TF_CLUSTER "\"task\": {\"type\": \"worker\", \"index\": 2}}", 1);
    CHECK_EQ(resolve(&id), TFREC_OK);
    CHECK_EQ(id.index, 3);
    CHECK_EQ(id.count, 4);
    CHECK(strcmp(id.task_type, "worker") == 0);
    /* No chief (plain MultiWorkerMirroredStrategy): worker i is task i. */
    setenv("TF_CONFIG",
           "{\"cluster\": {\"worker\": [\"a\", \"b\"]}, \"task\": {\"type\": \"worker\", "
           "\"index\": 1}}",
           1);
    CHECK_EQ(resolve(&id), TFREC_OK);
    CHECK_EQ(id.index, 1);
    CHECK_EQ(id.count, 2);
    /* AI Platform's older name for the chief. */
    setenv("TF_CONFIG",
           "{\"cluster\": {\"master\": [\"m\"], \"worker\": [\"a\"]}, \"task\": {\"type\": "
           "\"worker\", \"index\": 0}, \"environment\": \"cloud\"}",
           1);
    CHECK_EQ(resolve(&id), TFREC_OK);
    CHECK_EQ(id.index, 1);
    CHECK_EQ(id.count, 2);
}

static void test_tf_config_evaluator_and_ps(void)
{
    clear_env();
    tfrec_task_identity id;
    setenv("TF_CONFIG", TF_CLUSTER "\"task\": {\"type\": \"evaluator\", \"index\": 0}}", 1);
    CHECK_EQ(resolve(&id), TFREC_OK);
    CHECK_EQ(id.index, 0);
    CHECK_EQ(id.count, 1);
    CHECK(strcmp(id.task_type, "evaluator") == 0);
    setenv("TF_CONFIG", TF_CLUSTER "\"task\": {\"type\": \"ps\", \"index\": 0}}", 1);
    CHECK_EQ(resolve(&id), TFREC_E_INVALID);
    CHECK(errmsg_has("TF_CONFIG", "\"ps\""));
}

static void test_tf_config_malformed(void)
{
    static const char *const bad[][2] = {
        { "{\"cluster\": ", "not JSON" },
        { "{\"cluster\": {\"worker\": [\"a\"]}}", "\"task\"" },
        { TF_CLUSTER "\"task\": {\"type\": \"worker\", \"index\": 3}}", "3 \"worker\" host" },
        { TF_CLUSTER "\"task\": {\"type\": \"worker\", \"index\": -1}}", "not a number" },
        { "{\"cluster\": {\"worker\": \"a\"}, \"task\": {\"type\": \"worker\"}}",
          "not a list of hosts" },
    };
    tfrec_task_identity id;
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        clear_env();
        setenv("TF_CONFIG", bad[k][0], 1);
        id.index = 77;
        CHECK_EQ(resolve(&id), TFREC_E_INVALID);
        CHECK(errmsg_has("TF_CONFIG", bad[k][1]));
        CHECK_EQ(id.index, 0); /* resolve() initialised it; untouched after */
    }
    clear_env();
}

static void test_cluster_spec_worker_pools(void)
{
    clear_env();
    tfrec_task_identity id;
    setenv("CLUSTER_SPEC",
           "{\"cluster\": {\"workerpool0\": [\"c:2222\"], \"workerpool1\": [\"w0:2222\", "
           "\"w1:2222\"], \"workerpool2\": [\"r:2222\"]}, \"environment\": \"cloud\", "
           "\"task\": {\"type\": \"workerpool1\", \"index\": 1, \"trial\": \"\"}, "
           "\"job\": \"{}\"}",
           1);
    CHECK_EQ(resolve(&id), TFREC_OK);
    CHECK_EQ(id.index, 2);
    CHECK_EQ(id.count, 3);
    CHECK_EQ(id.source, TFREC_TASK_SOURCE_CLUSTER_SPEC);
    CHECK(strcmp(id.task_type, "workerpool1") == 0);
    setenv("CLUSTER_SPEC",
           "{\"cluster\": {\"workerpool0\": [\"c\"]}, \"task\": {\"type\": \"workerpool0\", "
           "\"index\": 0}}",
           1);
    CHECK_EQ(resolve(&id), TFREC_OK);
    CHECK_EQ(id.index, 0);
    CHECK_EQ(id.count, 1);
    clear_env();
}

static void test_torch(void)
{
    clear_env();
    tfrec_task_identity id;
    setenv("RANK", "5", 1);
    setenv("WORLD_SIZE", "8", 1);
    CHECK_EQ(resolve(&id), TFREC_OK);
    CHECK_EQ(id.index, 5);
    CHECK_EQ(id.count, 8);
    CHECK_EQ(id.local_rank, -1);
    CHECK_EQ(id.source, TFREC_TASK_SOURCE_TORCH);
    setenv("LOCAL_RANK", "1", 1);
    CHECK_EQ(resolve(&id), TFREC_OK);
    CHECK_EQ(id.local_rank, 1);
    unsetenv("WORLD_SIZE");
    CHECK_EQ(resolve(&id), TFREC_E_INVALID);
    CHECK(errmsg_has("RANK is set but WORLD_SIZE is not", NULL));
    setenv("WORLD_SIZE", "5", 1);
    CHECK_EQ(resolve(&id), TFREC_E_INVALID);
    CHECK(errmsg_has("RANK=5 is not below WORLD_SIZE=5", NULL));
    setenv("WORLD_SIZE", "x", 1);
    CHECK_EQ(resolve(&id), TFREC_E_INVALID);
    CHECK(errmsg_has("WORLD_SIZE=\"x\"", NULL));
    clear_env();
}

static void test_indexed_job(void)
{
    clear_env();
    tfrec_task_identity id;
    setenv("JOB_COMPLETION_INDEX", "2", 1);
    setenv("TFREC_NUM_TASKS", "3", 1);
    CHECK_EQ(resolve(&id), TFREC_OK);
    CHECK_EQ(id.index, 2);
    CHECK_EQ(id.count, 3);
    CHECK_EQ(id.source, TFREC_TASK_SOURCE_INDEXED_JOB);
    unsetenv("TFREC_NUM_TASKS");
    CHECK_EQ(resolve(&id), TFREC_E_INVALID);
    CHECK(errmsg_has("TFREC_NUM_TASKS", NULL));
    clear_env();
}

static void test_explicit_wins_and_fills_in(void)
{
    clear_env();
    tfrec_task_options o = TFREC_TASK_OPTIONS_INIT;
    tfrec_task_identity id = TFREC_TASK_IDENTITY_INIT;
    /* Both given: the environment (even a broken one) is not read. */
    setenv("TF_CONFIG", "not json", 1);
    o.has_index = o.has_count = 1;
    o.index = 1;
    o.count = 2;
    CHECK_EQ(tfrec_task_resolve(&o, &id), TFREC_OK);
    CHECK_EQ(id.index, 1);
    CHECK_EQ(id.count, 2);
    CHECK_EQ(id.source, TFREC_TASK_SOURCE_EXPLICIT);
    /* The count given, the index from the Indexed Job. */
    clear_env();
    setenv("JOB_COMPLETION_INDEX", "3", 1);
    o.has_index = 0;
    o.count = 4;
    CHECK_EQ(tfrec_task_resolve(&o, &id), TFREC_OK);
    CHECK_EQ(id.index, 3);
    CHECK_EQ(id.count, 4);
    o.count = 3;
    o.count_name = "--num_tasks";
    CHECK_EQ(tfrec_task_resolve(&o, &id), TFREC_E_INVALID);
    CHECK(errmsg_has("JOB_COMPLETION_INDEX=3 is not below --num_tasks=3", NULL));
    /* The index given, nothing else: the count defaults to 1. */
    clear_env();
    o.has_count = 0;
    o.has_index = 1;
    o.index = 2;
    o.index_name = "--task_index";
    CHECK_EQ(tfrec_task_resolve(&o, &id), TFREC_E_INVALID);
    CHECK(errmsg_has("--task_index=2 is not below the task count 1", NULL));
    o.has_count = 1;
    o.count = 0;
    CHECK_EQ(tfrec_task_resolve(&o, &id), TFREC_E_INVALID);
    CHECK(errmsg_has("--num_tasks=0", NULL));
}

static void test_agreeing_sources(void)
{
    /* Vertex AI sets TF_CONFIG and CLUSTER_SPEC (and RANK/WORLD_SIZE for
     * PyTorch) for the same task. */
    clear_env();
    tfrec_task_identity id;
    setenv("TF_CONFIG",
           "{\"cluster\": {\"chief\": [\"c\"], \"worker\": [\"a\", \"b\"]}, \"task\": "
           "{\"type\": \"worker\", \"index\": 0}}",
           1);
    setenv("CLUSTER_SPEC",
           "{\"cluster\": {\"workerpool0\": [\"c\"], \"workerpool1\": [\"a\", \"b\"]}, "
           "\"task\": {\"type\": \"workerpool1\", \"index\": 0}}",
           1);
    setenv("RANK", "1", 1);
    setenv("WORLD_SIZE", "3", 1);
    setenv("LOCAL_RANK", "0", 1);
    CHECK_EQ(resolve(&id), TFREC_OK);
    CHECK_EQ(id.index, 1);
    CHECK_EQ(id.count, 3);
    CHECK_EQ(id.source, TFREC_TASK_SOURCE_TF_CONFIG);
    CHECK_EQ(id.local_rank, 0);
    CHECK(strcmp(id.task_type, "worker") == 0);
    /* torchrun with 2 processes per machine refines the cluster's split:
     * machine 1 of 3 runs ranks 2 and 3 of 6. */
    setenv("RANK", "3", 1);
    setenv("WORLD_SIZE", "6", 1);
    setenv("LOCAL_RANK", "1", 1);
    CHECK_EQ(resolve(&id), TFREC_OK);
    CHECK_EQ(id.index, 3);
    CHECK_EQ(id.count, 6);
    CHECK_EQ(id.source, TFREC_TASK_SOURCE_TORCH);
    CHECK_EQ(id.local_rank, 1);
    CHECK(strcmp(id.task_type, "worker") == 0);
    clear_env();
}

static void test_conflicts_name_both(void)
{
    static const char *const pairs[][4] = {
        /* variable, value, variable, value */
        { "TF_CONFIG",
          "{\"cluster\": {\"worker\": [\"a\", \"b\"]}, \"task\": {\"type\": \"worker\", \"index\": 1}}",
          "CLUSTER_SPEC",
          "{\"cluster\": {\"workerpool0\": [\"a\"], \"workerpool1\": [\"b\", \"c\"]}, \"task\": {\"type\": \"workerpool1\", \"index\": 1}}" },
        { "TF_CONFIG",
          "{\"cluster\": {\"worker\": [\"a\", \"b\"]}, \"task\": {\"type\": \"worker\", \"index\": 1}}",
          "JOB_COMPLETION_INDEX", "0" },
        { "CLUSTER_SPEC",
          "{\"cluster\": {\"workerpool0\": [\"a\"], \"workerpool1\": [\"b\"]}, \"task\": {\"type\": \"workerpool0\", \"index\": 0}}",
          "RANK", "1" },
    };
    static const char *const names[] = { "CLUSTER_SPEC", "JOB_COMPLETION_INDEX",
                                         "RANK/WORLD_SIZE" };
    tfrec_task_identity id;
    for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
        clear_env();
        setenv(pairs[k][0], pairs[k][1], 1);
        setenv(pairs[k][2], pairs[k][3], 1);
        setenv("WORLD_SIZE", "2", 1);
        setenv("TFREC_NUM_TASKS", "2", 1);
        if (k != 2)
            unsetenv("WORLD_SIZE");
        if (k != 1)
            unsetenv("TFREC_NUM_TASKS");
        CHECK_EQ(resolve(&id), TFREC_E_INVALID);
        CHECK(errmsg_has(pairs[k][0], names[k]));
    }
    /* torch vs the Indexed Job: neither refines the other. */
    clear_env();
    setenv("RANK", "0", 1);
    setenv("WORLD_SIZE", "4", 1);
    setenv("JOB_COMPLETION_INDEX", "0", 1);
    setenv("TFREC_NUM_TASKS", "2", 1);
    CHECK_EQ(resolve(&id), TFREC_E_INVALID);
    CHECK(errmsg_has("RANK/WORLD_SIZE says task 0 of 4",
                     "JOB_COMPLETION_INDEX/TFREC_NUM_TASKS says task 0 of 2"));
    clear_env();
}

static void test_source_names(void)
{
    CHECK(strcmp(tfrec_task_source_name(TFREC_TASK_SOURCE_TF_CONFIG), "TF_CONFIG") == 0);
    CHECK(strcmp(tfrec_task_source_name(TFREC_TASK_SOURCE_TORCH), "RANK/WORLD_SIZE") == 0);
    CHECK(strcmp(tfrec_task_source_name(99), "?") == 0);
}

TESTS(TEST(test_nothing_set_is_the_whole_job), TEST(test_tf_config_counts_the_chief_first),
      TEST(test_tf_config_evaluator_and_ps), TEST(test_tf_config_malformed),
      TEST(test_cluster_spec_worker_pools), TEST(test_torch), TEST(test_indexed_job),
      TEST(test_explicit_wins_and_fills_in), TEST(test_agreeing_sources),
      TEST(test_conflicts_name_both), TEST(test_source_names))

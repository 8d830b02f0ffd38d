/* include/tfrec/task.h: the split of a job into task shares, and the task
 * identity from the environment. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "tfrec/task.h"

/* For one (units, count) pair: the shares in index order are contiguous
 * (each begins where the previous ended), start at 0, end at units, and
 * their sizes differ by at most one. Returns the number of failed checks. */
static int check_split(uint64_t units, uint32_t count)
{
    uint64_t next = 0, smallest = UINT64_MAX, largest = 0;
    for (uint32_t i = 0; i < count; i++) {
        uint64_t b = 7, e = 7;
        if (tfrec_task_share(units, i, count, &b, &e) != TFREC_OK)
            return 1;
        if (b != next || e < b)
            return 1; /* a gap, an overlap or a reversed share */
        uint64_t size = e - b;
        smallest = size < smallest ? size : smallest;
        largest = size > largest ? size : largest;
        next = e;
    }
    return next != units || largest - smallest > 1;
}

static void test_shares_cover_disjoint_balanced(void)
{
    /* Every pair up to 300 units and 70 tasks, then a pseudo-random sample
     * of large ones (the overflow-free formula is exercised near 2^64). */
    int bad = 0;
    for (uint64_t units = 0; units <= 300; units++)
        for (uint32_t count = 1; count <= 70; count++)
            bad += check_split(units, count);
    CHECK_EQ(bad, 0);
    uint64_t x = 0x9e3779b97f4a7c15u;
    for (int k = 0; k < 2000; k++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint64_t units = k % 2 ? x : x % 5000000;
        uint32_t count = (uint32_t)(x % 1000) + 1;
        bad += check_split(units, count);
    }
    CHECK_EQ(bad, 0);
    CHECK_EQ(check_split(UINT64_MAX, TFREC_TASK_MAX), 0);
}

static void test_share_values(void)
{
    uint64_t b, e;
    /* 1152 ImageNet shards over 5 tasks: 230 or 231 each, in order. */
    CHECK_EQ(tfrec_task_share(1152, 0, 5, &b, &e), TFREC_OK);
    CHECK_EQ(b, 0);
    CHECK_EQ(e, 230);
    CHECK_EQ(tfrec_task_share(1152, 4, 5, &b, &e), TFREC_OK);
    CHECK_EQ(b, 921);
    CHECK_EQ(e, 1152);
    /* Fewer units than tasks: some tasks get nothing. */
    CHECK_EQ(tfrec_task_share(2, 0, 4, &b, &e), TFREC_OK);
    CHECK_EQ(e - b, 0);
    CHECK_EQ(tfrec_task_share(2, 3, 4, &b, &e), TFREC_OK);
    CHECK_EQ(e - b, 1);
    /* One task: everything. */
    CHECK_EQ(tfrec_task_share(UINT64_MAX, 0, 1, &b, &e), TFREC_OK);
    CHECK_EQ(b, 0);
    CHECK(e == UINT64_MAX);
}

static void test_share_rejects_bad_task(void)
{
    uint64_t b = 11, e = 12;
    CHECK_EQ(tfrec_task_share(10, 0, 0, &b, &e), TFREC_E_INVALID);
    CHECK_EQ(tfrec_task_share(10, 3, 3, &b, &e), TFREC_E_INVALID);
    CHECK(strstr(tfrec_last_errmsg(), "task index 3") != NULL);
    CHECK_EQ(tfrec_task_share(10, 0, TFREC_TASK_MAX + 1, &b, &e), TFREC_E_INVALID);
    CHECK_EQ(tfrec_task_share(10, 0, 1, NULL, &e), TFREC_E_INVALID);
    CHECK_EQ(b, 11); /* untouched on failure */
    CHECK_EQ(e, 12);
}

static void set_env(const char *index, const char *count)
{
    if (index)
        setenv(TFREC_TASK_INDEX_ENV, index, 1);
    else
        unsetenv(TFREC_TASK_INDEX_ENV);
    if (count)
        setenv(TFREC_TASK_COUNT_ENV, count, 1);
    else
        unsetenv(TFREC_TASK_COUNT_ENV);
}

static void test_task_from_env(void)
{
    uint32_t i = 99, n = 99;
    set_env(NULL, NULL);
    CHECK_EQ(tfrec_task_from_env(&i, &n), TFREC_OK);
    CHECK_EQ(i, 0);
    CHECK_EQ(n, 1);
    set_env("3", "8");
    CHECK_EQ(tfrec_task_from_env(&i, &n), TFREC_OK);
    CHECK_EQ(i, 3);
    CHECK_EQ(n, 8);

    static const char *const bad[][3] = {
        { "3", NULL, "TFREC_NUM_TASKS" },
        { NULL, "4", "JOB_COMPLETION_INDEX" },
        { "8", "8", "not below" },
        { "-1", "8", "JOB_COMPLETION_INDEX=\"-1\"" },
        { "1x", "8", "not a number" },
        { "0", "0", "at least one task" },
        { "0", "99999999999", "TFREC_NUM_TASKS" },
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        i = n = 42;
        set_env(bad[k][0], bad[k][1]);
        CHECK_EQ(tfrec_task_from_env(&i, &n), TFREC_E_INVALID);
        CHECK(strstr(tfrec_last_errmsg(), bad[k][2]) != NULL);
        CHECK_EQ(i, 42);
        CHECK_EQ(n, 42);
    }
    set_env(NULL, NULL);
}

TESTS(TEST(test_shares_cover_disjoint_balanced), TEST(test_share_values),
      TEST(test_share_rejects_bad_task), TEST(test_task_from_env))

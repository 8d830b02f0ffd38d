/* Task shares: the split of a job into `count` balanced contiguous slices,
 * and the task identity a Kubernetes Indexed Job gives through the
 * environment. */
#include "tfrec/task.h"

#include <errno.h>
#include <stdlib.h>

#include "util/errors.h"
#include "util/config.h"

/* floor(units * index / count) without overflow: units = q*count + r, so
 * units*index/count = q*index + floor(r*index/count), and r*index fits in
 * 64 bits because r < count <= TFREC_TASK_MAX and index <= count. */
static uint64_t share_start(uint64_t units, uint64_t index, uint64_t count)
{
    uint64_t q = units / count, r = units % count;
    return q * index + r * index / count;
}

int tfrec_task_share(uint64_t units, uint32_t index, uint32_t count, uint64_t *begin, uint64_t *end)
{
    if (!begin || !end)
        return tfrec_fail(NULL, TFREC_E_INVALID, "task share: NULL output");
    if (count == 0 || count > TFREC_TASK_MAX)
        return tfrec_fail(NULL, TFREC_E_INVALID, "task count %u: must be 1..%u", count,
                          TFREC_TASK_MAX);
    if (index >= count)
        return tfrec_fail(NULL, TFREC_E_INVALID, "task index %u: must be below the task count %u",
                          index, count);
    *begin = share_start(units, index, count);
    *end = share_start(units, (uint64_t)index + 1, count);
    return TFREC_OK;
}

/* A decimal number 0..max from the environment variable name. */
static int env_number(const char *name, const char *text, uint32_t max, uint32_t *out)
{
    char *stop = NULL;
    errno = 0;
    if (*text < '0' || *text > '9')
        goto bad;
    unsigned long long v = strtoull(text, &stop, 10);
    if (errno || *stop != '\0' || v > max)
        goto bad;
    *out = (uint32_t)v;
    return TFREC_OK;
bad:
    return tfrec_fail(NULL, TFREC_E_INVALID, "%s=\"%s\": not a number in 0..%u", name, text, max);
}

int tfrec_task_from_env(uint32_t *index, uint32_t *count)
{
    if (!index || !count)
        return tfrec_fail(NULL, TFREC_E_INVALID, "task from environment: NULL output");
    char ibuf[64], nbuf[64];
    /* (an over-long value is kept as "?" so it is reported as not a number) */
    int hi = tfrec_cfg(TFREC_CFG_TASK_INDEX, ibuf, sizeof ibuf);
    int hn = tfrec_cfg(TFREC_CFG_TASK_COUNT, nbuf, sizeof nbuf);
    const char *i_text = hi > 0 ? ibuf : hi < 0 ? "?" : NULL;
    const char *n_text = hn > 0 ? nbuf : hn < 0 ? "?" : NULL;
    if (!i_text && !n_text) {
        *index = 0;
        *count = 1;
        return TFREC_OK;
    }
    if (!n_text)
        return tfrec_fail(NULL, TFREC_E_INVALID,
                          "%s is set but %s is not: set it to the number of tasks "
                          "(the Indexed Job's completions)",
                          TFREC_TASK_INDEX_ENV, TFREC_TASK_COUNT_ENV);
    if (!i_text)
        return tfrec_fail(NULL, TFREC_E_INVALID,
                          "%s is set but %s is not: set it to this task's index",
                          TFREC_TASK_COUNT_ENV, TFREC_TASK_INDEX_ENV);
    uint32_t i, n;
    int rc = env_number(TFREC_TASK_COUNT_ENV, n_text, TFREC_TASK_MAX, &n);
    if (rc == TFREC_OK && n == 0)
        rc = tfrec_fail(NULL, TFREC_E_INVALID, "%s=0: there must be at least one task",
                        TFREC_TASK_COUNT_ENV);
    if (rc == TFREC_OK)
        rc = env_number(TFREC_TASK_INDEX_ENV, i_text, TFREC_TASK_MAX, &i);
    if (rc == TFREC_OK && i >= n)
        rc = tfrec_fail(NULL, TFREC_E_INVALID, "%s=%u is not below %s=%u", TFREC_TASK_INDEX_ENV, i,
                        TFREC_TASK_COUNT_ENV, n);
    if (rc != TFREC_OK)
        return rc;
    *index = i;
    *count = n;
    return TFREC_OK;
}

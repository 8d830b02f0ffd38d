/* Helpers every benchmark program uses: clocks and a fast deterministic
 * random sequence (the same numbers on every run, so runs compare). */
#ifndef TFREC_BENCH_UTIL_H
#define TFREC_BENCH_UTIL_H

#include <stdint.h>
#include <time.h>

/* Wall time in seconds (monotonic). */
static inline double bench_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* CPU time (user + system) of this process in seconds: on a shared machine
 * wall time mostly measures the other jobs. */
static inline double bench_cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* xorshift64: one sequence per program, from a fixed seed. */
static inline uint64_t bench_rand(void)
{
    static uint64_t s = 0x9E3779B97F4A7C15ull;
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
}

#endif

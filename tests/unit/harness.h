/* A small unit-test harness: each test is a void function; CHECK stops the
 * test at the first failed assertion. Usage:
 *
 *   static void test_something(void) { CHECK(1 + 1 == 2); }
 *   TESTS(TEST(test_something), ...)
 *
 * The binary prints one line per test and a closing "N passed, N failed". */
#ifndef TFREC_TEST_HARNESS_H
#define TFREC_TEST_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct harness_test {
    const char *name;
    void (*fn)(void);
} harness_test;

void harness_fail(const char *file, int line, const char *fmt, ...);
int harness_main(int argc, char **argv, const harness_test *tests, size_t n);
/* A fresh temporary directory for this test binary (removed at exit). */
const char *harness_tmpdir(void);
/* Path inside harness_tmpdir(); returns a static buffer rotated over 8 slots. */
const char *harness_path(const char *name);
/* Run this test binary again as argv (argv[0] is its name) with the
 * environment variables envs[0..2*nenv) (name, value; a NULL value unsets
 * it), and capture its standard output, NUL-terminated, in out. Settings
 * read once per process are tested this way. Returns the child's exit
 * status, or -1 if it could not run or did not exit. */
int harness_run_self(const char *const *argv, const char *const *envs, size_t nenv, char *out,
                     size_t cap);
/* Deterministic pseudo-random bytes (xorshift), for reproducible data. */
void harness_random(void *buf, size_t len, uint64_t seed);

#define CHECK(cond)                                               \
    do {                                                          \
        if (!(cond)) {                                            \
            harness_fail(__FILE__, __LINE__, "CHECK(%s)", #cond); \
            return;                                               \
        }                                                         \
    } while (0)

#define CHECKF(cond, ...)                                  \
    do {                                                   \
        if (!(cond)) {                                     \
            harness_fail(__FILE__, __LINE__, __VA_ARGS__); \
            return;                                        \
        }                                                  \
    } while (0)

#define CHECK_EQ(a, b)                                                                           \
    do {                                                                                         \
        long long a_ = (long long)(a), b_ = (long long)(b);                                      \
        if (a_ != b_) {                                                                          \
            harness_fail(__FILE__, __LINE__, "%s == %lld, expected %s == %lld", #a, a_, #b, b_); \
            return;                                                                              \
        }                                                                                        \
    } while (0)

#define TEST(fn) \
    {            \
#fn, fn  \
    }
#define TESTS(...)                                                                 \
    int main(int argc, char **argv)                                                \
    {                                                                              \
        static const harness_test tests_[] = { __VA_ARGS__ };                      \
        return harness_main(argc, argv, tests_, sizeof tests_ / sizeof tests_[0]); \
    }

#ifdef __cplusplus
}
#endif
#endif

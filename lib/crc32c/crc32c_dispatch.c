/* CRC32C entry points and the choice of implementation.
 *
 * The choice is made once, on the first call from any thread (pthread_once),
 * from the CPU's features and the TFREC_CRC32C environment variable, and
 * published through an atomic function pointer; afterwards every call is
 * one acquire load (a plain load on x86 and arm64) and an indirect call. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "crc32c/crc32c_internal.h"
#include "tfrec/crc32c.h"
#include "tfrec/error.h"
#include "util/errors.h"
#include "util/config.h"

#define IMPL_COUNT (TFREC_CRC32C_ARM64 + 1)

static const char *const impl_names[IMPL_COUNT] = {
    "auto", "portable", "sse42", "clmul", "avx512", "arm64",
};

/* Filled once by init(); read-only afterwards. impl_fns[AUTO] is the best
 * available (each x86 folding path itself takes the crc32 instruction for
 * short input), auto_impl its number. */
static tfrec_crc32c_fn impl_fns[IMPL_COUNT];
static int auto_impl;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static _Atomic(tfrec_crc32c_fn) active_fn;
static atomic_int active_impl;

static void detect(void)
{
    impl_fns[TFREC_CRC32C_PORTABLE] = tfrec_crc32c_portable_extend;
    impl_fns[TFREC_CRC32C_AUTO] = tfrec_crc32c_portable_extend;
    auto_impl = TFREC_CRC32C_PORTABLE;
#if defined(__x86_64__)
    __builtin_cpu_init();
    int sse42 = __builtin_cpu_supports("sse4.2");
    int pclmul = sse42 && __builtin_cpu_supports("pclmul");
    /* libgcc only reports AVX-512 when the OS saves the zmm state. */
    int avx512 = pclmul && __builtin_cpu_supports("avx512f") &&
                 __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
                 __builtin_cpu_supports("vpclmulqdq");
    if (sse42) {
        impl_fns[TFREC_CRC32C_SSE42] =
            pclmul ? tfrec_crc32c_sse42_extend : tfrec_crc32c_sse42_soft_extend;
        impl_fns[TFREC_CRC32C_AUTO] = impl_fns[TFREC_CRC32C_SSE42];
        auto_impl = TFREC_CRC32C_SSE42;
    }
    if (pclmul) {
        impl_fns[TFREC_CRC32C_CLMUL] = tfrec_crc32c_clmul_extend;
        impl_fns[TFREC_CRC32C_AUTO] = tfrec_crc32c_clmul_extend;
        auto_impl = TFREC_CRC32C_CLMUL;
    }
    if (avx512) {
        impl_fns[TFREC_CRC32C_AVX512] = tfrec_crc32c_avx512_extend;
        impl_fns[TFREC_CRC32C_AUTO] = tfrec_crc32c_avx512_extend;
        auto_impl = TFREC_CRC32C_AVX512;
    }
#elif defined(__aarch64__)
    if (tfrec_crc32c_arm64_supported()) {
        impl_fns[TFREC_CRC32C_ARM64] = tfrec_crc32c_arm64_extend;
        impl_fns[TFREC_CRC32C_AUTO] = tfrec_crc32c_arm64_extend;
        auto_impl = TFREC_CRC32C_ARM64;
    }
#endif
}

static void publish(int impl)
{
    atomic_store_explicit(&active_impl, impl == TFREC_CRC32C_AUTO ? auto_impl : impl,
                          memory_order_relaxed);
    atomic_store_explicit(&active_fn, impl_fns[impl], memory_order_release);
}

/* An unknown or unavailable TFREC_CRC32C value falls back to the default:
 * the library never prints, and a CRC is correct whichever path computes
 * it. tfrec_crc32c_impl() shows what was chosen. */
static void init(void)
{
    tfrec_crc32c_tables_init();
    detect();
    int impl = TFREC_CRC32C_AUTO;
    char env[32];
    if (tfrec_cfg(TFREC_CFG_CRC32C, env, sizeof env) > 0) {
        for (int i = 0; i < IMPL_COUNT; i++)
            if (strcmp(env, impl_names[i]) == 0 && impl_fns[i])
                impl = i;
    }
    publish(impl);
}

static void ensure_init(void)
{
    pthread_once(&init_once, init);
}

/* Kept out of line so the hot entry point needs no stack frame and ends in
 * a tail jump to the implementation. */
static __attribute__((noinline)) uint32_t extend_first_use(uint32_t crc, const void *data,
                                                           size_t len)
{
    ensure_init();
    tfrec_crc32c_fn fn = atomic_load_explicit(&active_fn, memory_order_acquire);
    return fn(crc, (const uint8_t *)data, len);
}

uint32_t tfrec_crc32c_extend(uint32_t crc, const void *data, size_t len)
{
    tfrec_crc32c_fn fn = atomic_load_explicit(&active_fn, memory_order_acquire);
    if (__builtin_expect(fn == NULL, 0))
        return extend_first_use(crc, data, len);
    return fn(crc, (const uint8_t *)data, len);
}

static int check_impl(int impl)
{
    if (impl < 0 || impl >= IMPL_COUNT)
        return tfrec_fail(NULL, TFREC_E_INVALID, "crc32c: no implementation number %d", impl);
    if (!impl_fns[impl])
        return tfrec_fail(NULL, TFREC_E_UNSUPPORTED,
                          "crc32c: implementation '%s' is not available on this CPU or build",
                          impl_names[impl]);
    return TFREC_OK;
}

int tfrec_crc32c_force_impl(int impl)
{
    ensure_init();
    int rc = check_impl(impl);
    if (rc == TFREC_OK)
        publish(impl);
    return rc;
}

int tfrec_crc32c_impl(void)
{
    ensure_init();
    return atomic_load_explicit(&active_impl, memory_order_relaxed);
}

const char *tfrec_crc32c_impl_name(int impl)
{
    return impl >= 0 && impl < IMPL_COUNT ? impl_names[impl] : "unknown";
}

int tfrec_crc32c_extend_with(int impl, uint32_t *crc, const void *data, size_t len)
{
    ensure_init();
    int rc = check_impl(impl);
    if (rc != TFREC_OK)
        return rc;
    if (!crc || (!data && len))
        return tfrec_fail(NULL, TFREC_E_INVALID, "crc32c: NULL crc or data");
    *crc = impl_fns[impl](*crc, (const uint8_t *)data, len);
    return TFREC_OK;
}

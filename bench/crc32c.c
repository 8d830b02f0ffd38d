/* CRC32C throughput: each of libtfrec's paths and AUTO, next to ISA-L's
 * crc32_iscsi (when built with it) and memcpy, measured in the same run.
 *
 *   build/bench/crc32c [--quick] [--python FILE]
 *
 * FILE holds "size GB/s" lines measured for Python's crc32c module by
 * bench/crc32c.sh; they are printed as one more column. Output is Markdown.
 *
 * Two modes per size:
 *  - independent: every call starts a new CRC, as when checking many
 *    records; out-of-order CPUs overlap consecutive calls.
 *  - chained: every call continues the previous result, so each call's
 *    latency is exposed (what one long stream cut into pieces sees).
 * Each figure is the best of many 5 ms rounds; the candidates take turns
 * inside every round so background load hits them alike. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tfrec/crc32c.h"
#include "tfrec/error.h"

#if defined(TFREC_HAVE_ISAL)
#include <isa-l/crc.h>
#endif

static const size_t sizes[] = { 8, 64, 1024, 64 * 1024, 8 * 1024 * 1024 };
#define NSIZES (sizeof sizes / sizeof sizes[0])

enum { K_OURS, K_ISAL, K_MEMCPY };
typedef struct candidate {
    const char *name;
    int kind;
    int impl; /* for K_OURS */
} candidate;

static unsigned char *src, *dst;
static volatile uint32_t sink;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Seconds for `iters` calls of one candidate over `len` bytes. */
static double run(const candidate *c, size_t len, long iters, int chained)
{
    uint32_t acc = 0;
    double t0 = now();
    switch (c->kind) {
    case K_OURS:
        if (chained)
            for (long i = 0; i < iters; i++)
                acc = tfrec_crc32c_extend(acc, src, len);
        else
            for (long i = 0; i < iters; i++)
                acc ^= tfrec_crc32c_extend(0, src, len);
        break;
#if defined(TFREC_HAVE_ISAL)
    case K_ISAL:
        /* crc32_iscsi takes and returns the raw register, so the CRC32C
         * inversions are done outside, as tfrec_crc32c_extend does inside. */
        if (chained)
            for (long i = 0; i < iters; i++)
                acc = ~crc32_iscsi(src, (int)len, ~acc);
        else
            for (long i = 0; i < iters; i++)
                acc ^= ~crc32_iscsi(src, (int)len, 0xffffffffu);
        break;
#endif
    case K_MEMCPY:
        for (long i = 0; i < iters; i++) {
            memcpy(dst, src, len);
            __asm__ volatile("" : : "r"(dst) : "memory");
        }
        break;
    }
    double t = now() - t0;
    sink = acc;
    return t;
}

static void select_impl(const candidate *c)
{
    if (c->kind == K_OURS)
        tfrec_crc32c_force_impl(c->impl);
}

static double python_gbps(const char *file, size_t len)
{
    if (!file)
        return 0;
    FILE *f = fopen(file, "r");
    if (!f)
        return 0;
    unsigned long sz;
    double g, found = 0;
    while (fscanf(f, "%lu %lf", &sz, &g) == 2)
        if (sz == len)
            found = g;
    fclose(f);
    return found;
}

static void human(size_t len, char *buf, size_t cap)
{
    if (len >= 1024 * 1024 && len % (1024 * 1024) == 0)
        snprintf(buf, cap, "%zu MiB", len >> 20);
    else if (len >= 1024 && len % 1024 == 0)
        snprintf(buf, cap, "%zu KiB", len >> 10);
    else
        snprintf(buf, cap, "%zu B", len);
}

int main(int argc, char **argv)
{
    int quick = 0;
    const char *pyfile = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else if (strcmp(argv[i], "--python") == 0 && i + 1 < argc)
            pyfile = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--quick] [--python FILE]\n", argv[0]);
            return 2;
        }
    }

    candidate cands[16];
    int nc = 0;
    for (int impl = TFREC_CRC32C_PORTABLE; impl <= TFREC_CRC32C_ARM64; impl++) {
        uint32_t probe = 0;
        if (tfrec_crc32c_extend_with(impl, &probe, "", 0) == TFREC_OK)
            cands[nc++] = (candidate){ tfrec_crc32c_impl_name(impl), K_OURS, impl };
    }
    cands[nc++] = (candidate){ "auto", K_OURS, TFREC_CRC32C_AUTO };
    int auto_idx = nc - 1, isal_idx = -1;
#if defined(TFREC_HAVE_ISAL)
    isal_idx = nc;
    cands[nc++] = (candidate){ "ISA-L crc32_iscsi", K_ISAL, 0 };
#endif
    cands[nc++] = (candidate){ "memcpy", K_MEMCPY, 0 };

    size_t maxlen = sizes[NSIZES - 1];
    src = aligned_alloc(64, maxlen);
    dst = aligned_alloc(64, maxlen);
    if (!src || !dst)
        return 1;
    for (size_t i = 0; i < maxlen; i++)
        src[i] = (unsigned char)(i * 2654435761u >> 13);
    memset(dst, 1, maxlen);

    /* Every candidate must agree before its speed means anything. */
    uint32_t want = 0;
    tfrec_crc32c_extend_with(TFREC_CRC32C_PORTABLE, &want, src, 1000003);
#if defined(TFREC_HAVE_ISAL)
    if (~crc32_iscsi(src, 1000003, 0xffffffffu) != want) {
        fprintf(stderr, "ISA-L crc32_iscsi disagrees with portable\n");
        return 1;
    }
#endif
    for (int c = 0; c < nc; c++) {
        if (cands[c].kind != K_OURS)
            continue;
        select_impl(&cands[c]);
        if (tfrec_crc32c_extend(0, src, 1000003) != want) {
            fprintf(stderr, "%s disagrees with portable\n", cands[c].name);
            return 1;
        }
    }

    /* Many short measurements: on a shared machine a short one is more
     * likely to run undisturbed, and the best of them is kept. */
    const int rounds = quick ? 5 : 25;
    const double slice = 0.005; /* seconds per measurement */
    static long iters[NSIZES][16];
    static double gbps[2][NSIZES][16];

    for (size_t s = 0; s < NSIZES; s++)
        for (int c = 0; c < nc; c++) {
            /* Calibrate so that one measurement lasts about `slice`. */
            select_impl(&cands[c]);
            long n = 1;
            double t;
            while ((t = run(&cands[c], sizes[s], n, 0)) < slice / 8)
                n *= 2;
            iters[s][c] = (long)(n * (slice / t)) + 1;
        }
    /* Rounds outermost: each figure's samples spread over the whole run,
     * so a burst of background load cannot spoil one cell of the table. */
    for (int r = 0; r < rounds; r++)
        for (int chained = 0; chained < 2; chained++)
            for (size_t s = 0; s < NSIZES; s++)
                for (int c = 0; c < nc; c++) {
                    select_impl(&cands[c]);
                    double t = run(&cands[c], sizes[s], iters[s][c], chained);
                    double g = (double)sizes[s] * iters[s][c] / t / 1e9;
                    if (g > gbps[chained][s][c])
                        gbps[chained][s][c] = g;
                }
    tfrec_crc32c_force_impl(TFREC_CRC32C_AUTO);

    for (int chained = 0; chained < 2; chained++) {
        printf("\n### %s calls, GB/s (best of %d)\n\n", chained ? "Chained" : "Independent",
               rounds);
        printf("| size |");
        for (int c = 0; c < nc; c++)
            printf(" %s |", cands[c].name);
        if (pyfile && !chained)
            printf(" Python crc32c |");
        if (isal_idx >= 0)
            printf(" auto / ISA-L | best path / ISA-L |");
        printf("\n|---|");
        for (int c = 0; c < nc + (pyfile && !chained) + 2 * (isal_idx >= 0); c++)
            printf("---:|");
        printf("\n");
        for (size_t s = 0; s < NSIZES; s++) {
            char h[32];
            human(sizes[s], h, sizeof h);
            printf("| %s |", h);
            double best_ours = 0;
            for (int c = 0; c < nc; c++) {
                double g = gbps[chained][s][c];
                printf(" %.2f |", g);
                if (cands[c].kind == K_OURS && g > best_ours)
                    best_ours = g;
            }
            if (pyfile && !chained)
                printf(" %.2f |", python_gbps(pyfile, sizes[s]));
            if (isal_idx >= 0)
                printf(" **%.2f** | %.2f |",
                       gbps[chained][s][auto_idx] / gbps[chained][s][isal_idx],
                       best_ours / gbps[chained][s][isal_idx]);
            printf("\n");
        }
    }
    printf("\nAUTO here is built on `%s` (see docs/crc32c.md for the method it uses "
           "at each length). Ratios above 1.0 mean faster than ISA-L; \"best path\" is "
           "the fastest of libtfrec's paths at that size.\n",
           tfrec_crc32c_impl_name(tfrec_crc32c_impl()));
    free(src);
    free(dst);
    return 0;
}

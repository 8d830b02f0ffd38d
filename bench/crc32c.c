/* CRC32C throughput: each of libtfrec's paths and AUTO, next to ISA-L's
 * crc32_iscsi (when built with it) and memcpy, measured in the same run.
 *
 *   build/bench/crc32c [--quick] [--rounds N] [--region MIB] [--python FILE]
 *
 * FILE holds "size GB/s" lines measured for Python's crc32c module by
 * bench/crc32c.sh; they are printed as one more column. Output is Markdown.
 *
 * Cases:
 *  - cache-resident, 8 B .. 1 MiB: the same buffer over and over;
 *    independent calls (every call starts a new CRC, as when checking many
 *    records; out-of-order CPUs overlap consecutive calls) and chained
 *    calls (every call continues the previous result, so its latency is
 *    exposed: one long stream cut into pieces).
 *  - streamed, 8 MiB: buffers walked through a region much larger than
 *    the last-level cache (--region, default 256 MiB), so every byte comes
 *    from memory, as when checking a file just read.
 *
 * Every figure is the median over N rounds (default 7, --quick 3), with
 * the range. Within a round the candidates take turns burst by burst
 * (cache-resident) or call by call in a shuffled order (streamed), so
 * background load hits them alike; each ratio to ISA-L is taken per round and its median is
 * the verdict against the target (>= 1.0x). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "tfrec/crc32c.h"
#include "tfrec/error.h"

#if defined(TFREC_HAVE_ISAL)
#include <isa-l/crc.h>
#endif

/* Cache-resident sizes, then the streamed case (index NRES). */
static const size_t res_sizes[] = { 8, 64, 1024, 64 * 1024, 1024 * 1024 };
#define NRES (sizeof res_sizes / sizeof res_sizes[0])
#define NCASES (NRES + 1)
#define STREAM_LEN ((size_t)8 << 20)
#define MAX_ROUNDS 64
#define MAX_CANDS 16
#define MAX_CALLS 256 /* streamed calls per candidate and round */

enum { K_OURS, K_ISAL, K_MEMCPY };
typedef struct candidate {
    const char *name;
    int kind;
    int impl; /* for K_OURS */
} candidate;

static unsigned char *region, *dst;
static size_t region_len;
static volatile uint32_t sink;

static void select_impl(const candidate *c)
{
    if (c->kind == K_OURS)
        tfrec_crc32c_force_impl(c->impl);
}

/* One call of a candidate; `acc` is the previous result when chained. */
static inline uint32_t call(const candidate *c, uint32_t acc, const unsigned char *p, size_t len,
                            int chained)
{
    uint32_t start = chained ? acc : 0;
    switch (c->kind) {
    case K_OURS:
        return chained ? tfrec_crc32c_extend(start, p, len) : acc ^ tfrec_crc32c_extend(0, p, len);
#if defined(TFREC_HAVE_ISAL)
    case K_ISAL:
        /* crc32_iscsi takes and returns the raw register, so the CRC32C
         * inversions are done outside, as tfrec_crc32c_extend does inside. */
        return chained ? ~crc32_iscsi((unsigned char *)p, (int)len, ~start)
                       : acc ^ ~crc32_iscsi((unsigned char *)p, (int)len, 0xffffffffu);
#endif
    default:
        memcpy(dst, p, len);
        __asm__ volatile("" : : "r"(dst) : "memory");
        return acc;
    }
}

/* Seconds for `iters` calls over the same `len` bytes. */
static double burst(const candidate *c, size_t len, long iters, int chained)
{
    uint32_t acc = 0;
    double t0 = bench_now();
    for (long i = 0; i < iters; i++)
        acc = call(c, acc, region, len, chained);
    double t = bench_now() - t0;
    sink = acc;
    return t;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median, min and max of n values (1 <= n <= MAX_CALLS). */
static void stats(const double *v, int n, double *med, double *lo, double *hi)
{
    double s[MAX_CALLS];
    memcpy(s, v, n * sizeof *v);
    qsort(s, n, sizeof *s, cmp_double);
    *med = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    *lo = s[0];
    *hi = s[n - 1];
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

static void case_name(size_t k, char *buf, size_t cap)
{
    if (k == NRES) {
        snprintf(buf, cap, "8 MiB streamed");
        return;
    }
    size_t len = res_sizes[k];
    if (len >= 1024 * 1024)
        snprintf(buf, cap, "%zu MiB", len >> 20);
    else if (len >= 1024)
        snprintf(buf, cap, "%zu KiB", len >> 10);
    else
        snprintf(buf, cap, "%zu B", len);
}

static candidate cands[MAX_CANDS];
static int nc, auto_idx, isal_idx = -1;
/* gbps[chained][case][candidate][round] */
static double gbps[2][NCASES][MAX_CANDS][MAX_ROUNDS];

/* One round of the cache-resident cases: `bursts` bursts of each
 * candidate in turn; the round's figure is a candidate's best burst (a
 * burst that a neighbour's work interrupted says nothing about the code). */
static void resident_round(int r, int chained, long iters[NRES][MAX_CANDS], int bursts)
{
    for (size_t s = 0; s < NRES; s++)
        for (int b = 0; b < bursts; b++)
            for (int i = 0; i < nc; i++) {
                int c = (i + r + b) % nc;
                select_impl(&cands[c]);
                double t = burst(&cands[c], res_sizes[s], iters[s][c], chained);
                double g = (double)res_sizes[s] * iters[s][c] / t / 1e9;
                if (g > gbps[chained][s][c][r])
                    gbps[chained][s][c][r] = g;
            }
}

/* One round of the streamed case: `calls` calls per candidate, each on the
 * next 8 MiB of the region (so its data was last touched a whole region
 * ago); the candidates take turns call by call in a shuffled order, so no
 * one always follows the same neighbour (memcpy leaves dirty lines behind,
 * a prefetcher warms the next buffer). The round's figure is the median
 * call: a call that the scheduler interrupted says nothing about the code. */
static void streamed_round(int r, size_t *pos, int calls)
{
    static double rate[MAX_CANDS][MAX_CALLS];
    static unsigned rng = 12345;
    int order[MAX_CANDS];
    for (int k = 0; k < calls; k++) {
        for (int i = 0; i < nc; i++)
            order[i] = i;
        for (int i = nc - 1; i > 0; i--) {
            rng = rng * 1103515245u + 12345u;
            int j = (int)((rng >> 16) % (unsigned)(i + 1)), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        for (int i = 0; i < nc; i++) {
            int c = order[i];
            select_impl(&cands[c]);
            const unsigned char *p = region + *pos;
            double t0 = bench_now();
            sink ^= call(&cands[c], 0, p, STREAM_LEN, 0);
            rate[c][k] = (double)STREAM_LEN / (bench_now() - t0) / 1e9;
            *pos += STREAM_LEN;
            if (*pos + STREAM_LEN > region_len)
                *pos = 0;
        }
    }
    for (int c = 0; c < nc; c++) {
        double lo, hi;
        stats(rate[c], calls, &gbps[0][NRES][c][r], &lo, &hi);
    }
}

static void print_table(int chained, int rounds, const char *pyfile)
{
    printf("\n### %s calls, GB/s (median of %d rounds)\n\n", chained ? "Chained" : "Independent",
           rounds);
    printf("| case |");
    for (int c = 0; c < nc; c++)
        printf(" %s |", cands[c].name);
    int py = pyfile && !chained;
    if (py)
        printf(" Python crc32c |");
    printf("\n|---|");
    for (int c = 0; c < nc + py; c++)
        printf("---:|");
    printf("\n");
    for (size_t k = 0; k < (chained ? NRES : NCASES); k++) {
        char h[32];
        case_name(k, h, sizeof h);
        printf("| %s |", h);
        for (int c = 0; c < nc; c++) {
            double med, lo, hi;
            stats(gbps[chained][k][c], rounds, &med, &lo, &hi);
            printf(" %.2f |", med);
        }
        if (py) {
            double g = k < NRES ? python_gbps(pyfile, res_sizes[k]) : 0;
            if (g > 0)
                printf(" %.2f |", g);
            else
                printf(" - |");
        }
        printf("\n");
    }
}

/* The verdict: auto against ISA-L, per round, for every case. */
static void print_target(int chained, int rounds)
{
    printf("\n### Against the target: auto >= 1.0x ISA-L `crc32_iscsi`, %s calls\n\n",
           chained ? "chained" : "independent");
    printf("| case | auto GB/s, median [range] | ISA-L GB/s, median [range] | auto / ISA-L, "
           "median of rounds [range] | target | verdict |\n");
    printf("|---|---:|---:|---:|---:|---|\n");
    char ratio_lines[NCASES][96]; /* for bench/run.sh, after the table */
    size_t nlines = 0;
    for (size_t k = 0; k < (chained ? NRES : NCASES); k++) {
        char h[32];
        case_name(k, h, sizeof h);
        double ratio[MAX_ROUNDS];
        for (int r = 0; r < rounds; r++)
            ratio[r] = gbps[chained][k][auto_idx][r] / gbps[chained][k][isal_idx][r];
        double am, al, ah, im, il, ih, rm, rl, rh;
        stats(gbps[chained][k][auto_idx], rounds, &am, &al, &ah);
        stats(gbps[chained][k][isal_idx], rounds, &im, &il, &ih);
        stats(ratio, rounds, &rm, &rl, &rh);
        printf("| %s | %.2f [%.2f-%.2f] | %.2f [%.2f-%.2f] | **%.2fx** [%.2f-%.2f] | >= 1.0x | "
               "%s |\n",
               h, am, al, ah, im, il, ih, rm, rl, rh, rm >= 1.0 ? "met" : "**not met**");
        for (char *c = h; *c; c++)
            if (*c == ' ')
                *c = '_';
        if (nlines < NCASES)
            snprintf(ratio_lines[nlines++], sizeof ratio_lines[0],
                     "RATIO crc32c_%s_%s_vs_isal %.3f 1.0", h, chained ? "chained" : "independent",
                     rm);
    }
    printf("\n");
    for (size_t i = 0; i < nlines; i++)
        printf("%s\n", ratio_lines[i]);
}

int main(int argc, char **argv)
{
    int quick = 0, rounds = 0;
    size_t region_mib = 256;
    const char *pyfile = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (strcmp(argv[i], "--region") == 0 && i + 1 < argc)
            region_mib = strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--python") == 0 && i + 1 < argc)
            pyfile = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--quick] [--rounds N] [--region MIB] [--python FILE]\n",
                    argv[0]);
            return 2;
        }
    }
    if (rounds <= 0)
        rounds = quick ? 3 : 7;
    if (rounds > MAX_ROUNDS || region_mib < 2 * (STREAM_LEN >> 20)) {
        fprintf(stderr, "crc32c: at most %d rounds, a region of at least %zu MiB\n", MAX_ROUNDS,
                2 * (STREAM_LEN >> 20));
        return 2;
    }

    for (int impl = TFREC_CRC32C_PORTABLE; impl <= TFREC_CRC32C_ARM64; impl++) {
        uint32_t probe = 0;
        if (tfrec_crc32c_extend_with(impl, &probe, "", 0) == TFREC_OK)
            cands[nc++] = (candidate){ tfrec_crc32c_impl_name(impl), K_OURS, impl };
    }
    auto_idx = nc;
    cands[nc++] = (candidate){ "auto", K_OURS, TFREC_CRC32C_AUTO };
#if defined(TFREC_HAVE_ISAL)
    isal_idx = nc;
    cands[nc++] = (candidate){ "ISA-L crc32_iscsi", K_ISAL, 0 };
#endif
    cands[nc++] = (candidate){ "memcpy", K_MEMCPY, 0 };

    region_len = region_mib << 20;
    region = aligned_alloc(64, region_len);
    dst = aligned_alloc(64, STREAM_LEN);
    if (!region || !dst) {
        fprintf(stderr, "crc32c: out of memory for a %zu MiB region\n", region_mib);
        return 1;
    }
    for (size_t i = 0; i < region_len; i++)
        region[i] = (unsigned char)(i * 2654435761u >> 13);
    memset(dst, 1, STREAM_LEN);

    /* Every candidate must agree before its speed means anything. */
    uint32_t want = 0;
    tfrec_crc32c_extend_with(TFREC_CRC32C_PORTABLE, &want, region, 1000003);
#if defined(TFREC_HAVE_ISAL)
    if (~crc32_iscsi(region, 1000003, 0xffffffffu) != want) {
        fprintf(stderr, "ISA-L crc32_iscsi disagrees with portable\n");
        return 1;
    }
#endif
    for (int c = 0; c < nc; c++) {
        if (cands[c].kind != K_OURS)
            continue;
        select_impl(&cands[c]);
        if (tfrec_crc32c_extend(0, region, 1000003) != want) {
            fprintf(stderr, "%s disagrees with portable\n", cands[c].name);
            return 1;
        }
    }

    /* Calibrate so that one burst lasts about 1 ms. */
    static long iters[NRES][MAX_CANDS];
    const double slice = 0.001;
    for (size_t s = 0; s < NRES; s++)
        for (int c = 0; c < nc; c++) {
            select_impl(&cands[c]);
            long n = 1;
            double t;
            while ((t = burst(&cands[c], res_sizes[s], n, 0)) < slice / 8)
                n *= 2;
            iters[s][c] = (long)(n * (slice / t)) + 1;
        }

    /* Rounds outermost, so each figure's samples spread over the run. */
    const int bursts = quick ? 3 : 5;
    /* One walk of the region per candidate and round, at least 8 calls. */
    int calls = (int)(region_len / STREAM_LEN);
    calls = calls < 8 ? 8 : calls > MAX_CALLS ? MAX_CALLS : calls;
    size_t pos = 0;
    for (int r = 0; r < rounds; r++) {
        resident_round(r, 0, iters, bursts);
        resident_round(r, 1, iters, bursts);
        streamed_round(r, &pos, calls);
    }
    tfrec_crc32c_force_impl(TFREC_CRC32C_AUTO);

    printf("\nStreamed: 8 MiB buffers walked through a %zu MiB region, every call on the next "
           "8 MiB.\n",
           region_mib);
    print_table(0, rounds, pyfile);
    print_table(1, rounds, NULL);
    if (isal_idx >= 0) {
        print_target(0, rounds);
        print_target(1, rounds);
    } else {
        printf("\nISA-L not built in (no libisal at build time): no ratios.\n");
    }
    printf("\nAUTO here is built on `%s` (docs/crc32c.md describes the method it uses at each "
           "length). Cache-resident figures are each round's best 1 ms burst; streamed "
           "figures each round's median 8 MiB call.\n",
           tfrec_crc32c_impl_name(tfrec_crc32c_impl()));
    free(region);
    free(dst);
    return 0;
}

/* Random access through an index against sequential reading, both from the
 * page cache, for 1 KiB and 110 KiB records:
 *   sequential: tfrec_reader_next over the file (CRCs checked);
 *   random:     tfrec_random_reader_read of every record in a shuffled
 *               order (one positioned read each, CRCs checked);
 *   dataset:    tfrec_dataset with shuffle, 2 reader threads (informative).
 * Usage: dataset DIR [MiB per case, default 256]. Best of 3 interleaved
 * runs; prints "=> random/sequential X.XXx (target >= 0.50x)". With
 * TFREC_MMAP=1 in the environment random reads use a mapping of the file
 * (the sequential reader too; its figure is then the mapped one) and the
 * ratio names end in _mapped. The random side's time includes opening the
 * file and loading its index. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "tfrec/tfrec.h"

enum { REPS = 3 };

static volatile uint64_t sink;

static double sequential(const char *path, uint64_t *n)
{
    tfrec_reader *r;
    if (tfrec_reader_open(&r, path, NULL) != TFREC_OK)
        exit(1);
    const uint8_t *d;
    size_t len;
    uint64_t k = 0, s = 0;
    double t0 = bench_now();
    while (tfrec_reader_next(r, &d, &len) == TFREC_OK) {
        s += d[len / 2];
        k++;
    }
    double t = bench_now() - t0;
    tfrec_reader_free(r);
    sink += s;
    *n = k;
    return t;
}

static double random_reads(const char *path, const uint64_t *order, uint64_t n)
{
    tfrec_random_reader *r;
    double t0 = bench_now(); /* the open (index load) counts too */
    if (tfrec_random_reader_open(&r, path) != TFREC_OK) {
        fprintf(stderr, "%s\n", tfrec_last_errmsg());
        exit(1);
    }
    const uint8_t *d;
    size_t len;
    uint64_t s = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (tfrec_random_reader_read(r, order[i], &d, &len) != TFREC_OK) {
            fprintf(stderr, "%s\n", tfrec_random_reader_errmsg(r));
            exit(1);
        }
        s += d[len / 2];
    }
    double t = bench_now() - t0;
    tfrec_random_reader_free(r);
    sink += s;
    return t;
}

static double dataset(const char *path, uint64_t n)
{
    tfrec_dataset_options o = TFREC_DATASET_OPTIONS_INIT;
    o.shuffle = 1;
    o.seed = 1;
    tfrec_dataset *ds;
    double t0 = bench_now();
    if (tfrec_dataset_open(&ds, &path, 1, &o) != TFREC_OK)
        exit(1);
    const uint8_t *d;
    size_t len;
    uint64_t s = 0, k = 0;
    while (tfrec_dataset_next(ds, &d, &len) == TFREC_OK) {
        s += d[len / 2];
        k++;
    }
    double t = bench_now() - t0;
    tfrec_dataset_free(ds);
    if (k != n)
        exit(1);
    sink += s;
    return t;
}

static void one_size(const char *dir, size_t rec, const char *label, uint64_t mib)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/ds-%s.tfrecord", dir, label);
    tfrec_writer_options wo = TFREC_WRITER_OPTIONS_INIT;
    wo.write_index = 1;
    tfrec_writer *w;
    if (tfrec_writer_open(&w, path, &wo) != TFREC_OK)
        exit(1);
    uint8_t *buf = malloc(rec);
    uint64_t n = (mib << 20) / (rec + 16);
    for (uint64_t i = 0; i < n; i++) {
        for (size_t j = 0; j < rec; j += 8) {
            uint64_t v = bench_rand();
            memcpy(buf + j, &v, rec - j < 8 ? rec - j : 8);
        }
        if (tfrec_writer_write(w, buf, rec) != TFREC_OK)
            exit(1);
    }
    free(buf);
    if (tfrec_writer_close(w) != TFREC_OK)
        exit(1);
    tfrec_writer_free(w);
    uint64_t *order = malloc(n * sizeof *order);
    for (uint64_t i = 0; i < n; i++)
        order[i] = i;
    for (uint64_t i = n; i > 1; i--) {
        uint64_t j = bench_rand() % i, t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
    uint64_t got;
    sequential(path, &got); /* into the page cache */
    double best_seq = 1e30, best_rand = 1e30, best_ds = 1e30;
    for (int rep = 0; rep < REPS; rep++) {
        double t = sequential(path, &got);
        if (got != n)
            exit(1);
        if (t < best_seq)
            best_seq = t;
        t = random_reads(path, order, n);
        if (t < best_rand)
            best_rand = t;
        t = dataset(path, n);
        if (t < best_ds)
            best_ds = t;
    }
    free(order);
    double seq = (double)n / best_seq, rnd = (double)n / best_rand, ds = (double)n / best_ds;
    printf("  %s records, %llu of them (%llu MiB), page cache%s\n", label, (unsigned long long)n,
           (unsigned long long)mib, getenv("TFREC_MMAP") ? ", TFREC_MMAP set" : "");
    printf("    sequential tfrec_reader_next        %12.0f records/s\n", seq);
    printf("    shuffled tfrec_random_reader_read   %12.0f records/s\n", rnd);
    printf("    shuffled tfrec_dataset, 2 threads   %12.0f records/s\n", ds);
    printf("    => random/sequential %.2fx  (target >= 0.50x)\n", rnd / seq);
    const char *m = getenv("TFREC_MMAP");
    printf("RATIO dataset_random_vs_sequential_%s%s %.2f 0.5\n", label,
           m && !strcmp(m, "1") ? "_mapped" : "", rnd / seq);
    remove(path);
    snprintf(path + strlen(path), sizeof path - strlen(path), ".idx");
    remove(path);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: dataset DIR [MiB]\n");
        return 2;
    }
    uint64_t mib = argc > 2 ? strtoull(argv[2], NULL, 10) : 256;
    one_size(argv[1], 1024, "1KiB", mib);
    one_size(argv[1], 110 * 1024, "110KiB", mib);
    return 0;
}

/* Random access through an index against sequential reading, both from the
 * page cache, for 1 KiB and 110 KiB records:
 *   sequential: tfrec_reader_next over the file (CRCs checked);
 *   random:     tfrec_random_reader_read of every record in a shuffled
 *               order (one positioned read each, CRCs checked);
 *   global:     tfrec_dataset with a global shuffle (shuffle_block 1),
 *               2 reader threads (informative);
 *   default:    tfrec_dataset with shuffle and nothing else set (for 1 KiB
 *               records a block shuffle of about 64 KiB blocks): the
 *               target, RATIO dataset_shuffled_1k_vs_sequential;
 *   epoch 2:    the default's third epoch of one open dataset (mapping
 *               and memory warm), informative.
 * For 1 KiB records it also prints the quality of each order (see
 * quality()) next to a plain shuffle buffer of the default's size.
 * Usage: dataset DIR [MiB per case, default 256]. Best of 3 interleaved
 * runs. Random reads map the file by default; with TFREC_MMAP=0 they use
 * pread() (ratio names end in _pread), with TFREC_MMAP=1 the sequential
 * reader maps too (_mapped). The random side's time includes opening the
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

/* A shuffled epoch through tfrec_dataset (shuffle_block as given: 0 the
 * default, 1 the global shuffle); when order is not NULL it gets each
 * output's record number. With epoch > 0, only that epoch of one open
 * dataset is timed. */
static double dataset(const char *path, uint64_t n, uint32_t block, uint64_t *order, uint64_t epoch)
{
    tfrec_dataset_options o = TFREC_DATASET_OPTIONS_INIT;
    o.shuffle = 1;
    o.seed = 1;
    o.shuffle_block = block;
    tfrec_dataset *ds;
    double t0 = bench_now();
    if (tfrec_dataset_open(&ds, &path, 1, &o) != TFREC_OK)
        exit(1);
    const uint8_t *d;
    size_t len;
    uint64_t s = 0, k = 0;
    for (uint64_t e = 0; e < epoch; e++) {
        if (tfrec_dataset_start_epoch(ds, e) != TFREC_OK)
            exit(1);
        while (tfrec_dataset_next(ds, &d, &len) == TFREC_OK)
            s += d[len / 2];
        t0 = bench_now();
    }
    if (tfrec_dataset_start_epoch(ds, epoch) != TFREC_OK)
        exit(1);
    while (tfrec_dataset_next(ds, &d, &len) == TFREC_OK) {
        s += d[len / 2];
        if (order && k < n) {
            size_t f;
            tfrec_dataset_position(ds, &f, &order[k]);
        }
        k++;
    }
    double t = bench_now() - t0;
    tfrec_dataset_free(ds);
    if (k != n)
        exit(1);
    sink += s;
    return t;
}

/* Shuffle quality of an epoch's order (out[i] = record delivered i-th):
 * the correlation between a record's position in the file and in the
 * output (0 for a perfect shuffle), and the share of the first 1% of
 * outputs that come from the first 10% of the file (10% for a perfect
 * shuffle). */
static void quality(const char *what, const uint64_t *out, uint64_t n)
{
    double mean = (n - 1) / 2.0, sxy = 0, sxx = 0;
    uint64_t first = n / 100 ? n / 100 : 1, early = 0;
    for (uint64_t i = 0; i < n; i++) {
        sxy += ((double)i - mean) * ((double)out[i] - mean);
        sxx += ((double)i - mean) * ((double)i - mean);
        if (i < first && out[i] < n / 10)
            early++;
    }
    printf("    %-40s correlation %6.3f  first 1%% from first 10%%: %5.1f%%\n", what, sxy / sxx,
           100.0 * (double)early / (double)first);
}

/* A plain shuffle buffer of size slots over the file in order, as a
 * streaming pipeline without a block shuffle would use. */
static void plain_buffer(uint64_t *out, uint64_t n, uint64_t size)
{
    uint64_t *buf = malloc(size * sizeof *buf), fill = 0, k = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (fill < size) {
            buf[fill++] = i;
            continue;
        }
        uint64_t j = bench_rand() % fill;
        out[k++] = buf[j];
        buf[j] = i;
    }
    while (fill) {
        uint64_t j = bench_rand() % fill;
        out[k++] = buf[j];
        buf[j] = buf[--fill];
    }
    free(buf);
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
    double best_seq = 1e30, best_rand = 1e30, best_ds = 1e30, best_def = 1e30, best_warm = 1e30;
    for (int rep = 0; rep < REPS; rep++) {
        double t = sequential(path, &got);
        if (got != n)
            exit(1);
        if (t < best_seq)
            best_seq = t;
        t = random_reads(path, order, n);
        if (t < best_rand)
            best_rand = t;
        t = dataset(path, n, 1, NULL, 0);
        if (t < best_ds)
            best_ds = t;
        t = dataset(path, n, 0, NULL, 0);
        if (t < best_def)
            best_def = t;
        t = dataset(path, n, 0, NULL, 2);
        if (t < best_warm)
            best_warm = t;
    }
    double seq = (double)n / best_seq, rnd = (double)n / best_rand, ds = (double)n / best_ds;
    double def = (double)n / best_def, warm = (double)n / best_warm;
    printf("  %s records, %llu of them (%llu MiB), page cache%s%s\n", label, (unsigned long long)n,
           (unsigned long long)mib, getenv("TFREC_MMAP") ? ", TFREC_MMAP=" : "",
           getenv("TFREC_MMAP") ? getenv("TFREC_MMAP") : "");
    printf("    sequential tfrec_reader_next        %12.0f records/s\n", seq);
    printf("    shuffled tfrec_random_reader_read   %12.0f records/s\n", rnd);
    printf("    global-shuffled tfrec_dataset       %12.0f records/s\n", ds);
    printf("    shuffled tfrec_dataset, defaults    %12.0f records/s\n", def);
    printf("    the same, third epoch of one open   %12.0f records/s\n", warm);
    printf("    => defaults/sequential %.2fx (target >= 0.50x); random reader %.2fx, global "
           "%.2fx, third epoch %.2fx\n",
           def / seq, rnd / seq, ds / seq, warm / seq);
    const char *m = getenv("TFREC_MMAP");
    const char *tag = m && !strcmp(m, "1") ? "_mapped" : m && !strcmp(m, "0") ? "_pread" : "";
    printf("RATIO dataset_shuffled_%s_vs_sequential%s %.2f 0.5\n", rec == 1024 ? "1k" : "110k", tag,
           def / seq);
    if (rec == 1024 && !m) { /* the order's quality: once, it does not depend on the I/O */
        /* The default's block: 64 KiB of records (lib/dataset/dataset.c). */
        uint64_t block = (64u << 10) / (rec + 16);
        dataset(path, n, 1, order, 0);
        quality("global shuffle", order, n);
        dataset(path, n, 0, order, 0);
        char what[80];
        snprintf(what, sizeof what, "default: block shuffle %llu, buffer %llu",
                 (unsigned long long)block, (unsigned long long)(16 * block));
        quality(what, order, n);
        plain_buffer(order, n, 16 * block);
        snprintf(what, sizeof what, "plain shuffle buffer %llu", (unsigned long long)(16 * block));
        quality(what, order, n);
    }
    free(order);
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

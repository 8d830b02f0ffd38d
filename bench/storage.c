/* Moves bytes through include/tfrec/storage.h, for bench/storage.sh and
 * tests/python/test_storage_interop.py (names are local paths or gs://):
 *
 *   build/bench/storage [OPTIONS] copy SRC DEST
 *   build/bench/storage [OPTIONS] copy-many THREADS LIST
 *       LIST: a file of "SRC DEST" lines, copied by THREADS threads that
 *       share one client
 *   build/bench/storage [OPTIONS] records THREADS NAME...
 *       reads every TFRecord file (THREADS at a time) and counts records
 *
 * DEST "/dev/null" discards the bytes (a sink would write a temporary file
 * next to it). Options set the client's tfrec_storage_options:
 *   --chunk BYTES  --parallel N  --read-ahead BYTES  --no-checksum
 * --buffer BYTES, the size of each read/write call (default 1 MiB), and
 * --ranged LEN, sources read as the slice [0, LEN) with ranged GETs (the
 * random-access path) instead of one streamed GET.
 * Prints "bytes N records N files N seconds S" on success; on failure the
 * library's message and exit status 1 (2 for usage). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "tfrec/error.h"
#include "tfrec/io.h"
#include "tfrec/record.h"
#include "tfrec/storage.h"

typedef struct job {
    char *src, *dest;
} job;

typedef struct shared {
    tfrec_storage *st;
    job *jobs;
    size_t njobs;
    size_t next; /* under lock */
    int records; /* 1: count records of src, no dest */
    size_t buffer;
    uint64_t ranged; /* > 0: read sources as the slice [0, ranged) (ranged GETs) */
    pthread_mutex_t lock;
    unsigned long long bytes, nrecords; /* under lock */
    int failed;                         /* under lock */
} shared;

static const char *io_message(const tfrec_io *io)
{
    const char *m = io->errmsg ? io->errmsg(io->ctx) : NULL;
    return m && *m ? m : tfrec_last_errmsg();
}

/* Copies src to dest; returns the byte count or -1 (message printed). */
static long long copy_one(shared *sh, const char *src, const char *dest, unsigned char *buf)
{
    tfrec_io in = TFREC_IO_INIT, out = TFREC_IO_INIT;
    int discard = strcmp(dest, "/dev/null") == 0;
    long long total = 0;
    int rc = sh->ranged ? tfrec_storage_open_source_range(sh->st, &in, src, 0, sh->ranged)
                        : tfrec_storage_open_source(sh->st, &in, src);
    if (rc != TFREC_OK) {
        fprintf(stderr, "storage: %s: %s\n", src, tfrec_last_errmsg());
        return -1;
    }
    if (!discard && tfrec_storage_open_sink(sh->st, &out, dest) != TFREC_OK) {
        fprintf(stderr, "storage: %s: %s\n", dest, tfrec_last_errmsg());
        in.close(in.ctx, 0);
        return -1;
    }
    for (;;) {
        ptrdiff_t n = in.read(in.ctx, buf, sh->buffer);
        if (n == 0)
            break;
        if (n < 0) {
            fprintf(stderr, "storage: reading %s: %s\n", src, io_message(&in));
            goto fail;
        }
        if (!discard && out.write(out.ctx, buf, (size_t)n) != TFREC_OK) {
            fprintf(stderr, "storage: writing %s: %s\n", dest, io_message(&out));
            goto fail;
        }
        total += n;
    }
    if (in.close(in.ctx, 1) != TFREC_OK) {
        fprintf(stderr, "storage: %s: %s\n", src, tfrec_last_errmsg());
        if (!discard)
            out.close(out.ctx, 0);
        return -1;
    }
    if (!discard && out.close(out.ctx, 1) != TFREC_OK) {
        fprintf(stderr, "storage: finishing %s: %s\n", dest, tfrec_last_errmsg());
        return -1;
    }
    return total;
fail:
    in.close(in.ctx, 0);
    if (!discard)
        out.close(out.ctx, 0);
    return -1;
}

/* Counts the records of one TFRecord file; -1 on failure. */
static long long count_one(shared *sh, const char *name, unsigned long long *bytes)
{
    tfrec_reader *r = NULL;
    const uint8_t *data;
    size_t len;
    long long n = 0;
    int rc;
    if (tfrec_storage_reader_open(sh->st, &r, name, NULL) != TFREC_OK) {
        fprintf(stderr, "storage: %s: %s\n", name, tfrec_last_errmsg());
        return -1;
    }
    while ((rc = tfrec_reader_next(r, &data, &len)) == TFREC_OK) {
        n++;
        *bytes += len;
    }
    if (rc != TFREC_END) {
        fprintf(stderr, "storage: %s: %s\n", name, tfrec_reader_errmsg(r));
        n = -1;
    }
    tfrec_reader_free(r);
    return n;
}

static void *worker(void *arg)
{
    shared *sh = arg;
    unsigned char *buf = malloc(sh->buffer);
    if (!buf) {
        fprintf(stderr, "storage: out of memory\n");
        pthread_mutex_lock(&sh->lock);
        sh->failed = 1;
        pthread_mutex_unlock(&sh->lock);
        return NULL;
    }
    for (;;) {
        pthread_mutex_lock(&sh->lock);
        size_t i = sh->failed ? sh->njobs : sh->next++;
        pthread_mutex_unlock(&sh->lock);
        if (i >= sh->njobs)
            break;
        unsigned long long bytes = 0;
        long long n;
        if (sh->records)
            n = count_one(sh, sh->jobs[i].src, &bytes);
        else
            n = copy_one(sh, sh->jobs[i].src, sh->jobs[i].dest, buf);
        pthread_mutex_lock(&sh->lock);
        if (n < 0)
            sh->failed = 1;
        else if (sh->records) {
            sh->nrecords += (unsigned long long)n;
            sh->bytes += bytes;
        } else
            sh->bytes += (unsigned long long)n;
        pthread_mutex_unlock(&sh->lock);
    }
    free(buf);
    return NULL;
}

/* Reads "SRC DEST" lines; returns the count or -1. */
static long load_list(const char *path, job **out)
{
    FILE *f = fopen(path, "r");
    char line[8192];
    size_t n = 0, cap = 0;
    job *jobs = NULL;
    if (!f) {
        perror(path);
        return -1;
    }
    while (fgets(line, sizeof line, f)) {
        char *src = strtok(line, " \t\r\n"), *dest = strtok(NULL, " \t\r\n");
        if (!src)
            continue;
        if (!dest) {
            fprintf(stderr, "storage: %s: a line without a destination\n", path);
            fclose(f);
            return -1;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            job *grown = realloc(jobs, cap * sizeof *jobs);
            if (!grown) {
                fclose(f);
                free(jobs); /* a bench program: its strings die with it */
                return -1;
            }
            jobs = grown;
        }
        jobs[n].src = strdup(src);
        jobs[n].dest = strdup(dest);
        n++;
    }
    fclose(f);
    *out = jobs;
    return (long)n;
}

static int usage(void)
{
    fprintf(stderr, "usage: storage [--chunk B] [--parallel N] [--read-ahead B] [--buffer B] "
                    "[--no-checksum] [--deadline-ms MS] [--ranged LEN]\n"
                    "               copy SRC DEST | copy-many THREADS LIST | records THREADS "
                    "NAME...\n");
    return 2;
}

int main(int argc, char **argv)
{
    tfrec_storage_options opts = TFREC_STORAGE_OPTIONS_INIT;
    shared sh = { .buffer = 1 << 20 };
    job single;
    unsigned threads = 1;
    int i = 1;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
        const char *o = argv[i];
        if (strcmp(o, "--no-checksum") == 0) {
            opts.no_checksum = 1;
            continue;
        }
        if (i + 1 >= argc)
            return usage();
        unsigned long long v = strtoull(argv[++i], NULL, 0);
        if (strcmp(o, "--chunk") == 0)
            opts.upload_chunk_bytes = (size_t)v;
        else if (strcmp(o, "--parallel") == 0)
            opts.parallel_reads = (unsigned)v;
        else if (strcmp(o, "--read-ahead") == 0)
            opts.read_ahead_bytes = (size_t)v;
        else if (strcmp(o, "--deadline-ms") == 0)
            opts.retry_deadline_ms = (uint32_t)v;
        else if (strcmp(o, "--ranged") == 0 && v > 0)
            sh.ranged = v;
        else if (strcmp(o, "--buffer") == 0 && v > 0)
            sh.buffer = (size_t)v;
        else
            return usage();
    }
    if (i >= argc)
        return usage();
    const char *cmd = argv[i++];
    if (strcmp(cmd, "copy") == 0 && argc - i == 2) {
        single.src = argv[i];
        single.dest = argv[i + 1];
        sh.jobs = &single;
        sh.njobs = 1;
    } else if (strcmp(cmd, "copy-many") == 0 && argc - i == 2) {
        threads = (unsigned)atoi(argv[i]);
        long n = load_list(argv[i + 1], &sh.jobs);
        if (n < 0)
            return 1;
        sh.njobs = (size_t)n;
    } else if (strcmp(cmd, "records") == 0 && argc - i >= 2) {
        threads = (unsigned)atoi(argv[i++]);
        sh.records = 1;
        sh.njobs = (size_t)(argc - i);
        sh.jobs = calloc(sh.njobs, sizeof *sh.jobs);
        if (!sh.jobs)
            return 1;
        for (size_t k = 0; k < sh.njobs; k++)
            sh.jobs[k].src = argv[i + (int)k];
    } else
        return usage();
    if (threads < 1 || threads > 1024)
        return usage();
    if (tfrec_storage_new(&sh.st, &opts) != TFREC_OK) {
        fprintf(stderr, "storage: %s\n", tfrec_last_errmsg());
        return 1;
    }
    pthread_mutex_init(&sh.lock, NULL);
    double t0 = bench_now();
    pthread_t *tids = calloc(threads, sizeof *tids);
    unsigned started = 0;
    for (; tids && started < threads; started++)
        if (pthread_create(&tids[started], NULL, worker, &sh) != 0)
            break;
    if (started == 0)
        worker(&sh);
    for (unsigned k = 0; k < started; k++)
        pthread_join(tids[k], NULL);
    double secs = bench_now() - t0;
    free(tids);
    tfrec_storage_free(sh.st);
    if (sh.jobs != &single) {
        for (size_t k = 0; !sh.records && k < sh.njobs; k++) {
            free(sh.jobs[k].src);
            free(sh.jobs[k].dest);
        }
        free(sh.jobs);
    }
    if (sh.failed)
        return 1;
    printf("bytes %llu records %llu files %zu seconds %.6f\n", sh.bytes, sh.nrecords, sh.njobs,
           secs);
    return 0;
}

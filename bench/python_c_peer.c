/* The C side of bench/python.sh: the same write and read work the Python
 * benchmark does, straight through libtfrec, so the bindings' overhead shows.
 *
 *   python_c_peer write PATH COUNT SIZE [NONE|ZLIB|GZIP [BUFFER_BYTES]]
 *   python_c_peer read PATH [BUFFER_BYTES]
 *
 * Prints one line: "<op> <records> <payload bytes> <CPU seconds>".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "tfrec/tfrec.h"

static int fail(const char *what, const char *msg)
{
    fprintf(stderr, "python_c_peer: %s: %s\n", what, msg);
    return 1;
}

/* Distinct records, count * size bytes of them, like the Python side's list
 * of records: writing them reads fresh memory, not one cache-hot buffer. */
static int do_write(const char *path, long count, size_t size, int compression, size_t buffer)
{
    size_t pool_len = (size_t)count * size;
    uint8_t *pool = malloc(pool_len ? pool_len : 1);
    if (!pool)
        return fail("write", "out of memory");
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < pool_len; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        pool[i] = (uint8_t)x;
    }
    tfrec_writer_options opts = TFREC_WRITER_OPTIONS_INIT;
    opts.compression = compression;
    opts.buffer_size = buffer; /* 0: the library's default */
    tfrec_writer *w;
    double t0 = bench_cpu_now();
    if (tfrec_writer_open(&w, path, &opts) < 0) {
        free(pool);
        return fail(path, tfrec_last_errmsg());
    }
    for (long i = 0; i < count; i++) {
        if (tfrec_writer_write(w, pool + (size_t)i * size, size) < 0)
            break;
    }
    int rc = tfrec_writer_close(w);
    double t = bench_cpu_now() - t0;
    if (rc < 0) {
        int r = fail(path, tfrec_writer_errmsg(w));
        tfrec_writer_free(w);
        free(pool);
        return r;
    }
    tfrec_writer_free(w);
    free(pool);
    printf("write %ld %llu %.6f\n", count, (unsigned long long)count * size, t);
    return 0;
}

static int do_read(const char *path, size_t buffer)
{
    tfrec_reader_options opts = TFREC_READER_OPTIONS_INIT;
    opts.buffer_size = buffer; /* 0: the library's default */
    tfrec_reader *r;
    double t0 = bench_cpu_now();
    if (tfrec_reader_open(&r, path, &opts) < 0)
        return fail(path, tfrec_last_errmsg());
    const uint8_t *data;
    size_t len;
    uint64_t n = 0, bytes = 0;
    unsigned sink = 0;
    int rc;
    while ((rc = tfrec_reader_next(r, &data, &len)) == TFREC_OK) {
        n++;
        bytes += len;
        if (len)
            sink += data[len - 1]; /* touch the record, as a consumer would */
    }
    double t = bench_cpu_now() - t0;
    if (rc != TFREC_END) {
        int res = fail(path, tfrec_reader_errmsg(r));
        tfrec_reader_free(r);
        return res;
    }
    tfrec_reader_free(r);
    printf("read %llu %llu %.6f %u\n", (unsigned long long)n, (unsigned long long)bytes, t,
           sink & 1);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 5 && strcmp(argv[1], "write") == 0) {
        int comp = argc > 5 ? tfrec_compression_from_name(argv[5]) : TFREC_COMPRESSION_NONE;
        if (comp < 0)
            return fail("write", "unknown compression");
        size_t buffer = argc > 6 ? (size_t)atol(argv[6]) : 0;
        return do_write(argv[2], atol(argv[3]), (size_t)atol(argv[4]), comp, buffer);
    }
    if ((argc == 3 || argc == 4) && strcmp(argv[1], "read") == 0)
        return do_read(argv[2], argc == 4 ? (size_t)atol(argv[3]) : 0);
    fprintf(stderr, "usage: python_c_peer write PATH COUNT SIZE [NONE|ZLIB|GZIP [BUFFER_BYTES]] | "
                    "read PATH [BUFFER_BYTES]\n");
    return 2;
}

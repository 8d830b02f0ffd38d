/* Helpers shared by the test_record*.c suites (static, header-only). */
#ifndef TFREC_TEST_RECORD_UTIL_H
#define TFREC_TEST_RECORD_UTIL_H

#include <dirent.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "harness.h"
#include "tfrec/tfrec.h"

/* Record i of a test file: len bytes derived from (seed, i). */
static inline void rt_payload(uint8_t *buf, size_t len, uint64_t seed, size_t i)
{
    harness_random(buf, len, seed * 1000003u + i);
}

static inline uint8_t *rt_slurp(const char *path, size_t *len)
{
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc(n > 0 ? (size_t)n : 1);
    if (p && fread(p, 1, (size_t)n, f) != (size_t)n) {
        free(p);
        p = NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return p;
}

static inline int rt_spit(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    int ok = fwrite(data, 1, len, f) == len;
    return (fclose(f) == 0 && ok) ? 0 : -1;
}

/* Write records of the given sizes; returns 0 or the failing code. */
static inline int rt_write(const char *path, int compression, const size_t *sizes, size_t n,
                           uint64_t seed)
{
    tfrec_writer_options o = { .struct_size = sizeof o, .compression = compression };
    tfrec_writer *w;
    int rc = tfrec_writer_open(&w, path, &o);
    if (rc)
        return rc;
    size_t cap = 0;
    uint8_t *buf = NULL;
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (sizes[i] > cap) {
            free(buf);
            cap = sizes[i];
            buf = malloc(cap);
        }
        rt_payload(buf, sizes[i], seed, i);
        rc = tfrec_writer_write(w, buf, sizes[i]);
    }
    free(buf);
    if (rc == 0)
        rc = tfrec_writer_close(w);
    tfrec_writer_free(w);
    return rc;
}

/* Read path expecting exactly these records; returns a description of the
 * first difference, or NULL when everything matched. */
static inline const char *rt_verify(const char *path, const tfrec_reader_options *opts,
                                    const size_t *sizes, size_t n, uint64_t seed)
{
    static char why[600];
    tfrec_reader *r;
    int rc = tfrec_reader_open(&r, path, opts);
    if (rc) {
        snprintf(why, sizeof why, "open: %d %s", rc, tfrec_last_errmsg());
        return why;
    }
    size_t cap = 0;
    uint8_t *want = NULL;
    why[0] = 0;
    for (size_t i = 0; i <= n && !why[0]; i++) {
        const uint8_t *data;
        size_t len;
        rc = tfrec_reader_next(r, &data, &len);
        if (i == n) {
            if (rc != TFREC_END)
                snprintf(why, sizeof why, "expected END after %zu records, got %d %s", n, rc,
                         tfrec_reader_errmsg(r));
            break;
        }
        if (rc != TFREC_OK) {
            snprintf(why, sizeof why, "record %zu: code %d %s", i, rc, tfrec_reader_errmsg(r));
            break;
        }
        if (len != sizes[i]) {
            snprintf(why, sizeof why, "record %zu: length %zu, expected %zu", i, len, sizes[i]);
            break;
        }
        if (sizes[i] > cap) {
            free(want);
            cap = sizes[i];
            want = malloc(cap);
        }
        rt_payload(want, len, seed, i);
        if (len && memcmp(want, data, len) != 0)
            snprintf(why, sizeof why, "record %zu: content differs", i);
    }
    free(want);
    tfrec_reader_free(r);
    return why[0] ? why : NULL;
}

/* One record framed in memory: 12-byte header, data, footer. */
static inline size_t rt_frame(uint8_t *out, const void *data, size_t len)
{
    tfrec_record_header(out, len);
    memcpy(out + 12, data, len);
    uint32_t c = tfrec_record_footer_crc(data, len);
    for (int i = 0; i < 4; i++)
        out[12 + len + i] = (uint8_t)(c >> (8 * i));
    return len + 16;
}

/* Compress with zlib itself (an implementation independent of ours):
 * windowBits 15 for ZLIB, 31 for GZIP. Caller frees. */
static inline uint8_t *rt_zlib_compress(const void *in, size_t len, int gzip, size_t *out_len)
{
    *out_len = 0;
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 6, Z_DEFLATED, gzip ? 31 : 15, 9, Z_DEFAULT_STRATEGY) != Z_OK)
        return NULL;
    size_t cap = deflateBound(&z, len) + 64;
    uint8_t *out = malloc(cap);
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)len;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    int rc = deflate(&z, Z_FINISH);
    *out_len = z.total_out;
    deflateEnd(&z);
    if (rc != Z_STREAM_END) {
        free(out);
        return NULL;
    }
    return out;
}

/* Inflate a whole zlib or gzip stream with zlib (gzip: all members). */
static inline uint8_t *rt_zlib_inflate(const uint8_t *in, size_t len, size_t *out_len)
{
    *out_len = 0;
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 15 + 32) != Z_OK) /* +32: detect zlib or gzip */
        return NULL;
    size_t cap = len * 4 + 1024, have = 0;
    uint8_t *out = malloc(cap);
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)len;
    for (;;) {
        if (have == cap)
            out = realloc(out, cap *= 2);
        z.next_out = out + have;
        z.avail_out = (uInt)(cap - have);
        int rc = inflate(&z, Z_NO_FLUSH);
        have = cap - z.avail_out;
        if (rc == Z_STREAM_END) {
            if (z.avail_in == 0)
                break;
            inflateReset(&z); /* next gzip member */
            continue;
        }
        if (rc != Z_OK && !(rc == Z_BUF_ERROR && z.avail_out == 0)) {
            free(out);
            inflateEnd(&z);
            return NULL;
        }
    }
    inflateEnd(&z);
    *out_len = have;
    return out;
}

/* Files in dir whose name starts with prefix. */
static inline int rt_count_files(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0)
            n++;
    closedir(d);
    return n;
}

static inline int rt_contains(const char *hay, const char *needle)
{
    return strstr(hay, needle) != NULL;
}

/* The backends to try: ISA-L (when built in) and zlib. */
static const char *const rt_backends[] = { "default", "zlib" };

static inline void rt_use_backend(const char *b)
{
    tfrec_set_deflate_backend(strcmp(b, "zlib") == 0 ? "zlib" : NULL);
}

#endif

/* Interoperability with an independent implementation: the pure-Python
 * writer/reader in bench/py_tfrecord_ref.py (python3-crc32c, zlib, gzip)
 * writes files we read, and reads files we write, for NONE, ZLIB and GZIP,
 * with empty records, a zero-record file and a 64 MiB record. */
#include <unistd.h>

#include "record_util.h"

static const char *const comp_names[] = { "NONE", "ZLIB", "GZIP" };
static const int comps[] = { TFREC_COMPRESSION_NONE, TFREC_COMPRESSION_ZLIB,
                             TFREC_COMPRESSION_GZIP };

typedef struct size_set {
    const char *name;
    size_t n;
    size_t sizes[8];
} size_set;

static const size_set sets[] = {
    { "small", 6, { 0, 5, 0, 1000, 300000, 7 } },
    { "zero", 0, { 0 } },
    { "big", 2, { (size_t)64 << 20, 3 } },
};

/* The payload formula shared with the Python script. */
static void formula(uint8_t *p, size_t n, size_t i)
{
    for (size_t j = 0; j < n; j++)
        p[j] = (uint8_t)(i * 31 + j * 7 + (j >> 8));
}

static void sizes_arg(const size_set *s, char *out, size_t len)
{
    out[0] = 0;
    for (size_t i = 0; i < s->n; i++)
        snprintf(out + strlen(out), len - strlen(out), "%s%zu", i ? "," : "", s->sizes[i]);
}

static int python(const char *cmd, const char *path, const char *comp, const char *sizes)
{
    const char *root = getenv("TFREC_ROOT");
    char line[8192];
    snprintf(line, sizeof line, "/usr/bin/python3 '%s/bench/py_tfrecord_ref.py' %s '%s' %s '%s'",
             root ? root : ".", cmd, path, comp, sizes);
    fflush(stdout);
    return system(line);
}

static void test_python_writes_we_read(void)
{
    for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++)
        for (size_t c = 0; c < 3; c++) {
            char sizes[512], name[64];
            sizes_arg(&sets[s], sizes, sizeof sizes);
            snprintf(name, sizeof name, "py-%s-%s", sets[s].name, comp_names[c]);
            const char *path = harness_path(name);
            CHECKF(python("write", path, comp_names[c], sizes) == 0, "python could not write %s",
                   name);
            for (size_t b = 0; b < 2; b++) {
                rt_use_backend(rt_backends[b]);
                tfrec_reader *r;
                CHECKF(tfrec_reader_open(&r, path, NULL) == 0, "%s", tfrec_last_errmsg());
                CHECK_EQ(tfrec_reader_compression(r), comps[c]);
                const uint8_t *d;
                size_t len, i = 0;
                int rc;
                uint8_t *want = NULL;
                while ((rc = tfrec_reader_next(r, &d, &len)) == TFREC_OK) {
                    CHECK(i < sets[s].n);
                    CHECK_EQ(len, sets[s].sizes[i]);
                    want = realloc(want, len + 1);
                    formula(want, len, i);
                    CHECKF(memcmp(want, d, len) == 0, "%s record %zu differs", name, i);
                    i++;
                }
                free(want);
                CHECKF(rc == TFREC_END, "%s: %d %s", name, rc, tfrec_reader_errmsg(r));
                CHECK_EQ(i, sets[s].n);
                tfrec_reader_free(r);
            }
        }
    tfrec_set_deflate_backend(NULL);
}

static void test_we_write_python_reads(void)
{
    for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++)
        for (size_t c = 0; c < 3; c++)
            for (size_t b = 0; b < (c ? 2u : 1u); b++) {
                rt_use_backend(rt_backends[b]);
                char sizes[512], name[64];
                sizes_arg(&sets[s], sizes, sizeof sizes);
                snprintf(name, sizeof name, "c-%s-%s-%s", sets[s].name, comp_names[c],
                         rt_backends[b]);
                const char *path = harness_path(name);
                tfrec_writer_options o = { .struct_size = sizeof o, .compression = comps[c] };
                tfrec_writer *w;
                CHECK(tfrec_writer_open(&w, path, &o) == 0);
                uint8_t *buf = NULL;
                for (size_t i = 0; i < sets[s].n; i++) {
                    buf = realloc(buf, sets[s].sizes[i] + 1);
                    formula(buf, sets[s].sizes[i], i);
                    CHECK(tfrec_writer_write(w, buf, sets[s].sizes[i]) == 0);
                }
                free(buf);
                CHECK(tfrec_writer_close(w) == 0);
                tfrec_writer_free(w);
                CHECKF(python("check", path, comp_names[c], sizes) == 0, "python rejects %s", name);
            }
    tfrec_set_deflate_backend(NULL);
}

TESTS(TEST(test_python_writes_we_read), TEST(test_we_write_python_reads))

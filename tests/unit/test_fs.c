/* The file system layer (include/tfrec/fs.h): schemes, the registry and
 * routing, the local file system, mem://, listing order, stat, sinks that
 * commit or leave nothing, and records written and read back over each. */
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record_util.h"
#include "tfrec/fs.h"

static int contains(const char *s, const char *sub)
{
    return s && strstr(s, sub) != NULL;
}

/* Write data to name through fs; commit or abort. */
static int put(const tfrec_fs *fs, const char *name, const char *data, int commit)
{
    tfrec_io io = TFREC_IO_INIT;
    int rc = tfrec_fs_open_sink(fs, name, &io);
    if (rc < 0)
        return rc;
    rc = io.write(io.ctx, data, strlen(data));
    int rc2 = io.close(io.ctx, commit && rc == 0);
    return rc < 0 ? rc : rc2;
}

/* Read all of a source into buf (NUL-terminated); closes it. */
static ptrdiff_t drain(tfrec_io *io, char *buf, size_t cap)
{
    size_t have = 0;
    for (;;) {
        ptrdiff_t got = io->read(io->ctx, buf + have, cap - 1 - have);
        if (got < 0) {
            io->close(io->ctx, 0);
            return got;
        }
        if (got == 0)
            break;
        have += (size_t)got;
    }
    buf[have] = 0;
    io->close(io->ctx, 0);
    return (ptrdiff_t)have;
}

static int get(const tfrec_fs *fs, const char *name, char *buf, size_t cap)
{
    tfrec_io io = TFREC_IO_INIT;
    int rc = tfrec_fs_open_source(fs, name, &io);
    if (rc < 0)
        return rc;
    return drain(&io, buf, cap) < 0 ? TFREC_E_IO : TFREC_OK;
}

static void test_scheme_detection(void)
{
    CHECK_EQ(tfrec_fs_scheme_length("gs://b/o"), 2);
    CHECK_EQ(tfrec_fs_scheme_length("MEM://x"), 3);
    CHECK_EQ(tfrec_fs_scheme_length("a+b-c.d://x"), 7);
    CHECK_EQ(tfrec_fs_scheme_length("file:///tmp/x"), 4);
    CHECK_EQ(tfrec_fs_scheme_length("./gs://x"), 0);
    CHECK_EQ(tfrec_fs_scheme_length("/tmp/a://b"), 0);
    CHECK_EQ(tfrec_fs_scheme_length("1gs://x"), 0);
    CHECK_EQ(tfrec_fs_scheme_length("gs:/x"), 0);
    CHECK_EQ(tfrec_fs_scheme_length("C:/x"), 0);
    CHECK_EQ(tfrec_fs_scheme_length("-"), 0);
    CHECK_EQ(tfrec_fs_scheme_length(""), 0);
    CHECK_EQ(tfrec_fs_scheme_length(NULL), 0);
}

static void test_local(void)
{
    const tfrec_fs *fs = tfrec_fs_local();
    CHECK(fs && fs->scheme == NULL);
    const char *p = harness_path("local-a");
    CHECK_EQ(put(fs, p, "hello world", 1), TFREC_OK);
    tfrec_fs_info info = TFREC_FS_INFO_INIT;
    CHECK_EQ(tfrec_fs_stat(fs, p, &info), TFREC_OK);
    CHECK_EQ(info.size, 11);
    CHECK(info.mtime_ns > 0);
    CHECK_EQ(info.generation, 0);
    char buf[64];
    CHECK_EQ(get(fs, p, buf, sizeof buf), TFREC_OK);
    CHECK(strcmp(buf, "hello world") == 0);
    /* a range, and seeks inside it */
    tfrec_io io = TFREC_IO_INIT;
    CHECK_EQ(tfrec_fs_open_range(fs, p, 6, 3, &io), TFREC_OK);
    CHECK_EQ(io.size(io.ctx), 3);
    CHECK(drain(&io, buf, sizeof buf) == 3);
    CHECK(strcmp(buf, "wor") == 0);
    io = (tfrec_io)TFREC_IO_INIT;
    CHECK_EQ(tfrec_fs_open_range(fs, p, 6, UINT64_MAX, &io), TFREC_OK);
    CHECK(io.seek && io.seek(io.ctx, 2) == TFREC_OK);
    CHECK(drain(&io, buf, sizeof buf) == 3);
    CHECK(strcmp(buf, "rld") == 0);
    io = (tfrec_io)TFREC_IO_INIT;
    CHECK_EQ(tfrec_fs_open_range(fs, p, 6, 6, &io), TFREC_E_INVALID);
    CHECK_EQ(tfrec_fs_open_range(fs, p, 12, 0, &io), TFREC_E_INVALID);
    /* file:///abs/path is the same file */
    char url[4200];
    snprintf(url, sizeof url, "file://%s", p);
    CHECK_EQ(get(NULL, url, buf, sizeof buf), TFREC_OK);
    CHECK(strcmp(buf, "hello world") == 0);
    CHECK_EQ(tfrec_fs_stat(NULL, "file://relative", &info), TFREC_E_INVALID);
    /* the local file system takes no other scheme */
    CHECK_EQ(tfrec_fs_stat(fs, "mem://x", &info), TFREC_E_UNSUPPORTED);
    CHECK_EQ(tfrec_fs_stat(fs, "-", &info), TFREC_E_UNSUPPORTED);
    CHECK_EQ(tfrec_fs_remove(fs, p), TFREC_OK);
    CHECK_EQ(tfrec_fs_stat(fs, p, &info), TFREC_E_NOT_FOUND);
    CHECK_EQ(tfrec_fs_remove(fs, p), TFREC_E_NOT_FOUND);
    CHECK_EQ(tfrec_fs_open_source(fs, p, &io), TFREC_E_NOT_FOUND);
}

static int count_dir(const char *dir)
{
    return rt_count_files(dir, "out"); /* out and its temporary names */
}

static void test_abort_leaves_nothing(void)
{
    char dir[4200], name[4300];
    snprintf(dir, sizeof dir, "%s/abort", harness_tmpdir());
    mkdir(dir, 0700);
    snprintf(name, sizeof name, "%s/out", dir);
    CHECK_EQ(put(NULL, name, "partial", 0), TFREC_OK);
    CHECK_EQ(count_dir(dir), 0);
    /* an abort does not disturb what was there */
    CHECK_EQ(put(NULL, name, "v1", 1), TFREC_OK);
    CHECK_EQ(put(NULL, name, "v2-partial", 0), TFREC_OK);
    char buf[32];
    CHECK_EQ(get(NULL, name, buf, sizeof buf), TFREC_OK);
    CHECK(strcmp(buf, "v1") == 0);
    CHECK_EQ(count_dir(dir), 1);

    tfrec_fs_info info = TFREC_FS_INFO_INIT;
    CHECK_EQ(put(NULL, "mem://abort/x", "partial", 0), TFREC_OK);
    CHECK_EQ(tfrec_fs_stat(NULL, "mem://abort/x", &info), TFREC_E_NOT_FOUND);
    CHECK_EQ(put(NULL, "mem://abort/x", "v1", 1), TFREC_OK);
    CHECK_EQ(put(NULL, "mem://abort/x", "v2-partial", 0), TFREC_OK);
    CHECK_EQ(get(NULL, "mem://abort/x", buf, sizeof buf), TFREC_OK);
    CHECK(strcmp(buf, "v1") == 0);
    CHECK_EQ(tfrec_fs_remove(NULL, "mem://abort/x"), TFREC_OK);
}

static void test_mem(void)
{
    const tfrec_fs *fs = tfrec_fs_for("mem://a");
    CHECK(fs && fs->scheme && strcmp(fs->scheme, "mem") == 0);
    tfrec_io sink = TFREC_IO_INIT;
    CHECK_EQ(tfrec_fs_open_sink(NULL, "mem://m/obj", &sink), TFREC_OK);
    CHECK_EQ(sink.write(sink.ctx, "abc", 3), TFREC_OK);
    tfrec_fs_info info = TFREC_FS_INFO_INIT;
    /* not visible before the commit */
    CHECK_EQ(tfrec_fs_stat(NULL, "mem://m/obj", &info), TFREC_E_NOT_FOUND);
    CHECK_EQ(sink.write(sink.ctx, "def", 3), TFREC_OK);
    CHECK_EQ(sink.close(sink.ctx, 1), TFREC_OK);
    CHECK_EQ(tfrec_fs_stat(NULL, "mem://m/obj", &info), TFREC_OK);
    CHECK_EQ(info.size, 6);
    CHECK(info.has_crc32c);
    CHECK_EQ(info.crc32c, tfrec_crc32c("abcdef", 6));
    CHECK(info.generation > 0);
    CHECK(info.mtime_ns > 0);
    int64_t gen1 = info.generation;
    /* a source keeps the version it opened */
    tfrec_io src = TFREC_IO_INIT;
    CHECK_EQ(tfrec_fs_open_source(NULL, "mem://m/obj", &src), TFREC_OK);
    CHECK_EQ(put(NULL, "mem://m/obj", "replaced", 1), TFREC_OK);
    CHECK_EQ(tfrec_fs_remove(NULL, "mem://m/obj"), TFREC_OK);
    char buf[64];
    CHECK_EQ(src.size(src.ctx), 6);
    CHECK(drain(&src, buf, sizeof buf) == 6);
    CHECK(strcmp(buf, "abcdef") == 0);
    CHECK_EQ(tfrec_fs_stat(NULL, "mem://m/obj", &info), TFREC_E_NOT_FOUND);
    CHECK_EQ(put(NULL, "MEM://m/obj", "0123456789", 1), TFREC_OK); /* scheme in any case */
    CHECK_EQ(tfrec_fs_stat(NULL, "mem://m/obj", &info), TFREC_OK);
    CHECK(info.generation > gen1);
    /* ranges */
    src = (tfrec_io)TFREC_IO_INIT;
    CHECK_EQ(tfrec_fs_open_range(NULL, "mem://m/obj", 3, 4, &src), TFREC_OK);
    CHECK(src.seek(src.ctx, 1) == TFREC_OK);
    CHECK(drain(&src, buf, sizeof buf) == 3);
    CHECK(strcmp(buf, "456") == 0);
    CHECK_EQ(tfrec_fs_open_range(NULL, "mem://m/obj", 8, 3, &src), TFREC_E_INVALID);
    CHECK_EQ(tfrec_fs_open_source(NULL, "mem://m/none", &src), TFREC_E_NOT_FOUND);
    CHECK(contains(tfrec_last_errmsg(), "mem://m/none"));
    CHECK_EQ(tfrec_fs_open_sink(NULL, "mem://", &sink), TFREC_E_INVALID);
    CHECK_EQ(tfrec_fs_remove(NULL, "mem://m/obj"), TFREC_OK);
}

typedef struct names {
    char v[16][64];
    size_t n;
    size_t stop_after;
} names;

static int collect(void *ctx, const char *name, const tfrec_fs_info *info)
{
    names *l = ctx;
    if (l->n < 16) {
        const char *slash = strrchr(name, '/');
        snprintf(l->v[l->n], sizeof l->v[0], "%s:%llu", slash ? slash + 1 : name,
                 (unsigned long long)info->size);
        l->n++;
    }
    return l->stop_after && l->n >= l->stop_after ? 1 : 0;
}

static void test_list_sorted(void)
{
    /* created out of order; bytewise order puts upper case first */
    static const char *files[] = { "b-2", "a-10", "B-1", "a-9", ".a-hidden", "a_x", "c" };
    char dir[4200], name[4300];
    snprintf(dir, sizeof dir, "%s/list", harness_tmpdir());
    mkdir(dir, 0700);
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        snprintf(name, sizeof name, "%s/%s", dir, files[i]);
        CHECK_EQ(put(NULL, name, files[i], 1), TFREC_OK);
        snprintf(name, sizeof name, "mem://list/%s", files[i]);
        CHECK_EQ(put(NULL, name, files[i], 1), TFREC_OK);
    }
    CHECK_EQ(put(NULL, "mem://list/sub/a-1", "nested", 1), TFREC_OK);
    static const char *expect = "B-1:3 a-10:4 a-9:3 a_x:3 b-2:3";
    const char *bases[] = { dir, "mem://list" };
    for (int k = 0; k < 2; k++) {
        char pat[4300];
        snprintf(pat, sizeof pat, "%s/[aBb]*", bases[k]);
        names l = { .n = 0 };
        CHECKF(tfrec_fs_list(NULL, pat, collect, &l) == TFREC_OK, "%s: %s", pat,
               tfrec_last_errmsg());
        char got[512] = "";
        for (size_t i = 0; i < l.n; i++)
            snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s", i ? " " : "", l.v[i]);
        CHECKF(strcmp(got, expect) == 0, "%s: got %s", pat, got);
        /* '*' crosses no '/', matches no leading '.' */
        snprintf(pat, sizeof pat, "%s/*", bases[k]);
        l.n = 0;
        CHECK_EQ(tfrec_fs_list(NULL, pat, collect, &l), TFREC_OK);
        CHECKF(l.n == 6, "%s: %zu names", pat, l.n);
        /* a stop */
        l.n = 0;
        l.stop_after = 2;
        CHECK_EQ(tfrec_fs_list(NULL, pat, collect, &l), TFREC_OK);
        CHECK_EQ(l.n, 2);
        /* a name without wildcards is itself; no match is NOT_FOUND */
        snprintf(pat, sizeof pat, "%s/c", bases[k]);
        l = (names){ .n = 0 };
        CHECK_EQ(tfrec_fs_list(NULL, pat, collect, &l), TFREC_OK);
        CHECK_EQ(l.n, 1);
        snprintf(pat, sizeof pat, "%s/zz*", bases[k]);
        CHECK_EQ(tfrec_fs_list(NULL, pat, collect, &l), TFREC_E_NOT_FOUND);
        snprintf(pat, sizeof pat, "%s/zz", bases[k]);
        CHECK_EQ(tfrec_fs_list(NULL, pat, collect, &l), TFREC_E_NOT_FOUND);
    }
    names l = { .n = 0 };
    CHECK_EQ(tfrec_fs_list(NULL, "mem://list/*/a-?", collect, &l), TFREC_OK);
    CHECK_EQ(l.n, 1);
    CHECK(strcmp(l.v[0], "a-1:6") == 0);
}

/* A scheme of the test's own: "tst://x" stored as "mem://tst/x", with no
 * open_range (the layer's fallback serves ranges). */
static int tst_calls;

/* test_registry_threads opens through this file system from several
 * threads at once: the count is atomic (TSan reported the plain +=). */
static void count_call(void *ctx)
{
    if (ctx == &tst_calls)
        __atomic_add_fetch(&tst_calls, 1, __ATOMIC_RELAXED);
}

static void tst_map(const char *name, char *out, size_t cap)
{
    snprintf(out, cap, "mem://tst/%s", strstr(name, "://") + 3);
}

static int tst_open_source(void *ctx, const char *name, tfrec_io *io)
{
    char m[256];
    count_call(ctx);
    tst_map(name, m, sizeof m);
    return tfrec_fs_open_source(NULL, m, io);
}

static int tst_open_sink(void *ctx, const char *name, tfrec_io *io)
{
    char m[256];
    count_call(ctx);
    tst_map(name, m, sizeof m);
    return tfrec_fs_open_sink(NULL, m, io);
}

static int tst_stat(void *ctx, const char *name, tfrec_fs_info *info)
{
    char m[256];
    count_call(ctx);
    tst_map(name, m, sizeof m);
    return tfrec_fs_stat(NULL, m, info);
}

static void test_registry(void)
{
    tfrec_fs_info info = TFREC_FS_INFO_INIT;
    tfrec_io io = TFREC_IO_INIT;
    /* unknown schemes are errors, never local paths */
    CHECK_EQ(tfrec_fs_open_source(NULL, "gs://bucket/object", &io), TFREC_E_UNSUPPORTED);
    CHECKF(contains(tfrec_last_errmsg(), "gs:// names need libtfrec-storage, which is not linked"),
           "%s", tfrec_last_errmsg());
    CHECK_EQ(tfrec_fs_stat(NULL, "tst://x", &info), TFREC_E_UNSUPPORTED);
    CHECK(contains(tfrec_last_errmsg(), "tst://"));
    CHECK(tfrec_fs_for("tst://x") == NULL);
    CHECK(tfrec_fs_for("/tmp/x") == tfrec_fs_local());
    CHECK(tfrec_fs_for("-") == tfrec_fs_local());
    CHECK(tfrec_fs_for("file:///x") == tfrec_fs_local());

    tfrec_fs t = TFREC_FS_INIT;
    t.scheme = "tst";
    t.ctx = &tst_calls;
    t.open_source = tst_open_source;
    CHECK_EQ(tfrec_fs_register(&t), TFREC_E_INVALID); /* no stat */
    t.stat = tst_stat;
    t.scheme = "file";
    CHECK_EQ(tfrec_fs_register(&t), TFREC_E_INVALID);
    t.scheme = "t_s";
    CHECK_EQ(tfrec_fs_register(&t), TFREC_E_INVALID);
    t.scheme = NULL;
    CHECK_EQ(tfrec_fs_register(&t), TFREC_E_INVALID);
    t.scheme = "TST";
    CHECK_EQ(tfrec_fs_register(&t), TFREC_OK);
    const tfrec_fs *got = tfrec_fs_for("tst://x");
    CHECK(got && strcmp(got->scheme, "tst") == 0);
    /* no open_sink yet */
    CHECK_EQ(tfrec_fs_open_sink(NULL, "tst://x", &io), TFREC_E_UNSUPPORTED);
    CHECK_EQ(tfrec_fs_list(NULL, "tst://*", collect, &(names){ .n = 0 }), TFREC_E_UNSUPPORTED);
    t.open_sink = tst_open_sink;
    CHECK_EQ(tfrec_fs_register(&t), TFREC_OK); /* replaces */
    tst_calls = 0;
    CHECK_EQ(put(NULL, "tst://x", "through tst", 1), TFREC_OK);
    char buf[64];
    CHECK_EQ(get(NULL, "mem://tst/x", buf, sizeof buf), TFREC_OK);
    CHECK(strcmp(buf, "through tst") == 0);
    CHECK_EQ(tfrec_fs_stat(NULL, "Tst://x", &info), TFREC_OK);
    CHECK_EQ(info.size, 11);
    /* the range fallback over open_source and seek */
    CHECK_EQ(tfrec_fs_open_range(NULL, "tst://x", 8, 3, &io), TFREC_OK);
    CHECK(drain(&io, buf, sizeof buf) == 3);
    CHECK(strcmp(buf, "tst") == 0);
    CHECK_EQ(tst_calls, 3);
    /* the registered table, called directly, and the default's table */
    io = (tfrec_io)TFREC_IO_INIT;
    CHECK_EQ(tfrec_fs_default()->open_source(NULL, "tst://x", &io), TFREC_OK);
    CHECK(drain(&io, buf, sizeof buf) == 11);
    CHECK_EQ(tst_calls, 4);
    /* an older caller's shorter table: the missing members read as NULL */
    tfrec_fs old = t;
    old.struct_size = offsetof(tfrec_fs, open_range);
    CHECK_EQ(tfrec_fs_register(&old), TFREC_E_INVALID); /* so stat is missing */
    CHECK_EQ(tfrec_fs_unregister("tst"), TFREC_OK);
    CHECK_EQ(tfrec_fs_unregister("tst"), TFREC_E_NOT_FOUND);
    CHECK_EQ(tfrec_fs_stat(NULL, "tst://x", &info), TFREC_E_UNSUPPORTED);
    CHECK_EQ(tfrec_fs_remove(NULL, "mem://tst/x"), TFREC_OK);
}

static void *register_loop(void *arg)
{
    tfrec_fs t = TFREC_FS_INIT;
    t.scheme = arg;
    t.open_source = tst_open_source;
    t.stat = tst_stat;
    for (int i = 0; i < 200; i++)
        if (tfrec_fs_register(&t) != TFREC_OK)
            return arg;
    return NULL;
}

static void *use_loop(void *arg)
{
    (void)arg;
    char buf[16];
    for (int i = 0; i < 200; i++)
        if (get(NULL, "thr1://x", buf, sizeof buf) != TFREC_OK ||
            get(NULL, "mem://tst/x", buf, sizeof buf) != TFREC_OK)
            return arg ? arg : (void *)1; /* failed */
    return NULL;
}

static void test_registry_threads(void)
{
    CHECK_EQ(put(NULL, "mem://tst/x", "x", 1), TFREC_OK);
    CHECK_EQ(register_loop("thr1"), NULL);
    pthread_t th[4];
    pthread_create(&th[0], NULL, register_loop, "thr1");
    pthread_create(&th[1], NULL, register_loop, "thr2");
    pthread_create(&th[2], NULL, use_loop, NULL);
    pthread_create(&th[3], NULL, use_loop, NULL);
    void *res[4];
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], &res[i]);
    for (int i = 0; i < 4; i++)
        CHECK(res[i] == NULL);
    CHECK_EQ(tfrec_fs_unregister("thr1"), TFREC_OK);
    CHECK_EQ(tfrec_fs_unregister("thr2"), TFREC_OK);
    CHECK_EQ(tfrec_fs_remove(NULL, "mem://tst/x"), TFREC_OK);
}

/* Records written and read back through each file system, with an index
 * written beside them. */
static void roundtrip(const char *name)
{
    enum { N = 50 };
    uint8_t rec[300];
    tfrec_writer_options wo = TFREC_WRITER_OPTIONS_INIT;
    wo.write_index = 1;
    tfrec_writer *w;
    CHECKF(tfrec_fs_writer_open(NULL, &w, name, &wo) == TFREC_OK, "%s: %s", name,
           tfrec_last_errmsg());
    for (size_t i = 0; i < N; i++) {
        rt_payload(rec, i * 5 + 1, 7, i);
        CHECK_EQ(tfrec_writer_write(w, rec, i * 5 + 1), TFREC_OK);
    }
    tfrec_fs_info info = TFREC_FS_INFO_INIT;
    CHECK_EQ(tfrec_fs_stat(NULL, name, &info), TFREC_E_NOT_FOUND); /* not before close */
    CHECK_EQ(tfrec_writer_close(w), TFREC_OK);
    tfrec_writer_free(w);
    CHECK_EQ(tfrec_fs_stat(NULL, name, &info), TFREC_OK);
    char idx[4400];
    snprintf(idx, sizeof idx, "%s.idx", name);
    tfrec_fs_info iinfo = TFREC_FS_INFO_INIT;
    CHECK_EQ(tfrec_fs_stat(NULL, idx, &iinfo), TFREC_OK);
    CHECK(iinfo.size > 0);
    /* read back: tfrec_fs_reader_open and the plain tfrec_reader_open */
    for (int k = 0; k < 2; k++) {
        tfrec_reader *r;
        int rc = k ? tfrec_reader_open(&r, name, NULL) : tfrec_fs_reader_open(NULL, &r, name, NULL);
        CHECKF(rc == TFREC_OK, "%s: %s", name, tfrec_last_errmsg());
        const uint8_t *data;
        size_t len, n = 0;
        while ((rc = tfrec_reader_next(r, &data, &len)) == TFREC_OK) {
            rt_payload(rec, n * 5 + 1, 7, n);
            CHECK_EQ(len, n * 5 + 1);
            CHECK(memcmp(data, rec, len) == 0);
            n++;
        }
        CHECK_EQ(rc, TFREC_END);
        CHECK_EQ(n, N);
        tfrec_reader_free(r);
    }
    /* the index loads through the file system too */
    tfrec_io io = TFREC_IO_INIT;
    CHECK_EQ(tfrec_fs_open_source(NULL, idx, &io), TFREC_OK);
    tfrec_index *ix;
    CHECK_EQ(tfrec_index_load_io(&ix, &io, idx, (int64_t)info.size), TFREC_OK);
    CHECK_EQ(tfrec_index_records(ix), N);
    /* record 17 through a range */
    uint64_t off, len;
    CHECK_EQ(tfrec_index_entry(ix, 17, &off, &len), TFREC_OK);
    tfrec_index_free(ix);
    io = (tfrec_io)TFREC_IO_INIT;
    CHECK_EQ(tfrec_fs_open_range(NULL, name, off, len, &io), TFREC_OK);
    tfrec_reader *r;
    CHECK_EQ(tfrec_reader_open_io(&r, &io, name, NULL), TFREC_OK);
    const uint8_t *data;
    size_t dlen;
    CHECK_EQ(tfrec_reader_next(r, &data, &dlen), TFREC_OK);
    rt_payload(rec, 17 * 5 + 1, 7, 17);
    CHECK(dlen == 17 * 5 + 1 && memcmp(data, rec, dlen) == 0);
    CHECK_EQ(tfrec_reader_next(r, &data, &dlen), TFREC_END);
    tfrec_reader_free(r);
    CHECK_EQ(tfrec_fs_remove(NULL, name), TFREC_OK);
    CHECK_EQ(tfrec_fs_remove(NULL, idx), TFREC_OK);
}

static void test_records_local(void)
{
    roundtrip(harness_path("records.tfrecord"));
}

static void test_records_file_url(void)
{
    char url[4200];
    snprintf(url, sizeof url, "file://%s", harness_path("records-url.tfrecord"));
    roundtrip(url);
}

static void test_records_mem(void)
{
    roundtrip("mem://records/train-00000-of-00001");
}

static void test_writer_abort_mem(void)
{
    tfrec_writer_options wo = TFREC_WRITER_OPTIONS_INIT;
    wo.write_index = 1;
    tfrec_writer *w;
    CHECK_EQ(tfrec_fs_writer_open(NULL, &w, "mem://aborted/x", &wo), TFREC_OK);
    CHECK_EQ(tfrec_writer_write(w, "abc", 3), TFREC_OK);
    tfrec_writer_abort(w);
    tfrec_writer_free(w);
    names l = { .n = 0 };
    CHECK_EQ(tfrec_fs_list(NULL, "mem://aborted/*", collect, &l), TFREC_E_NOT_FOUND);
    /* tfrec_writer_open routes names too */
    CHECK_EQ(tfrec_writer_open(&w, "nope://x", NULL), TFREC_E_UNSUPPORTED);
    CHECK(w == NULL);
}

/* Data files over a file system: index files built, counted through,
 * random access by ranges, and a dataset (sequential, shuffled, sharded)
 * giving the same records as over local files. */
static int write_shards(const char *base, int with_index, char paths[3][4400])
{
    size_t rec = 0;
    for (int f = 0; f < 3; f++) {
        snprintf(paths[f], sizeof paths[f], "%s-%05d-of-00003", base, f);
        tfrec_writer_options wo = TFREC_WRITER_OPTIONS_INIT;
        wo.write_index = with_index;
        tfrec_writer *w;
        int rc = tfrec_writer_open(&w, paths[f], &wo);
        if (rc < 0)
            return rc;
        uint8_t buf[200];
        for (int i = 0; i < 10 + f * 7; i++, rec++) {
            rt_payload(buf, rec % 150 + 1, 3, rec);
            if ((rc = tfrec_writer_write(w, buf, rec % 150 + 1)) < 0)
                break;
        }
        rc = rc < 0 ? rc : tfrec_writer_close(w);
        tfrec_writer_free(w);
        if (rc < 0)
            return rc;
    }
    return (int)rec;
}

/* Every record of an epoch, as (length, first byte, crc) sums in order.
 * shuffle 1: the global shuffle; 2: a block shuffle of 3 records; 3: the
 * default shuffle. */
static uint64_t epoch_digest(const char *const *files, int shuffle, uint32_t shard, uint64_t *n)
{
    tfrec_dataset_options o = TFREC_DATASET_OPTIONS_INIT;
    o.shuffle = shuffle > 0;
    o.shuffle_block = shuffle == 1 ? 1 : shuffle == 2 ? 3 : 0;
    o.seed = 99;
    o.num_shards = 2;
    o.shard_index = shard;
    o.block_records = 4;
    o.num_threads = 3;
    tfrec_dataset *ds;
    if (tfrec_dataset_open(&ds, files, 3, &o) != TFREC_OK)
        return 0;
    uint64_t h = 1469598103934665603ull;
    const uint8_t *data;
    size_t len;
    *n = 0;
    int rc;
    while ((rc = tfrec_dataset_next(ds, &data, &len)) == TFREC_OK) {
        h = (h ^ tfrec_crc32c(data, len) ^ len) * 1099511628211ull;
        (*n)++;
    }
    tfrec_dataset_free(ds);
    return rc == TFREC_END ? h : 0;
}

static void test_datasets_over_mem(void)
{
    char local[3][4400], mem[3][4400];
    int total = write_shards(harness_path("ds"), 1, local);
    CHECKF(total > 0, "%s", tfrec_last_errmsg());
    CHECK_EQ(write_shards("mem://ds/train", 0, mem), total);
    /* tfrec_index_file and tfrec_reader_count through the layer */
    for (int f = 0; f < 3; f++) {
        uint64_t n = 0, c = 0;
        int used = -1;
        CHECK_EQ(tfrec_reader_count(mem[f], NULL, &c, &used), TFREC_OK);
        CHECK_EQ(used, 0);
        CHECKF(tfrec_index_file(mem[f], &n) == TFREC_OK, "%s", tfrec_last_errmsg());
        CHECK_EQ(n, c);
        CHECK_EQ(tfrec_reader_count(mem[f], NULL, &c, &used), TFREC_OK);
        CHECK_EQ(used, 1);
        CHECK_EQ(n, c);
        tfrec_index *ix;
        CHECK_EQ(tfrec_index_load_fresh(&ix, mem[f]), TFREC_OK);
        CHECK_EQ(tfrec_index_records(ix), n);
        tfrec_index_free(ix);
    }
    const char *lf[3] = { local[0], local[1], local[2] }, *mf[3] = { mem[0], mem[1], mem[2] };
    /* The same order as local files, except the default shuffle (3),
     * whose blocks are about 64 KiB for local files and 2 MiB for other
     * file systems' (the same share sizes). */
    for (int shuffle = 0; shuffle < 4; shuffle++)
        for (uint32_t shard = 0; shard < 2; shard++) {
            uint64_t nl = 0, nm = 0;
            uint64_t a = epoch_digest(lf, shuffle, shard, &nl);
            uint64_t b = epoch_digest(mf, shuffle, shard, &nm);
            CHECKF(a && b && (a == b || shuffle == 3) && nl == nm && nl > 0,
                   "shuffle %d shard %u: %s", shuffle, shard, tfrec_last_errmsg());
        }
    /* random access by ranges: same records as the local file */
    tfrec_random_reader *rl, *rm;
    CHECK_EQ(tfrec_random_reader_open(&rl, local[2]), TFREC_OK);
    CHECKF(tfrec_random_reader_open(&rm, mem[2]) == TFREC_OK, "%s", tfrec_last_errmsg());
    CHECK_EQ(tfrec_random_reader_records(rm), tfrec_random_reader_records(rl));
    for (uint64_t k = tfrec_random_reader_records(rl); k-- > 0;) {
        const uint8_t *a, *b;
        size_t la, lb;
        CHECK_EQ(tfrec_random_reader_read(rl, k, &a, &la), TFREC_OK);
        CHECK_EQ(tfrec_random_reader_read(rm, k, &b, &lb), TFREC_OK);
        CHECK(la == lb && memcmp(a, b, la) == 0);
    }
    tfrec_random_reader_free(rl);
    tfrec_random_reader_free(rm);
    /* a stale index (the data rewritten shorter) is refused */
    CHECK_EQ(put(NULL, mem[0], "", 1), TFREC_OK);
    tfrec_index *ix = NULL;
    CHECK_EQ(tfrec_index_load_fresh(&ix, mem[0]), TFREC_E_STATE);
    for (int f = 0; f < 3; f++) {
        char idx[4500];
        snprintf(idx, sizeof idx, "%.4400s.idx", mem[f]);
        CHECK_EQ(tfrec_fs_remove(NULL, mem[f]), TFREC_OK);
        CHECK_EQ(tfrec_fs_remove(NULL, idx), TFREC_OK);
    }
}

/* The options' fs field: a dataset and a reader through a file system
 * that is not registered anywhere. */
static void test_options_fs(void)
{
    CHECK_EQ(put(NULL, "mem://tst/opt", "", 1), TFREC_OK);
    tfrec_writer *w;
    CHECK_EQ(tfrec_writer_open(&w, "mem://tst/opt", NULL), TFREC_OK);
    CHECK_EQ(tfrec_writer_write(w, "abc", 3), TFREC_OK);
    CHECK_EQ(tfrec_writer_close(w), TFREC_OK);
    tfrec_writer_free(w);
    tfrec_fs t = TFREC_FS_INIT;
    t.scheme = "unregistered";
    t.ctx = &tst_calls;
    t.open_source = tst_open_source;
    t.stat = tst_stat;
    tst_calls = 0;
    tfrec_reader_options ro = TFREC_READER_OPTIONS_INIT;
    ro.fs = &t;
    tfrec_reader *r;
    CHECK_EQ(tfrec_reader_open(&r, "xyz://opt", &ro), TFREC_OK);
    const uint8_t *data;
    size_t len;
    CHECK_EQ(tfrec_reader_next(r, &data, &len), TFREC_OK);
    CHECK(len == 3 && memcmp(data, "abc", 3) == 0);
    tfrec_reader_free(r);
    CHECK_EQ(tst_calls, 1);
    tfrec_dataset_options o = TFREC_DATASET_OPTIONS_INIT;
    o.fs = &t;
    const char *name = "xyz://opt";
    tfrec_dataset *ds;
    CHECKF(tfrec_dataset_open(&ds, &name, 1, &o) == TFREC_OK, "%s", tfrec_last_errmsg());
    CHECK_EQ(tfrec_dataset_next(ds, &data, &len), TFREC_OK);
    CHECK(len == 3 && memcmp(data, "abc", 3) == 0);
    CHECK_EQ(tfrec_dataset_next(ds, &data, &len), TFREC_END);
    tfrec_dataset_free(ds);
    CHECK(tst_calls >= 3);
    CHECK_EQ(tfrec_fs_remove(NULL, "mem://tst/opt"), TFREC_OK);
}

/* Whole small objects: bounded, NUL-terminated, failures name the object. */
static void test_read_all(void)
{
    char big[70000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0'; /* more than one read step */
    CHECK_EQ(put(NULL, "mem://ra/big", big, 1), TFREC_OK);
    CHECK_EQ(put(NULL, "mem://ra/empty", "", 1), TFREC_OK);
    char *data = NULL;
    size_t len = 0;
    CHECK_EQ(tfrec_fs_read_all(NULL, "mem://ra/big", sizeof big, &data, &len), TFREC_OK);
    CHECK(len == sizeof big - 1 && data[len] == '\0' && memcmp(data, big, len) == 0);
    free(data);
    CHECK_EQ(tfrec_fs_read_all(NULL, "mem://ra/big", len, &data, &len), TFREC_OK);
    free(data);
    /* one byte over the bound is refused, and nothing is handed out */
    data = (char *)1;
    CHECK_EQ(tfrec_fs_read_all(NULL, "mem://ra/big", sizeof big - 2, &data, &len), TFREC_E_PARSE);
    CHECK(data == NULL);
    CHECK(strstr(tfrec_last_errmsg(), "mem://ra/big: larger than 69998 bytes") != NULL);
    CHECK_EQ(tfrec_fs_read_all(NULL, "mem://ra/empty", 10, &data, &len), TFREC_OK);
    CHECK(len == 0 && data && data[0] == '\0');
    free(data);
    CHECK_EQ(tfrec_fs_read_all(NULL, "mem://ra/missing", 10, &data, &len), TFREC_E_NOT_FOUND);
    CHECK(strstr(tfrec_last_errmsg(), "mem://ra/missing") != NULL);
    CHECK_EQ(tfrec_fs_read_all(NULL, "nosuch://x", 10, &data, &len), TFREC_E_UNSUPPORTED);
    CHECK_EQ(tfrec_fs_remove(NULL, "mem://ra/big"), TFREC_OK);
    CHECK_EQ(tfrec_fs_remove(NULL, "mem://ra/empty"), TFREC_OK);
}

TESTS(TEST(test_scheme_detection), TEST(test_local), TEST(test_abort_leaves_nothing),
      TEST(test_mem), TEST(test_list_sorted), TEST(test_registry), TEST(test_registry_threads),
      TEST(test_records_local), TEST(test_records_file_url), TEST(test_records_mem),
      TEST(test_writer_abort_mem), TEST(test_datasets_over_mem), TEST(test_options_fs),
      TEST(test_read_all))

/* Sinks and sources: temporary file then rename, abort, stdout/stdin,
 * pipes, failing sinks; and reader seeks. */
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "record_util.h"

static int exists(const char *p)
{
    return access(p, F_OK) == 0;
}

static void make_dir(const char *name, char *out, size_t len)
{
    snprintf(out, len, "%s/%s", harness_tmpdir(), name);
    mkdir(out, 0700);
}

static void test_temp_then_rename(void)
{
    char dir[4200], path[4300];
    make_dir("rename", dir, sizeof dir);
    snprintf(path, sizeof path, "%s/shard-00000-of-00001", dir);
    for (int comp = TFREC_COMPRESSION_NONE; comp <= TFREC_COMPRESSION_GZIP; comp++) {
        tfrec_writer_options o = { .struct_size = sizeof o, .compression = comp };
        tfrec_writer *w;
        CHECK(tfrec_writer_open(&w, path, &o) == 0);
        CHECK(tfrec_writer_write(w, "abc", 3) == 0);
        CHECK(tfrec_writer_flush(w) == 0);
        CHECK(!exists(path)); /* not before close */
        CHECK_EQ(rt_count_files(dir, "shard-00000-of-00001.tmp-"),
                 1); /* but a temp file is there */
        CHECK(tfrec_writer_close(w) == 0);
        CHECK(exists(path));
        CHECK_EQ(rt_count_files(dir, "shard-00000-of-00001.tmp-"), 0);
        /* using a closed writer is a state error, and errmsg still works */
        CHECK_EQ(tfrec_writer_write(w, "x", 1), TFREC_E_STATE);
        CHECK(rt_contains(tfrec_writer_errmsg(w), "closed"));
        tfrec_writer_free(w);
        CHECK(unlink(path) == 0);
    }
    /* the temp name has the documented shape */
    tfrec_writer *w;
    CHECK(tfrec_writer_open(&w, path, NULL) == 0);
    char expect[64];
    snprintf(expect, sizeof expect, "shard-00000-of-00001.tmp-%ld-", (long)getpid());
    CHECK_EQ(rt_count_files(dir, expect), 1);
    tfrec_writer_free(w); /* neither closed nor aborted: aborted */
    CHECK(!exists(path));
    CHECK_EQ(rt_count_files(dir, "shard"), 0);
}

static void test_abort(void)
{
    char dir[4200], path[4300];
    make_dir("abort", dir, sizeof dir);
    snprintf(path, sizeof path, "%s/out", dir);
    /* an existing file stays untouched when the replacement is aborted */
    CHECK(rt_spit(path, "old", 3) == 0);
    tfrec_writer_options o = { .struct_size = sizeof o, .compression = TFREC_COMPRESSION_GZIP };
    tfrec_writer *w;
    CHECK(tfrec_writer_open(&w, path, &o) == 0);
    for (int i = 0; i < 1000; i++)
        CHECK(tfrec_writer_write(w, "0123456789", 10) == 0);
    tfrec_writer_abort(w);
    CHECK_EQ(tfrec_writer_write(w, "x", 1), TFREC_E_STATE);
    CHECK_EQ(tfrec_writer_close(w), TFREC_E_STATE);
    tfrec_writer_free(w);
    size_t len;
    uint8_t *p = rt_slurp(path, &len);
    CHECK(p && len == 3 && memcmp(p, "old", 3) == 0);
    free(p);
    CHECK_EQ(rt_count_files(dir, "out.tmp-"), 0);
    /* and is replaced atomically by a committed one */
    CHECK(tfrec_writer_open(&w, path, NULL) == 0);
    CHECK(tfrec_writer_write(w, "new", 3) == 0);
    CHECK(tfrec_writer_close(w) == 0);
    tfrec_writer_free(w);
    p = rt_slurp(path, &len);
    CHECK(p && len == 19);
    free(p);
}

/* When the final rename fails, close says so and leaves no temp file. */
static void test_rename_failure(void)
{
    char dir[4200], path[4300], inner[4400];
    make_dir("renamefail", dir, sizeof dir);
    snprintf(path, sizeof path, "%s/out", dir);
    tfrec_writer *w;
    CHECK(tfrec_writer_open(&w, path, NULL) == 0);
    CHECK(tfrec_writer_write(w, "abc", 3) == 0);
    /* someone puts a non-empty directory where the file should go */
    CHECK(mkdir(path, 0700) == 0);
    snprintf(inner, sizeof inner, "%s/x", path);
    CHECK(rt_spit(inner, "x", 1) == 0);
    int rc = tfrec_writer_close(w);
    CHECK_EQ(rc, TFREC_E_IO);
    CHECKF(rt_contains(tfrec_writer_errmsg(w), "rename") &&
               rt_contains(tfrec_writer_errmsg(w), path),
           "%s", tfrec_writer_errmsg(w));
    tfrec_writer_free(w);
    CHECK_EQ(rt_count_files(dir, "out.tmp-"), 0);
}

static void test_open_errors(void)
{
    tfrec_writer *w;
    int rc = tfrec_writer_open(&w, "/nonexistent-dir-tfrec/x", NULL);
    CHECK_EQ(rc, TFREC_E_NOT_FOUND);
    CHECK(w == NULL);
    CHECK(rt_contains(tfrec_last_errmsg(), "/nonexistent-dir-tfrec/x"));
    tfrec_reader *r;
    CHECK_EQ(tfrec_reader_open(&r, harness_tmpdir(), NULL), TFREC_E_IO); /* a directory */
    CHECK(rt_contains(tfrec_last_errmsg(), "directory"));
}

/* A sink that fails after `limit` bytes and remembers how it was closed. */
typedef struct failing {
    size_t limit, written;
    int closed, commit;
} failing;

static int failing_write(void *ctx, const void *buf, size_t n)
{
    (void)buf;
    failing *f = ctx;
    if (f->written + n > f->limit)
        return TFREC_E_IO;
    f->written += n;
    return 0;
}

static int failing_close(void *ctx, int commit)
{
    failing *f = ctx;
    f->closed++;
    f->commit = commit;
    return 0;
}

static const char *failing_msg(void *ctx)
{
    (void)ctx;
    return "disk full (simulated)";
}

static void test_failing_sink(void)
{
    for (int comp = TFREC_COMPRESSION_NONE; comp <= TFREC_COMPRESSION_GZIP; comp += 2) {
        failing f = { .limit = 100000 };
        tfrec_io io = { .struct_size = sizeof io,
                        .ctx = &f,
                        .write = failing_write,
                        .close = failing_close,
                        .errmsg = failing_msg };
        tfrec_writer_options o = { .struct_size = sizeof o,
                                   .compression = comp,
                                   .buffer_size = 4096 };
        tfrec_writer *w;
        CHECK(tfrec_writer_open_io(&w, &io, "sim", &o) == 0);
        uint8_t rec[1000];
        int rc = 0, i;
        for (i = 0; i < 1000 && rc == 0; i++) {
            harness_random(rec, sizeof rec, (uint64_t)i); /* incompressible */
            rc = tfrec_writer_write(w, rec, sizeof rec);
        }
        CHECKF(rc == TFREC_E_IO, "compression %d: rc %d after %d records", comp, rc, i);
        CHECK(rt_contains(tfrec_writer_errmsg(w), "disk full"));
        CHECK_EQ(tfrec_writer_write(w, rec, 1), TFREC_E_IO); /* sticky */
        CHECK_EQ(tfrec_writer_close(w), TFREC_E_IO);
        CHECK(f.closed == 1 && f.commit == 0); /* discarded, not committed */
        tfrec_writer_free(w);
        CHECK_EQ(f.closed, 1);
    }
}

/* Run fn with fd `target` redirected to `fd`. */
static void with_fd(int target, int fd, void (*fn)(void *), void *arg)
{
    fflush(stdout);
    int saved = dup(target);
    dup2(fd, target);
    fn(arg);
    fflush(stdout);
    dup2(saved, target);
    close(saved);
}

static int stdio_rc;

static void write_stdout(void *arg)
{
    (void)arg;
    tfrec_writer_options o = { .struct_size = sizeof o, .compression = TFREC_COMPRESSION_GZIP };
    tfrec_writer *w;
    stdio_rc = tfrec_writer_open(&w, "-", &o);
    if (stdio_rc)
        return;
    stdio_rc = tfrec_writer_write(w, "to stdout", 9);
    if (!stdio_rc)
        stdio_rc = tfrec_writer_close(w);
    tfrec_writer_free(w);
}

typedef struct stdin_result {
    int rc, records, seek_back, seek_fwd;
} stdin_result;

static void read_stdin(void *arg)
{
    stdin_result *res = arg;
    tfrec_reader *r;
    res->rc = tfrec_reader_open(&r, "-", NULL);
    if (res->rc)
        return;
    const uint8_t *d;
    size_t len;
    res->seek_fwd = tfrec_reader_seek(r, 19); /* skip the first record (3 bytes) */
    while ((res->rc = tfrec_reader_next(r, &d, &len)) == 0)
        res->records++;
    res->seek_back = tfrec_reader_seek(r, 0);
    tfrec_reader_free(r);
}

static void test_stdout_stdin(void)
{
    const char *out = harness_path("stdout.gz");
    int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0);
    with_fd(STDOUT_FILENO, fd, write_stdout, NULL);
    close(fd);
    CHECKF(stdio_rc == 0, "%d %s", stdio_rc, tfrec_last_errmsg());
    tfrec_reader *r;
    CHECK(tfrec_reader_open(&r, out, NULL) == 0);
    const uint8_t *d;
    size_t len;
    CHECK(tfrec_reader_next(r, &d, &len) == 0 && len == 9 && memcmp(d, "to stdout", 9) == 0);
    CHECK(tfrec_reader_next(r, &d, &len) == TFREC_END);
    tfrec_reader_free(r);

    /* stdin from a pipe: forward seeks work by reading, backward ones cannot */
    size_t sizes[4] = { 3, 4, 5, 6 };
    CHECK(rt_write(harness_path("pipe-src"), TFREC_COMPRESSION_NONE, sizes, 4, 3) == 0);
    size_t flen;
    uint8_t *file = rt_slurp(harness_path("pipe-src"), &flen);
    int p[2];
    CHECK(pipe(p) == 0);
    pid_t child = fork();
    if (child == 0) {
        close(p[0]);
        signal(SIGPIPE, SIG_DFL);
        for (size_t i = 0; i < flen; i++) /* dribble it */
            if (write(p[1], file + i, 1) != 1)
                _exit(1);
        _exit(0);
    }
    close(p[1]);
    stdin_result res = { 0 };
    with_fd(STDIN_FILENO, p[0], read_stdin, &res);
    close(p[0]);
    int status;
    waitpid(child, &status, 0);
    free(file);
    CHECKF(res.rc == TFREC_END, "%d %s", res.rc, tfrec_last_errmsg());
    CHECK_EQ(res.seek_fwd, 0);
    CHECK_EQ(res.records, 3);
    CHECK_EQ(res.seek_back, TFREC_E_UNSUPPORTED);
}

/* Record offsets and seeks, NONE (file seek) and compressed (re-read). */
static void seek_cases(int use_mmap)
{
    enum { N = 200 };
    size_t sizes[N];
    for (size_t i = 0; i < N; i++)
        sizes[i] = (i * 7919) % 3000;
    for (int comp = TFREC_COMPRESSION_NONE; comp <= TFREC_COMPRESSION_GZIP; comp++) {
        const char *path = harness_path("seek");
        CHECK(rt_write(path, comp, sizes, N, 11) == 0);
        tfrec_reader_options o = TFREC_READER_OPTIONS_INIT;
        o.buffer_size = 4096; /* so most seeks leave the buffer */
        o.use_mmap = use_mmap;
        tfrec_reader *r;
        CHECK(tfrec_reader_open(&r, path, &o) == 0);
        uint64_t off[N], expect = 0;
        const uint8_t *d;
        size_t len;
        for (size_t i = 0; i < N; i++) {
            CHECK(tfrec_reader_next(r, &d, &len) == 0);
            off[i] = tfrec_reader_offset(r);
            CHECK_EQ(off[i], expect);
            expect += sizes[i] + 16;
        }
        CHECK(tfrec_reader_next(r, &d, &len) == TFREC_END);
        static const size_t order[] = { 150, 10, 11, 199, 0, 100, 100, 57 };
        for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
            size_t i = order[k];
            CHECKF(tfrec_reader_seek(r, off[i]) == 0, "%s", tfrec_reader_errmsg(r));
            CHECK(tfrec_reader_next(r, &d, &len) == 0);
            CHECK_EQ(len, sizes[i]);
            CHECK_EQ(tfrec_reader_offset(r), off[i]);
            uint8_t want[3000];
            rt_payload(want, len, 11, i);
            CHECK(memcmp(want, d, len) == 0);
            if (i + 1 < N) {
                CHECK(tfrec_reader_next(r, &d, &len) == 0);
                CHECK_EQ(len, sizes[i + 1]);
            }
        }
        /* to the very end: END; beyond it (when re-reading): an error */
        CHECK(tfrec_reader_seek(r, expect) == 0);
        CHECK(tfrec_reader_next(r, &d, &len) == TFREC_END);
        if (comp != TFREC_COMPRESSION_NONE || use_mmap > 0) {
            CHECK_EQ(tfrec_reader_seek(r, expect + 5), TFREC_E_INVALID);
            CHECK(rt_contains(tfrec_reader_errmsg(r), "ends at"));
        }
        /* a seek clears an earlier error */
        CHECK(tfrec_reader_seek(r, off[1] + 1) == 0);
        CHECK(tfrec_reader_next(r, &d, &len) < 0);
        CHECK(tfrec_reader_seek(r, off[2]) == 0);
        CHECK(tfrec_reader_next(r, &d, &len) == 0 && len == sizes[2]);
        tfrec_reader_free(r);
    }
}

static void test_seek(void)
{
    seek_cases(-1);
    seek_cases(1);
}

TESTS(TEST(test_temp_then_rename), TEST(test_abort), TEST(test_rename_failure),
      TEST(test_open_errors), TEST(test_failing_sink), TEST(test_stdout_stdin), TEST(test_seek))

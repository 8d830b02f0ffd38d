/* The conversion API used directly (the CLI and the Python tests cover the
 * output format): counts, manifest JSON, progress callback, cancellation,
 * option validation, the shuffle specification. */
#include <dirent.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../fixtures/jpeg_file.h"
#include "harness.h"
#include "imagenet/plan.h"
#include "tfrec/fs.h"
#include "tfrec/imagenet.h"
#include "tfrec/record.h"
#include "util/splitmix.h"

/* A black RGB picture at path. */
static void write_jpeg(const char *path, int w, int h)
{
    JSAMPLE *row = calloc((size_t)w, 3);
    if (!row || write_jpeg_file(path, w, h, JCS_RGB, 3, JCS_UNKNOWN, 0, row) != 0)
        harness_fail(__FILE__, __LINE__, "cannot write %s", path);
    free(row);
}

/* RAW/train/{nA,nB}/ with 3 images each, RAW/validation with 2. */
static const char *make_tree(void)
{
    static char root[512];
    snprintf(root, sizeof root, "%s", harness_path("raw"));
    char p[1024];
    mkdir(root, 0777);
    snprintf(p, sizeof p, "%s/train", root);
    mkdir(p, 0777);
    const char *syn[2] = { "nB", "nA" };
    for (int s = 0; s < 2; s++) {
        snprintf(p, sizeof p, "%s/train/%s", root, syn[s]);
        mkdir(p, 0777);
        for (int i = 0; i < 3; i++) {
            snprintf(p, sizeof p, "%s/train/%s/%s_%d.JPEG", root, syn[s], syn[s], i);
            write_jpeg(p, 16 + i, 8 + s);
        }
    }
    snprintf(p, sizeof p, "%s/validation", root);
    mkdir(p, 0777);
    for (int i = 0; i < 2; i++) {
        snprintf(p, sizeof p, "%s/validation/v%d.jpg", root, i);
        write_jpeg(p, 9, 9);
    }
    snprintf(p, sizeof p, "%s/synset_labels.txt", root);
    FILE *f = fopen(p, "w");
    fputs("nA\nnC\n", f);
    fclose(f);
    return root;
}

static int calls;
static uint64_t last_done, last_total;

static int count_progress(void *ctx, uint64_t done, uint64_t total, uint64_t in, uint64_t out)
{
    (void)ctx;
    (void)in;
    (void)out;
    calls++;
    last_done = done;
    last_total = total;
    return 0;
}

static int cancel_progress(void *ctx, uint64_t done, uint64_t total, uint64_t in, uint64_t out)
{
    (void)ctx;
    (void)total;
    (void)in;
    (void)out;
    return done >= 1;
}

static void test_convert_counts_and_manifest(void)
{
    const char *raw = make_tree();
    tfrec_imagenet_options o = TFREC_IMAGENET_OPTIONS_INIT;
    o.raw_data_dir = raw;
    o.output_dir = harness_path("out");
    o.train_shards = 4;
    o.validation_shards = 1;
    o.num_threads = 2;
    o.progress = count_progress;
    tfrec_imagenet_result *r = NULL;
    int rc = tfrec_imagenet_convert(&o, &r);
    CHECKF(rc == TFREC_OK, "%s", r ? tfrec_imagenet_result_errmsg(r) : "");
    CHECK(r != NULL);
    tfrec_imagenet_counts c = TFREC_IMAGENET_COUNTS_INIT;
    tfrec_imagenet_result_counts(r, &c);
    CHECK_EQ(c.images_total, 8);
    CHECK_EQ(c.images_written, 8);
    CHECK_EQ(c.images_rejected, 0);
    CHECK_EQ(c.shards, 5);
    CHECK_EQ(c.classes, 3); /* nA, nB, nC (nC only in validation) */
    CHECK(calls >= 1);
    CHECK_EQ(last_done, 8);
    CHECK_EQ(last_total, 8);
    const char *json = tfrec_imagenet_result_json(r);
    CHECK(strstr(json, "\"status\":\"ok\"") != NULL);
    CHECK(strstr(json, "{\"label\":1,\"synset\":\"nA\"}") != NULL);
    CHECK(strstr(json, "{\"label\":3,\"synset\":\"nC\"}") != NULL);
    /* the reference's layout: OUT/<split>/<split>-NNNNN-of-NNNNN */
    CHECK(strstr(json, "\"file\":\"validation/validation-00000-of-00001\",\"records\":2") != NULL);
    /* 6 train images over 4 shards: 1, 2, 1, 2 (k*n/S boundaries) */
    CHECK(strstr(json, "\"file\":\"train/train-00000-of-00004\",\"records\":1") != NULL);
    CHECK(strstr(json, "\"file\":\"train/train-00001-of-00004\",\"records\":2") != NULL);
    uint64_t bytes = 0;
    for (int k = 0; k < 4; k++) {
        char p[1024];
        snprintf(p, sizeof p, "%s/train/train-%05d-of-00004", o.output_dir, k);
        struct stat st;
        CHECK(stat(p, &st) == 0);
        bytes += (uint64_t)st.st_size;
    }
    CHECK(bytes > 0);
    tfrec_imagenet_result_free(r);
}

static void test_cancel_leaves_nothing(void)
{
    const char *raw = make_tree();
    tfrec_imagenet_options o = TFREC_IMAGENET_OPTIONS_INIT;
    o.raw_data_dir = raw;
    o.output_dir = harness_path("cancelled");
    o.train_shards = 2;
    o.validation_shards = 1;
    o.num_threads = 1;
    o.progress = cancel_progress;
    tfrec_imagenet_result *r = NULL;
    CHECK_EQ(tfrec_imagenet_convert(&o, &r), TFREC_E_STATE);
    CHECK(strstr(tfrec_imagenet_result_errmsg(r), "cancelled") != NULL);
    CHECK(strstr(tfrec_imagenet_result_json(r), "\"status\":\"failed\"") != NULL);
    tfrec_imagenet_result_free(r);
    char p[1024];
    snprintf(p, sizeof p, "%s/train/train-00000-of-00002", o.output_dir);
    CHECK(access(p, F_OK) != 0);
}

/* open_sink / remove_output: shards go straight to the caller's sinks (a
 * bucket, for imagenet2tfrec), each committed whole; a failed run removes
 * the ones it had committed and cancels the one in progress. */
typedef struct fake_obj {
    char name[256];
    uint8_t *data;
    size_t len;
} fake_obj;

typedef struct fake_bucket {
    fake_obj objs[16];
    int nobjs, aborted, removed, opened;
    int cancel_at; /* opening this shard (1-based) sets cancel */
    volatile int cancel;
} fake_bucket;

typedef struct fake_sink {
    fake_bucket *b;
    fake_obj o;
} fake_sink;

static int fake_write(void *ctx, const void *buf, size_t n)
{
    fake_sink *s = ctx;
    uint8_t *d = realloc(s->o.data, s->o.len + n);
    if (!d)
        return TFREC_E_NOMEM;
    memcpy(d + s->o.len, buf, n);
    s->o.data = d;
    s->o.len += n;
    return TFREC_OK;
}

static int fake_close(void *ctx, int commit)
{
    fake_sink *s = ctx;
    if (commit && s->b->nobjs < 16)
        s->b->objs[s->b->nobjs++] = s->o; /* appears only now, whole */
    else {
        s->b->aborted++;
        free(s->o.data);
    }
    free(s);
    return TFREC_OK;
}

static int fake_open_sink(void *ctx, tfrec_io *io, const char *name)
{
    fake_sink *s = calloc(1, sizeof *s);
    if (!s)
        return TFREC_E_NOMEM;
    s->b = ctx;
    if (++s->b->opened == s->b->cancel_at)
        s->b->cancel = 1;
    snprintf(s->o.name, sizeof s->o.name, "%s", name);
    io->ctx = s;
    io->write = fake_write;
    io->close = fake_close;
    return TFREC_OK;
}

static int fake_remove(void *ctx, const char *name)
{
    fake_bucket *b = ctx;
    for (int i = 0; i < b->nobjs; i++)
        if (!strcmp(b->objs[i].name, name)) {
            free(b->objs[i].data);
            b->objs[i] = b->objs[--b->nobjs];
            b->removed++;
            return TFREC_OK;
        }
    return TFREC_E_NOT_FOUND;
}

static void fake_free(fake_bucket *b)
{
    for (int i = 0; i < b->nobjs; i++)
        free(b->objs[i].data);
}

static void test_sinks_stream_the_shards(void)
{
    const char *raw = make_tree();
    static fake_bucket b;
    memset(&b, 0, sizeof b);
    tfrec_imagenet_options o = TFREC_IMAGENET_OPTIONS_INIT;
    o.raw_data_dir = raw;
    o.output_dir = "gs://bucket/out";
    o.train_shards = 4;
    o.validation_shards = 1;
    o.num_threads = 2;
    tfrec_imagenet_result *r = NULL;
    /* a gs:// output without the storage part is refused before any
     * work, with the file system layer's reason */
    CHECK_EQ(tfrec_imagenet_convert(&o, &r), TFREC_E_UNSUPPORTED);
    CHECKF(strstr(tfrec_imagenet_result_errmsg(r), "libtfrec-storage") != NULL, "%s",
           tfrec_imagenet_result_errmsg(r));
    tfrec_imagenet_result_free(r);
    CHECK(access("gs:", F_OK) != 0);

    /* the deprecated 1.0 sink callbacks, through the one shim
     * (lib/fs/opener.c) */
    o.open_sink = fake_open_sink;
    o.remove_output = fake_remove;
    o.sink_ctx = &b;
    int rc = tfrec_imagenet_convert(&o, &r);
    CHECKF(rc == TFREC_OK, "%s", r ? tfrec_imagenet_result_errmsg(r) : "");
    tfrec_imagenet_result_free(r);
    CHECK_EQ(b.nobjs, 5);
    CHECK_EQ(b.aborted, 0);
    CHECK(access("gs:", F_OK) != 0); /* nothing local: no staging directory */
    CHECK(!strcmp(b.objs[0].name, "gs://bucket/out/train/train-00000-of-00004"));
    CHECK(!strcmp(b.objs[4].name, "gs://bucket/out/validation/validation-00000-of-00001"));
    /* the committed bytes are the shard: 2 validation records */
    tfrec_io io = TFREC_IO_INIT;
    CHECK_EQ(tfrec_io_open_memory(&io, b.objs[4].data, b.objs[4].len), TFREC_OK);
    tfrec_reader *rd;
    CHECK_EQ(tfrec_reader_open_io(&rd, &io, "validation", NULL), TFREC_OK);
    const uint8_t *d;
    size_t n;
    int records = 0;
    while (tfrec_reader_next(rd, &d, &n) == TFREC_OK)
        records++;
    tfrec_reader_free(rd);
    CHECK_EQ(records, 2);
    fake_free(&b);

    /* cancelled in the third shard: the two committed are removed, the
     * third is cancelled, nothing is left */
    memset(&b, 0, sizeof b);
    b.cancel_at = 3;
    o.cancel = &b.cancel;
    CHECK_EQ(tfrec_imagenet_convert(&o, &r), TFREC_E_STATE);
    tfrec_imagenet_result_free(r);
    CHECK_EQ(b.opened, 3);
    CHECK_EQ(b.removed, 2);
    CHECK_EQ(b.aborted, 1);
    CHECK_EQ(b.nobjs, 0);
    fake_free(&b);
}

/* ------------------------------------------------ the fs option field */

/* The whole of name through the layer (fs NULL: the default). */
static uint8_t *slurp_fs(const tfrec_fs *fs, const char *name, size_t *len)
{
    tfrec_io io = TFREC_IO_INIT;
    if (tfrec_fs_open_source(fs, name, &io) != TFREC_OK)
        return NULL;
    uint8_t *b = NULL;
    size_t n = 0;
    for (;;) {
        uint8_t *nb = realloc(b, n + 65536);
        if (!nb)
            break;
        b = nb;
        ptrdiff_t k = io.read(io.ctx, b + n, 65536);
        if (k <= 0)
            break;
        n += (size_t)k;
    }
    io.close(io.ctx, 0);
    *len = n;
    return b;
}

static void copy_to(const char *from, const char *to)
{
    size_t n = 0;
    uint8_t *b = slurp_fs(NULL, from, &n);
    CHECKF(b != NULL, "%s", from);
    tfrec_io io = TFREC_IO_INIT;
    CHECK_EQ(tfrec_fs_open_sink(NULL, to, &io), TFREC_OK);
    CHECK_EQ(io.write(io.ctx, b, n), TFREC_OK);
    CHECK_EQ(io.close(io.ctx, 1), TFREC_OK);
    free(b);
}

typedef struct copy_ctx {
    const char *from, *to;
} copy_ctx;

static int copy_one(void *ctx, const char *name, const tfrec_fs_info *info)
{
    (void)info;
    copy_ctx *c = ctx;
    char dst[1024];
    snprintf(dst, sizeof dst, "%s%s", c->to, name + strlen(c->from));
    copy_to(name, dst);
    return 0;
}

/* The tree of make_tree() under mem://PREFIX/raw. */
static void tree_to_mem(const char *raw, const char *prefix)
{
    char pat[1024], to[1024];
    snprintf(to, sizeof to, "%s/raw", prefix);
    copy_ctx c = { raw, to };
    const char *pats[] = { "train/*/*", "validation/*", "synset_labels.txt" };
    for (int i = 0; i < 3; i++) {
        snprintf(pat, sizeof pat, "%s/%s", raw, pats[i]);
        CHECK_EQ(tfrec_fs_list(NULL, pat, copy_one, &c), TFREC_OK);
    }
}

/* Both shards of a 1+1 conversion equal those under the local dir. */
static void same_shards(const char *local_dir, const char *other_dir)
{
    const char *files[] = { "train/train-00000-of-00001", "validation/validation-00000-of-00001" };
    for (int i = 0; i < 2; i++) {
        char a[1024], b[1024];
        snprintf(a, sizeof a, "%s/%s", local_dir, files[i]);
        snprintf(b, sizeof b, "%s/%s", other_dir, files[i]);
        size_t na = 0, nb = 0;
        uint8_t *da = slurp_fs(NULL, a, &na), *db = slurp_fs(NULL, b, &nb);
        CHECKF(da && db, "%s / %s", a, b);
        CHECKF(na == nb && na > 0 && memcmp(da, db, na) == 0, "%s differs from %s", b, a);
        free(da);
        free(db);
    }
}

/* 1.0's input callbacks, in (ctx, io, name) order, over the default file
 * system; they count their calls. */
typedef struct in_calls {
    int list, open, range;
} in_calls;

typedef struct add_fwd {
    int (*add)(void *add_ctx, const char *name, uint64_t size);
    void *add_ctx;
} add_fwd;

static int fwd_add(void *ctx, const char *name, const tfrec_fs_info *info)
{
    add_fwd *a = ctx;
    return a->add(a->add_ctx, name, info->size);
}

static int old_list(void *ctx, const char *pattern,
                    int (*add)(void *add_ctx, const char *name, uint64_t size), void *add_ctx)
{
    __atomic_add_fetch(&((in_calls *)ctx)->list, 1, __ATOMIC_RELAXED);
    add_fwd a = { add, add_ctx };
    int rc = tfrec_fs_list(NULL, pattern, fwd_add, &a);
    return rc == TFREC_E_NOT_FOUND ? TFREC_OK : rc;
}

static int old_open(void *ctx, tfrec_io *io, const char *name)
{
    __atomic_add_fetch(&((in_calls *)ctx)->open, 1, __ATOMIC_RELAXED);
    return tfrec_fs_open_source(NULL, name, io);
}

static int old_open_sink(void *ctx, tfrec_io *io, const char *name)
{
    __atomic_add_fetch(&((in_calls *)ctx)->range, 1, __ATOMIC_RELAXED);
    return tfrec_fs_open_sink(NULL, name, io);
}

/* tfrec_imagenet_options.fs / merge_options.fs: a tree, its shards, the
 * manifest and the task parts in mem:// give the bytes of a local run; the
 * deprecated input and merge callbacks still work through the shim. */
static void test_fs_field_and_deprecated_callbacks(void)
{
    const char *raw = make_tree();
    char local_out[512];
    snprintf(local_out, sizeof local_out, "%s", harness_path("fs-local"));
    tfrec_imagenet_options o = TFREC_IMAGENET_OPTIONS_INIT;
    o.raw_data_dir = raw;
    o.output_dir = local_out;
    o.train_shards = 1;
    o.validation_shards = 1;
    o.num_threads = 2;
    tfrec_imagenet_result *r = NULL;
    int rc = tfrec_imagenet_convert(&o, &r);
    CHECKF(rc == TFREC_OK, "%s", tfrec_imagenet_result_errmsg(r));
    tfrec_imagenet_result_free(r);

    /* everything in mem://, fs NULL (the default routes the scheme) */
    tree_to_mem(raw, "mem://in-fs");
    o.raw_data_dir = "mem://in-fs/raw";
    o.output_dir = "mem://in-fs/out";
    o.manifest_path = "mem://in-fs/out/manifest.json";
    rc = tfrec_imagenet_convert(&o, &r);
    CHECKF(rc == TFREC_OK, "%s", tfrec_imagenet_result_errmsg(r));
    tfrec_imagenet_result_free(r);
    same_shards(local_out, "mem://in-fs/out");
    tfrec_fs_info info = TFREC_FS_INFO_INIT;
    CHECK_EQ(tfrec_fs_stat(NULL, "mem://in-fs/out/manifest.json", &info), TFREC_OK);
    CHECK(info.size > 0);

    /* the same with fs set explicitly */
    o.fs = tfrec_fs_default();
    o.output_dir = "mem://in-fs/out2";
    o.manifest_path = NULL;
    rc = tfrec_imagenet_convert(&o, &r);
    CHECKF(rc == TFREC_OK, "%s", tfrec_imagenet_result_errmsg(r));
    tfrec_imagenet_result_free(r);
    same_shards(local_out, "mem://in-fs/out2");
    o.fs = NULL;

    /* 1.0 input callbacks (through the shim), local staged output */
    in_calls counts = { 0, 0, 0 };
    char shim_out[512];
    snprintf(shim_out, sizeof shim_out, "%s", harness_path("fs-shim"));
    o.output_dir = shim_out;
    o.list_input = old_list;
    o.open_input = old_open;
    o.input_ctx = &counts;
    rc = tfrec_imagenet_convert(&o, &r);
    CHECKF(rc == TFREC_OK, "%s", tfrec_imagenet_result_errmsg(r));
    tfrec_imagenet_result_free(r);
    same_shards(local_out, shim_out);
    CHECK(counts.list >= 2);
    CHECK_EQ(counts.open, 6 + 2 + 1); /* the images and synset_labels.txt */
    o.list_input = NULL;
    o.open_input = NULL;
    o.input_ctx = NULL;

    /* two tasks into mem://, merged through the layer (parts listed) */
    o.output_dir = "mem://in-fs/tasks";
    o.num_tasks = 2;
    for (uint32_t t = 0; t < 2; t++) {
        o.task_index = t;
        rc = tfrec_imagenet_convert(&o, &r);
        CHECKF(rc == TFREC_OK, "%s", tfrec_imagenet_result_errmsg(r));
        tfrec_imagenet_result_free(r);
    }
    same_shards(local_out, "mem://in-fs/tasks");
    tfrec_imagenet_merge_options m = TFREC_IMAGENET_MERGE_OPTIONS_INIT;
    m.output_dir = "mem://in-fs/tasks";
    rc = tfrec_imagenet_merge_manifests(&m, &r);
    CHECKF(rc == TFREC_OK, "%s", tfrec_imagenet_result_errmsg(r));
    tfrec_imagenet_counts c = TFREC_IMAGENET_COUNTS_INIT;
    CHECK_EQ(tfrec_imagenet_result_counts(r, &c), TFREC_OK);
    CHECK_EQ(c.shards, 2);
    tfrec_imagenet_result_free(r);
    CHECK_EQ(tfrec_fs_stat(NULL, "mem://in-fs/tasks/manifest.json", &info), TFREC_OK);

    /* the deprecated merge callbacks (parts given), through the shim */
    const char *parts[] = { "mem://in-fs/tasks/manifest-task-00000-of-00002.json",
                            "mem://in-fs/tasks/manifest-task-00001-of-00002.json" };
    memset(&counts, 0, sizeof counts);
    m.parts = parts;
    m.nparts = 2;
    m.manifest_path = "mem://in-fs/tasks/manifest-old.json";
    m.open_source = old_open;
    m.open_sink = old_open_sink;
    m.io_ctx = &counts;
    rc = tfrec_imagenet_merge_manifests(&m, &r);
    CHECKF(rc == TFREC_OK, "%s", tfrec_imagenet_result_errmsg(r));
    tfrec_imagenet_result_free(r);
    CHECK(counts.open >= 4);   /* two parts, two shards */
    CHECK_EQ(counts.range, 1); /* the manifest's sink */
    CHECK_EQ(tfrec_fs_stat(NULL, "mem://in-fs/tasks/manifest-old.json", &info), TFREC_OK);

    /* a merge of a mem:// directory without parts names it */
    tfrec_imagenet_merge_options e = TFREC_IMAGENET_MERGE_OPTIONS_INIT;
    e.output_dir = "mem://in-fs/nothing";
    CHECK_EQ(tfrec_imagenet_merge_manifests(&e, &r), TFREC_E_NOT_FOUND);
    CHECK(strstr(tfrec_imagenet_result_errmsg(r), "holds no manifest part") != NULL);
    tfrec_imagenet_result_free(r);
}

/* Entries of dir named like a staging directory. */
static int count_staging(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        n += strncmp(e->d_name, ".tfrec-staging-", 15) == 0;
    if (d)
        closedir(d);
    return n;
}

/* The cancel flag (what imagenet2tfrec's signal handling sets) stops the
 * run, and nothing but the failed run's manifest is left. */
static void test_cancel_flag_stops_the_run(void)
{
    tfrec_imagenet_options o = TFREC_IMAGENET_OPTIONS_INIT;
    o.raw_data_dir = make_tree();
    o.output_dir = harness_path("flag-cancelled");
    o.train_shards = 2;
    o.validation_shards = 1;
    volatile int cancel = 1;
    o.cancel = &cancel;
    tfrec_imagenet_result *r = NULL;
    CHECK_EQ(tfrec_imagenet_convert(&o, &r), TFREC_E_STATE);
    CHECK(strstr(tfrec_imagenet_result_errmsg(r), "cancelled") != NULL);
    tfrec_imagenet_result_free(r);
    CHECK(count_staging(o.output_dir) == 0);
    char p[1024];
    snprintf(p, sizeof p, "%s/train", o.output_dir);
    CHECK(access(p, F_OK) != 0);
}

/* Shards of another set are refused (naming them, nothing changed);
 * overwrite replaces them once the new set is complete. */
static void test_other_set_refused_or_overwritten(void)
{
    tfrec_imagenet_options o = TFREC_IMAGENET_OPTIONS_INIT;
    o.raw_data_dir = make_tree();
    o.output_dir = harness_path("sets");
    o.train_shards = 3;
    o.validation_shards = 1;
    CHECK_EQ(tfrec_imagenet_convert(&o, NULL), TFREC_OK);
    o.train_shards = 2;
    tfrec_imagenet_result *r = NULL;
    CHECK_EQ(tfrec_imagenet_convert(&o, &r), TFREC_E_STATE);
    CHECK(strstr(tfrec_imagenet_result_errmsg(r), "train/train-00000-of-00003") != NULL);
    tfrec_imagenet_result_free(r);
    char p[1024];
    snprintf(p, sizeof p, "%s/train/train-00002-of-00003", o.output_dir);
    CHECK(access(p, F_OK) == 0);
    o.overwrite = 1;
    CHECK_EQ(tfrec_imagenet_convert(&o, NULL), TFREC_OK);
    CHECK(access(p, F_OK) != 0);
    snprintf(p, sizeof p, "%s/train/train-00001-of-00002", o.output_dir);
    CHECK(access(p, F_OK) == 0);
}

static void test_skip_reports_rejected_images(void)
{
    const char *raw = make_tree();
    char p[1024];
    snprintf(p, sizeof p, "%s/train/nA/nA_1.JPEG", raw);
    FILE *f = fopen(p, "w");
    fputs("not a jpeg", f);
    fclose(f);
    tfrec_imagenet_options o = TFREC_IMAGENET_OPTIONS_INIT;
    o.raw_data_dir = raw;
    o.output_dir = harness_path("skipped");
    o.train_shards = 1;
    o.validation_shards = 1;
    o.on_error = TFREC_ON_ERROR_SKIP;
    tfrec_imagenet_result *r = NULL;
    CHECK_EQ(tfrec_imagenet_convert(&o, &r), TFREC_OK);
    tfrec_imagenet_counts c = TFREC_IMAGENET_COUNTS_INIT;
    tfrec_imagenet_result_counts(r, &c);
    CHECK_EQ(c.images_rejected, 1);
    CHECK_EQ(c.images_written, 7);
    const char *path = NULL, *reason = NULL;
    CHECK_EQ(tfrec_imagenet_result_rejected(r, 0, &path, &reason), TFREC_OK);
    CHECK(strcmp(path, p) == 0);
    CHECK(strstr(reason, "not a JPEG or PNG") != NULL);
    CHECK_EQ(tfrec_imagenet_result_rejected(r, 1, &path, &reason), TFREC_E_INVALID);
    /* stop mode: the same input fails, naming the file */
    o.on_error = TFREC_ON_ERROR_STOP;
    o.output_dir = harness_path("stopped");
    tfrec_imagenet_result_free(r);
    CHECK_EQ(tfrec_imagenet_convert(&o, &r), TFREC_E_IMAGE);
    CHECK(strstr(tfrec_imagenet_result_errmsg(r), p) != NULL);
    tfrec_imagenet_result_free(r);
}

static void test_bad_options(void)
{
    tfrec_imagenet_result *r = NULL;
    tfrec_imagenet_options o = TFREC_IMAGENET_OPTIONS_INIT;
    CHECK_EQ(tfrec_imagenet_convert(&o, &r), TFREC_E_INVALID);
    CHECK(strstr(tfrec_imagenet_result_errmsg(r), "output directory") != NULL);
    tfrec_imagenet_result_free(r);
    o.output_dir = harness_path("never");
    o.raw_data_dir = harness_path("does-not-exist");
    CHECK_EQ(tfrec_imagenet_convert(&o, NULL), TFREC_E_NOT_FOUND);
    CHECK(strstr(tfrec_last_errmsg(), "does-not-exist") != NULL);
    CHECK(access(o.output_dir, F_OK) != 0);
    o.raw_data_dir = make_tree();
    o.quality = 101;
    CHECK_EQ(tfrec_imagenet_convert(&o, NULL), TFREC_E_INVALID);
    o.quality = 0;
    o.extensions = "png";
    CHECK_EQ(tfrec_imagenet_convert(&o, NULL), TFREC_E_NOT_FOUND); /* no validation images */
}

/* The shuffle is specified in shuffle.c and docs/imagenet.md; these are the
 * SplitMix64 reference outputs for seed 1234567 (published with the
 * algorithm) and a permutation check. */
static void test_splitmix_and_shuffle(void)
{
    uint64_t s = 1234567;
    CHECK(tfrec_splitmix64(&s) == 6457827717110365317ull);
    CHECK(tfrec_splitmix64(&s) == 3203168211198807973ull);
    in_item v[100];
    memset(v, 0, sizeof v);
    for (int i = 0; i < 100; i++)
        v[i].size = (uint64_t)i;
    tfrec_in_shuffle(v, 100, 42);
    int seen[100] = { 0 }, moved = 0;
    for (int i = 0; i < 100; i++) {
        seen[v[i].size]++;
        moved += v[i].size != (uint64_t)i;
    }
    for (int i = 0; i < 100; i++)
        CHECK_EQ(seen[i], 1);
    CHECK(moved > 80);
}

/* Labels and CSV files are text: a NUL byte (which would cut a name short,
 * or make it empty) is refused naming the file and line. Found by
 * fuzz_imagenet_lists. */
static void test_text_files_refuse_nul(void)
{
    const char *path = harness_path("labels_nul.txt");
    static const char text[] = "n01440764 tench\n\0\0x0 shark\nn01443537\n";
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    CHECK(fwrite(text, 1, sizeof text - 1, f) == sizeof text - 1);
    CHECK(fclose(f) == 0);
    for (int first_token = 0; first_token <= 1; first_token++) {
        tfrec_strlist lines = { 0 };
        tfrec_err err = { 0 };
        CHECK_EQ(tfrec_in_read_lines(NULL, path, first_token, &lines, &err), TFREC_E_INVALID);
        CHECKF(strstr(err.msg, path) && strstr(err.msg, "line 2") && strstr(err.msg, "NUL"), "%s",
               err.msg);
        CHECK(lines.n == 0);
    }
}

/* A pid no process has: a child that has exited and been reaped. */
static long dead_pid(void)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(0);
    /* CHECK returns without a value: report here, return an impossible pid. */
    if (pid <= 0 || waitpid(pid, NULL, 0) != pid) {
        harness_fail(__FILE__, __LINE__, "fork/waitpid for a dead pid failed");
        return -1;
    }
    return (long)pid;
}

/* Stale-staging cleanup never follows a link: a symlink named like the
 * staging directory of a dead process is left alone (the directory it
 * points to and its files survive), and in a real stale staging
 * directory a link is removed, not what it points to. */
static void test_stale_cleanup_follows_no_link(void)
{
    tfrec_imagenet_options o = TFREC_IMAGENET_OPTIONS_INIT;
    o.raw_data_dir = make_tree();
    o.output_dir = harness_path("stale-links");
    o.train_shards = 1;
    o.validation_shards = 1;
    char victim[1024], keep[1100], link[1100], real[1100], inner[1200], other[1200];
    snprintf(victim, sizeof victim, "%s", harness_path("stale-victim"));
    CHECK(mkdir(victim, 0777) == 0);
    snprintf(keep, sizeof keep, "%s/keep.txt", victim);
    FILE *f = fopen(keep, "w");
    CHECK(f != NULL);
    fputs("must survive", f);
    fclose(f);
    CHECK(mkdir(o.output_dir, 0777) == 0);
    snprintf(link, sizeof link, "%s/.tfrec-staging-%ld", o.output_dir, dead_pid());
    CHECK(symlink(victim, link) == 0);
    snprintf(real, sizeof real, "%s/.tfrec-staging-%ld", o.output_dir, dead_pid());
    CHECK(mkdir(real, 0777) == 0);
    snprintf(inner, sizeof inner, "%s/keep-link", real);
    CHECK(symlink(keep, inner) == 0);
    snprintf(other, sizeof other, "%s/dir-link", real);
    CHECK(symlink(victim, other) == 0);
    tfrec_imagenet_result *r = NULL;
    CHECKF(tfrec_imagenet_convert(&o, &r) == TFREC_OK, "%s", tfrec_imagenet_result_errmsg(r));
    tfrec_imagenet_result_free(r);
    struct stat st;
    CHECK(access(keep, F_OK) == 0);
    CHECK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode)); /* not ours: left alone */
    CHECK(lstat(real, &st) != 0);                        /* ours: gone */
}

/* A staging directory of one kind (here the lock file that a run
 * holds inside it) whose lock is held by a running converter survives
 * another run's start-up cleanup whatever pid its name carries (a dead
 * one: another PID namespace or host), and one whose lock can be taken
 * is removed even when its pid is a live process here (pid 1: another
 * pod's). A process id proves nothing on a shared volume. */
static void test_stale_cleanup_trusts_the_lock_not_the_pid(void)
{
    tfrec_imagenet_options o = TFREC_IMAGENET_OPTIONS_INIT;
    o.raw_data_dir = make_tree();
    o.output_dir = harness_path("stale-lock");
    o.train_shards = 1;
    o.validation_shards = 1;
    CHECK(mkdir(o.output_dir, 0777) == 0);
    char held[1100], lockf[1200], dead[1100], file[1200];
    snprintf(held, sizeof held, "%s/.tfrec-staging-%ld", o.output_dir, dead_pid());
    CHECK(mkdir(held, 0777) == 0);
    snprintf(lockf, sizeof lockf, "%s/.lock", held);
    int fd = open(lockf, O_RDWR | O_CREAT, 0666);
    CHECK(fd >= 0 && flock(fd, LOCK_EX) == 0); /* a running converter */
    snprintf(dead, sizeof dead, "%s/.tfrec-staging-1", o.output_dir);
    CHECK(mkdir(dead, 0777) == 0);
    snprintf(file, sizeof file, "%s/train-00000-of-00001", dead);
    FILE *f = fopen(file, "w");
    CHECK(f != NULL);
    fputs("partial", f);
    fclose(f);
    tfrec_imagenet_result *r = NULL;
    CHECKF(tfrec_imagenet_convert(&o, &r) == TFREC_OK, "%s", tfrec_imagenet_result_errmsg(r));
    tfrec_imagenet_counts c = TFREC_IMAGENET_COUNTS_INIT;
    CHECK(tfrec_imagenet_result_counts(r, &c) == TFREC_OK);
    CHECK_EQ(c.stale_removed, 1);
    const char *path = NULL;
    CHECK(tfrec_imagenet_result_stale(r, 0, &path) == TFREC_OK && !strcmp(path, dead));
    tfrec_imagenet_result_free(r);
    struct stat st;
    CHECK(stat(held, &st) == 0 && S_ISDIR(st.st_mode)); /* in use: kept */
    CHECK(stat(lockf, &st) == 0);
    CHECK(stat(dead, &st) != 0);              /* nobody's: removed */
    CHECK_EQ(count_staging(o.output_dir), 1); /* this run left none */
    /* Released (its holder died): the next run removes it. */
    close(fd);
    r = NULL;
    CHECKF(tfrec_imagenet_convert(&o, &r) == TFREC_OK, "%s", tfrec_imagenet_result_errmsg(r));
    tfrec_imagenet_result_free(r);
    CHECK(stat(held, &st) != 0);
    CHECK_EQ(count_staging(o.output_dir), 0);
}

/* The converter's names (paths.c): one '/' between parts, the root kept,
 * a directory's wildcards quoted when it leads a pattern. */
static void test_path_names(void)
{
    const char *joins[][3] = { { "out", "x", "out/x" },
                               { "out/", "x", "out/x" },
                               { "/", "x", "/x" },
                               { "", "x", "x" },
                               { "gs://b/o/", "s", "gs://b/o/s" } };
    for (size_t i = 0; i < sizeof joins / sizeof *joins; i++) {
        char *j = tfrec_in_join(joins[i][0], joins[i][1]);
        CHECK(j && !strcmp(j, joins[i][2]));
        free(j);
    }
    CHECK(!strcmp(tfrec_in_basename("a/b/c.JPEG"), "c.JPEG"));
    CHECK(!strcmp(tfrec_in_basename("c.JPEG"), "c.JPEG"));
    const char *dirs[][2] = { { "a/b.csv", "a" }, { "/b.csv", "/" }, { "b.csv", "." } };
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        char *d = tfrec_in_dirname(dirs[i][0]);
        CHECK(d && !strcmp(d, dirs[i][1]));
        free(d);
    }
    char *pat = tfrec_in_pattern_under("gs://b/x[1]*//", "*/*");
    CHECK(pat && !strcmp(pat, "gs://b/x\\[1\\]\\*/*/*"));
    free(pat);
    char name[IN_PART_NAME_MAX], prefix[64];
    tfrec_in_part_name(name, 3, 12);
    CHECK(!strcmp(name, "manifest-task-00003-of-00012.json"));
    tfrec_in_staging_prefix(prefix, sizeof prefix, 7);
    CHECK(!strcmp(prefix, ".tfrec-staging-task-00007-"));
    tfrec_in_staging_prefix(prefix, sizeof prefix, -1);
    CHECK(!strcmp(prefix, ".tfrec-staging-"));
}

TESTS(TEST(test_path_names), TEST(test_convert_counts_and_manifest),
      TEST(test_cancel_leaves_nothing), TEST(test_cancel_flag_stops_the_run),
      TEST(test_other_set_refused_or_overwritten), TEST(test_skip_reports_rejected_images),
      TEST(test_bad_options), TEST(test_splitmix_and_shuffle), TEST(test_text_files_refuse_nul),
      TEST(test_sinks_stream_the_shards), TEST(test_fs_field_and_deprecated_callbacks),
      TEST(test_stale_cleanup_follows_no_link),
      TEST(test_stale_cleanup_trusts_the_lock_not_the_pid))

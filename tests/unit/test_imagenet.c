/* The conversion API used directly (the CLI and the Python tests cover the
 * output format): counts, manifest JSON, progress callback, cancellation,
 * option validation, the shuffle specification. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jpeglib.h>

#include "harness.h"
#include "imagenet/plan.h"
#include "tfrec/imagenet.h"
#include "tfrec/record.h"

static void write_jpeg(const char *path, int w, int h)
{
    FILE *f = fopen(path, "wb");
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr e;
    c.err = jpeg_std_error(&e);
    jpeg_create_compress(&c);
    jpeg_stdio_dest(&c, f);
    c.image_width = (JDIMENSION)w;
    c.image_height = (JDIMENSION)h;
    c.input_components = 3;
    c.in_color_space = JCS_RGB;
    jpeg_set_defaults(&c);
    jpeg_start_compress(&c, TRUE);
    JSAMPLE *row = calloc((size_t)w, 3);
    while (c.next_scanline < c.image_height) {
        JSAMPROW r[1] = { row };
        jpeg_write_scanlines(&c, r, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    free(row);
    fclose(f);
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
    char p[1024];
    snprintf(p, sizeof p, "%s/.tfrec-staging-%ld", o.output_dir, (long)getpid());
    CHECK(access(p, F_OK) != 0);
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
    CHECK(tfrec_in_splitmix64(&s) == 6457827717110365317ull);
    CHECK(tfrec_in_splitmix64(&s) == 3203168211198807973ull);
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
        CHECK_EQ(tfrec_in_read_lines(path, first_token, &lines, &err), TFREC_E_INVALID);
        CHECKF(strstr(err.msg, path) && strstr(err.msg, "line 2") && strstr(err.msg, "NUL"), "%s",
               err.msg);
        CHECK(lines.n == 0);
    }
}

TESTS(TEST(test_convert_counts_and_manifest), TEST(test_cancel_leaves_nothing),
      TEST(test_cancel_flag_stops_the_run), TEST(test_other_set_refused_or_overwritten),
      TEST(test_skip_reports_rejected_images), TEST(test_bad_options),
      TEST(test_splitmix_and_shuffle), TEST(test_text_files_refuse_nul))

/* API-wide contracts: NULL handles never crash (every _free accepts NULL,
 * everything else reports TFREC_E_INVALID or an empty value), and the
 * runtime switches (TFREC_DEFLATE, TFREC_MMAP) are read once per process and
 * have API equivalents. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bigtable/writer_testing.h"
#include "harness.h"
#include "record_util.h"
#include "tfrec/tfrec.h"

/* ---------------------------------------------------------------- NULL handles */

static void test_free_accepts_null(void)
{
    tfrec_reader_free(NULL);
    tfrec_writer_free(NULL);
    tfrec_writer_abort(NULL);
    tfrec_record_batch_free(NULL);
    tfrec_example_builder_free(NULL);
    tfrec_example_builder_reset(NULL);
    tfrec_example_free(NULL);
    tfrec_bt_client_free(NULL);
    tfrec_bt_writer_free(NULL);
    tfrec_bt_reader_free(NULL);
    tfrec_imagenet_result_free(NULL);
    tfrec_free(NULL);
    tfrec_bt_writer_set_status_hook(NULL, NULL, NULL);
    CHECK(1); /* reaching here is the test */
}

static void test_record_functions_with_null_handles(void)
{
    const uint8_t *d;
    size_t len;
    uint64_t u;
    tfrec_reader_stats st = TFREC_READER_STATS_INIT;
    CHECK_EQ(tfrec_reader_open(NULL, "x", NULL), TFREC_E_INVALID);
    CHECK_EQ(tfrec_reader_open_io(NULL, NULL, "x", NULL), TFREC_E_INVALID);
    CHECK_EQ(tfrec_reader_next(NULL, &d, &len), TFREC_E_INVALID);
    CHECK_EQ(tfrec_reader_seek(NULL, 0), TFREC_E_INVALID);
    CHECK_EQ(tfrec_reader_offset(NULL), 0);
    CHECK_EQ(tfrec_reader_compression(NULL), TFREC_E_INVALID);
    CHECK_EQ(tfrec_reader_stats_get(NULL, &st), TFREC_E_INVALID);
    CHECK_EQ(tfrec_reader_last_skip(NULL, &u, &u), TFREC_E_INVALID);
    CHECK_EQ(tfrec_reader_skip(NULL, 0, &u), TFREC_E_INVALID);
    CHECK_EQ(tfrec_reader_read_batch(NULL, NULL, 1, 0), TFREC_E_INVALID);
    CHECK_EQ(tfrec_writer_open(NULL, "x", NULL), TFREC_E_INVALID);
    CHECK_EQ(tfrec_writer_open_io(NULL, NULL, "x", NULL), TFREC_E_INVALID);
    CHECK_EQ(tfrec_writer_write(NULL, "a", 1), TFREC_E_INVALID);
    CHECK_EQ(tfrec_writer_flush(NULL), TFREC_E_INVALID);
    CHECK_EQ(tfrec_writer_close(NULL), TFREC_E_INVALID);
    CHECK_EQ(tfrec_writer_records(NULL), 0);
    CHECK_EQ(tfrec_writer_bytes_out(NULL), 0);
    CHECK_EQ(tfrec_writer_write_batch(NULL, "a", &u, 1), TFREC_E_INVALID);
    CHECK_EQ(tfrec_record_batch_new(NULL), TFREC_E_INVALID);
    CHECK_EQ(tfrec_record_batch_count(NULL), 0);
    CHECK(tfrec_record_batch_data(NULL) == NULL);
    CHECK_EQ(tfrec_io_open_source(NULL, "x"), TFREC_E_INVALID);
    CHECK_EQ(tfrec_io_open_sink(NULL, "x"), TFREC_E_INVALID);
    CHECK_EQ(tfrec_io_open_memory(NULL, "x", 1), TFREC_E_INVALID);
}

static void test_example_functions_with_null_handles(void)
{
    size_t n;
    uint8_t *out;
    const int64_t *iv;
    int64_t v;
    CHECK_EQ(tfrec_example_builder_new(NULL), TFREC_E_INVALID);
    CHECK_EQ(tfrec_example_add_int64(NULL, "k", 1), TFREC_E_INVALID);
    CHECK_EQ(tfrec_example_add_string(NULL, "k", "s"), TFREC_E_INVALID);
    CHECK_EQ(tfrec_example_serialized_size(NULL), 0);
    CHECK_EQ(tfrec_example_serialize_alloc(NULL, &out, &n), TFREC_E_INVALID);
    CHECK_EQ(tfrec_example_parse(NULL, "", 0), TFREC_E_INVALID);
    CHECK_EQ(tfrec_example_feature_count(NULL), 0);
    CHECK(tfrec_example_feature_key(NULL, 0) == NULL);
    CHECK_EQ(tfrec_example_feature_type(NULL, "k"), TFREC_FEATURE_NONE);
    CHECK_EQ(tfrec_example_get_int64(NULL, "k", 0, &v), TFREC_E_INVALID);
    CHECK_EQ(tfrec_example_get_int64_list(NULL, "k", &iv, &n), TFREC_E_INVALID);
    /* a real example, NULL outputs */
    tfrec_example *ex;
    CHECK_EQ(tfrec_example_parse(&ex, "", 0), TFREC_OK);
    CHECK_EQ(tfrec_example_get_int64_list(ex, "k", NULL, NULL), TFREC_E_INVALID);
    tfrec_example_free(ex);
}

static void test_bigtable_functions_with_null_handles(void)
{
    tfrec_bt_writer_stats st = TFREC_BT_WRITER_STATS_INIT;
    tfrec_bt_row row = TFREC_BT_ROW_INIT;
    tfrec_bt_writer *w = (tfrec_bt_writer *)1; /* must be reset to NULL on failure */
    tfrec_bt_reader *r = (tfrec_bt_reader *)1;
    CHECK_EQ(tfrec_bt_client_open(NULL, NULL), TFREC_E_INVALID);
    CHECK_EQ(tfrec_bt_ensure_table(NULL, "t", "f", 0), TFREC_E_INVALID);
    CHECK(strcmp(tfrec_bt_client_project(NULL), "") == 0);
    CHECK(strcmp(tfrec_bt_client_endpoint(NULL), "") == 0);
    CHECK_EQ(tfrec_bt_client_is_emulator(NULL), 0);
    CHECK_EQ(tfrec_bt_writer_open(&w, NULL, "t", "f", NULL), TFREC_E_INVALID);
    CHECK(w == NULL);
    CHECK_EQ(tfrec_bt_writer_put(NULL, "k", 1, "q", 1, "v", 1, 0), TFREC_E_INVALID);
    CHECK_EQ(tfrec_bt_writer_flush(NULL), TFREC_E_INVALID);
    CHECK_EQ(tfrec_bt_writer_close(NULL), TFREC_E_INVALID);
    CHECK_EQ(tfrec_bt_writer_stats_get(NULL, &st), TFREC_E_INVALID);
    CHECK_EQ(tfrec_bt_writer_timestamp(NULL), 0);
    CHECK_EQ(tfrec_bt_writer_failed_count(NULL), 0);
    CHECK_EQ(tfrec_bt_writer_failed_row(NULL, 0, NULL, NULL, NULL, NULL, NULL), TFREC_E_INVALID);
    CHECK_EQ(tfrec_bt_reader_open(&r, NULL, "t", NULL), TFREC_E_INVALID);
    CHECK(r == NULL);
    CHECK_EQ(tfrec_bt_reader_next(NULL, &row), TFREC_E_INVALID);
}

static void test_imagenet_functions_with_null_handles(void)
{
    tfrec_imagenet_counts c = TFREC_IMAGENET_COUNTS_INIT;
    const char *p, *why;
    CHECK_EQ(tfrec_imagenet_result_status(NULL), TFREC_E_INVALID);
    CHECK_EQ(tfrec_imagenet_result_counts(NULL, &c), TFREC_E_INVALID);
    CHECK_EQ(tfrec_imagenet_result_rejected(NULL, 0, &p, &why), TFREC_E_INVALID);
    CHECK(strcmp(tfrec_imagenet_result_json(NULL), "") == 0);
    /* NULL options are the defaults, which lack the required directories */
    CHECK_EQ(tfrec_imagenet_convert(NULL, NULL), TFREC_E_INVALID);
    CHECK(rt_contains(tfrec_last_errmsg(), "output directory"));
}

/* errmsg(NULL) is the thread's last message: the reason a constructor
 * failed can be read through the handle variable it left NULL. */
static void test_errmsg_of_null_is_last_message(void)
{
    tfrec_reader *r = NULL;
    CHECK(tfrec_reader_open(&r, harness_path("does-not-exist"), NULL) < 0);
    CHECK(r == NULL);
    CHECK(rt_contains(tfrec_reader_errmsg(r), "does-not-exist"));
    const char *last = tfrec_last_errmsg();
    CHECK(tfrec_writer_errmsg(NULL) == last);
    CHECK(tfrec_example_builder_errmsg(NULL) == last);
    CHECK(tfrec_bt_client_errmsg(NULL) == last);
    CHECK(tfrec_bt_writer_errmsg(NULL) == last);
    CHECK(tfrec_bt_reader_errmsg(NULL) == last);
    CHECK(tfrec_imagenet_result_errmsg(NULL) == last);
}

/* ---------------------------------------------------------------- runtime switches */

/* Whether the file at path is mapped into this process right now. */
static int is_mapped(const char *path)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return -1;
    char line[4600];
    int found = 0;
    while (fgets(line, sizeof line, f))
        if (strstr(line, path))
            found = 1;
    fclose(f);
    return found;
}

/* Open a reader with the given use_mmap and tell whether it mapped path. */
static int reader_maps(const char *path, int use_mmap)
{
    tfrec_reader_options o = TFREC_READER_OPTIONS_INIT;
    o.use_mmap = use_mmap;
    tfrec_reader *r;
    if (tfrec_reader_open(&r, path, &o) != TFREC_OK)
        return -1;
    int mapped = is_mapped(path);
    tfrec_reader_free(r);
    return mapped;
}

static const char *record_file(void)
{
    static const size_t sizes[3] = { 10, 20, 30 };
    const char *path = harness_path("switches");
    return rt_write(path, TFREC_COMPRESSION_NONE, sizes, 3, 1) == 0 ? path : NULL;
}

static void test_use_mmap_option(void)
{
    const char *path = record_file();
    CHECK(path != NULL);
    CHECK_EQ(reader_maps(path, 1), 1);
    CHECK_EQ(reader_maps(path, -1), 0);
    CHECK_EQ(is_mapped(path), 0); /* freed readers leave no mapping behind */
    /* a mapped reader reads the same records */
    tfrec_reader_options o = TFREC_READER_OPTIONS_INIT;
    o.use_mmap = 1;
    static const size_t sizes[3] = { 10, 20, 30 };
    const char *why = rt_verify(path, &o, sizes, 3, 1);
    CHECKF(!why, "%s", why);
}

static void test_set_deflate_backend(void)
{
    CHECK_EQ(tfrec_set_deflate_backend(NULL), TFREC_OK);
    char def[16];
    snprintf(def, sizeof def, "%s", tfrec_deflate_backend());
    CHECK_EQ(tfrec_set_deflate_backend("zlib"), TFREC_OK);
    CHECK(strcmp(tfrec_deflate_backend(), "zlib") == 0);
    /* streams written now are standard whichever backend wrote them */
    static const size_t sizes[4] = { 0, 100, 5000, 7 };
    const char *path = harness_path("zlib-backend.gz");
    CHECK(rt_write(path, TFREC_COMPRESSION_GZIP, sizes, 4, 2) == 0);
    CHECK_EQ(tfrec_set_deflate_backend("auto"), TFREC_OK);
    CHECK(strcmp(tfrec_deflate_backend(), def) == 0);
    const char *why = rt_verify(path, NULL, sizes, 4, 2);
    CHECKF(!why, "%s", why);
    int isal = tfrec_set_deflate_backend("isal");
    CHECK(strcmp(def, "isal") == 0 ? isal == TFREC_OK : isal == TFREC_E_UNSUPPORTED);
    CHECK_EQ(tfrec_set_deflate_backend("lz4"), TFREC_E_INVALID);
    CHECK(rt_contains(tfrec_last_errmsg(), "lz4"));
    CHECK(strcmp(tfrec_deflate_backend(), def) == 0); /* a refused name changes nothing */
    CHECK_EQ(tfrec_set_deflate_backend(""), TFREC_OK);
}

/* Child mode: report what the switches gave, change the environment and
 * report again (nothing may change: each variable is read once), then ask
 * for read() explicitly. Prints e.g. "zlib mapped zlib mapped read". */
static int report_switches(const char *path)
{
    const char *b1 = tfrec_deflate_backend();
    int m1 = reader_maps(path, 0);
    setenv("TFREC_DEFLATE", strcmp(b1, "zlib") == 0 ? "isal" : "zlib", 1);
    if (getenv("TFREC_MMAP"))
        unsetenv("TFREC_MMAP");
    else
        setenv("TFREC_MMAP", "1", 1);
    const char *b2 = tfrec_deflate_backend();
    int m2 = reader_maps(path, 0);
    int m3 = reader_maps(path, -1);
    if (m1 < 0 || m2 < 0 || m3 < 0)
        return 1;
    printf("%s %s %s %s %s\n", b1, m1 ? "mapped" : "read", b2, m2 ? "mapped" : "read",
           m3 ? "mapped" : "read");
    return 0;
}

static int run_child(const char *deflate, const char *mmap, const char *path, char *out, size_t cap)
{
    const char *argv[] = { "test_api", "--report-switches", path, NULL };
    const char *envs[] = { "TFREC_DEFLATE", deflate, "TFREC_MMAP", mmap };
    return harness_run_self(argv, envs, 2, out, cap);
}

static void test_environment_read_once(void)
{
    const char *path = record_file();
    CHECK(path != NULL);
    CHECK_EQ(tfrec_set_deflate_backend(NULL), TFREC_OK);
    char def[16], want[128], out[128];
    snprintf(def, sizeof def, "%s", tfrec_deflate_backend());

    CHECK_EQ(run_child(NULL, NULL, path, out, sizeof out), 0);
    snprintf(want, sizeof want, "%s read %s read read\n", def, def);
    CHECKF(strcmp(out, want) == 0, "no variables: '%s', want '%s'", out, want);

    CHECK_EQ(run_child("zlib", "1", path, out, sizeof out), 0);
    CHECKF(strcmp(out, "zlib mapped zlib mapped read\n") == 0, "zlib + mmap: '%s'", out);

    /* unknown values keep the defaults */
    CHECK_EQ(run_child("lz4", "yes", path, out, sizeof out), 0);
    snprintf(want, sizeof want, "%s read %s read read\n", def, def);
    CHECKF(strcmp(out, want) == 0, "unknown values: '%s', want '%s'", out, want);
}

static const harness_test tests[] = {
    TEST(test_free_accepts_null),
    TEST(test_record_functions_with_null_handles),
    TEST(test_example_functions_with_null_handles),
    TEST(test_bigtable_functions_with_null_handles),
    TEST(test_imagenet_functions_with_null_handles),
    TEST(test_errmsg_of_null_is_last_message),
    TEST(test_use_mmap_option),
    TEST(test_set_deflate_backend),
    TEST(test_environment_read_once),
};

int main(int argc, char **argv)
{
    if (argc > 2 && strcmp(argv[1], "--report-switches") == 0)
        return report_switches(argv[2]);
    return harness_main(argc, argv, tests, sizeof tests / sizeof tests[0]);
}

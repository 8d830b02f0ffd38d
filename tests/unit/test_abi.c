/* The ABI promise, tested: a program built against an older libtfrec keeps
 * working with this one. This test is linked against the shared library
 * (not the static one) and includes only the public headers, like any
 * application.
 *
 * The abi_*_v0 structs below are frozen copies of shorter layouts, as an
 * older release would have had them: the same leading members, fewer at the
 * end. Each sits in a buffer whose bytes past it are garbage (0xA5), so a
 * library that read or wrote beyond the caller's struct_size would be
 * caught: by a wrong default, a crash on a garbage pointer, or a changed
 * guard byte. */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tfrec/tfrec.h>

#include "harness.h"

#define GARBAGE 0xA5
#define STRUCT_ROOM 256 /* bytes of each test buffer: the struct, then guard bytes */

/* ---------------------------------------------------------------- frozen layouts */

typedef struct abi_reader_options_v0 {
    size_t struct_size;
    int compression;
    size_t buffer_size;
} abi_reader_options_v0;

typedef struct abi_reader_stats_v0 {
    size_t struct_size;
    uint64_t records;
    uint64_t bytes;
} abi_reader_stats_v0;

typedef struct abi_writer_options_v0 {
    size_t struct_size;
    int compression;
    int level;
} abi_writer_options_v0;

typedef struct abi_io_v0 {
    size_t struct_size;
    void *ctx;
    ptrdiff_t (*read)(void *ctx, void *buf, size_t n);
    int (*write)(void *ctx, const void *buf, size_t n);
    int (*seek)(void *ctx, uint64_t offset);
    int64_t (*size)(void *ctx);
    int (*close)(void *ctx, int commit);
} abi_io_v0;

/* 1.0's normalisation options, before max_pixels. */
typedef struct abi_image_normalize_options_v0 {
    size_t struct_size;
    int quality;
    int verify;
    int grayscale_to_rgb;
} abi_image_normalize_options_v0;

typedef struct abi_image_info_v0 {
    size_t struct_size;
    int format;
    int width;
    int height;
    int components;
} abi_image_info_v0;

typedef struct abi_bt_client_options_v0 {
    size_t struct_size;
    const char *project;
    const char *instance;
} abi_bt_client_options_v0;

typedef struct abi_bt_read_options_v0 {
    size_t struct_size;
    const void *prefix;
    size_t prefix_len;
} abi_bt_read_options_v0;

/* The 1.0 layouts of two Bigtable structs that have grown since. */
typedef struct abi_bt_read_options_v1 {
    size_t struct_size;
    const void *prefix;
    size_t prefix_len;
    const void *start_key;
    size_t start_key_len;
    const void *end_key;
    size_t end_key_len;
    int64_t rows_limit;
    int all_versions;
    const char *family;
} abi_bt_read_options_v1;

/* Before row sets, parallel scans and shards. */
typedef struct abi_bt_read_options_v2 {
    size_t struct_size;
    const void *prefix;
    size_t prefix_len;
    const void *start_key;
    size_t start_key_len;
    const void *end_key;
    size_t end_key_len;
    int64_t rows_limit;
    int all_versions;
    const char *family;
    size_t max_row_bytes;
} abi_bt_read_options_v2;

/* Before tfrec_bt_row.range. */
typedef struct abi_bt_row_v1 {
    size_t struct_size;
    const uint8_t *key;
    size_t key_len;
    const tfrec_bt_cell *const *cells;
    size_t ncells;
} abi_bt_row_v1;

typedef struct abi_bt_cell_v1 {
    size_t struct_size;
    const char *family;
    const uint8_t *qualifier;
    size_t qualifier_len;
    int64_t timestamp_micros;
    const uint8_t *value;
    size_t value_len;
} abi_bt_cell_v1;

typedef struct abi_imagenet_counts_v0 {
    size_t struct_size;
    uint64_t images_total;
    uint64_t images_written;
} abi_imagenet_counts_v0;

/* An old layout ends exactly where the next member of the current one
 * starts (members are only ever added after the previous tail padding). */
#define SAME_PREFIX(old, cur, next) _Static_assert(sizeof(old) == offsetof(cur, next), #old)
SAME_PREFIX(abi_reader_options_v0, tfrec_reader_options, max_record_size);
SAME_PREFIX(abi_reader_stats_v0, tfrec_reader_stats, skipped_regions);
SAME_PREFIX(abi_writer_options_v0, tfrec_writer_options, buffer_size);
SAME_PREFIX(abi_io_v0, tfrec_io, errmsg);
SAME_PREFIX(abi_image_info_v0, tfrec_image_info, colorspace);
SAME_PREFIX(abi_image_normalize_options_v0, tfrec_image_normalize_options, max_pixels);
SAME_PREFIX(abi_bt_client_options_v0, tfrec_bt_client_options, app_profile_id);
SAME_PREFIX(abi_bt_read_options_v0, tfrec_bt_read_options, start_key);
SAME_PREFIX(abi_imagenet_counts_v0, tfrec_imagenet_counts, images_fixed);
SAME_PREFIX(abi_bt_read_options_v1, tfrec_bt_read_options, max_row_bytes);
SAME_PREFIX(abi_bt_cell_v1, tfrec_bt_cell, labels);
SAME_PREFIX(abi_bt_read_options_v2, tfrec_bt_read_options, ranges);
SAME_PREFIX(abi_bt_row_v1, tfrec_bt_row, range);

/* A buffer of garbage holding a struct of `size` bytes at its start. */
static unsigned char *room(void)
{
    static unsigned char buf[4][STRUCT_ROOM] __attribute__((aligned(16)));
    static int next;
    unsigned char *b = buf[next++ & 3];
    memset(b, GARBAGE, STRUCT_ROOM);
    return b;
}

static int guard_intact(const unsigned char *b, size_t from)
{
    for (size_t i = from; i < STRUCT_ROOM; i++)
        if (b[i] != GARBAGE)
            return 0;
    return 1;
}

static int contains(const char *s, const char *part)
{
    return s && strstr(s, part) != NULL;
}

/* A record file written through an old writer-options struct. */
static const char *write_file(const char *name, int compression, int nrecords)
{
    const char *path = harness_path(name);
    abi_writer_options_v0 *o = (abi_writer_options_v0 *)room();
    *o = (abi_writer_options_v0){ sizeof *o, compression, 0 };
    tfrec_writer *w = NULL;
    /* buffer_size, past the old struct, is garbage: it must be taken as 0 */
    if (tfrec_writer_open(&w, path, (const tfrec_writer_options *)o) != TFREC_OK)
        return NULL;
    for (int i = 0; i < nrecords; i++)
        if (tfrec_writer_write(w, "abcdefgh", 8) != TFREC_OK)
            return NULL;
    int rc = tfrec_writer_close(w);
    tfrec_writer_free(w);
    return rc == TFREC_OK ? path : NULL;
}

/* ---------------------------------------------------------------- old callers */

static void test_old_writer_options_get_defaults(void)
{
    const char *path = write_file("old-writer.gz", TFREC_COMPRESSION_GZIP, 3);
    CHECKF(path != NULL, "%s", tfrec_last_errmsg());
    tfrec_reader *r;
    CHECK_EQ(tfrec_reader_open(&r, path, NULL), TFREC_OK);
    CHECK_EQ(tfrec_reader_compression(r), TFREC_COMPRESSION_GZIP);
    uint64_t n = 0;
    CHECK_EQ(tfrec_reader_skip(r, 0, &n), TFREC_END);
    CHECK_EQ(n, 3);
    tfrec_reader_free(r);
}

/* The bytes past an old struct are garbage where the later write_index and
 * index_sink now live: they must read as 0 (no index), not as a request. */
static void test_old_writer_options_write_no_index(void)
{
    const char *path = write_file("old-writer.tfrecord", TFREC_COMPRESSION_NONE, 2);
    CHECKF(path != NULL, "%s", tfrec_last_errmsg());
    char idx[4096];
    snprintf(idx, sizeof idx, "%s.idx", path);
    FILE *f = fopen(idx, "rb");
    if (f)
        fclose(f);
    CHECK(f == NULL);
}

static void test_old_reader_options_get_defaults(void)
{
    /* One record header claiming 2 GiB: over the default max_record_size
     * (1 GiB), and not skipped, since skip_corrupt defaults to 0. Garbage in
     * those fields would mean "no limit" and "skip". */
    uint8_t file[12 + 40];
    tfrec_record_header(file, (uint64_t)2 << 30);
    memset(file + 12, 'x', sizeof file - 12);
    const char *path = harness_path("huge-length");
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(file, 1, sizeof file, f) == sizeof file && fclose(f) == 0);

    abi_reader_options_v0 *o = (abi_reader_options_v0 *)room();
    *o = (abi_reader_options_v0){ sizeof *o, TFREC_COMPRESSION_NONE, 4096 };
    tfrec_reader *r;
    CHECK_EQ(tfrec_reader_open(&r, path, (const tfrec_reader_options *)o), TFREC_OK);
    const uint8_t *d;
    size_t len;
    CHECK_EQ(tfrec_reader_next(r, &d, &len), TFREC_E_RECORD_TOO_LARGE);
    tfrec_reader_free(r);
}

static void test_old_stats_struct_is_not_overrun(void)
{
    const char *path = write_file("stats", TFREC_COMPRESSION_NONE, 5);
    CHECK(path != NULL);
    tfrec_reader *r;
    CHECK_EQ(tfrec_reader_open(&r, path, NULL), TFREC_OK);
    CHECK_EQ(tfrec_reader_skip(r, 0, NULL), TFREC_END);
    unsigned char *b = room();
    abi_reader_stats_v0 *st = (abi_reader_stats_v0 *)b;
    st->struct_size = sizeof *st;
    CHECK_EQ(tfrec_reader_stats_get(r, (tfrec_reader_stats *)st), TFREC_OK);
    CHECK_EQ(st->struct_size, sizeof *st); /* the caller's size stays */
    CHECK_EQ(st->records, 5);
    CHECK_EQ(st->bytes, 40);
    CHECK(guard_intact(b, sizeof *st));
    tfrec_reader_free(r);
}

/* An old tfrec_io without errmsg: as output it is filled only up to its
 * size, as input the missing callback is taken as NULL. */
static void test_old_io_struct(void)
{
    static const uint8_t rec[] = "hello";
    uint8_t file[12 + 5 + 4];
    tfrec_record_header(file, 5);
    memcpy(file + 12, rec, 5);
    uint32_t crc = tfrec_record_footer_crc(rec, 5);
    for (int i = 0; i < 4; i++)
        file[17 + i] = (uint8_t)(crc >> (8 * i)); /* little-endian */
    unsigned char *b = room();
    abi_io_v0 *io = (abi_io_v0 *)b;
    io->struct_size = sizeof *io;
    CHECK_EQ(tfrec_io_open_memory((tfrec_io *)io, file, sizeof file), TFREC_OK);
    CHECK(guard_intact(b, sizeof *io));
    CHECK(io->read != NULL && io->close != NULL);
    tfrec_reader *r;
    CHECK_EQ(tfrec_reader_open_io(&r, (const tfrec_io *)io, "memory", NULL), TFREC_OK);
    const uint8_t *d;
    size_t len;
    CHECK_EQ(tfrec_reader_next(r, &d, &len), TFREC_OK);
    CHECK(len == 5 && memcmp(d, "hello", 5) == 0);
    CHECK_EQ(tfrec_reader_next(r, &d, &len), TFREC_END);
    tfrec_reader_free(r);
}

/* A 3x2 baseline RGB JPEG. */
static const unsigned char tiny_jpeg[] =
    "\xff\xd8\xff\xe0\x00\x10\x4a\x46\x49\x46\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00\xff\xdb"
    "\x00\x43\x00\x10\x0b\x0c\x0e\x0c\x0a\x10\x0e\x0d\x0e\x12\x11\x10\x13\x18\x28\x1a\x18\x16"
    "\x16\x18\x31\x23\x25\x1d\x28\x3a\x33\x3d\x3c\x39\x33\x38\x37\x40\x48\x5c\x4e\x40\x44\x57"
    "\x45\x37\x38\x50\x6d\x51\x57\x5f\x62\x67\x68\x67\x3e\x4d\x71\x79\x70\x64\x78\x5c\x65\x67"
    "\x63\xff\xdb\x00\x43\x01\x11\x12\x12\x18\x15\x18\x2f\x1a\x1a\x2f\x63\x42\x38\x42\x63\x63"
    "\x63\x63\x63\x63\x63\x63\x63\x63\x63\x63\x63\x63\x63\x63\x63\x63\x63\x63\x63\x63\x63\x63"
    "\x63\x63\x63\x63\x63\x63\x63\x63\x63\x63\x63\x63\x63\x63\x63\x63\x63\x63\x63\x63\x63\x63"
    "\x63\x63\x63\x63\xff\xc0\x00\x11\x08\x00\x02\x00\x03\x03\x01\x22\x00\x02\x11\x01\x03\x11"
    "\x01\xff\xc4\x00\x15\x00\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
    "\x00\x05\xff\xc4\x00\x14\x10\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
    "\x00\x00\xff\xc4\x00\x15\x01\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
    "\x00\x04\x06\xff\xc4\x00\x14\x11\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
    "\x00\x00\x00\xff\xda\x00\x0c\x03\x01\x00\x02\x11\x03\x11\x00\x3f\x00\x80\x00\x0a\xd7\xff"
    "\xd9";

static void test_old_image_info_is_not_overrun(void)
{
    unsigned char *b = room();
    abi_image_info_v0 *info = (abi_image_info_v0 *)b;
    info->struct_size = sizeof *info;
    CHECK_EQ(tfrec_image_probe(tiny_jpeg, sizeof tiny_jpeg - 1, (tfrec_image_info *)info),
             TFREC_OK);
    CHECK_EQ(info->format, TFREC_IMAGE_JPEG);
    CHECK_EQ(info->width, 3);
    CHECK_EQ(info->height, 2);
    CHECK_EQ(info->components, 3);
    CHECK(guard_intact(b, sizeof *info));
    /* and on failure too (the library zeroes what it reports) */
    memset(b, GARBAGE, STRUCT_ROOM);
    info->struct_size = sizeof *info;
    CHECK_EQ(tfrec_image_probe("nope", 4, (tfrec_image_info *)info), TFREC_E_IMAGE);
    CHECK_EQ(info->width, 0);
    CHECK(guard_intact(b, sizeof *info));
}

/* Old Bigtable options: the missing members are pointers (endpoints, app
 * profile, family filter); reading the garbage behind the struct would
 * crash or pick a wrong endpoint. No server is contacted: channels connect
 * lazily and a reader only calls at its first next(). */
static void test_old_bigtable_options_get_defaults(void)
{
    setenv("BIGTABLE_EMULATOR_HOST", "127.0.0.1:9", 1);
    abi_bt_client_options_v0 *co = (abi_bt_client_options_v0 *)room();
    *co = (abi_bt_client_options_v0){ sizeof *co, "p", "i" };
    tfrec_bt_client *c = NULL;
    CHECKF(tfrec_bt_client_open(&c, (const tfrec_bt_client_options *)co) == TFREC_OK, "%s",
           tfrec_last_errmsg());
    CHECK(strcmp(tfrec_bt_client_endpoint(c), "127.0.0.1:9") == 0); /* endpoint defaulted */
    CHECK(tfrec_bt_client_is_emulator(c));
    abi_bt_read_options_v0 *ro = (abi_bt_read_options_v0 *)room();
    *ro = (abi_bt_read_options_v0){ sizeof *ro, "train_", 0 };
    tfrec_bt_reader *r = NULL;
    CHECK_EQ(tfrec_bt_reader_open(&r, c, "t", (const tfrec_bt_read_options *)ro), TFREC_OK);
    tfrec_bt_reader_free(r);
    abi_bt_read_options_v2 *r2 = (abi_bt_read_options_v2 *)room();
    memset(r2, 0, sizeof *r2);
    r2->struct_size = sizeof *r2;
    r2->prefix = "train_";
    r2->max_row_bytes = 1 << 20;
    CHECK_EQ(tfrec_bt_reader_open(&r, c, "t", (const tfrec_bt_read_options *)r2), TFREC_OK);
    tfrec_bt_reader_free(r);
    tfrec_bt_client_free(c);
    unsetenv("BIGTABLE_EMULATOR_HOST");
}

static void test_old_counts_struct_is_not_overrun(void)
{
    tfrec_imagenet_options o = TFREC_IMAGENET_OPTIONS_INIT;
    o.raw_data_dir = harness_path("no-such-dir");
    o.output_dir = harness_path("imagenet-out");
    tfrec_imagenet_result *res = NULL;
    CHECK(tfrec_imagenet_convert(&o, &res) < 0);
    CHECK(res != NULL);
    unsigned char *b = room();
    abi_imagenet_counts_v0 *c = (abi_imagenet_counts_v0 *)b;
    c->struct_size = sizeof *c;
    CHECK_EQ(tfrec_imagenet_result_counts(res, (tfrec_imagenet_counts *)c), TFREC_OK);
    CHECK_EQ(c->images_total, 0);
    CHECK_EQ(c->images_written, 0);
    CHECK(guard_intact(b, sizeof *c));
    tfrec_imagenet_result_free(res);
}

/* Options and counts from a program built before conversions could be
 * split into tasks: the garbage after the old end is not taken for a task
 * index or count (which would be refused as out of range), and the share
 * fields are not written past the old counts. */
static void test_old_imagenet_structs_without_tasks(void)
{
    unsigned char *b = room();
    tfrec_imagenet_options *o = (tfrec_imagenet_options *)b;
    tfrec_imagenet_options_init(o);
    memset(&o->task_index, GARBAGE, sizeof *o - offsetof(tfrec_imagenet_options, task_index));
    o->struct_size = offsetof(tfrec_imagenet_options, task_index);
    o->raw_data_dir = harness_path("no-such-dir");
    o->output_dir = harness_path("imagenet-old-out");
    tfrec_imagenet_result *res = NULL;
    CHECK(tfrec_imagenet_convert(o, &res) < 0);
    CHECKF(!contains(tfrec_imagenet_result_errmsg(res), "task") &&
               contains(tfrec_imagenet_result_errmsg(res), "no-such-dir"),
           "%s", tfrec_imagenet_result_errmsg(res));
    unsigned char *cb = room();
    tfrec_imagenet_counts *c = (tfrec_imagenet_counts *)cb;
    c->struct_size = offsetof(tfrec_imagenet_counts, shards_planned);
    CHECK_EQ(tfrec_imagenet_result_counts(res, c), TFREC_OK);
    CHECK(guard_intact(cb, offsetof(tfrec_imagenet_counts, shards_planned)));
    tfrec_imagenet_result_free(res);
}

/* A loader's options from a program built before its open callback
 * (open_source, added for gs://): the garbage after struct_size is not
 * taken for a function, and the files are read as local paths. */
static void test_old_load_options_read_local_files(void)
{
    const char *path = harness_path("abi-load.tfrecord");
    tfrec_writer *w = NULL;
    CHECK_EQ(tfrec_writer_open(&w, path, NULL), TFREC_OK);
    CHECK_EQ(tfrec_writer_write(w, "ab", 2), TFREC_OK);
    CHECK_EQ(tfrec_writer_write(w, "cd", 2), TFREC_OK);
    CHECK_EQ(tfrec_writer_close(w), TFREC_OK);
    tfrec_writer_free(w);
    tfrec_bt_load_options full = TFREC_BT_LOAD_OPTIONS_INIT;
    size_t n = offsetof(tfrec_bt_load_options, open_source);
    unsigned char *b = room();
    memcpy(b, &full, n);
    ((tfrec_bt_load_options *)b)->struct_size = n;
    tfrec_bt_load_stats st = TFREC_BT_LOAD_STATS_INIT;
    const char *files[] = { path };
    CHECK_EQ(tfrec_bt_load(NULL, files, 1, (const tfrec_bt_load_options *)b, &st), TFREC_OK);
    CHECK_EQ(st.records_read, 2);
    CHECK(guard_intact(b, n));
}

/* ---------------------------------------------------------------- newer callers */

/* A program built against a newer release passes a longer struct. */
typedef struct newer_reader_options {
    tfrec_reader_options now;
    uint64_t future_field;
} newer_reader_options;

typedef struct newer_reader_stats {
    tfrec_reader_stats now;
    uint64_t future_count;
} newer_reader_stats;

static void test_newer_options_zero_tail_accepted(void)
{
    const char *path = write_file("newer", TFREC_COMPRESSION_NONE, 2);
    CHECK(path != NULL);
    newer_reader_options o;
    memset(&o, 0, sizeof o);
    o.now.struct_size = sizeof o;
    tfrec_reader *r = NULL;
    CHECK_EQ(tfrec_reader_open(&r, path, &o.now), TFREC_OK);
    tfrec_reader_free(r);
    /* asking for something this library cannot know about */
    o.future_field = 1;
    CHECK_EQ(tfrec_reader_open(&r, path, &o.now), TFREC_E_UNSUPPORTED);
    CHECK(r == NULL);
    CHECKF(contains(tfrec_last_errmsg(), "tfrec_reader_options") &&
               contains(tfrec_last_errmsg(), "newer"),
           "message: %s", tfrec_last_errmsg());
}

static void test_newer_stats_tail_left_alone(void)
{
    const char *path = write_file("newer-stats", TFREC_COMPRESSION_NONE, 4);
    CHECK(path != NULL);
    tfrec_reader *r;
    CHECK_EQ(tfrec_reader_open(&r, path, NULL), TFREC_OK);
    CHECK_EQ(tfrec_reader_skip(r, 0, NULL), TFREC_END);
    unsigned char *b = room();
    newer_reader_stats *st = (newer_reader_stats *)b;
    st->now.struct_size = sizeof *st;
    st->future_count = 12345; /* a marker: the library must not know this member */
    CHECK_EQ(tfrec_reader_stats_get(r, &st->now), TFREC_OK);
    CHECK_EQ(st->now.records, 4);
    CHECK_EQ(st->future_count, 12345);
    CHECK(guard_intact(b, sizeof *st));
    tfrec_reader_free(r);
}

/* ---------------------------------------------------------------- misuse */

static void test_struct_size_zero_is_invalid(void)
{
    const char *path = write_file("zero", TFREC_COMPRESSION_NONE, 1);
    CHECK(path != NULL);
    tfrec_reader_options o;
    memset(&o, 0, sizeof o); /* forgot TFREC_READER_OPTIONS_INIT */
    tfrec_reader *r = NULL;
    CHECK_EQ(tfrec_reader_open(&r, path, &o), TFREC_E_INVALID);
    CHECKF(contains(tfrec_last_errmsg(), "TFREC_READER_OPTIONS_INIT"), "message: %s",
           tfrec_last_errmsg());
    CHECK_EQ(tfrec_reader_open(&r, path, NULL), TFREC_OK); /* NULL: the defaults */

    unsigned char *b = room();
    tfrec_reader_stats *st = (tfrec_reader_stats *)b;
    st->struct_size = 0;
    CHECK_EQ(tfrec_reader_stats_get(r, st), TFREC_E_INVALID);
    CHECK(contains(tfrec_last_errmsg(), "TFREC_READER_STATS_INIT"));
    CHECK(guard_intact(b, sizeof st->struct_size)); /* nothing written */
    st->struct_size = 3;                            /* not even the size field itself */
    CHECK_EQ(tfrec_reader_stats_get(r, st), TFREC_E_INVALID);
    tfrec_reader_free(r);

    tfrec_image_info info;
    memset(&info, 0, sizeof info);
    CHECK_EQ(tfrec_image_probe(tiny_jpeg, sizeof tiny_jpeg - 1, &info), TFREC_E_INVALID);
    CHECK(contains(tfrec_last_errmsg(), "TFREC_IMAGE_INFO_INIT"));
}

/* The _init functions are what bindings use instead of the macros. */
static void test_init_functions(void)
{
    unsigned char *b = room();
    tfrec_writer_options *o = (tfrec_writer_options *)b;
    tfrec_writer_options_init(o);
    CHECK_EQ(o->struct_size, sizeof *o);
    CHECK(o->compression == 0 && o->level == 0 && o->buffer_size == 0);
    CHECK(guard_intact(b, sizeof *o));
    tfrec_bt_row row;
    memset(&row, 0xff, sizeof row);
    tfrec_bt_row_init(&row);
    CHECK(row.struct_size == sizeof row && row.cells == NULL && row.ncells == 0);
    tfrec_reader_options_init(NULL); /* harmless */
}

/* The shared library exports the public API and nothing else: not the
 * struct helpers, not the test-only status hook of the Bigtable writer. */
static void test_exports(void)
{
    CHECK(dlsym(RTLD_DEFAULT, "tfrec_reader_free") != NULL);
    CHECK(dlsym(RTLD_DEFAULT, "tfrec_set_deflate_backend") != NULL);
    CHECK(dlsym(RTLD_DEFAULT, "tfrec_bt_row_init") != NULL);
    CHECK(dlsym(RTLD_DEFAULT, "tfrec_reader_close") == NULL);  /* renamed to _free */
    CHECK(dlsym(RTLD_DEFAULT, "tfrec_codec_default") == NULL); /* internal */
    CHECK(dlsym(RTLD_DEFAULT, "tfrec_bt_writer_set_status_hook") == NULL);
}

/* ---------------------------------------------------------------- versions */

static void test_version(void)
{
    CHECK_EQ(tfrec_version_number(), TFREC_VERSION_NUMBER);
    CHECK(strcmp(tfrec_version(), TFREC_VERSION_STRING) == 0);
    CHECK_EQ(TFREC_CHECK_VERSION(), TFREC_OK);
    const unsigned major = TFREC_VERSION_MAJOR, minor = TFREC_VERSION_MINOR;
    /* the same minor with any patch level, and any older minor */
    CHECK_EQ(tfrec_version_check(major * 10000 + minor * 100 + 99), TFREC_OK);
    CHECK_EQ(tfrec_version_check(major * 10000), TFREC_OK);
    /* a newer minor: the program may use functions this library lacks */
    CHECK_EQ(tfrec_version_check(major * 10000 + (minor + 1) * 100), TFREC_E_UNSUPPORTED);
    CHECKF(contains(tfrec_last_errmsg(), TFREC_VERSION_STRING), "message: %s", tfrec_last_errmsg());
    /* another major, either way */
    CHECK_EQ(tfrec_version_check((major + 1) * 10000), TFREC_E_UNSUPPORTED);
    CHECK_EQ(tfrec_version_check((major - 1) * 10000 + minor * 100), TFREC_E_UNSUPPORTED);
}

TESTS(TEST(test_old_writer_options_get_defaults), TEST(test_old_writer_options_write_no_index),
      TEST(test_old_reader_options_get_defaults), TEST(test_old_stats_struct_is_not_overrun),
      TEST(test_old_io_struct), TEST(test_old_image_info_is_not_overrun),
      TEST(test_old_bigtable_options_get_defaults), TEST(test_old_counts_struct_is_not_overrun),
      TEST(test_newer_options_zero_tail_accepted), TEST(test_newer_stats_tail_left_alone),
      TEST(test_struct_size_zero_is_invalid), TEST(test_init_functions), TEST(test_exports),
      TEST(test_version), TEST(test_old_load_options_read_local_files),
      TEST(test_old_imagenet_structs_without_tasks))

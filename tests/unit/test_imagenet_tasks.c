/* A conversion split into tasks (tfrec_imagenet_options.task_index and
 * num_tasks) against the same conversion in one process: the union of the
 * tasks' shards is the one-process output byte for byte, each task writes
 * only its share and lists exactly that in its part, and the merged
 * manifest is the one-process manifest (but for the timing). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jpeglib.h>

#include "harness.h"
#include "imagenet/run.h"
#include "tfrec/crc32c.h"
#include "tfrec/imagenet.h"
#include "tfrec/task.h"

#define TRAIN_SHARDS 4
#define VAL_SHARDS 3
#define NSHARDS (TRAIN_SHARDS + VAL_SHARDS)

static void write_jpeg(const char *path, int w, int h, int shade)
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
    JSAMPLE *row = malloc((size_t)w * 3);
    memset(row, shade, (size_t)w * 3);
    while (c.next_scanline < c.image_height) {
        JSAMPROW r[1] = { row };
        jpeg_write_scanlines(&c, r, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    free(row);
    fclose(f);
}

/* RAW/train/n0..n2 with 5 images each, RAW/validation with 4 and their
 * labels: every image different, so a shard in the wrong place shows. */
static const char *tree(void)
{
    static char root[512];
    if (root[0])
        return root;
    snprintf(root, sizeof root, "%s", harness_path("raw"));
    char p[1024];
    mkdir(root, 0777);
    snprintf(p, sizeof p, "%s/train", root);
    mkdir(p, 0777);
    for (int s = 0; s < 3; s++) {
        snprintf(p, sizeof p, "%s/train/n%d", root, s);
        mkdir(p, 0777);
        for (int i = 0; i < 5; i++) {
            snprintf(p, sizeof p, "%s/train/n%d/img_%d_%d.JPEG", root, s, s, i);
            write_jpeg(p, 8 + i, 8 + s, 20 * s + 3 * i);
        }
    }
    snprintf(p, sizeof p, "%s/validation", root);
    mkdir(p, 0777);
    for (int i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s/validation/v%d.jpg", root, i);
        write_jpeg(p, 9, 9 + i, 200 - i);
    }
    snprintf(p, sizeof p, "%s/synset_labels.txt", root);
    FILE *f = fopen(p, "w");
    fputs("n0\nn2\nn1\nn0\n", f);
    fclose(f);
    return root;
}

static void options(tfrec_imagenet_options *o, const char *out, uint32_t index, uint32_t count)
{
    tfrec_imagenet_options_init(o);
    o->raw_data_dir = tree();
    o->output_dir = out;
    o->train_shards = TRAIN_SHARDS;
    o->validation_shards = VAL_SHARDS;
    o->num_threads = 2;
    o->seed = 11;
    o->task_index = index;
    o->num_tasks = count;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) {
        buf[n] = '\0';
        *len = (size_t)n;
    }
    return buf;
}

static const char *shard_file(size_t k)
{
    static char name[64];
    if (k < TRAIN_SHARDS)
        snprintf(name, sizeof name, "train/train-%05zu-of-%05d", k, TRAIN_SHARDS);
    else
        snprintf(name, sizeof name, "validation/validation-%05zu-of-%05d", k - TRAIN_SHARDS,
                 VAL_SHARDS);
    return name;
}

static int exists(const char *dir, const char *rel)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    return access(p, F_OK) == 0;
}

static int same_file(const char *a_dir, const char *b_dir, const char *rel)
{
    char a[1024], b[1024];
    snprintf(a, sizeof a, "%s/%s", a_dir, rel);
    snprintf(b, sizeof b, "%s/%s", b_dir, rel);
    size_t la, lb;
    char *x = slurp(a, &la), *y = slurp(b, &lb);
    int same = x && y && la == lb && memcmp(x, y, la) == 0;
    free(x);
    free(y);
    return same;
}

/* The one-process run everything is compared with. */
static const char *reference(void)
{
    static char out[512];
    if (out[0])
        return out;
    snprintf(out, sizeof out, "%s", harness_path("ref"));
    tfrec_imagenet_options o;
    options(&o, out, 0, 0);
    if (tfrec_imagenet_convert(&o, NULL) != TFREC_OK)
        fprintf(stderr, "reference run failed: %s\n", tfrec_last_errmsg());
    return out;
}

/* A manifest with the output directory named OUT and the timing zeroed. */
static char *normalized(const char *json, const char *out)
{
    size_t n = strlen(json), ol = strlen(out);
    char *r = malloc(n + 1), *w = r;
    for (const char *s = json; *s;) {
        if (!strncmp(s, out, ol)) {
            memcpy(w, "OUT", 3);
            w += 3;
            s += ol;
        } else if (!strncmp(s, "\"seconds\":", 10)) {
            memcpy(w, "\"seconds\":0", 11);
            w += 11;
            s += 10;
            s += strspn(s, "0123456789.");
        } else {
            *w++ = *s++;
        }
    }
    *w = '\0';
    return r;
}

static char *part_path(const char *out, uint32_t i, uint32_t n)
{
    char *p = malloc(strlen(out) + 64);
    sprintf(p, "%s/manifest-task-%05u-of-%05u.json", out, i, n);
    return p;
}

/* The part of task i lists exactly its share, with each file's CRC32C. */
static int part_lists_share(const char *out, uint32_t i, uint32_t n)
{
    char *path = part_path(out, i, n);
    size_t len;
    char *text = slurp(path, &len);
    free(path);
    tfrec_json_value *root = NULL;
    char why[128];
    if (!text || tfrec_json_parse(text, len, &tfrec_in_part_limits, &root, why, sizeof why)) {
        free(text);
        return 0;
    }
    free(text);
    uint64_t b, e, idx = 99, cnt = 0;
    tfrec_task_share(NSHARDS, i, n, &b, &e);
    const tfrec_json_value *task = tfrec_json_member(root, "task");
    int ok = !tfrec_json_member_u64(task, "index", &idx) && idx == i &&
             !tfrec_json_member_u64(task, "count", &cnt) && cnt == n &&
             tfrec_json_member_str(task, "fingerprint") != NULL;
    const tfrec_json_value *s = tfrec_json_member(root, "shards")->child;
    for (uint64_t k = b; ok && k < e; k++, s = s->next) {
        uint64_t crc = 0;
        ok = s && !strcmp(tfrec_json_member_str(s, "file"), shard_file(k)) &&
             !tfrec_json_member_u64(s, "crc32c", &crc);
        char f[1024];
        snprintf(f, sizeof f, "%s/%s", out, shard_file(k));
        size_t flen;
        char *bytes = ok ? slurp(f, &flen) : NULL;
        ok = ok && bytes && tfrec_crc32c(bytes, flen) == crc;
        free(bytes);
    }
    ok = ok && s == NULL;
    tfrec_json_value_free(root);
    return ok;
}

static int run_task(const char *out, uint32_t i, uint32_t n, uint64_t seed)
{
    tfrec_imagenet_options o;
    options(&o, out, i, n);
    o.seed = seed;
    tfrec_imagenet_result *r = NULL;
    int rc = tfrec_imagenet_convert(&o, &r);
    if (rc)
        fprintf(stderr, "task %u of %u: %s\n", i, n, tfrec_imagenet_result_errmsg(r));
    tfrec_imagenet_result_free(r);
    return rc;
}

static int merge(const char *out, tfrec_imagenet_result **r)
{
    tfrec_imagenet_merge_options m = TFREC_IMAGENET_MERGE_OPTIONS_INIT;
    m.output_dir = out;
    return tfrec_imagenet_merge_manifests(&m, r);
}

static void test_tasks_union_is_the_one_process_output(void)
{
    const char *ref = reference();
    tfrec_imagenet_options o;
    options(&o, ref, 0, 0);
    tfrec_imagenet_result *rr = NULL;
    /* The reference's manifest as the library reports it (the file is
     * written only with manifest_path). */
    char ref_copy[600];
    snprintf(ref_copy, sizeof ref_copy, "%s", harness_path("ref2"));
    o.output_dir = ref_copy;
    CHECK_EQ(tfrec_imagenet_convert(&o, &rr), TFREC_OK);
    char *want = normalized(tfrec_imagenet_result_json(rr), ref_copy);
    tfrec_imagenet_result_free(rr);
    static const uint32_t counts[] = { 1, 2, 3, 5, 8 };
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        uint32_t n = counts[c];
        char out[600];
        ino_t inodes[NSHARDS] = { 0 };
        snprintf(out, sizeof out, "%s/tasks-%u", harness_tmpdir(), n);
        for (uint32_t i = 0; i < n; i++) {
            CHECK_EQ(run_task(out, i, n, 11), TFREC_OK);
            uint64_t b, e;
            tfrec_task_share(NSHARDS, i, n, &b, &e);
            /* Only shards of tasks 0..i exist, and those of earlier tasks
             * are the files they renamed into place (same inode): no task
             * writes another's. */
            for (size_t k = 0; k < NSHARDS; k++) {
                CHECKF(exists(out, shard_file(k)) == (k < e), "%u tasks, after task %u: %s", n, i,
                       shard_file(k));
                if (k >= e)
                    continue;
                char f[800];
                struct stat st;
                snprintf(f, sizeof f, "%s/%s", out, shard_file(k));
                CHECK(stat(f, &st) == 0);
                if (k >= b)
                    inodes[k] = st.st_ino;
                else
                    CHECKF(inodes[k] == st.st_ino, "task %u of %u replaced %s", i, n,
                           shard_file(k));
            }
            CHECKF(part_lists_share(out, i, n), "part of task %u of %u", i, n);
        }
        for (size_t k = 0; k < NSHARDS; k++)
            CHECKF(same_file(ref, out, shard_file(k)), "%u tasks: %s differs", n, shard_file(k));
        tfrec_imagenet_result *r = NULL;
        CHECKF(merge(out, &r) == TFREC_OK, "%s", tfrec_imagenet_result_errmsg(r));
        char *got = normalized(tfrec_imagenet_result_json(r), out);
        CHECKF(!strcmp(got, want), "%u tasks: merged\n%s\nwant\n%s", n, got, want);
        free(got);
        tfrec_imagenet_counts cn = TFREC_IMAGENET_COUNTS_INIT;
        tfrec_imagenet_result_counts(r, &cn);
        CHECK_EQ(cn.shards, NSHARDS);
        CHECK_EQ(cn.images_written, 19);
        tfrec_imagenet_result_free(r);
        char mf[700];
        snprintf(mf, sizeof mf, "%s/manifest.json", out);
        size_t ml;
        char *file = slurp(mf, &ml);
        CHECK(file != NULL);
        char *gotf = normalized(file, out);
        CHECK(!strcmp(gotf, want));
        free(gotf);
        free(file);
    }
    free(want);
}

static void test_merge_refuses_missing_and_foreign_parts(void)
{
    const char *ref = reference();
    char out[600];
    snprintf(out, sizeof out, "%s/tasks-check", harness_tmpdir());
    for (uint32_t i = 0; i < 3; i++)
        CHECK_EQ(run_task(out, i, 3, 11), TFREC_OK);
    char *p2 = part_path(out, 2, 3), *saved = strdup(harness_path("part-2-saved"));
    CHECK(rename(p2, saved) == 0);
    tfrec_imagenet_result *r = NULL;
    CHECK_EQ(merge(out, &r), TFREC_E_NOT_FOUND);
    const char *msg = tfrec_imagenet_result_errmsg(r);
    CHECKF(strstr(msg, "task 2 of 3 has no manifest part") && strstr(msg, "--task_index=2"), "%s",
           msg);
    tfrec_imagenet_result_free(r);
    CHECK(rename(saved, p2) == 0);

    /* Task 1 again with another seed: its part belongs to another plan. */
    CHECK_EQ(run_task(out, 1, 3, 12), TFREC_OK);
    CHECK_EQ(merge(out, &r), TFREC_E_STATE);
    msg = tfrec_imagenet_result_errmsg(r);
    CHECKF(strstr(msg, "another plan") && strstr(msg, "manifest-task-00001-of-00003.json"), "%s",
           msg);
    tfrec_imagenet_result_free(r);

    /* Task 1 re-run as before: the same bytes, and the merge goes through. */
    CHECK_EQ(run_task(out, 1, 3, 11), TFREC_OK);
    for (size_t k = 0; k < NSHARDS; k++)
        CHECKF(same_file(ref, out, shard_file(k)), "%s differs after the re-run", shard_file(k));
    CHECK_EQ(merge(out, &r), TFREC_OK);
    tfrec_imagenet_result_free(r);

    /* A part naming a file outside the output directory is refused. */
    {
        char *p0 = part_path(out, 0, 3);
        size_t len;
        char *text = slurp(p0, &len);
        CHECK(text != NULL);
        char *at = strstr(text, "\"train/train-00000-of-00004\"");
        CHECK(at != NULL);
        memcpy(at + 1, "../../../../../../etc", 21); /* same length as the name */
        FILE *f = fopen(p0, "wb");
        CHECK(f != NULL);
        fwrite(text, 1, len, f);
        fclose(f);
        CHECK_EQ(merge(out, &r), TFREC_E_PARSE);
        msg = tfrec_imagenet_result_errmsg(r);
        CHECKF(strstr(msg, "not a file inside the output directory"), "%s", msg);
        tfrec_imagenet_result_free(r);
        CHECK_EQ(run_task(out, 0, 3, 11), TFREC_OK);
        free(text);
        free(p0);
    }

    /* A shard rewritten with the same size (a stray task of another run):
     * its CRC32C is not the one its part records, and the task is named. */
    char f[800];
    snprintf(f, sizeof f, "%s/%s", out, shard_file(5));
    {
        size_t len;
        char *bytes = slurp(f, &len);
        CHECK(bytes != NULL && len > 100);
        bytes[len / 2] ^= 0x20;
        FILE *w = fopen(f, "wb");
        CHECK(w != NULL);
        CHECK_EQ(fwrite(bytes, 1, len, w), len);
        fclose(w);
        free(bytes);
        CHECK_EQ(merge(out, &r), TFREC_E_STATE);
        msg = tfrec_imagenet_result_errmsg(r);
        CHECKF(strstr(msg, shard_file(5)) && strstr(msg, "has CRC32C") &&
                   strstr(msg, "same size, other bytes") && strstr(msg, "re-run task "),
               "%s", msg);
        tfrec_imagenet_result_free(r);
    }

    /* A shard cut short is named. */
    CHECK(truncate(f, 10) == 0);
    CHECK_EQ(merge(out, &r), TFREC_E_STATE);
    msg = tfrec_imagenet_result_errmsg(r);
    CHECKF(strstr(msg, shard_file(5)) && strstr(msg, "is 10 bytes"), "%s", msg);
    tfrec_imagenet_result_free(r);
    free(p2);
    free(saved);
}

/* A task reads only the images of its shards: a bad image in the last
 * validation shard fails the task that writes it and no other. */
static void test_task_reads_only_its_images(void)
{
    char raw[600], out[600], p[800];
    snprintf(raw, sizeof raw, "%s/raw-bad", harness_tmpdir());
    snprintf(out, sizeof out, "%s/tasks-bad", harness_tmpdir());
    char cmd[2000];
    snprintf(cmd, sizeof cmd, "cp -r '%s' '%s'", tree(), raw);
    CHECK(system(cmd) == 0);
    snprintf(p, sizeof p, "%s/validation/v3.jpg", raw);
    FILE *f = fopen(p, "wb");
    CHECK(f != NULL);
    fputs("not a JPEG at all", f);
    fclose(f);
    for (uint32_t i = 0; i < 2; i++) {
        tfrec_imagenet_options o;
        options(&o, out, i, 2);
        o.raw_data_dir = raw;
        tfrec_imagenet_result *r = NULL;
        int rc = tfrec_imagenet_convert(&o, &r);
        tfrec_imagenet_counts c = TFREC_IMAGENET_COUNTS_INIT;
        tfrec_imagenet_result_counts(r, &c);
        if (i == 0) { /* shards 0..2: train only */
            CHECKF(rc == TFREC_OK, "%s", tfrec_imagenet_result_errmsg(r));
            CHECK_EQ(c.shards_begin, 0);
            CHECK_EQ(c.shards_end, 3);
            CHECK_EQ(c.shards_planned, NSHARDS);
        } else {
            CHECK(rc != TFREC_OK);
            CHECKF(strstr(tfrec_imagenet_result_errmsg(r), "v3.jpg") != NULL, "%s",
                   tfrec_imagenet_result_errmsg(r));
            char *part = part_path(out, 1, 2);
            CHECK(access(part, F_OK) != 0); /* a failed task leaves no part */
            free(part);
            CHECK(!exists(out, shard_file(3)));
        }
        tfrec_imagenet_result_free(r);
    }
}

static void test_bad_task_options(void)
{
    tfrec_imagenet_options o;
    options(&o, harness_path("bad"), 3, 3);
    CHECK_EQ(tfrec_imagenet_convert(&o, NULL), TFREC_E_INVALID);
    CHECK(strstr(tfrec_last_errmsg(), "task_index 3 must be below num_tasks 3") != NULL);
    options(&o, harness_path("bad"), 1, 0);
    CHECK_EQ(tfrec_imagenet_convert(&o, NULL), TFREC_E_INVALID);
    tfrec_imagenet_result *r = NULL;
    CHECK_EQ(merge(harness_path("nothing-here"), &r), TFREC_E_NOT_FOUND);
    tfrec_imagenet_result_free(r);
    CHECK(access(harness_path("bad"), F_OK) != 0);
}

/* Parts are read back with the bytes of names that are not UTF-8 (the
 * writer's \udcXX); a part cut short is refused naming the file. */
static void test_part_reader(void)
{
    tfrec_json_value *v = NULL;
    char why[128];
    const char *text = "{\"p\":\"a\\udcffb\"}";
    CHECK(tfrec_json_parse(text, strlen(text), &tfrec_in_part_limits, &v, why, sizeof why) == 0);
    const tfrec_json_value *pv = tfrec_json_member(v, "p");
    CHECK(pv && pv->slen == 3 &&
          !memcmp(pv->str,
                  "a\xff"
                  "b",
                  3));
    tfrec_json_value_free(v);

    char out[600];
    snprintf(out, sizeof out, "%s/tasks-cut", harness_tmpdir());
    CHECK_EQ(run_task(out, 0, 1, 11), TFREC_OK);
    char *p0 = part_path(out, 0, 1);
    CHECK(truncate(p0, 100) == 0);
    tfrec_imagenet_result *r = NULL;
    CHECK_EQ(merge(out, &r), TFREC_E_PARSE);
    CHECKF(strstr(tfrec_imagenet_result_errmsg(r), p0) != NULL, "%s",
           tfrec_imagenet_result_errmsg(r));
    tfrec_imagenet_result_free(r);
    free(p0);
}

/* Writes text as the part of task 0 of 1 in out. */
static void put_part(const char *out, const char *text)
{
    char *p0 = part_path(out, 0, 1);
    FILE *f = fopen(p0, "wb");
    CHECK(f != NULL);
    fputs(text, f);
    fclose(f);
    free(p0);
}

/* A part that passes every other check but whose "rejected" or "fixed"
 * entries are not {"path": string, ...} objects is refused naming the
 * part: the merge used to hand a NULL path to the notes (a segfault). */
static void test_merge_refuses_malformed_notes(void)
{
    char out[600];
    snprintf(out, sizeof out, "%s/tasks-notes", harness_tmpdir());
    CHECK_EQ(run_task(out, 0, 1, 11), TFREC_OK);
    char *p0 = part_path(out, 0, 1);
    size_t len;
    char *good = slurp(p0, &len);
    CHECK(good != NULL);
    static const char *const bad[] = {
        "[{}]", "[{\"reason\":\"x\"}]", "[{\"path\":7}]", "[3]", "{}", "\"x\"", NULL
    };
    static const char *const keys[] = { "\"rejected\"", "\"fixed\"" };
    /* The other field, when present, must be a string too. */
    static const char *const bad_field[] = { "[{\"path\":\"a\",\"reason\":1}]",
                                             "[{\"path\":\"a\",\"from\":[]}]" };
    for (size_t k = 0; k < 2; k++)
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            /* The key's array (empty in this run) replaced by the bad value. */
            char *at = strstr(good, keys[k]);
            CHECK(at != NULL);
            char *open = strchr(at, '['), *close = open ? strchr(open, ']') : NULL;
            CHECK(close != NULL);
            size_t cap = len + 64;
            char *text = malloc(cap);
            const char *value = bad[i] ? bad[i] : bad_field[k];
            snprintf(text, cap, "%.*s%s%s", (int)(open - good), good, value, close + 1);
            put_part(out, text);
            tfrec_imagenet_result *r = NULL;
            int rc = merge(out, &r);
            const char *msg = tfrec_imagenet_result_errmsg(r);
            CHECKF(rc == TFREC_E_PARSE, "%s %s: rc %d", keys[k], value, rc);
            CHECKF(strstr(msg, p0) && strstr(msg, keys[k]), "%s %s: %s", keys[k], value, msg);
            tfrec_imagenet_result_free(r);
            free(text);
        }
    /* One well-formed rejected image goes through and is reported. */
    {
        char *at = strstr(good, "\"rejected\""), *open = strchr(at, '[');
        size_t cap = len + 64;
        char *text = malloc(cap);
        snprintf(text, cap, "%.*s[{\"path\":\"x.jpg\",\"reason\":\"bad\"}%s", (int)(open - good),
                 good, open + 1);
        put_part(out, text);
        tfrec_imagenet_result *r = NULL;
        CHECKF(merge(out, &r) == TFREC_OK, "%s", tfrec_imagenet_result_errmsg(r));
        const char *path = NULL, *why = NULL;
        CHECK_EQ(tfrec_imagenet_result_rejected(r, 0, &path, &why), TFREC_OK);
        CHECK(!strcmp(path, "x.jpg") && !strcmp(why, "bad"));
        tfrec_imagenet_result_free(r);
        free(text);
    }
    put_part(out, good);
    free(good);
    free(p0);
}

/* A shard's crc32c that is not a 32-bit number is refused (and under
 * AddressSanitizer, nothing the check allocated leaks: a fuzz finding). */
static void test_merge_refuses_bad_shard_crc(void)
{
    char out[600];
    snprintf(out, sizeof out, "%s/tasks-crc", harness_tmpdir());
    CHECK_EQ(run_task(out, 0, 1, 12), TFREC_OK);
    char *p0 = part_path(out, 0, 1);
    size_t len;
    char *good = slurp(p0, &len);
    CHECK(good != NULL);
    static const char *const bad[] = { "\"x\"", "4294967296", "-1", "[]" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *at = strstr(good, "\"crc32c\"");
        CHECK(at != NULL);
        char *value = strchr(at, ':') + 1, *end = value + strspn(value, " 0123456789");
        size_t cap = len + 64;
        char *text = malloc(cap);
        snprintf(text, cap, "%.*s%s%s", (int)(value - good), good, bad[i], end);
        put_part(out, text);
        tfrec_imagenet_result *r = NULL;
        int rc = merge(out, &r);
        const char *msg = tfrec_imagenet_result_errmsg(r);
        CHECKF(rc == TFREC_E_PARSE && strstr(msg, "bad crc32c"), "crc32c %s: rc %d: %s", bad[i], rc,
               msg);
        tfrec_imagenet_result_free(r);
        free(text);
    }
    put_part(out, good);
    free(good);
    free(p0);
}

/* The notes refuse a missing path instead of crashing on it. */
static void test_notes_refuse_null_path(void)
{
    in_notes l = { 0 };
    CHECK_EQ(tfrec_in_notes_add(&l, NULL, "why"), TFREC_E_INVALID);
    CHECK_EQ(l.n, 0);
    CHECK_EQ(tfrec_in_notes_add(&l, "p", NULL), TFREC_OK);
    CHECK_EQ(l.n, 1);
    tfrec_in_notes_free(&l);
}

/* ------------------------------------------------------------ listings */

static void put_file(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    CHECK(fwrite(text, 1, len, f) == len);
    fclose(f);
}

/* body with the trailer a listing of n images ends with (a valid CRC):
 * what a hostile file that passes the checksum looks like. */
static void put_forged(const char *path, const char *body, int n)
{
    char *t = malloc(strlen(body) + 64);
    CHECK(t != NULL);
    int k = sprintf(t, "%send %d %08x\n", body, n,
                    (unsigned)tfrec_crc32c_extend(0, body, strlen(body)));
    put_file(path, t, (size_t)k);
    free(t);
}

/* A task given the listing at path: its status; why (if not NULL) must be
 * in its message, and nothing is written. */
static int run_listed(const char *path, const char *out, const char *why)
{
    tfrec_imagenet_options o;
    options(&o, out, 0, 2);
    o.listing = path;
    tfrec_imagenet_result *r = NULL;
    int rc = tfrec_imagenet_convert(&o, &r);
    /* CHECK returns without a value: report the failure and go on. */
    if (why && (rc == TFREC_OK || !strstr(tfrec_imagenet_result_errmsg(r), why)))
        harness_fail(__FILE__, __LINE__, "%s: %s", why, tfrec_imagenet_result_errmsg(r));
    if (rc && access(out, F_OK) == 0)
        harness_fail(__FILE__, __LINE__, "%s exists after a failed conversion", out);
    tfrec_imagenet_result_free(r);
    return rc;
}

/* Listing files that are cut, edited or crafted are refused whole, before
 * anything is written; what they could name outside the input directory
 * never reaches a task. */
static void test_hostile_listing_files(void)
{
    tfrec_imagenet_options o;
    options(&o, harness_path("unused"), 0, 0);
    char good[600], bad[600], fp[17] = "";
    snprintf(good, sizeof good, "%s", harness_path("listing.txt"));
    snprintf(bad, sizeof bad, "%s", harness_path("hostile.txt"));
    CHECK_EQ(tfrec_imagenet_write_listing(&o, good, fp), TFREC_OK);
    CHECK(strlen(fp) == 16);
    CHECK(access(harness_path("unused"), F_OK) != 0); /* nothing converted */
    size_t len;
    char *text = slurp(good, &len);
    CHECK(text != NULL && len > 100);
    const char *out = harness_path("hostile-out");
    CHECK_EQ(run_listed(good, harness_path("listed-ok"), NULL), TFREC_OK);

    put_file(bad, text, len / 2); /* cut mid-line */
    run_listed(bad, out, "truncated");
    const char *end = strstr(text, "\nend ");
    put_file(bad, text, (size_t)(end - text) + 1); /* cut at a line: no end line */
    run_listed(bad, out, "truncated or damaged");
    char *edited = strdup(text);
    char *digit = strstr(edited, "\nsplit train\n") + 13;
    *digit = *digit == '9' ? '8' : (char)(*digit + 1); /* one size, one digit */
    put_file(bad, edited, len);
    run_listed(bad, out, "fails its checksum");
    free(edited);
    put_file(bad, "", 0);
    run_listed(bad, out, "truncated");
    put_file(bad, "x\0y\n", 4);
    run_listed(bad, out, "NUL");

    const char *head = "tfrec-imagenet-listing 1\nlayout imagenet\n";
    const char *val = "split validation\n1 n0 validation/v0.jpg\n";
    struct {
        const char *train, *why;
        int n;
    } cases[] = {
        { "split train\n1 n0 ../../../etc/x.JPEG\n", "not a plain path", 2 },
        { "split train\n1 n0 /etc/x.JPEG\n", "not a plain path", 2 },
        { "split train\n1 n0 train/./n0/a.JPEG\n", "not a plain path", 2 },
        { "split train\n1 n0 train//a.JPEG\n", "not a plain path", 2 },
        { "split train\n1 n0 train/n0/a.txt\n", "extension", 2 },
        { "split train\n1 n0 train/n0/a.JPEG\n1 n0 train/n0/a.JPEG\n", "listed twice", 3 },
        { "split train\n1 n0 train/n0/b.JPEG\n1 n0 train/n0/a.JPEG\n", "out of order", 3 },
        { "split train\n-1 n0 train/n0/a.JPEG\n", "<size> <class> <path>", 2 },
        { "split train\n01 n0 train/n0/a.JPEG\n", "<size> <class> <path>", 2 },
        { "split train\n99999999999999999999 n0 train/n0/a.JPEG\n", "<size>", 2 },
        { "split train\n1 n0 train/n0/a%zz.JPEG\n", "<size> <class> <path>", 2 },
        { "split train\n1 n0 train/n0/a%00.JPEG\n", "<size> <class> <path>", 2 },
        { "split train\n1 n0 train/n0/a b.JPEG\n", "<size> <class> <path>", 2 },
        { "split train\n1  train/n0/a.JPEG\n", "<size> <class> <path>", 2 },
        { "1 n0 train/n0/a.JPEG\nsplit train\n1 n0 train/n0/b.JPEG\n", "before any", 3 },
        { "split train\nsplit train\n1 n0 train/n0/a.JPEG\n", "no images", 2 },
        { "split ../x\n1 n0 train/n0/a.JPEG\n", "split", 2 },
        { "split train\n1 n0 train/n0/a.JPEG\n", "its end line says", 7 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char body[1024];
        snprintf(body, sizeof body, "%s%s%s", head, cases[i].train, val);
        put_forged(bad, body, cases[i].n);
        run_listed(bad, out, cases[i].why);
    }
    put_forged(bad, "tfrec-imagenet-listing 2\nlayout imagenet\n", 0);
    run_listed(bad, out, "not a listing file");
    put_forged(bad, "tfrec-imagenet-listing 1\nlayout folders\nsplit train\n1 n0 n0/a.JPEG\n", 1);
    CHECK_EQ(run_listed(bad, out, "folders tree"), TFREC_E_INVALID);
    /* Only the imagenet and folders trees. */
    options(&o, out, 0, 0);
    o.listing = good;
    o.layout = TFREC_LAYOUT_CSV;
    o.csv_path = good;
    CHECK_EQ(tfrec_imagenet_convert(&o, NULL), TFREC_E_UNSUPPORTED);
    free(text);
}

/* Copy of the tree whose files can change between the listing and the
 * tasks. */
static const char *changing_tree(void)
{
    static char root[600];
    snprintf(root, sizeof root, "%s", harness_path("raw-changing"));
    char cmd[2000];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -r '%s' '%s'", root, tree(), root);
    if (system(cmd) != 0) /* CHECK returns without a value */
        harness_fail(__FILE__, __LINE__, "copying the tree failed: %s", cmd);
    return root;
}

/* Tasks planned from one listing write the one-process output of the
 * listed tree although images are added (to a class, and a new class)
 * between the tasks; a task planned from a second listing, made after the
 * change, is refused by the merge, which names both listings. */
static void test_listing_holds_while_the_tree_changes(void)
{
    const char *ref = reference();
    const char *raw = changing_tree();
    char l1[600], l2[600], out[600], cmd[4000];
    snprintf(l1, sizeof l1, "%s", harness_path("listing-1.txt"));
    snprintf(l2, sizeof l2, "%s", harness_path("listing-2.txt"));
    snprintf(out, sizeof out, "%s", harness_path("listed-out"));
    tfrec_imagenet_options o;
    options(&o, out, 0, 0);
    o.raw_data_dir = raw;
    char fp1[17], fp2[17];
    CHECK_EQ(tfrec_imagenet_write_listing(&o, l1, fp1), TFREC_OK);
    for (uint32_t i = 0; i < 3; i++) {
        if (i == 1) { /* the tree changes under the tasks */
            snprintf(cmd, sizeof cmd,
                     "cp '%s/train/n0/img_0_0.JPEG' '%s/train/n0/img_0_9.JPEG' && mkdir "
                     "'%s/train/n7' && cp '%s/train/n1/img_1_1.JPEG' '%s/train/n7/x.JPEG'",
                     raw, raw, raw, raw, raw);
            CHECK(system(cmd) == 0);
        }
        options(&o, out, i, 3);
        o.raw_data_dir = raw;
        o.listing = l1;
        tfrec_imagenet_result *r = NULL;
        CHECKF(tfrec_imagenet_convert(&o, &r) == TFREC_OK, "%s", tfrec_imagenet_result_errmsg(r));
        tfrec_imagenet_result_free(r);
    }
    tfrec_imagenet_result *r = NULL;
    CHECKF(merge(out, &r) == TFREC_OK, "%s", tfrec_imagenet_result_errmsg(r));
    tfrec_imagenet_result_free(r);
    for (size_t k = 0; k < TRAIN_SHARDS + VAL_SHARDS; k++)
        CHECKF(same_file(ref, out, shard_file(k)), "%s", shard_file(k));
    /* A second listing of the changed tree, given to task 2 only. */
    options(&o, out, 0, 0);
    o.raw_data_dir = raw;
    CHECK_EQ(tfrec_imagenet_write_listing(&o, l2, fp2), TFREC_OK);
    CHECK(strcmp(fp1, fp2) != 0);
    options(&o, out, 2, 3);
    o.raw_data_dir = raw;
    o.listing = l2;
    CHECK_EQ(tfrec_imagenet_convert(&o, NULL), TFREC_OK);
    r = NULL;
    CHECK_EQ(merge(out, &r), TFREC_E_STATE);
    const char *msg = tfrec_imagenet_result_errmsg(r);
    CHECKF(strstr(msg, l1) && strstr(msg, l2) && strstr(msg, fp1) && strstr(msg, fp2) &&
               strstr(msg, "manifest-task-00002-of-00003.json") && strstr(msg, "re-run task 2"),
           "%s", msg);
    tfrec_imagenet_result_free(r);
}

TESTS(TEST(test_part_reader), TEST(test_tasks_union_is_the_one_process_output),
      TEST(test_merge_refuses_missing_and_foreign_parts), TEST(test_task_reads_only_its_images),
      TEST(test_bad_task_options), TEST(test_merge_refuses_malformed_notes),
      TEST(test_merge_refuses_bad_shard_crc), TEST(test_notes_refuse_null_path),
      TEST(test_hostile_listing_files), TEST(test_listing_holds_while_the_tree_changes))

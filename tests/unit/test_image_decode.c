/* Decoding JPEGs to fixed-size RGB crops (tfrec/image_decode.h) and the
 * image stage on a dataset's threads. Inputs are made here with libjpeg
 * directly, from pixel patterns whose crops are known. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

#include "harness.h"
#include "tfrec/dataset.h"
#include "tfrec/error.h"
#include "tfrec/example.h"
#include "tfrec/image_decode.h"
#include "tfrec/record.h"

/* A w x h JPEG (quality 95) of pixel(x, y) in the given input colour
 * space: 3 components for JCS_RGB, 1 for JCS_GRAYSCALE, 4 for JCS_CMYK. */
typedef void (*pixel_fn)(int x, int y, uint8_t *px);

static uint8_t *make_jpeg(int w, int h, J_COLOR_SPACE cs, pixel_fn pixel, size_t *len)
{
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr e;
    unsigned char *buf = NULL;
    unsigned long n = 0;
    int comps = cs == JCS_GRAYSCALE ? 1 : cs == JCS_CMYK ? 4 : 3;
    c.err = jpeg_std_error(&e);
    jpeg_create_compress(&c);
    jpeg_mem_dest(&c, &buf, &n);
    c.image_width = (JDIMENSION)w;
    c.image_height = (JDIMENSION)h;
    c.input_components = comps;
    c.in_color_space = cs;
    jpeg_set_defaults(&c);
    jpeg_set_quality(&c, 95, TRUE);
    jpeg_start_compress(&c, TRUE);
    uint8_t *row = malloc((size_t)w * (size_t)comps);
    while (c.next_scanline < c.image_height) {
        for (int x = 0; x < w; x++)
            pixel(x, (int)c.next_scanline, row + (size_t)x * (size_t)comps);
        JSAMPROW r[1] = { row };
        jpeg_write_scanlines(&c, r, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    free(row);
    *len = n;
    return buf;
}

static void grey_ramp(int x, int y, uint8_t *px)
{
    px[0] = px[1] = px[2] = (uint8_t)((x + y) % 256);
}

/* Red on the left third, blue elsewhere: a flip moves the red. */
static void red_left(int x, int y, uint8_t *px)
{
    (void)y;
    px[0] = x < 150 ? 230 : 10;
    px[1] = 10;
    px[2] = x < 150 ? 10 : 230;
}

static void gray_128(int x, int y, uint8_t *px)
{
    (void)x;
    (void)y;
    px[0] = 128;
}

static void cmyk_red(int x, int y, uint8_t *px)
{
    (void)x;
    (void)y;
    /* libjpeg marks CMYK files Adobe, whose convention is inverted (0 is
     * full ink): no cyan, full magenta and yellow, no black */
    px[0] = 255, px[1] = 0, px[2] = 0, px[3] = 255;
}

static int near(int a, int b, int tol)
{
    return a - b <= tol && b - a <= tol;
}

static void test_scale_choice_and_dimensions(void)
{
    static const struct {
        int w, h, scale, dw, dh, rw, rh, cx, cy;
    } cases[] = {
        /* ImageNet-like: 4/8 gives 250x188, short of 341x256, and the
         * scales between are not used: decoded at full size */
        { 500, 375, 8, 500, 375, 341, 256, 58, 16 },
        { 2000, 1500, 2, 500, 375, 341, 256, 58, 16 },
        { 1000, 750, 4, 500, 375, 341, 256, 58, 16 },
        { 375, 500, 8, 375, 500, 256, 341, 16, 58 },
        /* smaller than the resized size: decoded whole, upscaled */
        { 200, 150, 8, 200, 150, 341, 256, 58, 16 },
        { 256, 256, 8, 256, 256, 256, 256, 16, 16 },
    };
    uint8_t *out = malloc(224 * 224 * 3);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t len;
        uint8_t *jpg = make_jpeg(cases[i].w, cases[i].h, JCS_RGB, grey_ramp, &len);
        tfrec_image_decode_result r = TFREC_IMAGE_DECODE_RESULT_INIT;
        CHECK_EQ(tfrec_image_decode_rgb(jpg, len, NULL, 0, out, &r), TFREC_OK);
        free(jpg);
        CHECK_EQ(r.width, cases[i].w);
        CHECK_EQ(r.height, cases[i].h);
        CHECK_EQ(r.scale_num, cases[i].scale);
        CHECK_EQ(r.scale_denom, 8);
        CHECK_EQ(r.decoded_w, cases[i].dw);
        CHECK_EQ(r.decoded_h, cases[i].dh);
        CHECK_EQ(r.resized_w, cases[i].rw);
        CHECK_EQ(r.resized_h, cases[i].rh);
        CHECK_EQ(r.crop_x, cases[i].cx);
        CHECK_EQ(r.crop_y, cases[i].cy);
        CHECK_EQ(r.flipped, 0);
    }
    /* full_size: no DCT scaling */
    size_t len;
    uint8_t *jpg = make_jpeg(2000, 1500, JCS_RGB, grey_ramp, &len);
    tfrec_image_decode_options o = TFREC_IMAGE_DECODE_OPTIONS_INIT;
    o.full_size = 1;
    tfrec_image_decode_result r = TFREC_IMAGE_DECODE_RESULT_INIT;
    CHECK_EQ(tfrec_image_decode_rgb(jpg, len, &o, 0, out, &r), TFREC_OK);
    free(jpg);
    CHECK_EQ(r.scale_num, 8);
    CHECK_EQ(r.decoded_w, 2000);
    free(out);
}

static void test_center_crop_pixels(void)
{
    /* A 600x300 ramp, decoded at full size (4/8 would keep 150 rows)
     * and resized to 512x256: the crop's pixel (x, y) is near the source
     * ramp at ((x + 144 + 0.5) * 600/512, (y + 16 + 0.5) * 300/256). */
    size_t len;
    uint8_t *jpg = make_jpeg(600, 300, JCS_RGB, grey_ramp, &len);
    uint8_t *out = malloc(224 * 224 * 3);
    tfrec_image_decode_result r = TFREC_IMAGE_DECODE_RESULT_INIT;
    CHECK_EQ(tfrec_image_decode_rgb(jpg, len, NULL, 0, out, &r), TFREC_OK);
    CHECK_EQ(r.resized_w, 512);
    CHECK_EQ(r.crop_x, 144);
    int bad = 0;
    for (int y = 8; y < 216; y += 16)
        for (int x = 8; x < 120; x += 16) { /* where the ramp has not wrapped */
            double sx = (x + 144 + 0.5) * 600 / 512 - 0.5, sy = (y + 16 + 0.5) * 300 / 256 - 0.5;
            int want = (int)(sx + sy + 0.5);
            if (want < 250 && !near(out[((size_t)y * 224 + (size_t)x) * 3], want, 4))
                bad++;
        }
    CHECK_EQ(bad, 0);
    free(jpg);
    free(out);
}

static void test_random_crop_and_flip(void)
{
    size_t len;
    uint8_t *jpg = make_jpeg(500, 375, JCS_RGB, red_left, &len);
    size_t n = 224 * 224 * 3;
    uint8_t *a = malloc(n), *b = malloc(n), *c = malloc(n);
    tfrec_image_decode_options o = TFREC_IMAGE_DECODE_OPTIONS_INIT;
    o.crop = TFREC_CROP_RANDOM;
    o.flip = 1;
    tfrec_image_decode_result ra = TFREC_IMAGE_DECODE_RESULT_INIT, rb = ra, rc = ra;
    uint64_t r = 0x123456789ull;
    CHECK_EQ(tfrec_image_decode_rgb(jpg, len, &o, r, a, &ra), TFREC_OK);
    CHECK_EQ(tfrec_image_decode_rgb(jpg, len, &o, r | 1ull << 63, b, &rb), TFREC_OK);
    CHECK_EQ(tfrec_image_decode_rgb(jpg, len, &o, r, c, &rc), TFREC_OK);
    CHECK(memcmp(a, c, n) == 0); /* the same random value, the same crop */
    CHECK_EQ(ra.flipped, 0);
    CHECK_EQ(rb.flipped, 1);
    CHECK_EQ(ra.crop_x, rb.crop_x);
    CHECK_EQ(ra.crop_y, rb.crop_y);
    CHECK(ra.crop_x >= 0 && ra.crop_x <= 341 - 224 && ra.crop_y >= 0 && ra.crop_y <= 256 - 224);
    for (int y = 0; y < 224; y += 37)
        for (int x = 0; x < 224; x++)
            for (int k = 0; k < 3; k++)
                CHECK_EQ(b[((size_t)y * 224 + (size_t)(223 - x)) * 3 + (size_t)k],
                         a[((size_t)y * 224 + (size_t)x) * 3 + (size_t)k]);
    /* another random value moves the window */
    int moved = 0;
    for (uint64_t v = 1; v < 20 && !moved; v++) {
        CHECK_EQ(tfrec_image_decode_rgb(jpg, len, &o, v * 0x9E3779B97F4A7C15ull, c, &rc), TFREC_OK);
        moved = rc.crop_x != ra.crop_x || rc.crop_y != ra.crop_y;
    }
    CHECK(moved);
    free(jpg);
    free(a);
    free(b);
    free(c);
}

static void test_gray_and_cmyk_become_rgb(void)
{
    uint8_t *out = malloc(32 * 32 * 3);
    tfrec_image_decode_options o = TFREC_IMAGE_DECODE_OPTIONS_INIT;
    o.size = 32;
    size_t len;
    uint8_t *jpg = make_jpeg(80, 60, JCS_GRAYSCALE, gray_128, &len);
    CHECK_EQ(tfrec_image_decode_rgb(jpg, len, &o, 0, out, NULL), TFREC_OK);
    free(jpg);
    for (int k = 0; k < 3; k++)
        CHECKF(near(out[(16 * 32 + 16) * 3 + k], 128, 2), "gray channel %d is %d", k,
               out[(16 * 32 + 16) * 3 + k]);
    jpg = make_jpeg(80, 60, JCS_CMYK, cmyk_red, &len);
    CHECK_EQ(tfrec_image_decode_rgb(jpg, len, &o, 0, out, NULL), TFREC_OK);
    free(jpg);
    const uint8_t *p = out + (16 * 32 + 16) * 3;
    CHECKF(p[0] > 230 && p[1] < 25 && p[2] < 25, "CMYK red came out %d,%d,%d", p[0], p[1], p[2]);
    free(out);
}

static void test_corrupt_and_bad_options(void)
{
    size_t len;
    uint8_t *jpg = make_jpeg(300, 200, JCS_RGB, grey_ramp, &len);
    uint8_t *out = malloc(224 * 224 * 3);
    CHECK_EQ(tfrec_image_decode_rgb(jpg, len / 2, NULL, 0, out, NULL), TFREC_E_IMAGE);
    CHECK(strlen(tfrec_last_errmsg()) > 0);
    CHECK_EQ(tfrec_image_decode_rgb("not a jpeg", 10, NULL, 0, out, NULL), TFREC_E_IMAGE);
    CHECK(strstr(tfrec_last_errmsg(), "JPEG") != NULL);
    tfrec_image_decode_options o = TFREC_IMAGE_DECODE_OPTIONS_INIT;
    o.size = 300;
    o.resize = 256; /* smaller than the crop */
    CHECK_EQ(tfrec_image_decode_rgb(jpg, len, &o, 0, out, NULL), TFREC_E_INVALID);
    o.resize = 0;
    o.crop = 7;
    CHECK_EQ(tfrec_image_decode_rgb(jpg, len, &o, 0, out, NULL), TFREC_E_INVALID);
    free(jpg);
    free(out);
}

/* ------------------------------------------------------------ the stage */

enum { NREC = 12 };

/* NREC examples, label i, of 300x200 red_left JPEGs; record 5 truncated
 * when corrupt. */
static int write_shard(const char *path, int corrupt)
{
    tfrec_writer_options wo = TFREC_WRITER_OPTIONS_INIT;
    wo.write_index = 1;
    tfrec_writer *w;
    int rc = tfrec_writer_open(&w, path, &wo);
    size_t len;
    uint8_t *jpg = make_jpeg(300, 200, JCS_RGB, red_left, &len);
    for (int i = 0; i < NREC && rc == TFREC_OK; i++) {
        tfrec_example_builder *b;
        uint8_t *ser;
        size_t n;
        tfrec_example_builder_new(&b);
        tfrec_example_add_bytes(b, "image/encoded", jpg, corrupt && i == 5 ? len / 3 : len);
        tfrec_example_add_int64(b, "image/class/label", i);
        rc = tfrec_example_serialize_alloc(b, &ser, &n);
        if (rc == TFREC_OK)
            rc = tfrec_writer_write(w, ser, n);
        tfrec_free(ser);
        tfrec_example_builder_free(b);
    }
    if (rc == TFREC_OK)
        rc = tfrec_writer_close(w);
    tfrec_writer_free(w);
    free(jpg);
    return rc;
}

/* Every item of an epoch of a dataset with the stage, back to back. */
static int read_epoch(const char *path, const tfrec_image_stage_options *so, uint64_t epoch,
                      uint8_t *items, size_t *count, uint64_t *dropped, char *err, size_t errcap)
{
    tfrec_image_stage *s;
    int rc = tfrec_image_stage_new(&s, so);
    if (rc < 0)
        return rc;
    tfrec_dataset_options o = TFREC_DATASET_OPTIONS_INIT;
    o.num_threads = 2;
    o.block_records = 3;
    tfrec_image_stage_attach(s, &o);
    tfrec_dataset *ds;
    const char *files[1] = { path };
    if ((rc = tfrec_dataset_open(&ds, files, 1, &o)) < 0) {
        tfrec_image_stage_free(s);
        return rc;
    }
    size_t item = tfrec_image_stage_item_size(s);
    const uint8_t *data;
    size_t len;
    *count = 0;
    rc = tfrec_dataset_start_epoch(ds, epoch);
    while (rc == TFREC_OK && (rc = tfrec_dataset_next(ds, &data, &len)) == TFREC_OK) {
        if (len != item) {
            rc = TFREC_E_STATE;
            break;
        }
        memcpy(items + *count * item, data, item);
        ++*count;
    }
    if (rc < 0)
        snprintf(err, errcap, "%s", tfrec_dataset_errmsg(ds));
    *dropped = tfrec_dataset_dropped(ds);
    tfrec_dataset_free(ds);
    tfrec_image_stage_free(s);
    return rc == TFREC_END ? TFREC_OK : rc;
}

static void test_stage_labels_and_random_crops_per_epoch(void)
{
    const char *path = harness_path("images.tfrecord");
    CHECK_EQ(write_shard(path, 0), TFREC_OK);
    tfrec_image_decode_options d = TFREC_IMAGE_DECODE_OPTIONS_INIT;
    d.size = 64;
    d.resize = 100;
    d.crop = TFREC_CROP_RANDOM;
    d.flip = 1;
    tfrec_image_stage_options so = TFREC_IMAGE_STAGE_OPTIONS_INIT;
    so.decode = &d;
    so.seed = 42;
    size_t item = 8 + 64 * 64 * 3, n0, n0b, n1;
    uint8_t *e0 = malloc(NREC * item), *e0b = malloc(NREC * item), *e1 = malloc(NREC * item);
    uint64_t dropped;
    char err[512];
    CHECK_EQ(read_epoch(path, &so, 0, e0, &n0, &dropped, err, sizeof err), TFREC_OK);
    CHECK_EQ(read_epoch(path, &so, 0, e0b, &n0b, &dropped, err, sizeof err), TFREC_OK);
    CHECK_EQ(read_epoch(path, &so, 1, e1, &n1, &dropped, err, sizeof err), TFREC_OK);
    CHECK_EQ(n0, NREC);
    CHECK_EQ(n1, NREC);
    CHECK_EQ(dropped, 0);
    for (int i = 0; i < NREC; i++) {
        int64_t label;
        memcpy(&label, e0 + (size_t)i * item, 8);
        CHECK_EQ(label, i);
    }
    CHECK(memcmp(e0, e0b, NREC * item) == 0); /* same seed and epoch: same crops */
    CHECK(memcmp(e0, e1, NREC * item) != 0);  /* another epoch: others */
    so.seed = 43;
    CHECK_EQ(read_epoch(path, &so, 0, e0b, &n0b, &dropped, err, sizeof err), TFREC_OK);
    CHECK(memcmp(e0, e0b, NREC * item) != 0);
    free(e0);
    free(e0b);
    free(e1);
}

static void test_stage_corrupt_image_fails_or_is_skipped(void)
{
    const char *path = harness_path("corrupt.tfrecord");
    CHECK_EQ(write_shard(path, 1), TFREC_OK);
    tfrec_image_decode_options d = TFREC_IMAGE_DECODE_OPTIONS_INIT;
    d.size = 32;
    tfrec_image_stage_options so = TFREC_IMAGE_STAGE_OPTIONS_INIT;
    so.decode = &d;
    size_t item = 8 + 32 * 32 * 3, n;
    uint8_t *items = malloc(NREC * item);
    uint64_t dropped;
    char err[512] = "";
    CHECK_EQ(read_epoch(path, &so, 0, items, &n, &dropped, err, sizeof err), TFREC_E_IMAGE);
    CHECK_EQ(n, 5); /* the records before it were handed out */
    CHECKF(strstr(err, "corrupt.tfrecord: record 5 at offset ") != NULL, "message: %s", err);
    so.skip_corrupt = 1;
    CHECK_EQ(read_epoch(path, &so, 0, items, &n, &dropped, err, sizeof err), TFREC_OK);
    CHECK_EQ(n, NREC - 1);
    CHECK_EQ(dropped, 1);
    int64_t label;
    memcpy(&label, items + 5 * item, 8);
    CHECK_EQ(label, 6);
    free(items);
}

TESTS(TEST(test_scale_choice_and_dimensions), TEST(test_center_crop_pixels),
      TEST(test_random_crop_and_flip), TEST(test_gray_and_cmyk_become_rgb),
      TEST(test_corrupt_and_bad_options), TEST(test_stage_labels_and_random_crops_per_epoch),
      TEST(test_stage_corrupt_image_fails_or_is_skipped))

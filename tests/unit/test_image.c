/* Image probe, verification and normalisation. Inputs are made here with
 * libjpeg and libpng directly (not with the code under test), and outputs
 * are checked by decoding them with libjpeg again. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <png.h>

#include "harness.h"
#include "tfrec/error.h"
#include "tfrec/image.h"

/* ------------------------------------------------------------ fixtures */

typedef struct jpeg_spec {
    int w, h;
    J_COLOR_SPACE in_cs;   /* JCS_RGB, JCS_GRAYSCALE or JCS_CMYK */
    J_COLOR_SPACE file_cs; /* JCS_YCbCr, JCS_GRAYSCALE, JCS_CMYK, JCS_YCCK */
    int progressive;
    const uint8_t *pixel; /* one pixel repeated, in_cs components */
    int restart_rows;     /* restart marker every N MCU rows (0: none) */
} jpeg_spec;

static uint8_t *make_jpeg(const jpeg_spec *s, size_t *len)
{
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr e;
    unsigned char *buf = NULL;
    unsigned long n = 0;
    c.err = jpeg_std_error(&e);
    jpeg_create_compress(&c);
    jpeg_mem_dest(&c, &buf, &n);
    int comps = s->in_cs == JCS_GRAYSCALE ? 1 : s->in_cs == JCS_CMYK ? 4 : 3;
    c.image_width = (JDIMENSION)s->w;
    c.image_height = (JDIMENSION)s->h;
    c.input_components = comps;
    c.in_color_space = s->in_cs;
    jpeg_set_defaults(&c);
    jpeg_set_colorspace(&c, s->file_cs);
    jpeg_set_quality(&c, 95, TRUE);
    if (s->progressive)
        jpeg_simple_progression(&c);
    c.restart_in_rows = s->restart_rows;
    jpeg_start_compress(&c, TRUE);
    uint8_t *row = malloc((size_t)s->w * comps);
    for (int x = 0; x < s->w; x++)
        memcpy(row + (size_t)x * comps, s->pixel, comps);
    while (c.next_scanline < c.image_height) {
        JSAMPROW r[1] = { row };
        jpeg_write_scanlines(&c, r, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    free(row);
    *len = n;
    return buf;
}

static const uint8_t rgb_orange[3] = { 240, 120, 30 };
static const uint8_t gray_mid[1] = { 100 };

static uint8_t *make_rgb(int w, int h, int progressive, size_t *len)
{
    jpeg_spec s = { w, h, JCS_RGB, JCS_YCbCr, progressive, rgb_orange, 0 };
    return make_jpeg(&s, len);
}

/* Decode any JPEG to RGB with plain libjpeg; returns the centre pixel. */
static int decode_center(const uint8_t *d, size_t len, int *w, int *h, int *comps, uint8_t px[3])
{
    struct jpeg_decompress_struct c;
    struct jpeg_error_mgr e;
    c.err = jpeg_std_error(&e);
    jpeg_create_decompress(&c);
    jpeg_mem_src(&c, d, len);
    if (jpeg_read_header(&c, TRUE) != JPEG_HEADER_OK)
        return -1;
    *comps = c.num_components;
    c.out_color_space = JCS_RGB;
    jpeg_start_decompress(&c);
    *w = (int)c.output_width;
    *h = (int)c.output_height;
    uint8_t *row = malloc((size_t)c.output_width * 3);
    while (c.output_scanline < c.output_height) {
        JSAMPROW r[1] = { row };
        JDIMENSION y = c.output_scanline;
        jpeg_read_scanlines(&c, r, 1);
        if ((int)y == *h / 2)
            memcpy(px, row + (size_t)(*w / 2) * 3, 3);
    }
    jpeg_finish_decompress(&c);
    jpeg_destroy_decompress(&c);
    free(row);
    return 0;
}

static int near(int a, int b, int tol)
{
    return abs(a - b) <= tol;
}

static uint8_t *make_png(int w, int h, int rgba, size_t *len)
{
    png_image im;
    memset(&im, 0, sizeof im);
    im.version = PNG_IMAGE_VERSION;
    im.width = (png_uint_32)w;
    im.height = (png_uint_32)h;
    im.format = rgba ? PNG_FORMAT_RGBA : PNG_FORMAT_RGB;
    int comps = rgba ? 4 : 3;
    uint8_t *px = malloc((size_t)w * h * comps);
    for (size_t i = 0; i < (size_t)w * h; i++) {
        px[i * comps + 0] = 20;
        px[i * comps + 1] = 200;
        px[i * comps + 2] = 90;
        if (rgba)
            px[i * comps + 3] = 128;
    }
    png_alloc_size_t n = 0;
    png_image_write_to_memory(&im, NULL, &n, 0, px, 0, NULL);
    uint8_t *out = malloc(n);
    if (!png_image_write_to_memory(&im, out, &n, 0, px, 0, NULL)) {
        free(out);
        out = NULL;
    }
    free(px);
    *len = n;
    return out;
}

/* ------------------------------------------------------------ probe */

static void test_probe_baseline_rgb(void)
{
    size_t n;
    uint8_t *j = make_rgb(64, 48, 0, &n);
    tfrec_image_info info = TFREC_IMAGE_INFO_INIT;
    CHECK_EQ(tfrec_image_probe(j, n, &info), TFREC_OK);
    CHECK_EQ(info.format, TFREC_IMAGE_JPEG);
    CHECK_EQ(info.width, 64);
    CHECK_EQ(info.height, 48);
    CHECK_EQ(info.components, 3);
    CHECK_EQ(info.colorspace, TFREC_CS_YCBCR);
    CHECK_EQ(info.progressive, 0);
    free(j);
}

static void test_probe_progressive_and_gray(void)
{
    size_t n;
    uint8_t *j = make_rgb(33, 17, 1, &n);
    tfrec_image_info info = TFREC_IMAGE_INFO_INIT;
    CHECK_EQ(tfrec_image_probe(j, n, &info), TFREC_OK);
    CHECK_EQ(info.progressive, 1);
    CHECK_EQ(tfrec_image_verify(j, n, TFREC_VERIFY_FULL, &info), TFREC_OK);
    free(j);
    jpeg_spec s = { 20, 10, JCS_GRAYSCALE, JCS_GRAYSCALE, 0, gray_mid, 0 };
    j = make_jpeg(&s, &n);
    CHECK_EQ(tfrec_image_probe(j, n, &info), TFREC_OK);
    CHECK_EQ(info.components, 1);
    CHECK_EQ(info.colorspace, TFREC_CS_GRAY);
    free(j);
}

static void test_probe_cmyk_ycck_png(void)
{
    static const uint8_t ink[4] = { 255, 0, 0, 255 };
    size_t n;
    tfrec_image_info info = TFREC_IMAGE_INFO_INIT;
    jpeg_spec s = { 16, 16, JCS_CMYK, JCS_CMYK, 0, ink, 0 };
    uint8_t *j = make_jpeg(&s, &n);
    CHECK_EQ(tfrec_image_probe(j, n, &info), TFREC_OK);
    CHECK_EQ(info.colorspace, TFREC_CS_CMYK);
    CHECK_EQ(info.components, 4);
    CHECK_EQ(info.adobe, 1);
    free(j);
    s.file_cs = JCS_YCCK;
    j = make_jpeg(&s, &n);
    CHECK_EQ(tfrec_image_probe(j, n, &info), TFREC_OK);
    CHECK_EQ(info.colorspace, TFREC_CS_YCCK);
    free(j);
    uint8_t *p = make_png(7, 5, 1, &n);
    CHECK(p != NULL);
    CHECK_EQ(tfrec_image_probe(p, n, &info), TFREC_OK);
    CHECK_EQ(info.format, TFREC_IMAGE_PNG);
    CHECK_EQ(info.width, 7);
    CHECK_EQ(info.height, 5);
    CHECK_EQ(info.colorspace, TFREC_CS_RGBA);
    free(p);
}

static void test_not_images(void)
{
    tfrec_image_info info = TFREC_IMAGE_INFO_INIT;
    CHECK_EQ(tfrec_image_probe("", 0, &info), TFREC_E_IMAGE);
    CHECKF(strstr(tfrec_last_errmsg(), "empty") != NULL, "msg: %s", tfrec_last_errmsg());
    const char *text = "hello, this is not an image\n";
    CHECK_EQ(tfrec_image_probe(text, strlen(text), &info), TFREC_E_IMAGE);
    CHECKF(strstr(tfrec_last_errmsg(), "not a JPEG or PNG") != NULL, "msg: %s",
           tfrec_last_errmsg());
    uint8_t *out = NULL;
    size_t out_len = 0;
    CHECK_EQ(tfrec_image_normalize(text, strlen(text), NULL, &out, &out_len, NULL, NULL),
             TFREC_E_IMAGE);
    CHECK(out == NULL);
}

/* ------------------------------------------------------------ verify */

static void test_truncated_fails_every_level(void)
{
    size_t n;
    uint8_t *j = make_rgb(200, 150, 0, &n);
    for (int level = TFREC_VERIFY_HEADER; level <= TFREC_VERIFY_FULL; level++) {
        CHECK_EQ(tfrec_image_verify(j, n, level, NULL), TFREC_OK);
        CHECKF(tfrec_image_verify(j, n * 2 / 3, level, NULL) == TFREC_E_IMAGE, "level %d", level);
        CHECKF(strstr(tfrec_last_errmsg(), "truncated") != NULL, "msg: %s", tfrec_last_errmsg());
        /* Only the EOI marker missing. */
        CHECK_EQ(tfrec_image_verify(j, n - 2, level, NULL), TFREC_E_IMAGE);
    }
    free(j);
}

/* Entropy data cut short but the file still ends in EOI: the marker walk
 * cannot see it, the entropy decode of "fast" and "full" must. */
static void test_cut_scan_with_eoi_needs_decode(void)
{
    size_t n;
    uint8_t *j = make_rgb(256, 256, 0, &n);
    /* a noisy image so the scan is long */
    size_t keep = n / 2;
    uint8_t *cut = malloc(keep + 2);
    memcpy(cut, j, keep);
    if (cut[keep - 1] == 0xFF)
        keep--;
    cut[keep] = 0xFF;
    cut[keep + 1] = 0xD9;
    CHECK_EQ(tfrec_image_verify(cut, keep + 2, TFREC_VERIFY_HEADER, NULL), TFREC_OK);
    CHECK_EQ(tfrec_image_verify(cut, keep + 2, TFREC_VERIFY_FAST, NULL), TFREC_E_IMAGE);
    CHECKF(strstr(tfrec_last_errmsg(), "Corrupt JPEG data") != NULL, "msg: %s",
           tfrec_last_errmsg());
    CHECK_EQ(tfrec_image_verify(cut, keep + 2, TFREC_VERIFY_FULL, NULL), TFREC_E_IMAGE);
    /* the default level is header: stored; asking for fast rejects it */
    uint8_t *out = NULL;
    size_t out_len = 0;
    CHECK_EQ(tfrec_image_normalize(cut, keep + 2, NULL, &out, &out_len, NULL, NULL), TFREC_OK);
    CHECK(out == NULL);
    tfrec_image_normalize_options o = TFREC_IMAGE_NORMALIZE_OPTIONS_INIT;
    o.verify = TFREC_VERIFY_FAST;
    CHECK_EQ(tfrec_image_normalize(cut, keep + 2, &o, &out, &out_len, NULL, NULL), TFREC_E_IMAGE);
    free(cut);
    free(j);
}

/* ------------------------------------------------------------ normalise */

static void test_rgb_kept_unchanged(void)
{
    size_t n;
    uint8_t *j = make_rgb(40, 30, 1, &n);
    uint8_t *out = (uint8_t *)1;
    size_t out_len = 1;
    tfrec_image_info info = TFREC_IMAGE_INFO_INIT;
    int action = -1;
    CHECK_EQ(tfrec_image_normalize(j, n, NULL, &out, &out_len, &info, &action), TFREC_OK);
    CHECK(out == NULL);
    CHECK_EQ(out_len, 0);
    CHECK_EQ(action, TFREC_IMAGE_KEPT);
    CHECK_EQ(info.width, 40);
    CHECK_EQ(info.height, 30);
    free(j);
}

static void test_gray_kept_or_converted(void)
{
    size_t n;
    jpeg_spec s = { 24, 12, JCS_GRAYSCALE, JCS_GRAYSCALE, 0, gray_mid, 0 };
    uint8_t *j = make_jpeg(&s, &n);
    uint8_t *out = NULL;
    size_t out_len = 0;
    int action = -1;
    CHECK_EQ(tfrec_image_normalize(j, n, NULL, &out, &out_len, NULL, &action), TFREC_OK);
    CHECK(out == NULL);
    CHECK_EQ(action, TFREC_IMAGE_KEPT);
    tfrec_image_normalize_options o = TFREC_IMAGE_NORMALIZE_OPTIONS_INIT;
    o.grayscale_to_rgb = 1;
    tfrec_image_info info = TFREC_IMAGE_INFO_INIT;
    CHECK_EQ(tfrec_image_normalize(j, n, &o, &out, &out_len, &info, &action), TFREC_OK);
    CHECK(out != NULL);
    CHECK_EQ(action, TFREC_IMAGE_FROM_GRAY);
    CHECK_EQ(info.components, 3);
    int w, h, comps;
    uint8_t px[3];
    CHECK_EQ(decode_center(out, out_len, &w, &h, &comps, px), 0);
    CHECK_EQ(comps, 3);
    CHECK_EQ(w, 24);
    CHECK_EQ(h, 12);
    CHECKF(near(px[0], 100, 3) && near(px[1], 100, 3) && near(px[2], 100, 3), "%d %d %d", px[0],
           px[1], px[2]);
    tfrec_free(out);
    free(j);
}

/* CMYK in Adobe's inverted convention (255 = no ink): no cyan, full
 * magenta and yellow, no black is red. */
static void check_cmyk_to_red(J_COLOR_SPACE file_cs)
{
    static const uint8_t red_ink[4] = { 255, 0, 0, 255 };
    jpeg_spec s = { 35, 21, JCS_CMYK, file_cs, 0, red_ink, 0 };
    size_t n;
    uint8_t *j = make_jpeg(&s, &n);
    uint8_t *out = NULL;
    size_t out_len = 0;
    int action = -1;
    tfrec_image_info info = TFREC_IMAGE_INFO_INIT;
    tfrec_image_normalize_options o = TFREC_IMAGE_NORMALIZE_OPTIONS_INIT;
    o.quality = 90;
    CHECK_EQ(tfrec_image_normalize(j, n, &o, &out, &out_len, &info, &action), TFREC_OK);
    CHECK(out != NULL);
    CHECK_EQ(action, TFREC_IMAGE_FROM_CMYK);
    CHECK_EQ(info.width, 35);
    CHECK_EQ(info.height, 21);
    int w, h, comps;
    uint8_t px[3];
    CHECK_EQ(decode_center(out, out_len, &w, &h, &comps, px), 0);
    CHECK_EQ(comps, 3);
    CHECK_EQ(w, 35);
    CHECK_EQ(h, 21);
    CHECKF(px[0] > 230 && px[1] < 25 && px[2] < 25, "%d %d %d", px[0], px[1], px[2]);
    /* the result is itself a valid RGB JPEG */
    tfrec_image_info again = TFREC_IMAGE_INFO_INIT;
    CHECK_EQ(tfrec_image_verify(out, out_len, TFREC_VERIFY_FULL, &again), TFREC_OK);
    CHECK_EQ(again.colorspace, TFREC_CS_YCBCR);
    tfrec_free(out);
    free(j);
}

static void test_cmyk_to_rgb(void)
{
    check_cmyk_to_red(JCS_CMYK);
}
static void test_ycck_to_rgb(void)
{
    check_cmyk_to_red(JCS_YCCK);
}

static void test_png_to_rgb_jpeg(void)
{
    for (int rgba = 0; rgba <= 1; rgba++) {
        size_t n;
        uint8_t *p = make_png(50, 31, rgba, &n);
        CHECK(p != NULL);
        uint8_t *out = NULL;
        size_t out_len = 0;
        int action = -1;
        tfrec_image_info info = TFREC_IMAGE_INFO_INIT;
        CHECK_EQ(tfrec_image_normalize(p, n, NULL, &out, &out_len, &info, &action), TFREC_OK);
        CHECK_EQ(action, TFREC_IMAGE_FROM_PNG);
        CHECK(out != NULL);
        int w, h, comps;
        uint8_t px[3];
        CHECK_EQ(decode_center(out, out_len, &w, &h, &comps, px), 0);
        CHECK_EQ(w, 50);
        CHECK_EQ(h, 31);
        CHECK_EQ(comps, 3);
        CHECKF(near(px[0], 20, 4) && near(px[1], 200, 4) && near(px[2], 90, 4), "%d %d %d", px[0],
               px[1], px[2]);
        /* a truncated PNG is an error, not a half image */
        uint8_t *o2 = NULL;
        size_t l2 = 0;
        CHECK_EQ(tfrec_image_normalize(p, n - 20, NULL, &o2, &l2, NULL, NULL), TFREC_E_IMAGE);
        CHECK(o2 == NULL);
        tfrec_free(out);
        free(p);
    }
}

/* Restart markers (RSTn) inside the entropy data are not scan ends. */
static void test_restart_markers(void)
{
    jpeg_spec s = { 64, 64, JCS_RGB, JCS_YCbCr, 0, rgb_orange, 1 };
    size_t n;
    uint8_t *j = make_jpeg(&s, &n);
    int rst = 0;
    for (size_t i = 0; i + 1 < n; i++)
        rst += j[i] == 0xFF && j[i + 1] >= 0xD0 && j[i + 1] <= 0xD7;
    CHECK(rst >= 3);
    for (int level = TFREC_VERIFY_HEADER; level <= TFREC_VERIFY_FULL; level++) {
        CHECK_EQ(tfrec_image_verify(j, n, level, NULL), TFREC_OK);
        CHECK_EQ(tfrec_image_verify(j, n - 5, level, NULL), TFREC_E_IMAGE);
    }
    free(j);
}

static void test_one_pixel(void)
{
    size_t n;
    uint8_t *j = make_rgb(1, 1, 0, &n);
    tfrec_image_info info = TFREC_IMAGE_INFO_INIT;
    for (int level = TFREC_VERIFY_HEADER; level <= TFREC_VERIFY_FULL; level++)
        CHECK_EQ(tfrec_image_verify(j, n, level, &info), TFREC_OK);
    CHECK_EQ(info.width, 1);
    CHECK_EQ(info.height, 1);
    free(j);
}

static void test_names(void)
{
    CHECK_EQ(tfrec_verify_level_from_name("header"), TFREC_VERIFY_HEADER);
    CHECK_EQ(tfrec_verify_level_from_name("FULL"), TFREC_VERIFY_FULL);
    CHECK_EQ(tfrec_verify_level_from_name("bogus"), -1);
    CHECK(strcmp(tfrec_verify_level_name(TFREC_VERIFY_DEFAULT), "header") == 0);
    CHECK(strcmp(tfrec_image_colorspace_name(TFREC_CS_YCCK), "YCCK") == 0);
    tfrec_image_normalize_options o = TFREC_IMAGE_NORMALIZE_OPTIONS_INIT;
    o.quality = 101;
    uint8_t *out;
    size_t len;
    size_t n;
    uint8_t *j = make_rgb(8, 8, 0, &n);
    CHECK_EQ(tfrec_image_normalize(j, n, &o, &out, &len, NULL, NULL), TFREC_E_INVALID);
    free(j);
}

/* Every prefix and a few hundred random corruptions of each kind of input:
 * the result is OK or TFREC_E_IMAGE, never a crash, exit or other code
 * (run under ASan/UBSan by `make asan-test`). */
static int hostile_ok(const uint8_t *d, size_t n)
{
    tfrec_image_normalize_options o = TFREC_IMAGE_NORMALIZE_OPTIONS_INIT;
    for (int level = TFREC_VERIFY_HEADER; level <= TFREC_VERIFY_FULL; level++) {
        int rc = tfrec_image_verify(d, n, level, NULL);
        if (rc != TFREC_OK && rc != TFREC_E_IMAGE)
            return 0;
        o.verify = level;
        uint8_t *out = NULL;
        size_t out_len = 0;
        rc = tfrec_image_normalize(d, n, &o, &out, &out_len, NULL, NULL);
        tfrec_free(out);
        if (rc != TFREC_OK && rc != TFREC_E_IMAGE)
            return 0;
    }
    return 1;
}

static void test_hostile_inputs_never_crash(void)
{
    static const uint8_t ink[4] = { 10, 200, 30, 40 };
    jpeg_spec cmyk = { 19, 13, JCS_CMYK, JCS_YCCK, 0, ink, 0 };
    size_t lens[4];
    uint8_t *imgs[4];
    imgs[0] = make_rgb(21, 17, 0, &lens[0]);
    imgs[1] = make_rgb(21, 17, 1, &lens[1]);
    imgs[2] = make_jpeg(&cmyk, &lens[2]);
    imgs[3] = make_png(13, 11, 1, &lens[3]);
    for (int k = 0; k < 4; k++) {
        CHECK(imgs[k] != NULL);
        for (size_t n = 0; n < lens[k]; n++)
            CHECKF(hostile_ok(imgs[k], n), "input %d cut at %zu", k, n);
        uint8_t *copy = malloc(lens[k]);
        for (int t = 0; t < 300; t++) {
            uint32_t r[3];
            harness_random(r, sizeof r, (uint64_t)(k * 1000 + t + 1));
            memcpy(copy, imgs[k], lens[k]);
            /* 1-3 random bytes anywhere after the signature */
            for (int j = 0; j <= (int)(r[0] % 3); j++)
                copy[2 + (r[1] + 7919u * (uint32_t)j) % (lens[k] - 2)] = (uint8_t)(r[2] >> (8 * j));
            CHECKF(hostile_ok(copy, lens[k]), "input %d mutation %d", k, t);
        }
        free(copy);
        free(imgs[k]);
    }
}

TESTS(TEST(test_probe_baseline_rgb), TEST(test_probe_progressive_and_gray),
      TEST(test_probe_cmyk_ycck_png), TEST(test_not_images), TEST(test_truncated_fails_every_level),
      TEST(test_cut_scan_with_eoi_needs_decode), TEST(test_rgb_kept_unchanged),
      TEST(test_gray_kept_or_converted), TEST(test_cmyk_to_rgb), TEST(test_ycck_to_rgb),
      TEST(test_png_to_rgb_jpeg), TEST(test_restart_markers), TEST(test_one_pixel),
      TEST(test_names), TEST(test_hostile_inputs_never_crash))

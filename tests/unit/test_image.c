/* Image probe, verification and normalisation. Inputs are made here with
 * libjpeg and libpng directly (not with the code under test), and outputs
 * are checked by decoding them with libjpeg again. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <png.h>
#include <zlib.h>

#include "harness.h"
#include "image/image_internal.h"
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

/* ------------------------------------------------------------ hostile sizes
 *
 * Files whose header promises far more pixels or scans than their data can
 * hold. Each must fail cleanly at every level, and the work done before the
 * failure is counted (libjpeg progress calls, PNG rows and buffer bytes),
 * so "bounded" is asserted without timing anything. */

/* A photo-like noisy image (large scans), Huffman or arithmetic coded. */
static uint8_t *make_noisy(int w, int h, int gray, int arith, int progressive, size_t *len)
{
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr e;
    unsigned char *buf = NULL;
    unsigned long n = 0;
    c.err = jpeg_std_error(&e);
    jpeg_create_compress(&c);
    jpeg_mem_dest(&c, &buf, &n);
    int comps = gray ? 1 : 3;
    c.image_width = (JDIMENSION)w;
    c.image_height = (JDIMENSION)h;
    c.input_components = comps;
    c.in_color_space = gray ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&c);
    jpeg_set_quality(&c, 90, TRUE);
    c.arith_code = arith ? TRUE : FALSE;
    if (progressive)
        jpeg_simple_progression(&c);
    jpeg_start_compress(&c, TRUE);
    uint8_t *row = malloc((size_t)w * comps);
    while (c.next_scanline < c.image_height) {
        harness_random(row, (size_t)w * comps, c.next_scanline + 1u);
        JSAMPROW r[1] = { row };
        jpeg_write_scanlines(&c, r, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    free(row);
    *len = n;
    return buf;
}

/* Offset of the first marker m (or any SOF when m is 0) in a well-formed
 * libjpeg output, walking the segments; 0 if none before the first scan. */
static size_t find_marker(const uint8_t *d, size_t len, int m)
{
    size_t p = 2;
    while (p + 4 <= len && d[p] == 0xFF) {
        int k = d[p + 1];
        int sof = k >= 0xC0 && k <= 0xCF && k != 0xC4 && k != 0xC8 && k != 0xCC;
        if (m ? k == m : sof)
            return p;
        if (k == 0xDA)
            return 0;
        p += 2 + (((size_t)d[p + 2] << 8) | d[p + 3]);
    }
    return 0;
}

static void set_dims(uint8_t *d, size_t len, unsigned w, unsigned h)
{
    size_t sof = find_marker(d, len, 0);
    d[sof + 5] = (uint8_t)(h >> 8);
    d[sof + 6] = (uint8_t)h;
    d[sof + 7] = (uint8_t)(w >> 8);
    d[sof + 8] = (uint8_t)w;
}

/* The file up to the end of its first scan header, `keep` bytes of that
 * scan's data (or all of them with keep = SIZE_MAX), then EOI when eoi. */
static uint8_t *cut_first_scan(const uint8_t *d, size_t len, size_t keep, int eoi, size_t *out_len)
{
    size_t sos = find_marker(d, len, 0xDA);
    size_t data = sos + 2 + (((size_t)d[sos + 2] << 8) | d[sos + 3]);
    if (keep > len - data)
        keep = len - data;
    size_t n = data + keep;
    while (n > data && d[n - 1] == 0xFF)
        n--; /* never end the data on half a marker */
    uint8_t *out = malloc(n + 2);
    memcpy(out, d, n);
    if (eoi) {
        out[n++] = 0xFF;
        out[n++] = 0xD9;
    }
    *out_len = n;
    return out;
}

/* rc of verify at level, with the work it did counted from zero. */
static int verify_counted(const uint8_t *d, size_t len, int level, const char *want_msg)
{
    memset(tfrec_img_work(), 0, sizeof(img_work));
    int rc = tfrec_image_verify(d, len, level, NULL);
    if (rc == TFREC_E_IMAGE && want_msg && !strstr(tfrec_last_errmsg(), want_msg)) {
        fprintf(stderr, "level %d: message \"%s\" lacks \"%s\"\n", level, tfrec_last_errmsg(),
                want_msg);
        return -1000;
    }
    return rc;
}

/* The finding: an arithmetic-coded (SOF9) header declaring 65500x65500
 * with a 2-byte scan. libjpeg zero-fills an arithmetic scan that hits a
 * marker, so it used to decode 4.3 G pixels (10-16 s) and call it good. */
static void test_arith_header_bomb(void)
{
    size_t n, bn;
    uint8_t *j = make_noisy(16, 16, 0, 1, 0, &n);
    CHECK(find_marker(j, n, 0xC9) != 0); /* SOF9: arithmetic, sequential */
    uint8_t *bomb = cut_first_scan(j, n, 2, 1, &bn);
    set_dims(bomb, bn, 65500, 65500);
    for (int level = TFREC_VERIFY_HEADER; level <= TFREC_VERIFY_FULL; level++) {
        CHECKF(verify_counted(bomb, bn, level, "65500x65500") == TFREC_E_IMAGE, "level %d", level);
        CHECKF(tfrec_img_work()->jpeg_ticks == 0, "level %d: %llu rows decoded", level,
               (unsigned long long)tfrec_img_work()->jpeg_ticks);
    }
    /* under the pixel limit, the data still cannot hold 3000x3000 */
    set_dims(bomb, bn, 3000, 3000);
    for (int level = TFREC_VERIFY_HEADER; level <= TFREC_VERIFY_FULL; level++) {
        CHECKF(verify_counted(bomb, bn, level, "too short") == TFREC_E_IMAGE, "level %d", level);
        CHECK_EQ(tfrec_img_work()->jpeg_ticks, 0);
    }
    /* normalize (any verify level) refuses it the same way */
    tfrec_image_normalize_options o = TFREC_IMAGE_NORMALIZE_OPTIONS_INIT;
    uint8_t *out = NULL;
    size_t out_len = 0;
    CHECK_EQ(tfrec_image_normalize(bomb, bn, &o, &out, &out_len, NULL, NULL), TFREC_E_IMAGE);
    CHECK(out == NULL);
    free(bomb);
    free(j);
}

/* A progressive arithmetic (SOF10) file padded with empty AC scans: each
 * one made libjpeg walk every block of the image again. */
static uint8_t *with_empty_scans(const uint8_t *j, size_t n, int scans, size_t *out_len)
{
    static const uint8_t empty_ac[10] = {
        0xFF, 0xDA, 0x00, 0x08, 0x01, 0x01, 0x00, 0x01, 0x3F, 0x00
    };
    uint8_t *out = malloc(n + (size_t)scans * sizeof empty_ac);
    memcpy(out, j, n - 2); /* all but EOI */
    size_t p = n - 2;
    for (int i = 0; i < scans; i++, p += sizeof empty_ac)
        memcpy(out + p, empty_ac, sizeof empty_ac);
    out[p++] = 0xFF;
    out[p++] = 0xD9;
    *out_len = p;
    return out;
}

static void test_progressive_empty_scans(void)
{
    size_t n, bn;
    uint8_t *j = make_noisy(16, 16, 1, 1, 1, &n);
    CHECK(find_marker(j, n, 0xCA) != 0); /* SOF10: arithmetic, progressive */
    /* the finding: 883 empty scans; at 2000x2000 here (8000x8000 took 24.6 s) */
    uint8_t *bomb = with_empty_scans(j, n, 883, &bn);
    set_dims(bomb, bn, 2000, 2000);
    for (int level = TFREC_VERIFY_HEADER; level <= TFREC_VERIFY_FULL; level++) {
        CHECKF(verify_counted(bomb, bn, level, NULL) == TFREC_E_IMAGE, "level %d", level);
        CHECKF(tfrec_img_work()->jpeg_ticks == 0, "level %d: %llu rows decoded", level,
               (unsigned long long)tfrec_img_work()->jpeg_ticks);
    }
    free(bomb);
    /* more scans than any encoder writes, on a tiny image: the scan limit */
    bomb = with_empty_scans(j, n, 120, &bn);
    for (int level = TFREC_VERIFY_HEADER; level <= TFREC_VERIFY_FULL; level++) {
        CHECKF(verify_counted(bomb, bn, level, "scans") == TFREC_E_IMAGE, "level %d", level);
        CHECK_EQ(tfrec_img_work()->jpeg_ticks, 0);
    }
    free(bomb);
    /* 30 extra scans: fewer than the limit, but every block decoded 36
     * times (the work budget); 4 extra scans are fine */
    bomb = with_empty_scans(j, n, 30, &bn);
    for (int level = TFREC_VERIFY_HEADER; level <= TFREC_VERIFY_FULL; level++) {
        CHECKF(verify_counted(bomb, bn, level, "passes") == TFREC_E_IMAGE, "level %d", level);
        CHECK_EQ(tfrec_img_work()->jpeg_ticks, 0);
    }
    free(bomb);
    bomb = with_empty_scans(j, n, 4, &bn);
    for (int level = TFREC_VERIFY_HEADER; level <= TFREC_VERIFY_FULL; level++)
        CHECKF(verify_counted(bomb, bn, level, NULL) == TFREC_OK, "level %d: %s", level,
               tfrec_last_errmsg());
    free(bomb);
    free(j);
}

/* A baseline Huffman scan cut at several points: without EOI every level
 * rejects it; with an EOI appended the entropy decode (fast, full) does,
 * and the header walk too once the data left is below one bit per block. */
static void test_truncated_huffman_scan(void)
{
    size_t n;
    uint8_t *j = make_noisy(256, 256, 0, 0, 0, &n);
    static const int permille[] = { 1, 100, 300, 500, 700, 900, 990 };
    for (size_t k = 0; k < sizeof permille / sizeof permille[0]; k++) {
        size_t keep = (n - 700) * (size_t)permille[k] / 1000, cn;
        for (int eoi = 0; eoi <= 1; eoi++) {
            uint8_t *cut = cut_first_scan(j, n, keep, eoi, &cn);
            for (int level = TFREC_VERIFY_HEADER; level <= TFREC_VERIFY_FULL; level++) {
                int rc = verify_counted(cut, cn, level, NULL);
                int must = !eoi || level > TFREC_VERIFY_HEADER || permille[k] == 1;
                CHECKF(!must || rc == TFREC_E_IMAGE, "cut at %d/1000, eoi %d, level %d: %d",
                       permille[k], eoi, level, rc);
                /* the decode stops where the data does: at most the rows
                 * the data held (plus libjpeg's one iMCU row ahead) */
                CHECKF(tfrec_img_work()->jpeg_ticks <= 256 * (size_t)permille[k] / 1000 + 40,
                       "cut at %d/1000, level %d: %llu rows", permille[k], level,
                       (unsigned long long)tfrec_img_work()->jpeg_ticks);
            }
            free(cut);
        }
    }
    free(j);
}

/* An arithmetic scan cut short: without EOI every level rejects it; with
 * EOI, libjpeg zero-fills silently (encoders may drop trailing zero bytes,
 * so this is legal), and it is rejected where the data left cannot hold
 * the image (below one bit per 8x8 block). */
static void test_truncated_arith_scan(void)
{
    size_t n, cn;
    for (int progressive = 0; progressive <= 1; progressive++) {
        uint8_t *j = make_noisy(256, 256, 0, 1, progressive, &n);
        for (int level = TFREC_VERIFY_HEADER; level <= TFREC_VERIFY_FULL; level++)
            CHECKF(verify_counted(j, n, level, NULL) == TFREC_OK, "level %d: %s", level,
                   tfrec_last_errmsg());
        static const int permille[] = { 1, 300, 600, 900 };
        for (size_t k = 0; k < sizeof permille / sizeof permille[0]; k++) {
            uint8_t *cut = cut_first_scan(j, n, (n - 700) * (size_t)permille[k] / 1000, 0, &cn);
            for (int level = TFREC_VERIFY_HEADER; level <= TFREC_VERIFY_FULL; level++)
                CHECKF(verify_counted(cut, cn, level, "truncated") == TFREC_E_IMAGE,
                       "cut at %d/1000, level %d", permille[k], level);
            free(cut);
        }
        /* 20 bytes of scan data and EOI: 1536 blocks need 192 bytes */
        uint8_t *cut = cut_first_scan(j, n, 20, 1, &cn);
        for (int level = TFREC_VERIFY_HEADER; level <= TFREC_VERIFY_FULL; level++) {
            CHECKF(verify_counted(cut, cn, level, "too short") == TFREC_E_IMAGE, "level %d", level);
            CHECK_EQ(tfrec_img_work()->jpeg_ticks, 0);
        }
        free(cut);
        free(j);
    }
}

/* The data-per-block bound is exact for Huffman coding (every block's DC
 * difference costs a bit): the flattest images it can code, of every
 * sampling, baseline and progressive, all pass, at every level. */
static void test_flat_huffman_images_pass(void)
{
    static const int sampling[][2] = { { 1, 1 }, { 2, 1 }, { 2, 2 }, { 4, 1 }, { 2, 4 } };
    static const int sizes[][2] = { { 1, 1 }, { 17, 9 }, { 640, 480 }, { 1024, 1024 } };
    for (size_t k = 0; k < sizeof sampling / sizeof sampling[0]; k++)
        for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
            for (int progressive = 0; progressive <= 1; progressive++)
                for (int gray = 0; gray <= 1; gray++) {
                    struct jpeg_compress_struct c;
                    struct jpeg_error_mgr e;
                    unsigned char *buf = NULL;
                    unsigned long n = 0;
                    c.err = jpeg_std_error(&e);
                    jpeg_create_compress(&c);
                    jpeg_mem_dest(&c, &buf, &n);
                    c.image_width = (JDIMENSION)sizes[z][0];
                    c.image_height = (JDIMENSION)sizes[z][1];
                    c.input_components = gray ? 1 : 3;
                    c.in_color_space = gray ? JCS_GRAYSCALE : JCS_RGB;
                    jpeg_set_defaults(&c);
                    c.comp_info[0].h_samp_factor = sampling[k][0];
                    c.comp_info[0].v_samp_factor = sampling[k][1];
                    c.optimize_coding = TRUE; /* the shortest Huffman codes */
                    if (progressive)
                        jpeg_simple_progression(&c);
                    jpeg_start_compress(&c, TRUE);
                    uint8_t *row = calloc((size_t)sizes[z][0], 3);
                    while (c.next_scanline < c.image_height) {
                        JSAMPROW r[1] = { row };
                        jpeg_write_scanlines(&c, r, 1);
                    }
                    jpeg_finish_compress(&c);
                    jpeg_destroy_compress(&c);
                    free(row);
                    for (int level = TFREC_VERIFY_HEADER; level <= TFREC_VERIFY_FULL; level++)
                        CHECKF(tfrec_image_verify(buf, n, level, NULL) == TFREC_OK,
                               "%dx%d sampling %dx%d progressive %d gray %d level %d: %s",
                               sizes[z][0], sizes[z][1], sampling[k][0], sampling[k][1],
                               progressive, gray, level, tfrec_last_errmsg());
                    free(buf);
                }
}

/* The pixel limit: PIL's default, configurable through the options. */
static void test_pixel_limit(void)
{
    size_t n;
    uint8_t *j = make_noisy(64, 48, 0, 0, 0, &n);
    uint8_t *out = NULL;
    size_t out_len = 0;
    tfrec_image_normalize_options o = TFREC_IMAGE_NORMALIZE_OPTIONS_INIT;
    CHECK_EQ(o.max_pixels, 0); /* zero: TFREC_IMAGE_DEFAULT_MAX_PIXELS */
    CHECK_EQ(TFREC_IMAGE_DEFAULT_MAX_PIXELS, 89478485);
    CHECK_EQ(tfrec_image_normalize(j, n, &o, &out, &out_len, NULL, NULL), TFREC_OK);
    o.max_pixels = 64 * 48;
    CHECK_EQ(tfrec_image_normalize(j, n, &o, &out, &out_len, NULL, NULL), TFREC_OK);
    o.max_pixels = 64 * 48 - 1;
    for (int level = TFREC_VERIFY_HEADER; level <= TFREC_VERIFY_FULL; level++) {
        o.verify = level;
        CHECK_EQ(tfrec_image_normalize(j, n, &o, &out, &out_len, NULL, NULL), TFREC_E_IMAGE);
        CHECKF(strstr(tfrec_last_errmsg(), "pixel limit") != NULL, "msg: %s", tfrec_last_errmsg());
    }
    size_t pn;
    uint8_t *p = make_png(50, 31, 0, &pn);
    o.max_pixels = 50 * 31 - 1;
    CHECK_EQ(tfrec_image_normalize(p, pn, &o, &out, &out_len, NULL, NULL), TFREC_E_IMAGE);
    CHECKF(strstr(tfrec_last_errmsg(), "pixel limit") != NULL, "msg: %s", tfrec_last_errmsg());
    CHECK(out == NULL);
    free(p);
    free(j);
}

/* ------------------------------------------------------------ PNG */

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static size_t put_chunk(uint8_t *out, const char *type, const uint8_t *data, uint32_t n)
{
    put_be32(out, n);
    memcpy(out + 4, type, 4);
    if (n)
        memcpy(out + 8, data, n);
    put_be32(out + 8 + n, (uint32_t)crc32(0, out + 4, 4 + n));
    return 12 + (size_t)n;
}

/* An 8-bit RGB PNG declaring w x h whose IDAT holds `rows` rows of noisy
 * filtered data (a valid but unfinished zlib stream). */
static uint8_t *make_short_png(uint32_t w, uint32_t h, uint32_t rows, size_t *len)
{
    size_t stride = 1 + (size_t)w * 3, raw_len = stride * rows;
    uint8_t *raw = calloc(1, raw_len + 1);
    for (uint32_t y = 0; y < rows; y++)
        harness_random(raw + y * stride + 1, stride - 1, y + 7u); /* filter 0 */
    uLongf zlen = compressBound(raw_len);
    uint8_t *z = malloc(zlen);
    z_stream s;
    memset(&s, 0, sizeof s);
    deflateInit(&s, 6);
    s.next_in = raw;
    s.avail_in = (uInt)raw_len;
    s.next_out = z;
    s.avail_out = (uInt)zlen;
    deflate(&s, Z_SYNC_FLUSH); /* no final block: the stream just stops */
    zlen = s.total_out;
    deflateEnd(&s);
    uint8_t *out = malloc(8 + 25 + 12 + zlen + 12);
    memcpy(out, "\x89PNG\r\n\x1a\n", 8);
    uint8_t ihdr[13] = { 0 };
    put_be32(ihdr, w);
    put_be32(ihdr + 4, h);
    ihdr[8] = 8; /* bit depth */
    ihdr[9] = 2; /* RGB */
    size_t p = 8;
    p += put_chunk(out + p, "IHDR", ihdr, 13);
    p += put_chunk(out + p, "IDAT", z, (uint32_t)zlen);
    p += put_chunk(out + p, "IEND", NULL, 0);
    free(z);
    free(raw);
    *len = p;
    return out;
}

static int png_counted(const uint8_t *p, size_t n, uint64_t max_pixels, const char *want)
{
    tfrec_image_normalize_options o = TFREC_IMAGE_NORMALIZE_OPTIONS_INIT;
    o.max_pixels = max_pixels;
    uint8_t *out = NULL;
    size_t out_len = 0;
    memset(tfrec_img_work(), 0, sizeof(img_work));
    int rc = tfrec_image_normalize(p, n, &o, &out, &out_len, NULL, NULL);
    tfrec_free(out);
    if (rc == TFREC_E_IMAGE && want && !strstr(tfrec_last_errmsg(), want)) {
        fprintf(stderr, "message \"%s\" lacks \"%s\"\n", tfrec_last_errmsg(), want);
        return -1000;
    }
    return rc;
}

/* The finding: IHDR 65500x2732 with a few bytes of data made the decoder
 * allocate 512 MiB before reading any of it. */
static void test_png_header_bomb(void)
{
    size_t n;
    uint8_t *p = make_short_png(65500, 2732, 1, &n);
    CHECK(n < 200 * 1024);
    /* the pixel limit (179 M pixels) */
    CHECK_EQ(png_counted(p, n, 0, "pixel limit"), TFREC_E_IMAGE);
    CHECK_EQ(tfrec_img_work()->png_bytes, 0);
    /* without it: the data cannot hold the image (deflate expands 1032x at most) */
    CHECK_EQ(png_counted(p, n, UINT64_MAX, "too short"), TFREC_E_IMAGE);
    CHECK_EQ(tfrec_img_work()->png_bytes, 0);
    CHECK_EQ(tfrec_image_verify(p, n, TFREC_VERIFY_HEADER, NULL), TFREC_E_IMAGE);
    free(p);
}

/* Enough data to be plausible, but it stops after 40 of 3000 rows: memory
 * follows the rows decoded, not the header. */
static void test_png_grows_with_rows(void)
{
    size_t n;
    uint8_t *p = make_short_png(3000, 3000, 40, &n);
    CHECK(n * 1032 > (size_t)3000 * 3000 * 3);
    CHECK_EQ(png_counted(p, n, 0, NULL), TFREC_E_IMAGE);
    CHECKF(tfrec_img_work()->png_rows <= 40, "%llu rows",
           (unsigned long long)tfrec_img_work()->png_rows);
    CHECKF(tfrec_img_work()->png_bytes <= (size_t)2 * 64 * 9000, "%llu bytes allocated",
           (unsigned long long)tfrec_img_work()->png_bytes);
    free(p);
    /* the same file complete decodes, rows and all */
    p = make_short_png(300, 200, 200, &n);
    CHECK_EQ(png_counted(p, n, 0, NULL), TFREC_E_IMAGE); /* stream never finished */
    free(p);
    p = make_png(300, 200, 0, &n);
    CHECK_EQ(png_counted(p, n, 0, NULL), TFREC_OK);
    CHECK_EQ(tfrec_img_work()->png_rows, 200);
    CHECK(tfrec_img_work()->png_bytes >= (size_t)300 * 3 * 200);
    free(p);
}

TESTS(TEST(test_probe_baseline_rgb), TEST(test_probe_progressive_and_gray),
      TEST(test_probe_cmyk_ycck_png), TEST(test_not_images), TEST(test_truncated_fails_every_level),
      TEST(test_cut_scan_with_eoi_needs_decode), TEST(test_rgb_kept_unchanged),
      TEST(test_gray_kept_or_converted), TEST(test_cmyk_to_rgb), TEST(test_ycck_to_rgb),
      TEST(test_png_to_rgb_jpeg), TEST(test_restart_markers), TEST(test_one_pixel),
      TEST(test_names), TEST(test_hostile_inputs_never_crash), TEST(test_arith_header_bomb),
      TEST(test_progressive_empty_scans), TEST(test_truncated_huffman_scan),
      TEST(test_truncated_arith_scan), TEST(test_flat_huffman_images_pass), TEST(test_pixel_limit),
      TEST(test_png_header_bomb), TEST(test_png_grows_with_rows))

/* The strict tar reader on archives built here block by block, so each
 * header field the reader checks can be set to exactly the bad value. */
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "tar/tar.h"

#define MAXB 16

typedef struct arch {
    uint8_t b[MAXB * 512];
    size_t len;
} arch;

static void seal(uint8_t *h)
{
    memset(h + 148, ' ', 8);
    unsigned sum = 0;
    for (int i = 0; i < 512; i++)
        sum += h[i];
    snprintf((char *)h + 148, 8, "%06o", sum);
}

/* A ustar header plus data (padded); returns the header's offset. */
static size_t add(arch *a, const char *name, char type, const char *data, size_t n)
{
    size_t at = a->len;
    uint8_t *h = a->b + at;
    memset(h, 0, 512);
    memcpy(h, name, strlen(name));
    snprintf((char *)h + 124, 12, "%011zo", n);
    h[156] = (uint8_t)type;
    memcpy(h + 257,
           "ustar\0"
           "00",
           8);
    seal(h);
    if (n)
        memcpy(h + 512, data, n);
    a->len += 512 + (n + 511) / 512 * 512;
    return at;
}

static void finish(arch *a)
{
    memset(a->b + a->len, 0, 1024);
    a->len += 1024;
}

static int walk(const arch *a, size_t len, int *members, tfrec_err *err)
{
    tfrec_tar t;
    tfrec_tar_open_mem(&t, a->b, 0, len);
    tfrec_tar_entry e;
    int rc;
    *members = 0;
    while ((rc = tfrec_tar_next(&t, &e, err)) == 1)
        (*members)++;
    tfrec_tar_close(&t);
    return rc;
}

static void test_members_offsets_and_end(void)
{
    static arch a;
    memset(&a, 0, sizeof a);
    add(&a, "a.JPEG", '0', "hello", 5);
    add(&a, "dir", '5', NULL, 0);
    add(&a, "b.JPEG", '0', "x", 1);
    finish(&a);
    tfrec_tar t;
    tfrec_tar_open_mem(&t, a.b, 0, a.len);
    tfrec_tar_entry e;
    tfrec_err err = { 0 };
    CHECK_EQ(tfrec_tar_next(&t, &e, &err), 1);
    CHECK(!strcmp(e.name, "a.JPEG") && e.size == 5 && e.offset == 512 && e.type == TFREC_TAR_FILE);
    CHECK_EQ(tfrec_tar_next(&t, &e, &err), 1);
    CHECK(e.type == TFREC_TAR_DIR);
    CHECK_EQ(tfrec_tar_next(&t, &e, &err), 1);
    CHECK(!strcmp(e.name, "b.JPEG") && e.offset == 4 * 512 && e.header == 3 * 512);
    CHECK_EQ(tfrec_tar_next(&t, &e, &err), 0);
    CHECK_EQ(tfrec_tar_next(&t, &e, &err), 0); /* stays at the end */
    tfrec_tar_close(&t);
}

/* The same archive through a seekable source (e.g. an object in a bucket):
 * the same members, and a source cut short is an I/O error. */
static void test_members_through_a_source(void)
{
    static arch a;
    memset(&a, 0, sizeof a);
    add(&a, "a.JPEG", '0', "hello", 5);
    add(&a, "b.JPEG", '0', "x", 1);
    finish(&a);
    tfrec_io io = TFREC_IO_INIT;
    CHECK_EQ(tfrec_io_open_memory(&io, a.b, a.len), TFREC_OK);
    tfrec_tar t;
    tfrec_tar_open_io(&t, &io, 0, a.len);
    tfrec_tar_entry e;
    tfrec_err err = { 0 };
    CHECK_EQ(tfrec_tar_next(&t, &e, &err), 1);
    CHECK(!strcmp(e.name, "a.JPEG") && e.size == 5 && e.offset == 512);
    char buf[5];
    CHECK_EQ(tfrec_tar_pread(&t, buf, 5, e.offset), 0);
    CHECK(memcmp(buf, "hello", 5) == 0);
    CHECK_EQ(tfrec_tar_next(&t, &e, &err), 1);
    CHECK(!strcmp(e.name, "b.JPEG") && e.offset == 3 * 512);
    CHECK_EQ(tfrec_tar_next(&t, &e, &err), 0);
    tfrec_tar_close(&t);
    io.close(io.ctx, 0);
    /* The source holds less than the archive claims. */
    CHECK_EQ(tfrec_io_open_memory(&io, a.b, 2 * 512), TFREC_OK);
    tfrec_tar_open_io(&t, &io, 0, a.len);
    CHECK_EQ(tfrec_tar_next(&t, &e, &err), 1);
    CHECK_EQ(tfrec_tar_next(&t, &e, &err), TFREC_E_IO);
    CHECKF(strstr(err.msg, "offset 1024"), "%s", err.msg);
    tfrec_tar_close(&t);
    io.close(io.ctx, 0);
}

static void test_bad_checksum_names_offset_and_previous_member(void)
{
    static arch a;
    memset(&a, 0, sizeof a);
    add(&a, "a.JPEG", '0', "hello", 5);
    size_t at = add(&a, "b.JPEG", '0', "x", 1);
    finish(&a);
    a.b[at + 1] ^= 1;
    tfrec_err err = { 0 };
    int n;
    CHECK_EQ(walk(&a, a.len, &n, &err), TFREC_E_PARSE);
    CHECK_EQ(n, 1);
    CHECKF(strstr(err.msg, "bad header checksum at offset 1024 (after member 'a.JPEG')"), "%s",
           err.msg);
}

static void test_size_past_the_end_and_missing_marker(void)
{
    static arch a;
    memset(&a, 0, sizeof a);
    size_t at = add(&a, "a.JPEG", '0', "hello", 5);
    finish(&a);
    tfrec_err err = { 0 };
    int n;
    /* Declares more than the archive holds: refused before any read. */
    snprintf((char *)a.b + at + 124, 12, "%011o", 0777777u);
    seal(a.b + at);
    CHECK_EQ(walk(&a, a.len, &n, &err), TFREC_E_TRUNCATED);
    CHECKF(strstr(err.msg, "member 'a.JPEG' declares 262143 bytes but 1536 remain"), "%s", err.msg);
    /* Base-256 size beyond 2^62: refused as a bad field. */
    memset(a.b + at + 124, 0, 12);
    a.b[at + 124] = 0x80;
    a.b[at + 127] = 0x7f;
    seal(a.b + at);
    CHECK_EQ(walk(&a, a.len, &n, &err), TFREC_E_PARSE);
    /* Whole member, then nothing: no end-of-archive marker. */
    snprintf((char *)a.b + at + 124, 12, "%011o", 5u);
    seal(a.b + at);
    CHECK_EQ(walk(&a, 1024, &n, &err), TFREC_E_TRUNCATED);
    CHECK_EQ(n, 1);
    CHECKF(strstr(err.msg, "no end-of-archive marker"), "%s", err.msg);
    CHECK_EQ(walk(&a, 1024 + 100, &n, &err), TFREC_E_TRUNCATED);
    CHECKF(strstr(err.msg, "header cut"), "%s", err.msg);
}

/* Found by fuzz_tar: an extended header whose data fits but whose padding
 * does not moved the reader past the end of the archive. */
static void test_extended_header_padding_past_the_end(void)
{
    static arch a;
    memset(&a, 0, sizeof a);
    add(&a, "pax", 'x', "10 path=a\n", 10);
    tfrec_err err = { 0 };
    int n;
    CHECK_EQ(walk(&a, 512 + 10, &n, &err), TFREC_E_TRUNCATED);
    CHECKF(strstr(err.msg, "extended header cut"), "%s", err.msg);
}

static void test_not_a_tar_and_gnu_long_names(void)
{
    static arch a;
    memset(&a, 0, sizeof a);
    memcpy(a.b, "<html>", 6);
    tfrec_err err = { 0 };
    int n;
    CHECK_EQ(walk(&a, 1024, &n, &err), TFREC_E_PARSE);
    CHECKF(strstr(err.msg, "not a tar archive"), "%s", err.msg);
    memset(&a, 0, sizeof a);
    char longname[300];
    memset(longname, 'q', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    size_t at = add(&a, "././@LongLink", 'L', longname, sizeof longname);
    memcpy(a.b + at + 257, "ustar  \0", 8); /* GNU magic */
    seal(a.b + at);
    add(&a, "qqq", '0', "z", 1);
    finish(&a);
    tfrec_tar t;
    tfrec_tar_open_mem(&t, a.b, 0, a.len);
    tfrec_tar_entry e;
    CHECK_EQ(tfrec_tar_next(&t, &e, &err), 1);
    CHECK_EQ(strlen(e.name), sizeof longname - 1);
    CHECK(e.header == 0 && e.offset == at + 512 + 512 + 512);
    tfrec_tar_close(&t);
}

static void test_flat_names(void)
{
    const char *why = NULL;
    CHECK(!strcmp(tfrec_tar_flat_name("./a.JPEG", &why), "a.JPEG"));
    CHECK(tfrec_tar_flat_name("../a.JPEG", &why) == NULL && strstr(why, "traversal"));
    CHECK(tfrec_tar_flat_name("x/../../a", &why) == NULL && strstr(why, "traversal"));
    CHECK(tfrec_tar_flat_name("/etc/a", &why) == NULL && strstr(why, "absolute"));
    CHECK(tfrec_tar_flat_name("d/a.JPEG", &why) == NULL && strstr(why, "directory"));
    CHECK(tfrec_tar_flat_name("./", &why) == NULL);
}

TESTS(TEST(test_members_offsets_and_end), TEST(test_members_through_a_source),
      TEST(test_bad_checksum_names_offset_and_previous_member),
      TEST(test_size_past_the_end_and_missing_marker),
      TEST(test_extended_header_padding_past_the_end), TEST(test_not_a_tar_and_gnu_long_names),
      TEST(test_flat_names))

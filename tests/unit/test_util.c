/* lib/util: growable arrays, string lists, I/O error messages. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "tfrec/config.h"
#include "util/config.h"
#include "util/ioerr.h"
#include "util/loopback.h"
#include "util/strlist.h"
#include "util/vec.h"

/* ------------------------------------------------------------------ vec */

static void test_vec_reserve_doubles_from_first(void)
{
    int *v = NULL;
    size_t cap = 0;
    CHECK_EQ(tfrec_vec_reserve(&v, &cap, 1, 16), TFREC_OK);
    CHECK_EQ(cap, 16);
    CHECK_EQ(tfrec_vec_reserve(&v, &cap, 16, 16), TFREC_OK);
    CHECK_EQ(cap, 16); /* fits: unchanged */
    CHECK_EQ(tfrec_vec_reserve(&v, &cap, 17, 16), TFREC_OK);
    CHECK_EQ(cap, 32);
    CHECK_EQ(tfrec_vec_reserve(&v, &cap, 100, 16), TFREC_OK);
    CHECK_EQ(cap, 128);
    for (int i = 0; i < 100; i++)
        v[i] = i; /* the room is really there (ASan would say otherwise) */
    CHECK_EQ(v[99], 99);
    free(v);
}

static void test_vec_overflow_is_nomem_and_keeps_the_array(void)
{
    uint64_t *v = NULL;
    size_t cap = 0;
    CHECK_EQ(tfrec_vec_reserve(&v, &cap, 4, 4), TFREC_OK);
    v[3] = 77;
    uint64_t *before = v;
    CHECK_EQ(tfrec_vec_reserve(&v, &cap, SIZE_MAX / 4, 4), TFREC_E_NOMEM);
    CHECK_EQ(tfrec_vec_reserve(&v, &cap, SIZE_MAX, 4), TFREC_E_NOMEM);
    CHECK_EQ(tfrec_vec_fit(&v, &cap, SIZE_MAX / 2), TFREC_E_NOMEM);
    CHECK_EQ(tfrec_vec_resize(&v, &cap, SIZE_MAX / 8 + 1), TFREC_E_NOMEM);
    CHECK(v == before);
    CHECK_EQ(cap, 4);
    CHECK_EQ(v[3], 77);
    free(v);
}

static void test_vec_fit_adds_a_quarter_and_resize_is_exact(void)
{
    char *b = NULL;
    size_t cap = 0;
    CHECK_EQ(tfrec_vec_fit(&b, &cap, 1000), TFREC_OK);
    CHECK_EQ(cap, 1250);
    CHECK_EQ(tfrec_vec_fit(&b, &cap, 1200), TFREC_OK);
    CHECK_EQ(cap, 1250);
    CHECK_EQ(tfrec_vec_fit(&b, &cap, 1251), TFREC_OK);
    CHECK_EQ(cap, 1251 + 312);
    memset(b, 'x', cap);
    CHECK_EQ(tfrec_vec_resize(&b, &cap, 10), TFREC_OK);
    CHECK_EQ(cap, 10);
    CHECK_EQ(b[9], 'x'); /* shrinking keeps the start */
    free(b);
}

/* -------------------------------------------------------------- strlist */

static void test_strlist_sorts_bytewise_and_owns_its_strings(void)
{
    tfrec_strlist l = { 0 };
    const char *in[] = { "b", "\xc3\xa9", "B", "a", "", "ab", "\x7f" };
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++)
        CHECK_EQ(tfrec_strlist_add(&l, in[i]), TFREC_OK);
    CHECK_EQ(tfrec_strlist_add_n(&l, "zzzz", 2), TFREC_OK);
    CHECK(tfrec_strlist_take(&l, NULL) == NULL);
    CHECK_EQ(l.n, 8);
    tfrec_strlist_sort(&l);
    /* unsigned byte order: "" < "B" < "a" < "ab" < "b" < "zz" < DEL < U+00E9 */
    const char *want[] = { "", "B", "a", "ab", "b", "zz", "\x7f", "\xc3\xa9" };
    for (size_t i = 0; i < 8; i++)
        CHECKF(!strcmp(l.v[i], want[i]), "position %zu: %s", i, l.v[i]);
    tfrec_strlist_free(&l);
    CHECK(l.v == NULL && l.n == 0 && l.cap == 0);
}

static void test_strlist_move_all_and_release(void)
{
    tfrec_strlist a = { 0 }, b = { 0 };
    for (int i = 0; i < 100; i++) {
        char s[16];
        snprintf(s, sizeof s, "s%03d", i);
        CHECK_EQ(tfrec_strlist_add(i < 30 ? &a : &b, s), TFREC_OK);
    }
    char *first_of_b = b.v[0];
    CHECK_EQ(tfrec_strlist_move_all(&a, &b), TFREC_OK);
    CHECK_EQ(a.n, 100);
    CHECK(b.n == 0 && b.v == NULL);
    CHECK(a.v[30] == first_of_b); /* moved, not copied */
    CHECK(!strcmp(a.v[99], "s099"));
    size_t n;
    char **v = tfrec_strlist_release(&a, &n);
    CHECK_EQ(n, 100);
    CHECK(a.n == 0 && a.v == NULL);
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
    CHECK(tfrec_strlist_release(&b, &n) == NULL && n == 0);
}

/* ---------------------------------------------------------------- ioerr */

static void test_errno_message_shape(void)
{
    char buf[256];
    tfrec_errno_msg(buf, sizeof buf, ENOENT, "dir/x.bin", "cannot open");
    CHECKF(!strcmp(buf, "dir/x.bin: cannot open: No such file or directory (errno 2)"), "%s", buf);
    tfrec_errno_msg(buf, sizeof buf, EIO, NULL, "read failed at offset %d", 12);
    CHECKF(!strcmp(buf, "read failed at offset 12: Input/output error (errno 5)"), "%s", buf);
    char small[12];
    tfrec_errno_msg(small, sizeof small, ENOENT, "a-long-path", "cannot open");
    CHECK_EQ(strlen(small), sizeof small - 1); /* cut, still terminated */
    tfrec_err err = { 0 };
    CHECK_EQ(tfrec_fail_errno(&err, tfrec_errno_code(ENOENT), ENOENT, "p", "cannot stat"),
             TFREC_E_NOT_FOUND);
    CHECK_EQ(err.code, TFREC_E_NOT_FOUND);
    CHECK(!strcmp(err.msg, "p: cannot stat: No such file or directory (errno 2)"));
    CHECK(!strcmp(tfrec_last_errmsg(), err.msg));
    CHECK_EQ(tfrec_errno_code(EACCES), TFREC_E_IO);
}

/* One loopback rule for both parts: the host is parsed, never matched by
 * prefix (issue 22, #9). */
static void test_loopback_rule(void)
{
    static const char *const yes[] = {
        "localhost", "LocalHost:80", "127.0.0.1", "127.0.0.1:8086",     "127.255.0.9:1",
        "[::1]:443", "::1",          "[::1]",     "[0:0:0:0:0:0:0:1]:1"
    };
    static const char *const no[] = { "localhostile.com:443",
                                      "127.evil.example:443",
                                      "localhost.:1",
                                      "localhost.example.com",
                                      "127.0.0.1.nip.io",
                                      "127.1:80",
                                      "128.0.0.1",
                                      "[::2]:1",
                                      "::",
                                      "",
                                      "[::1",
                                      "x127.0.0.1",
                                      "0x7f.0.0.1:1",
                                      "unix:/tmp/s" };
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        CHECKF(tfrec_hostport_is_loopback(yes[i]), "%s should be loopback", yes[i]);
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        CHECKF(!tfrec_hostport_is_loopback(no[i]), "%s should not be loopback", no[i]);
}

/* Settings: a set value wins over the environment, "" unsets, NULL
 * forgets, and the environment can be switched off. */
static void test_config_table(void)
{
    char buf[64];
    setenv("TFREC_BT_POLLERS", "3", 1);
    CHECK_EQ(tfrec_config_get("TFREC_BT_POLLERS", buf, sizeof buf), TFREC_OK);
    CHECK(strcmp(buf, "3") == 0);
    CHECK_EQ(tfrec_config_set("TFREC_BT_POLLERS", "5"), TFREC_OK);
    long v = 0;
    CHECK_EQ(tfrec_cfg_int(TFREC_CFG_BT_POLLERS, &v), 1);
    CHECK_EQ(v, 5);
    CHECK_EQ(tfrec_config_set("TFREC_BT_POLLERS", ""), TFREC_OK);
    CHECK_EQ(tfrec_config_get("TFREC_BT_POLLERS", buf, sizeof buf), TFREC_E_NOT_FOUND);
    CHECK_EQ(tfrec_config_set("TFREC_BT_POLLERS", NULL), TFREC_OK);
    CHECK_EQ(tfrec_cfg_int(TFREC_CFG_BT_POLLERS, &v), 1);
    CHECK_EQ(v, 3);
    tfrec_config_use_environment(0);
    CHECK_EQ(tfrec_cfg(TFREC_CFG_BT_POLLERS, buf, sizeof buf), 0);
    tfrec_config_use_environment(1);
    setenv("TFREC_BT_POLLERS", "three", 1);
    CHECK_EQ(tfrec_cfg_int(TFREC_CFG_BT_POLLERS, &v), -1);
    unsetenv("TFREC_BT_POLLERS");
    CHECK_EQ(tfrec_config_set("NO_SUCH_SETTING", "1"), TFREC_E_INVALID);
    CHECK(strstr(tfrec_last_errmsg(), "NO_SUCH_SETTING"));
    CHECK_EQ(tfrec_config_get("TFREC_BT_POLLERS", buf, 0), TFREC_E_INVALID);
    /* Every entry has a name and a description; names are unique. */
    const char *doc = NULL, *name;
    size_t n = 0;
    for (; (name = tfrec_config_name(n, &doc)); n++) {
        CHECKF(*name && doc && *doc, "entry %zu", n);
        for (size_t k = 0; k < n; k++)
            CHECK(strcmp(tfrec_config_name(k, NULL), name) != 0);
    }
    CHECK_EQ(n, TFREC_CFG_COUNT);
}

TESTS(TEST(test_loopback_rule), TEST(test_config_table), TEST(test_vec_reserve_doubles_from_first),
      TEST(test_vec_overflow_is_nomem_and_keeps_the_array),
      TEST(test_vec_fit_adds_a_quarter_and_resize_is_exact),
      TEST(test_strlist_sorts_bytewise_and_owns_its_strings),
      TEST(test_strlist_move_all_and_release), TEST(test_errno_message_shape))

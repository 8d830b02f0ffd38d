/* The JSON reader (lib/util/json_read.h): strict syntax with the byte
 * offset of every error, the caller's bounds, escapes and surrogates,
 * integers only when exact, and a tree written back unchanged. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "tfrec/error.h"
#include "util/json_read.h"

static const tfrec_json_limits strict = { 1u << 20, 32, 100000, 0 };
static const tfrec_json_limits ours = { 1u << 20, 32, 100000, 1 };

static int parse(const char *text, const tfrec_json_limits *lim, tfrec_json_value **v, char *why,
                 size_t whycap)
{
    return tfrec_json_parse(text, strlen(text), lim, v, why, whycap);
}

static void test_refuses_what_rfc8259_does_not_allow(void)
{
    static const char *const bad[] = {
        "",
        "{",
        "{\"a\":}",
        "[1,]",
        "{\"a\":1,}",
        "{'a':1}",
        "{\"a\" 1}",
        "[01]",
        "[1.]",
        "01",
        "[-]",
        "1e",
        "\"\\x\"",
        "\"\\ud800\"",
        "\"\\udc00\"",
        "\"\\ud800\\u0041\"",
        "\"\\u12\"",
        "\"a\nb\"",
        "\"\x01\"",
        "[1] x",
        "[1] 2",
        "tru",
        "nul",
        "\"unterminated",
        "\"\\",
        "{\"a\":1 /* c */}",
        "\"\\u0000\"",
        "{1:2}",
    };
    const tfrec_json_limits *lims[] = { &strict, &ours };
    for (size_t l = 0; l < 2; l++)
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
            tfrec_json_value *v = (tfrec_json_value *)1;
            char why[128] = "";
            CHECKF(parse(bad[i], lims[l], &v, why, sizeof why) == TFREC_E_PARSE, "accepted '%s'",
                   bad[i]);
            CHECK(v == NULL);
            CHECKF(strstr(why, " at byte ") != NULL, "'%s': %s", bad[i], why);
        }
}

static void test_messages_name_the_offset_and_the_bracket(void)
{
    static const struct {
        const char *text, *why;
    } cases[] = {
        { "{\"a\":[1, ", "unexpected end in the '[' of byte 5 at byte 9" },
        { "{\"a\":[1, 2", "expected ',' or ']' (for the '[' of byte 5) at byte 10" },
        { "[-x]", "bad number at byte 2" },
        { "[x]", "unexpected character at byte 1" },
        { "{\"a\":1 \"b\"}", "expected ',' or '}' (for the '{' of byte 0) at byte 7" },
        { "[\"ok\", \"\\q\"]", "bad escape at byte 9" },
        { "{} {}", "text after the object at byte 3" },
        { "[] 1", "text after the value at byte 3" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tfrec_json_value *v;
        char why[128];
        CHECK_EQ(parse(cases[i].text, &strict, &v, why, sizeof why), TFREC_E_PARSE);
        CHECKF(!strcmp(why, cases[i].why), "%s: got '%s', want '%s'", cases[i].text, why,
               cases[i].why);
    }
}

static void test_bounds(void)
{
    tfrec_json_value *v;
    char why[128];
    /* Nesting: exactly max_depth arrays pass, one more does not. */
    char deep[2 * 33 + 1];
    for (unsigned d = 32; d <= 33; d++) {
        memset(deep, '[', d);
        memset(deep + d, ']', d);
        deep[2 * d] = '\0';
        int rc = parse(deep, &strict, &v, why, sizeof why);
        if (d == 32) {
            CHECK_EQ(rc, TFREC_OK);
            tfrec_json_value_free(v);
        } else {
            CHECK_EQ(rc, TFREC_E_PARSE);
            CHECKF(strstr(why, "nested too deeply at byte 32") != NULL, "%s", why);
        }
    }
    /* Values: the array and its elements count. */
    const tfrec_json_limits three = { 100, 8, 3, 0 };
    CHECK_EQ(parse("[1,2]", &three, &v, why, sizeof why), TFREC_OK);
    tfrec_json_value_free(v);
    CHECK_EQ(parse("[1,2,3]", &three, &v, why, sizeof why), TFREC_E_PARSE);
    CHECKF(strstr(why, "too many values") != NULL, "%s", why);
    /* Size: refused before reading. */
    const tfrec_json_limits small = { 4, 8, 100, 0 };
    CHECK_EQ(parse("1234", &small, &v, why, sizeof why), TFREC_OK);
    tfrec_json_value_free(v);
    CHECK_EQ(parse("12345", &small, &v, why, sizeof why), TFREC_E_PARSE);
    CHECKF(!strcmp(why, "5 bytes of JSON is over the 4-byte limit"), "%s", why);
}

static void test_strings_decode(void)
{
    tfrec_json_value *v;
    char why[128];
    const char *text = "{\"s\":\"a\\/b \\u00e9\\ud83d\\ude00\\t\\\"\",\"k\\u0041\":1}";
    CHECK_EQ(parse(text, &strict, &v, why, sizeof why), TFREC_OK);
    CHECK(!strcmp(tfrec_json_member_str(v, "s"), "a/b \xc3\xa9\xf0\x9f\x98\x80\t\""));
    CHECK(tfrec_json_member(v, "kA") != NULL);
    CHECK(tfrec_json_member_str(v, "kA") == NULL); /* a number */
    CHECK(tfrec_json_member(v, "missing") == NULL);
    CHECK(tfrec_json_member(tfrec_json_member(v, "s"), "x") == NULL); /* not an object */
    tfrec_json_value_free(v);

    /* The writer's \udcXX bytes: only when asked for. */
    CHECK_EQ(parse("\"a\\udcffb\"", &strict, &v, why, sizeof why), TFREC_E_PARSE);
    CHECKF(strstr(why, "lone low surrogate") != NULL, "%s", why);
    CHECK_EQ(parse("\"a\\udcffb\"", &ours, &v, why, sizeof why), TFREC_OK);
    CHECK(v->type == TFREC_JSON_STR && v->slen == 3 &&
          !memcmp(v->str,
                  "a\xff"
                  "b",
                  3));
    tfrec_json_value_free(v);
    CHECK_EQ(parse("\"\\udc7f\"", &ours, &v, why, sizeof why), TFREC_E_PARSE);
}

static void test_integers_only_when_exact(void)
{
    const char *text = "{\"min\":\"-9223372036854775808\",\"max\":\"9223372036854775807\","
                       "\"over\":\"9223372036854775808\",\"neg\":-3600,\"exact\":9007199254740992,"
                       "\"inexact\":9007199254740994,\"frac\":1.5,\"minus\":\"-\",\"t\":true,"
                       "\"u\":\"18446744073709551615\",\"u_over\":\"18446744073709551616\","
                       "\"big\":18446744073709551615,\"e\":1e3}";
    tfrec_json_value *doc;
    char why[128];
    CHECK_EQ(parse(text, &strict, &doc, why, sizeof why), TFREC_OK);
    int64_t v;
    CHECK(tfrec_json_member_i64(doc, "min", &v) == 0 && v == INT64_MIN);
    CHECK(tfrec_json_member_i64(doc, "max", &v) == 0 && v == INT64_MAX);
    CHECK(tfrec_json_member_i64(doc, "neg", &v) == 0 && v == -3600);
    CHECK(tfrec_json_member_i64(doc, "exact", &v) == 0 && v == 9007199254740992);
    CHECK(tfrec_json_member_i64(doc, "e", &v) == 0 && v == 1000);
    CHECK_EQ(tfrec_json_member_i64(doc, "over", &v), -1);
    CHECK_EQ(tfrec_json_member_i64(doc, "inexact", &v), -1); /* past 2^53 a double is not exact */
    CHECK_EQ(tfrec_json_member_i64(doc, "frac", &v), -1);
    CHECK_EQ(tfrec_json_member_i64(doc, "minus", &v), -1);
    CHECK_EQ(tfrec_json_member_i64(doc, "t", &v), -1);
    CHECK_EQ(tfrec_json_member_i64(doc, "missing", &v), -1);
    uint64_t u;
    CHECK(tfrec_json_member_u64(doc, "u", &u) == 0 && u == UINT64_MAX);
    CHECK_EQ(tfrec_json_member_u64(doc, "u_over", &u), -1);
    CHECK_EQ(tfrec_json_member_u64(doc, "big", &u), -1);
    CHECK_EQ(tfrec_json_member_u64(doc, "neg", &u), -1); /* no sign for unsigned values */
    CHECK_EQ(tfrec_json_member_u64(doc, "min", &u), -1);
    tfrec_json_value_free(doc);
}

static void test_emit_writes_back_what_was_read(void)
{
    const char *text = "{\"p\":\"a\\udcffb\\u00e9\\ud83d\\ude00\",\"n\":18446744073709551615,"
                       "\"m\":-3,\"s\":1.250,\"t\":[true,false,null,{}]}";
    tfrec_json_value *v;
    char why[128];
    CHECK_EQ(parse(text, &ours, &v, why, sizeof why), TFREC_OK);
    tfrec_json j;
    tfrec_json_init(&j, NULL);
    tfrec_json_emit(&j, v);
    char *back = tfrec_json_take(&j);
    CHECKF(back && !strcmp(back, "{\"p\":\"a\\udcffb\xc3\xa9\xf0\x9f\x98\x80\",\"n\":"
                                 "18446744073709551615,\"m\":-3,\"s\":1.250,\"t\":[true,"
                                 "false,null,{}]}"),
           "%s", back);
    free(back);
    tfrec_json_value_free(v);
}

TESTS(TEST(test_refuses_what_rfc8259_does_not_allow),
      TEST(test_messages_name_the_offset_and_the_bracket), TEST(test_bounds),
      TEST(test_strings_decode), TEST(test_integers_only_when_exact),
      TEST(test_emit_writes_back_what_was_read))

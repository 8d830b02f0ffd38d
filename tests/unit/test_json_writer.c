/* The JSON writer (lib/util/json_writer.h): escaping of every kind of byte
 * string, checked exactly and by a round trip through a decoder written
 * here; structure, numbers, base64, stream output. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "util/json_writer.h"

/* The JSON text of one string value. */
static char *json_of(const char *s, size_t len)
{
    tfrec_json j;
    tfrec_json_init(&j, NULL);
    tfrec_json_str_n(&j, s, len);
    return tfrec_json_take(&j);
}

#define CHECK_JSON(in, want)                                                         \
    do {                                                                             \
        char *got_ = json_of(in, sizeof(in) - 1);                                    \
        CHECKF(got_ && !strcmp(got_, want), "%s: got %s, want %s", #in, got_, want); \
        free(got_);                                                                  \
    } while (0)

static void test_json_valid_utf8_passes_through(void)
{
    CHECK_JSON("plain ascii", "\"plain ascii\"");
    /* 2, 3 and 4 byte forms, the edges of each, and U+10FFFF */
    CHECK_JSON("\xc2\x80 \xc3\xa9 \xdf\xbf", "\"\xc2\x80 \xc3\xa9 \xdf\xbf\"");
    CHECK_JSON("\xe0\xa0\x80 \xe2\x82\xac \xed\x9f\xbf \xee\x80\x80 \xef\xbf\xbf",
               "\"\xe0\xa0\x80 \xe2\x82\xac \xed\x9f\xbf \xee\x80\x80 \xef\xbf\xbf\"");
    CHECK_JSON("\xf0\x90\x80\x80 \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf",
               "\"\xf0\x90\x80\x80 \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf\"");
}

static void test_json_invalid_bytes_become_dc_escapes(void)
{
    CHECK_JSON("\xff\xfe.JPEG", "\"\\udcff\\udcfe.JPEG\"");
    CHECK_JSON("a\x80z", "\"a\\udc80z\"");                              /* stray continuation */
    CHECK_JSON("\xf5\x80\x80\x80", "\"\\udcf5\\udc80\\udc80\\udc80\""); /* F5: never valid */
    CHECK_JSON("caf\xe9", "\"caf\\udce9\"");                            /* Latin-1 */
}

static void test_json_overlong_forms_are_escaped(void)
{
    CHECK_JSON("\xc0\xaf", "\"\\udcc0\\udcaf\""); /* '/' in 2 bytes */
    CHECK_JSON("\xc1\xbf", "\"\\udcc1\\udcbf\"");
    CHECK_JSON("\xe0\x80\xaf", "\"\\udce0\\udc80\\udcaf\"");            /* 3 bytes */
    CHECK_JSON("\xe0\x9f\xbf", "\"\\udce0\\udc9f\\udcbf\"");            /* U+07FF in 3 */
    CHECK_JSON("\xf0\x8f\xbf\xbf", "\"\\udcf0\\udc8f\\udcbf\\udcbf\""); /* U+FFFF in 4 */
}

static void test_json_encoded_surrogates_and_beyond_10ffff_are_escaped(void)
{
    CHECK_JSON("\xed\xa0\x80", "\"\\udced\\udca0\\udc80\""); /* U+D800 */
    CHECK_JSON("\xed\xbf\xbf", "\"\\udced\\udcbf\\udcbf\""); /* U+DFFF */
    /* a surrogate pair encoded as two 3-byte forms (CESU-8) */
    CHECK_JSON("\xed\xa0\xbd\xed\xb8\x80", "\"\\udced\\udca0\\udcbd\\udced\\udcb8\\udc80\"");
    CHECK_JSON("\xf4\x90\x80\x80", "\"\\udcf4\\udc90\\udc80\\udc80\""); /* U+110000 */
}

static void test_json_truncated_sequences_are_escaped(void)
{
    CHECK_JSON("a\xe2\x82", "\"a\\udce2\\udc82\"");    /* cut by the end */
    CHECK_JSON("\xe2\x82\x41", "\"\\udce2\\udc82A\""); /* cut by ASCII */
    CHECK_JSON("\xf0\x9f\x98", "\"\\udcf0\\udc9f\\udc98\"");
    CHECK_JSON("\xc3", "\"\\udcc3\"");
    CHECK_JSON("\xc3\xc3\xa9", "\"\\udcc3\xc3\xa9\""); /* a new lead restarts */
}

static void test_json_control_characters_and_quotes(void)
{
    CHECK_JSON("\"q\" \\ /", "\"\\\"q\\\" \\\\ /\"");
    CHECK_JSON("\b\f\n\r\t", "\"\\b\\f\\n\\r\\t\"");
    CHECK_JSON("\x01\x1f\x7f", "\"\\u0001\\u001f\\u007f\"");
    CHECK_JSON("a\0b", "\"a\\u0000b\"");
    CHECK_JSON("", "\"\"");
}

/* A decoder for what the writer produces: \\uDCXX gives the byte XX back. */
static size_t decode_json_string(const char *s, uint8_t *out)
{
    size_t n = 0;
    if (*s++ != '"')
        return (size_t)-1;
    while (*s && *s != '"') {
        if (*s != '\\') {
            out[n++] = (uint8_t)*s++;
            continue;
        }
        s++;
        switch (*s++) {
        case 'b': out[n++] = '\b'; break;
        case 'f': out[n++] = '\f'; break;
        case 'n': out[n++] = '\n'; break;
        case 'r': out[n++] = '\r'; break;
        case 't': out[n++] = '\t'; break;
        case 'u': {
            unsigned v;
            if (sscanf(s, "%4x", &v) != 1)
                return (size_t)-1;
            s += 4;
            if (v < 0x80 || (v >= 0xdc80 && v <= 0xdcff))
                out[n++] = (uint8_t)v; /* low byte is the original byte */
            else
                return (size_t)-1; /* the writer never writes other escapes */
            break;
        }
        default: out[n++] = (uint8_t)s[-1]; /* \" \\ */
        }
    }
    return *s == '"' && s[1] == '\0' ? n : (size_t)-1;
}

static void test_json_any_bytes_round_trip(void)
{
    uint8_t in[64], back[64];
    for (uint64_t seed = 1; seed <= 3000; seed++) {
        size_t len = (size_t)(seed % 64);
        harness_random(in, len, seed);
        if (seed % 3 == 0) /* mostly-text inputs hit more valid sequences */
            for (size_t i = 0; i < len; i++)
                in[i] = (uint8_t)(in[i] % 4 ? 0x61 + in[i] % 26 : in[i]);
        char *js = json_of((const char *)in, len);
        CHECK(js != NULL);
        CHECKF(tfrec_json_is_text(js, strlen(js)), "seed %llu: output is not printable UTF-8",
               (unsigned long long)seed);
        size_t n = decode_json_string(js, back);
        CHECKF(n == len && !memcmp(in, back, len), "seed %llu: %s", (unsigned long long)seed, js);
        free(js);
    }
}

static void test_json_structure_and_numbers(void)
{
    tfrec_json j;
    tfrec_json_init(&j, NULL);
    tfrec_json_object_begin(&j);
    tfrec_json_key(&j, "a");
    tfrec_json_array_begin(&j);
    tfrec_json_int(&j, INT64_MIN);
    tfrec_json_uint(&j, UINT64_MAX);
    tfrec_json_fixed(&j, 1.5, 3);
    tfrec_json_fixed(&j, NAN, 3);
    tfrec_json_fixed(&j, -7.5e60, 3); /* not 61 digits and a fraction */
    tfrec_json_float32(&j, 0.1f);
    tfrec_json_float32(&j, -INFINITY);
    tfrec_json_float32(&j, NAN);
    tfrec_json_bool(&j, 1);
    tfrec_json_null(&j);
    tfrec_json_str(&j, NULL);
    tfrec_json_array_end(&j);
    tfrec_json_key(&j, "k\xff");
    tfrec_json_object_begin(&j);
    tfrec_json_object_end(&j);
    tfrec_json_key(&j, "e");
    tfrec_json_array_begin(&j);
    tfrec_json_array_end(&j);
    tfrec_json_object_end(&j);
    tfrec_json_newline(&j);
    tfrec_json_bool(&j, 0); /* a second JSON Lines document: no comma */
    CHECK(!tfrec_json_failed(&j));
    char *s = tfrec_json_take(&j);
    const char *want = "{\"a\":[-9223372036854775808,18446744073709551615,1.500,null,-7.5e+60,0.1,"
                       "\"-Infinity\",\"NaN\",true,null,null],\"k\\udcff\":{},\"e\":[]}\nfalse";
    CHECKF(s && !strcmp(s, want), "got %s", s);
    free(s);
    CHECK(tfrec_json_take(&j) == NULL); /* empty after take */
}

static void test_json_float32_shortest_round_trip(void)
{
    /* The shortest %.Ng that reads back as the same float32. */
    const float in[] = { 1e-45f, 0.1f, 100.0f, 1.0f / 3, 3.4028235e38f, 16777216.0f, -2.5f };
    const char *want[] = {
        "1e-45", "0.1", "100", "0.33333334", "3.4028235e+38", "16777216", "-2.5"
    };
    for (int i = 0; i < 7; i++) {
        tfrec_json j;
        tfrec_json_init(&j, NULL);
        tfrec_json_float32(&j, in[i]);
        char *s = tfrec_json_take(&j);
        CHECKF(s && !strcmp(s, want[i]), "%s: got %s", want[i], s);
        free(s);
    }
}

static void test_json_base64_rfc4648_vectors(void)
{
    const char *in[] = { "", "f", "fo", "foo", "foob", "fooba", "foobar" };
    const char *want[] = { "\"\"",         "\"Zg==\"",     "\"Zm8=\"",    "\"Zm9v\"",
                           "\"Zm9vYg==\"", "\"Zm9vYmE=\"", "\"Zm9vYmFy\"" };
    for (int i = 0; i < 7; i++) {
        tfrec_json j;
        tfrec_json_init(&j, NULL);
        tfrec_json_base64(&j, in[i], strlen(in[i]));
        char *s = tfrec_json_take(&j);
        CHECKF(s && !strcmp(s, want[i]), "%s: %s", in[i], s);
        free(s);
    }
    /* longer than the writer's chunk: every byte value, 3 times */
    uint8_t d[768];
    for (size_t i = 0; i < sizeof d; i++)
        d[i] = (uint8_t)i;
    tfrec_json j;
    tfrec_json_init(&j, NULL);
    tfrec_json_base64(&j, d, sizeof d);
    char *s = tfrec_json_take(&j);
    CHECK(s && strlen(s) == 2 + sizeof d / 3 * 4);
    CHECK(!strncmp(s, "\"AAECAwQF", 9) && !strcmp(s + strlen(s) - 5, "/f7/\""));
    free(s);
}

static void test_json_to_a_stream(void)
{
    const char *path = harness_path("out.json");
    FILE *f = fopen(path, "w+");
    CHECK(f != NULL);
    tfrec_json j;
    tfrec_json_init(&j, f);
    tfrec_json_object_begin(&j);
    tfrec_json_key(&j, "name");
    tfrec_json_str(&j, "\xff\xfe.JPEG");
    tfrec_json_object_end(&j);
    tfrec_json_newline(&j);
    CHECK(!tfrec_json_failed(&j));
    CHECK(tfrec_json_take(&j) == NULL); /* nothing kept in memory */
    rewind(f);
    char buf[64] = { 0 };
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    CHECKF(n == 29 && !strcmp(buf, "{\"name\":\"\\udcff\\udcfe.JPEG\"}\n"), "%s", buf);
    /* a stream that refuses writes makes the writer fail, once and for all */
    FILE *ro = fopen(path, "r");
    CHECK(ro != NULL);
    setvbuf(ro, NULL, _IONBF, 0);
    tfrec_json_init(&j, ro);
    tfrec_json_str(&j, "x");
    CHECK(tfrec_json_failed(&j));
    fclose(ro);
}

static void test_json_is_text(void)
{
    CHECK(tfrec_json_is_text("caf\xc3\xa9", 5));
    CHECK(tfrec_json_is_text("", 0));
    CHECK(!tfrec_json_is_text("caf\xe9", 4));
    CHECK(!tfrec_json_is_text("a\nb", 3));
    CHECK(!tfrec_json_is_text("a\x7f", 2));
    CHECK(!tfrec_json_is_text("\xed\xa0\x80", 3));
}

TESTS(TEST(test_json_valid_utf8_passes_through), TEST(test_json_invalid_bytes_become_dc_escapes),
      TEST(test_json_overlong_forms_are_escaped),
      TEST(test_json_encoded_surrogates_and_beyond_10ffff_are_escaped),
      TEST(test_json_truncated_sequences_are_escaped),
      TEST(test_json_control_characters_and_quotes), TEST(test_json_any_bytes_round_trip),
      TEST(test_json_structure_and_numbers), TEST(test_json_float32_shortest_round_trip),
      TEST(test_json_base64_rfc4648_vectors), TEST(test_json_to_a_stream), TEST(test_json_is_text))

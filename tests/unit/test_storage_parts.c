/* lib/storage pieces that need no server: gs:// names and URL encoding,
 * the base64 form of CRC32C, the JSON reader, glob matching (checked
 * against glob(3) itself on a real directory tree), the retry policy, the
 * error messages, endpoint selection and the local side of the API. */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "storage/storage_internal.h"
#include "tfrec/tfrec.h"
#include "util/strlist.h"

/* ------------------------------------------------------------ names */

static void test_parse_names(void)
{
    gcs_name n;
    tfrec_err err = { 0 };
    CHECK_EQ(tfrec_gcs_parse("gs://bucket/a/b c#?.tfrecord", &n, &err), TFREC_OK);
    CHECK(strcmp(n.bucket, "bucket") == 0);
    CHECK(strcmp(n.object, "a/b c#?.tfrecord") == 0);
    CHECK_EQ(tfrec_gcs_parse("GS://b", &n, &err), TFREC_OK);
    CHECK(strcmp(n.bucket, "b") == 0 && n.object[0] == 0);
    CHECK_EQ(tfrec_gcs_parse("gs:///x", &n, &err), TFREC_E_INVALID);
    CHECK(strstr(err.msg, "no bucket") != NULL);
    CHECK_EQ(tfrec_gcs_parse("gs://Bad_Bucket/x", &n, &err), TFREC_E_INVALID);
    CHECK_EQ(tfrec_gcs_parse("gs://b/line\nbreak", &n, &err), TFREC_E_INVALID);
    CHECK_EQ(tfrec_gcs_parse("/local/path", &n, &err), TFREC_E_INVALID);
    char big[GCS_MAX_OBJECT + 16];
    memset(big, 'x', sizeof big);
    memcpy(big, "gs://b/", 7);
    big[sizeof big - 1] = 0;
    CHECK_EQ(tfrec_gcs_parse(big, &n, &err), TFREC_E_INVALID);
    CHECKF(strstr(err.msg, "longer than 1024") != NULL, "%s", err.msg);
    CHECK(tfrec_storage_is_remote("gS://x"));
    CHECK(!tfrec_storage_is_remote("gs:/x"));
    CHECK(!tfrec_storage_is_remote(NULL));
}

static void test_escape_and_urls(void)
{
    char buf[64];
    size_t len = 0;
    CHECK_EQ(tfrec_gcs_escape(buf, sizeof buf, &len, "a/b c#?%\xc3\xa9~_.-"), 0);
    CHECK(strcmp(buf, "a%2Fb%20c%23%3F%25%C3%A9~_.-") == 0);
    len = 0;
    CHECK_EQ(tfrec_gcs_escape(buf, 4, &len, "abc/"), -1); /* does not fit */

    tfrec_storage_options o = TFREC_STORAGE_OPTIONS_INIT;
    o.endpoint = "http://127.0.0.1:1/";
    o.user_project = "my project";
    tfrec_storage *st;
    CHECK_EQ(tfrec_storage_new(&st, &o), TFREC_OK);
    char *u = tfrec_gcs_object_url(st, "/storage/v1", "b", "dir/x y");
    CHECK(u != NULL);
    CHECKF(strcmp(u, "http://127.0.0.1:1/storage/v1/b/b/o/dir%2Fx%20y?userProject=my%20project") ==
               0,
           "url %s", u);
    CHECK_EQ(tfrec_gcs_url_param(&u, "alt", "media"), 0);
    CHECK(strstr(u, "?userProject=my%20project&alt=media") != NULL);
    free(u);
    tfrec_storage_free(st);
}

/* ------------------------------------------------------------ CRC32C in base64 */

static void test_crc_base64(void)
{
    char b[9];
    /* Values from the Cloud Storage documentation and python3-crc32c:
     * the empty object is AAAAAA==, "hello world" c99465aa -> yZRlqg==. */
    tfrec_gcs_crc_to_base64(0, b);
    CHECK(strcmp(b, "AAAAAA==") == 0);
    uint32_t c = tfrec_crc32c("hello world", 11);
    CHECK_EQ(c, 0xc99465aa);
    tfrec_gcs_crc_to_base64(c, b);
    CHECKF(strcmp(b, "yZRlqg==") == 0, "got %s", b);
    uint32_t back;
    CHECK_EQ(tfrec_gcs_crc_from_base64(b, 8, &back), 0);
    CHECK_EQ(back, c);
    for (uint32_t v = 1; v < 0xF0000000u; v = v * 7 + 13) {
        tfrec_gcs_crc_to_base64(v, b);
        CHECK_EQ(tfrec_gcs_crc_from_base64(b, 8, &back), 0);
        CHECK_EQ(back, v);
    }
    CHECK_EQ(tfrec_gcs_crc_from_base64("yZRlqg", 6, &back), 0);
    CHECK_EQ(tfrec_gcs_crc_from_base64("yZRlqh==", 8, &back), -1); /* stray low bits */
    CHECK_EQ(tfrec_gcs_crc_from_base64("yZR!qg==", 8, &back), -1);
    CHECK_EQ(tfrec_gcs_crc_from_base64("yZRlqg=", 7, &back), -1);
    CHECK_EQ(tfrec_gcs_hash_header_crc("md5=XrY7u+Ae7tCTyyK7j1rNww==,crc32c=yZRlqg==", &back), 0);
    CHECK_EQ(back, c);
    CHECK_EQ(tfrec_gcs_hash_header_crc("crc32c=yZRlqg==, md5=x", &back), 0);
    CHECK_EQ(back, c);
    CHECK_EQ(tfrec_gcs_hash_header_crc("md5=XrY7u+Ae7tCTyyK7j1rNww==", &back), -1);
}

/* ------------------------------------------------------------ JSON */

static void test_json_reads_replies(void)
{
    const char *text = "{\"kind\":\"storage#objects\",\"items\":[{\"name\":\"a\\/b \\u00e9\\ud83d"
                       "\\ude00\",\"size\":\"18446744073709551615\",\"generation\":\"17\","
                       "\"crc32c\":\"yZRlqg==\"},{\"name\":\"c\",\"size\":12}],"
                       "\"nextPageToken\":\"tok\",\"x\":[true,false,null,-1.5e3]}";
    tfrec_json_value *doc;
    char why[128];
    CHECK_EQ(tfrec_json_parse(text, strlen(text), GCS_JSON_LIMITS, &doc, why, sizeof why),
             TFREC_OK);
    CHECK(strcmp(tfrec_json_member_str(doc, "nextPageToken"), "tok") == 0);
    const tfrec_json_value *items = tfrec_json_member(doc, "items");
    CHECK(items && items->type == TFREC_JSON_ARR);
    const tfrec_json_value *a = items->child;
    CHECK(strcmp(tfrec_json_member_str(a, "name"), "a/b \xc3\xa9\xf0\x9f\x98\x80") == 0);
    uint64_t v;
    CHECK_EQ(tfrec_json_member_u64(a, "size", &v), 0);
    CHECK(v == UINT64_MAX);
    tfrec_storage_object o = TFREC_STORAGE_OBJECT_INIT;
    CHECK_EQ(tfrec_gcs_object_from_json(a, &o), 0);
    CHECK_EQ(o.generation, 17);
    CHECK(o.has_crc32c && o.crc32c == 0xc99465aa);
    CHECK_EQ(tfrec_json_member_u64(a->next, "size", &v), 0);
    CHECK_EQ(v, 12);
    CHECK_EQ(tfrec_json_member_u64(a, "name", &v), -1);
    CHECK_EQ(tfrec_json_member_u64(a, "missing", &v), -1);
    tfrec_json_value_free(doc);
}

/* The reader itself is tested in test_util_json_read; here its bounds for
 * replies. */
static void test_json_replies_are_bounded(void)
{
    char deep[200];
    memset(deep, '[', 100);
    memset(deep + 100, ']', 100);
    tfrec_json_value *doc;
    char why[128];
    CHECK_EQ(tfrec_json_parse(deep, sizeof deep, GCS_JSON_LIMITS, &doc, why, sizeof why),
             TFREC_E_PARSE);
    CHECK(strstr(why, "deeply") != NULL);
    CHECK_EQ(tfrec_json_parse("\"\\udcff\"", 8, GCS_JSON_LIMITS, &doc, why, sizeof why),
             TFREC_E_PARSE);
    size_t n = GCS_MAX_JSON_BODY + 1;
    char *huge = malloc(n);
    CHECK(huge != NULL);
    memset(huge, ' ', n);
    huge[0] = '1';
    int rc = tfrec_json_parse(huge, n, GCS_JSON_LIMITS, &doc, why, sizeof why);
    free(huge);
    CHECK_EQ(rc, TFREC_E_PARSE);
    CHECK(strstr(why, "limit") != NULL);
}

/* ------------------------------------------------------------ globs */

static const char *const tree[] = {
    "train-00000", "train-00001",       "train-0001x", "train-a", "train-[x]",
    "train-*",     ".hidden",           "a/.b",        "a/b",     "a/c/d",
    "a b#?",       "\xc3\xa9t\xc3\xa9", "val-1",       "x\\y",
};

static void mkpath(const char *root, const char *rel)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    for (char *s = p + strlen(root) + 1; (s = strchr(s, '/')); s++) {
        *s = 0;
        mkdir(p, 0755);
        *s = '/';
    }
    int fd = open(p, O_CREAT | O_WRONLY, 0644);
    if (fd >= 0)
        close(fd);
}

/* What glob(3) gives for pattern under root, relative names, joined by '|'. */
static void glob3(const char *root, const char *pattern, char *out, size_t cap)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", root, pattern);
    glob_t g;
    out[0] = 0;
    if (glob(p, 0, NULL, &g) != 0)
        return;
    size_t n = 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        const char *rel = g.gl_pathv[i] + strlen(root) + 1;
        const char *base = strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel;
        if (strcmp(base, ".") && strcmp(base, "..")) /* directory entries, not names */
            n += (size_t)snprintf(out + n, cap - n, "%s|", rel);
    }
    globfree(&g);
}

static void test_glob_matches_like_glob3(void)
{
    const char *root = harness_path("globtree");
    mkdir(root, 0755);
    for (size_t i = 0; i < sizeof tree / sizeof *tree; i++)
        mkpath(root, tree[i]);
    static const char *pats[] = {
        "train-*",   "train-0000?", "train-[0-9]*", "train-[!0]*", "train-[^0]*", "*",   "a/*",
        "a/?",       "*/*",         "a*",           "[a]/c/*",     "a?b*",        "*-1", "\\*",
        "train-\\*", "train-[[]x]", "train-[]x[]*", "?t*",         "x\\\\y",      ".*",  "a/.*",
    };
    for (size_t k = 0; k < sizeof pats / sizeof *pats; k++) {
        char want[1024], got[1024] = "";
        glob3(root, pats[k], want, sizeof want);
        size_t n = 0;
        char *names[64];
        size_t nn = 0;
        for (size_t i = 0; i < sizeof tree / sizeof *tree; i++)
            if (tfrec_gcs_glob_match(pats[k], tree[i]))
                names[nn++] = (char *)tree[i];
        /* glob(3) lists directories too: "a" and "a/c" */
        if (tfrec_gcs_glob_match(pats[k], "a"))
            names[nn++] = "a";
        if (tfrec_gcs_glob_match(pats[k], "a/c"))
            names[nn++] = "a/c";
        tfrec_strv_sort(names, nn);
        for (size_t i = 0; i < nn; i++)
            n += (size_t)snprintf(got + n, sizeof got - n, "%s|", names[i]);
        CHECKF(strcmp(want, got) == 0, "pattern '%s': glob(3) '%s', ours '%s'", pats[k], want, got);
    }
    CHECK_EQ(tfrec_gcs_glob_prefix("dir/train-*"), 10);
    CHECK_EQ(tfrec_gcs_glob_prefix("a\\*b*"), 1);
    CHECK_EQ(tfrec_gcs_glob_prefix("plain"), 5);
}

static void test_glob_local_paths(void)
{
    const char *root = harness_path("globlocal");
    mkdir(root, 0755);
    static const char *files[] = { "s-2", "s-10", "s-1", "t-1" };
    for (size_t i = 0; i < 4; i++)
        mkpath(root, files[i]);
    char pat[512];
    snprintf(pat, sizeof pat, "%s/s-*", root);
    tfrec_storage_list *l;
    CHECK_EQ(tfrec_storage_glob(NULL, pat, &l), TFREC_OK);
    CHECK_EQ(tfrec_storage_list_count(l), 3);
    /* bytewise: s-1 < s-10 < s-2 */
    CHECK(strstr(tfrec_storage_list_get(l, 0)->name, "/s-1") != NULL);
    CHECK(strstr(tfrec_storage_list_get(l, 1)->name, "/s-10") != NULL);
    CHECK(strstr(tfrec_storage_list_get(l, 2)->name, "/s-2") != NULL);
    CHECK(tfrec_storage_list_get(l, 3) == NULL);
    tfrec_storage_list_free(l);
    snprintf(pat, sizeof pat, "%s/none-*", root);
    CHECK_EQ(tfrec_storage_glob(NULL, pat, &l), TFREC_E_NOT_FOUND);
    CHECK(l == NULL);
    CHECK(strstr(tfrec_last_errmsg(), "none-*") != NULL);
    snprintf(pat, sizeof pat, "%s/t-1", root);
    CHECK_EQ(tfrec_storage_glob(NULL, pat, &l), TFREC_OK);
    CHECK_EQ(tfrec_storage_list_count(l), 1);
    tfrec_storage_list_free(l);

    tfrec_storage_object o = TFREC_STORAGE_OBJECT_INIT;
    CHECK_EQ(tfrec_storage_stat(NULL, pat, &o), TFREC_OK);
    CHECK_EQ(o.size, 0);
    CHECK_EQ(o.generation, 0);
    CHECK_EQ(tfrec_storage_remove(NULL, pat), TFREC_OK);
    CHECK_EQ(tfrec_storage_stat(NULL, pat, &o), TFREC_E_NOT_FOUND);
    CHECK_EQ(tfrec_storage_remove(NULL, pat), TFREC_E_NOT_FOUND);
}

static void test_local_round_trip(void)
{
    const char *path = harness_path("local.tfrecord");
    tfrec_writer *w;
    CHECK_EQ(tfrec_storage_writer_open(NULL, &w, path, NULL), TFREC_OK);
    CHECK_EQ(tfrec_writer_write(w, "abc", 3), TFREC_OK);
    CHECK_EQ(tfrec_writer_close(w), TFREC_OK);
    tfrec_writer_free(w);
    tfrec_reader *r;
    CHECK_EQ(tfrec_storage_reader_open(NULL, &r, path, NULL), TFREC_OK);
    const uint8_t *d;
    size_t len;
    CHECK_EQ(tfrec_reader_next(r, &d, &len), TFREC_OK);
    CHECK(len == 3 && memcmp(d, "abc", 3) == 0);
    CHECK_EQ(tfrec_reader_next(r, &d, &len), TFREC_END);
    tfrec_reader_free(r);
}

/* ------------------------------------------------------------ retries, errors */

static void test_retry_policy(void)
{
    for (long s = 100; s < 600; s++) {
        int want = s == 408 || s == 429 || s == 500 || s == 502 || s == 503 || s == 504;
        CHECKF(tfrec_gcs_status_retryable(s) == want, "status %ld", s);
    }
    CHECK(tfrec_gcs_curl_retryable(CURLE_COULDNT_CONNECT));
    CHECK(tfrec_gcs_curl_retryable(CURLE_RECV_ERROR));
    CHECK(tfrec_gcs_curl_retryable(CURLE_PARTIAL_FILE));
    CHECK(!tfrec_gcs_curl_retryable(CURLE_SSL_CACERT_BADFILE));
    CHECK(!tfrec_gcs_curl_retryable(CURLE_URL_MALFORMAT));

    tfrec_storage_options o = TFREC_STORAGE_OPTIONS_INIT;
    o.endpoint = "http://127.0.0.1:1";
    o.retry_deadline_ms = 400;
    tfrec_storage *st;
    CHECK_EQ(tfrec_storage_new(&st, &o), TFREC_OK);
    tfrec_storage_set_backoff_ms(st, 40);
    gcs_retry r;
    tfrec_gcs_retry_start(st, &r);
    uint64_t t0 = tfrec_gcs_now_ms();
    unsigned waits = 0;
    while (tfrec_gcs_retry_wait(st, &r) == 0)
        waits++;
    uint64_t took = tfrec_gcs_now_ms() - t0;
    /* 20-40, 40-80, 80-160, 160-320 ms: the deadline stops it after 2-4
     * waits, and never late. */
    CHECKF(waits >= 2 && waits <= 4, "%u waits", waits);
    CHECKF(took <= 400, "took %llu ms", (unsigned long long)took);
    CHECK_EQ(r.attempts, waits + 1);
    tfrec_storage_free(st);
}

static void test_status_errors_name_things(void)
{
    tfrec_storage_options o = TFREC_STORAGE_OPTIONS_INIT;
    o.endpoint = "https://storage.example";
    tfrec_storage *st;
    CHECK_EQ(tfrec_storage_new(&st, &o), TFREC_OK);
    gcs_call call = {
        .method = "GET", .url = "u", .what = "gs://b/o", .permission = "storage.objects.get"
    };
    char body[] = "{\"error\":{\"code\":403,\"message\":\"no access to b\"}}";
    gcs_resp resp = { .status = 403, .body = body, .body_len = strlen(body) };
    tfrec_err err = { 0 };
    CHECK_EQ(tfrec_gcs_status_error(st, &err, &call, &resp), TFREC_E_IO);
    CHECKF(strstr(err.msg, "gs://b/o") && strstr(err.msg, "storage.objects.get") &&
               strstr(err.msg, tfrec_gauth_account(st->auth)) && strstr(err.msg, "no access to b"),
           "%s", err.msg);
    resp.status = 404;
    resp.body = NULL;
    resp.body_len = 0;
    CHECK_EQ(tfrec_gcs_status_error(st, &err, &call, &resp), TFREC_E_NOT_FOUND);
    CHECKF(strstr(err.msg, "gs://b/o: not found") != NULL, "%s", err.msg);
    char junk[] = "<html>\x01oops\nmore";
    resp.status = 418;
    resp.body = junk;
    resp.body_len = strlen(junk);
    CHECK_EQ(tfrec_gcs_status_error(st, &err, &call, &resp), TFREC_E_IO);
    CHECKF(strstr(err.msg, "HTTP 418") && strstr(err.msg, "<html>?oops") &&
               !strstr(err.msg, "more"),
           "%s", err.msg);
    resp.status = 503;
    CHECK_EQ(tfrec_gcs_status_error(st, &err, &call, &resp), TFREC_E_NETWORK);
    tfrec_storage_free(st);
}

/* ------------------------------------------------------------ clients */

static void test_endpoint_and_options(void)
{
    tfrec_storage *st;
    setenv("STORAGE_EMULATOR_HOST", "127.0.0.1:9/", 1);
    CHECK_EQ(tfrec_storage_new(&st, NULL), TFREC_OK);
    CHECK(strcmp(st->endpoint, "http://127.0.0.1:9") == 0);
    CHECK(st->emulator && st->no_auth);
    tfrec_storage_free(st);
    unsetenv("STORAGE_EMULATOR_HOST");
    CHECK_EQ(tfrec_storage_new(&st, NULL), TFREC_OK);
    CHECK(strcmp(st->endpoint, "https://storage.googleapis.com") == 0);
    CHECK(!st->emulator && !st->no_auth);
    tfrec_storage_free(st);

    /* A bearer token never travels in the clear, and plain text goes to
     * this machine only (the rule of Bigtable endpoints). */
    tfrec_storage_options o = TFREC_STORAGE_OPTIONS_INIT;
    o.endpoint = "HTTP://127.0.0.2:8080";
    CHECK_EQ(tfrec_storage_new(&st, &o), TFREC_OK);
    CHECK(!st->emulator && st->no_auth);
    tfrec_storage_free(st);
    static const char *const far[] = { "HTTP://10.0.0.1:8080", "http://localhostile.com",
                                       "http://127.0.0.1@example.com", "10.1.1.1:80" };
    for (size_t i = 0; i < sizeof far / sizeof far[0]; i++) {
        o.endpoint = far[i];
        CHECK_EQ(tfrec_storage_new(&st, &o), TFREC_E_INVALID);
        CHECKF(strstr(tfrec_last_errmsg(), "only to localhost") != NULL, "%s", tfrec_last_errmsg());
    }
    o.endpoint = "http://[::1]:9";
    CHECK_EQ(tfrec_storage_new(&st, &o), TFREC_OK);
    tfrec_storage_free(st);
    o.endpoint = NULL;

    /* gcloud's endpoint override, its API path dropped; the emulator
     * variable wins over it. */
    setenv("CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE", "https://storage-psc.p.example/storage/v1/",
           1);
    CHECK_EQ(tfrec_storage_new(&st, NULL), TFREC_OK);
    CHECK(strcmp(st->endpoint, "https://storage-psc.p.example") == 0);
    CHECK(!st->no_auth);
    tfrec_storage_free(st);
    setenv("STORAGE_EMULATOR_HOST", "127.0.0.1:9", 1);
    CHECK_EQ(tfrec_storage_new(&st, NULL), TFREC_OK);
    CHECK(strcmp(st->endpoint, "http://127.0.0.1:9") == 0);
    tfrec_storage_free(st);
    unsetenv("STORAGE_EMULATOR_HOST");
    setenv("CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE", "http://10.0.0.1/storage/v1/", 1);
    CHECK_EQ(tfrec_storage_new(&st, NULL), TFREC_E_INVALID);
    CHECK(strstr(tfrec_last_errmsg(), "CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE") != NULL);
    unsetenv("CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE");

    /* Billing project and CA bundle from the settings when not given. */
    setenv("TFREC_USER_PROJECT", "billed", 1);
    setenv("TFREC_CA_BUNDLE", "/nonexistent/ca.pem", 1);
    CHECK_EQ(tfrec_storage_new(&st, NULL), TFREC_E_INVALID);
    CHECK(strstr(tfrec_last_errmsg(), "/nonexistent/ca.pem") != NULL);
    o.endpoint = "http://127.0.0.1:9"; /* plain text: no CA bundle needed */
    CHECK_EQ(tfrec_storage_new(&st, &o), TFREC_OK);
    tfrec_storage_free(st);
    o.endpoint = NULL;
    unsetenv("TFREC_CA_BUNDLE");
    CHECK_EQ(tfrec_storage_new(&st, NULL), TFREC_OK);
    CHECK(st->opts.user_project && strcmp(st->opts.user_project, "billed") == 0);
    CHECK(st->opts.ca_bundle_file == NULL);
    tfrec_storage_free(st);
    unsetenv("TFREC_USER_PROJECT");
    o.user_project = "a\r\nX-Evil: 1";
    CHECK_EQ(tfrec_storage_new(&st, &o), TFREC_E_INVALID);
    o.user_project = NULL;
    o.endpoint = "https://private.example";
    CHECK_EQ(tfrec_storage_new(&st, &o), TFREC_OK);
    CHECK(!st->no_auth);
    tfrec_storage_free(st);
    o.anonymous = 1;
    CHECK_EQ(tfrec_storage_new(&st, &o), TFREC_OK);
    CHECK(st->no_auth);
    tfrec_storage_free(st);
    o.anonymous = 0;
    o.endpoint = NULL;

    o.endpoint = "ftp://x";
    CHECK_EQ(tfrec_storage_new(&st, &o), TFREC_E_INVALID);
    CHECK(strstr(tfrec_last_errmsg(), "ftp://x") != NULL);
    o.endpoint = NULL;
    o.upload_chunk_bytes = 100000;
    CHECK_EQ(tfrec_storage_new(&st, &o), TFREC_E_INVALID);
    CHECK(strstr(tfrec_last_errmsg(), "256 KiB") != NULL);
    o.struct_size = 0;
    CHECK_EQ(tfrec_storage_new(&st, &o), TFREC_E_INVALID);
    CHECK_EQ(tfrec_storage_new(NULL, NULL), TFREC_E_INVALID);
    tfrec_storage_free(NULL);
    tfrec_storage_list_free(NULL);
    CHECK_EQ(tfrec_storage_list_count(NULL), 0);
    CHECK(tfrec_storage_list_get(NULL, 0) == NULL);
    tfrec_storage_object info = TFREC_STORAGE_OBJECT_INIT;
    CHECK_EQ(tfrec_storage_stat(NULL, NULL, &info), TFREC_E_INVALID);
    info.struct_size = 0;
    CHECK_EQ(tfrec_storage_stat(NULL, "/", &info), TFREC_E_INVALID);
    CHECK_EQ(tfrec_storage_remove(NULL, NULL), TFREC_E_INVALID);
    CHECK_EQ(tfrec_storage_glob(NULL, NULL, NULL), TFREC_E_INVALID);
    CHECK(tfrec_storage_default() == tfrec_storage_default());
}

static void test_unreachable_server_is_a_network_error(void)
{
    tfrec_storage_options o = TFREC_STORAGE_OPTIONS_INIT;
    o.endpoint = "http://127.0.0.1:1"; /* nothing listens on port 1 */
    o.anonymous = 1;
    o.retry_deadline_ms = 300;
    tfrec_storage *st;
    CHECK_EQ(tfrec_storage_new(&st, &o), TFREC_OK);
    tfrec_storage_set_backoff_ms(st, 20);
    tfrec_storage_object info = TFREC_STORAGE_OBJECT_INIT;
    CHECK_EQ(tfrec_storage_stat(st, "gs://b/o", &info), TFREC_E_NETWORK);
    CHECKF(strstr(tfrec_last_errmsg(), "gs://b/o") && strstr(tfrec_last_errmsg(), "attempts"), "%s",
           tfrec_last_errmsg());
    CHECK(atomic_load(&st->retries) >= 1);
    tfrec_io io = TFREC_IO_INIT;
    CHECK_EQ(tfrec_storage_open_source(st, &io, "gs://b/o"), TFREC_E_NETWORK);
    CHECK_EQ(tfrec_storage_open_source(st, &io, "gs://b"), TFREC_E_INVALID);
    tfrec_storage_free(st);
}

TESTS(TEST(test_parse_names), TEST(test_escape_and_urls), TEST(test_crc_base64),
      TEST(test_json_reads_replies), TEST(test_json_replies_are_bounded),
      TEST(test_glob_matches_like_glob3), TEST(test_glob_local_paths), TEST(test_local_round_trip),
      TEST(test_retry_policy), TEST(test_status_errors_name_things),
      TEST(test_endpoint_and_options), TEST(test_unreachable_server_is_a_network_error))

/* The offline pieces of the Cloud Storage credentials (lib/storage/auth*.c):
 * base64url, the JSON reader for key files and token replies, the RS256
 * JWT (its signature checked with the public key), which URLs may receive
 * a credential, key file errors, and the end of the chain when nothing is
 * found. The exchanges with a token endpoint and a metadata server are in
 * tests/python/test_gauth.py. */
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <unistd.h>

#include "harness.h"
#include "gauth/gauth.h"
#include "gauth/gauth_internal.h"
#include "tfrec/error.h"

static void test_base64url_vectors(void)
{
    /* RFC 4648 section 10, in the URL alphabet without padding */
    static const char *in[] = { "", "f", "fo", "foo", "foob", "fooba", "foobar" };
    static const char *want[] = { "", "Zg", "Zm8", "Zm9v", "Zm9vYg", "Zm9vYmE", "Zm9vYmFy" };
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
        char *got = tfrec_gauth_base64url(in[i], strlen(in[i]));
        CHECKF(got && strcmp(got, want[i]) == 0, "%s: got %s", in[i], got);
        free(got);
    }
    static const unsigned char url_chars[] = { 0xfb, 0xff, 0xbf };
    char *got = tfrec_gauth_base64url(url_chars, sizeof url_chars);
    CHECKF(strcmp(got, "-_-_") == 0, "got %s", got);
    free(got);
}

static tfrec_gauth_json *parse(const char *text, char *why, size_t whycap)
{
    tfrec_gauth_json *j = NULL;
    if (tfrec_gauth_json_parse(&j, text, strlen(text), why, whycap) != TFREC_OK)
        return NULL;
    return j;
}

static void test_json_members(void)
{
    char why[128];
    tfrec_gauth_json *j = parse(" {\"type\": \"service_account\", \"pk\": \"a\\nb\\\"c\\\\\\/\","
                                " \"e\": \"caf\\u00e9 \\ud83d\\ude00\", \"nested\": {\"x\": [1, "
                                "{\"y\": null}, true, false, -2.5e3]}, \"expires_in\": 3599,"
                                " \"str_num\": \"42\", \"list\": [] }\n",
                                why, sizeof why);
    CHECKF(j, "parse failed: %s", why);
    CHECK(strcmp(tfrec_gauth_json_string(j, "type"), "service_account") == 0);
    CHECK(strcmp(tfrec_gauth_json_string(j, "pk"), "a\nb\"c\\/") == 0);
    CHECK(strcmp(tfrec_gauth_json_string(j, "e"), "caf\xc3\xa9 \xf0\x9f\x98\x80") == 0);
    CHECK(tfrec_gauth_json_string(j, "nested") == NULL); /* not a string */
    CHECK(tfrec_gauth_json_has(j, "nested") && tfrec_gauth_json_has(j, "list"));
    CHECK(!tfrec_gauth_json_has(j, "x")); /* nested members are not top-level ones */
    int64_t v = 0;
    CHECK(tfrec_gauth_json_int(j, "expires_in", &v) && v == 3599);
    CHECK(tfrec_gauth_json_int(j, "str_num", &v) && v == 42);
    CHECK(!tfrec_gauth_json_int(j, "type", &v) && !tfrec_gauth_json_int(j, "missing", &v));
    CHECK(tfrec_gauth_json_string(j, "missing") == NULL);
    tfrec_gauth_json_free(j);
}

static void test_json_hostile_text_is_refused(void)
{
    static const struct {
        const char *text, *why;
    } bad[] = {
        { "", "not a JSON object" },
        { "[1]", "not a JSON object" },
        { "{\"a\": \"b\"", "expected ',' or '}'" },
        { "{\"a\": \"b\"} x", "text after the object" },
        { "{\"a\": \"unterminated}", "unterminated string" },
        { "{\"a\": \"tab\there\"}", "control character" },
        { "{\"a\": \"\\u0000\"}", "NUL character" },
        { "{\"a\": \"\\ud800x\"}", "lone high surrogate" },
        { "{\"a\": \"\\udc00\"}", "lone low surrogate" },
        { "{\"a\": \"\\uZZZZ\"}", "bad \\u escape" },
        { "{\"a\": \"\\q\"}", "bad escape" },
        { "{\"a\": tru}", "unexpected character" },
        { "{\"a\" 1}", "expected ':'" },
        { "{1: 2}", "expected a member name" },
        { "{\"a\": -}", "bad number" },
    };
    char why[128];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tfrec_gauth_json *j = NULL;
        int rc = tfrec_gauth_json_parse(&j, bad[i].text, strlen(bad[i].text), why, sizeof why);
        CHECKF(rc == TFREC_E_PARSE && strstr(why, bad[i].why), "%s: rc %d, %s", bad[i].text, rc,
               why);
    }
    /* Deep nesting is refused, not followed down the stack. */
    size_t depth = 100000;
    char *deep = malloc(depth + 16);
    strcpy(deep, "{\"a\": ");
    memset(deep + 6, '[', depth);
    strcpy(deep + 6 + depth, "}");
    tfrec_gauth_json *j = NULL;
    int rc = tfrec_gauth_json_parse(&j, deep, strlen(deep), why, sizeof why);
    free(deep);
    CHECKF(rc == TFREC_E_PARSE && strstr(why, "nested too deeply"), "rc %d, %s", rc, why);
}

static EVP_PKEY *rsa_key(char **pem)
{
    EVP_PKEY *key = EVP_RSA_gen(2048);
    BIO *bio = BIO_new(BIO_s_mem());
    PEM_write_bio_PrivateKey(bio, key, NULL, NULL, 0, NULL, NULL);
    char *data;
    long n = BIO_get_mem_data(bio, &data);
    *pem = strndup(data, (size_t)n);
    BIO_free(bio);
    return key;
}

/* base64url back to bytes (NUL-terminated), for the checks. */
static char *unbase64url(const char *s, size_t len, size_t *outlen)
{
    char *out = malloc(len + 1);
    unsigned acc = 0;
    int bits = 0;
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        const char *abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        const char *p = strchr(abc, s[i]);
        if (!p || !s[i]) {
            free(out);
            return NULL;
        }
        acc = acc << 6 | (unsigned)(p - abc);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[n++] = (char)(acc >> bits & 0xff);
        }
    }
    out[n] = 0;
    *outlen = n;
    return out;
}

static void test_jwt_is_rs256_signed_with_the_claims(void)
{
    char *pem = NULL, err[256];
    EVP_PKEY *pub = rsa_key(&pem);
    EVP_PKEY *key = NULL;
    CHECKF(tfrec_gauth_pem_rsa_key(&key, pem, err, sizeof err) == TFREC_OK, "%s", err);
    free(pem);
    char *jwt = NULL;
    CHECKF(tfrec_gauth_jwt_sign(key, "kid\"1", "sa@p.iam.gserviceaccount.com", TFREC_GAUTH_SCOPE,
                                "https://oauth2.googleapis.com/token", 1700000000, &jwt, err,
                                sizeof err) == TFREC_OK,
           "%s", err);
    EVP_PKEY_free(key);
    char *dot1 = strchr(jwt, '.'), *dot2 = dot1 ? strchr(dot1 + 1, '.') : NULL;
    CHECK(dot1 && dot2 && !strchr(dot2 + 1, '.'));

    size_t hl, cl, sl;
    char *header = unbase64url(jwt, (size_t)(dot1 - jwt), &hl);
    char *claims = unbase64url(dot1 + 1, (size_t)(dot2 - dot1 - 1), &cl);
    char *sig = unbase64url(dot2 + 1, strlen(dot2 + 1), &sl);
    CHECK(header && claims && sig);
    tfrec_gauth_json *h = parse(header, err, sizeof err), *c = parse(claims, err, sizeof err);
    CHECKF(h && c, "%s / %s", header, claims);
    CHECK(strcmp(tfrec_gauth_json_string(h, "alg"), "RS256") == 0);
    CHECK(strcmp(tfrec_gauth_json_string(h, "typ"), "JWT") == 0);
    CHECK(strcmp(tfrec_gauth_json_string(h, "kid"), "kid\"1") == 0); /* escaped, and back */
    CHECK(strcmp(tfrec_gauth_json_string(c, "iss"), "sa@p.iam.gserviceaccount.com") == 0);
    CHECK(strcmp(tfrec_gauth_json_string(c, "scope"), TFREC_GAUTH_SCOPE) == 0);
    CHECK(strcmp(tfrec_gauth_json_string(c, "aud"), "https://oauth2.googleapis.com/token") == 0);
    int64_t iat = 0, exp = 0;
    CHECK(tfrec_gauth_json_int(c, "iat", &iat) && iat == 1700000000);
    CHECK(tfrec_gauth_json_int(c, "exp", &exp) && exp == iat + 3600);
    tfrec_gauth_json_free(h);
    tfrec_gauth_json_free(c);

    /* The signature covers "header.claims" and checks with the public key;
     * one flipped byte of the input does not. */
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    CHECK(EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, pub) == 1);
    CHECK(EVP_DigestVerify(md, (unsigned char *)sig, sl, (unsigned char *)jwt,
                           (size_t)(dot2 - jwt)) == 1);
    jwt[3] ^= 1;
    CHECK(EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, pub) == 1);
    CHECK(EVP_DigestVerify(md, (unsigned char *)sig, sl, (unsigned char *)jwt,
                           (size_t)(dot2 - jwt)) != 1);
    EVP_MD_CTX_free(md);
    EVP_PKEY_free(pub);
    free(header);
    free(claims);
    free(sig);
    free(jwt);
}

static void test_non_rsa_and_junk_keys_are_refused(void)
{
    char err[256];
    EVP_PKEY *ec = EVP_EC_gen("P-256"), *key = NULL;
    BIO *bio = BIO_new(BIO_s_mem());
    PEM_write_bio_PrivateKey(bio, ec, NULL, NULL, 0, NULL, NULL);
    char *data;
    long n = BIO_get_mem_data(bio, &data);
    char *pem = strndup(data, (size_t)n);
    BIO_free(bio);
    EVP_PKEY_free(ec);
    int rc = tfrec_gauth_pem_rsa_key(&key, pem, err, sizeof err);
    free(pem);
    CHECKF(rc == TFREC_E_PARSE && strstr(err, "not an RSA key"), "rc %d: %s", rc, err);
    rc = tfrec_gauth_pem_rsa_key(
        &key, "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", err, sizeof err);
    CHECKF(rc == TFREC_E_PARSE && strstr(err, "not a PEM private key"), "rc %d: %s", rc, err);
}

static void test_credentials_go_only_to_https_or_loopback(void)
{
    static const char *ok[] = { "https://oauth2.googleapis.com/token",
                                "http://127.0.0.1:8080/t",
                                "http://127.1.2.3/t",
                                "http://localhost/t",
                                "http://[::1]:99/t",
                                "HTTP://LOCALHOST:1" };
    static const char *no[] = { "http://oauth2.googleapis.com/token",
                                "http://127.0.0.1.evil.com/t",
                                "http://localhost.evil.com/",
                                "http://evil.com/127.0.0.1",
                                "ftp://127.0.0.1/",
                                "https://",
                                "file:///etc/passwd",
                                "http://user@127.0.0.1.evil/",
                                "http://127.0.0.1:80@evil.com/" };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        CHECKF(tfrec_gauth_url_allowed(ok[i]), "%s refused", ok[i]);
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        CHECKF(!tfrec_gauth_url_allowed(no[i]), "%s allowed", no[i]);
}

static const char *write_file(const char *name, const char *text)
{
    const char *path = harness_path(name);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    return path;
}

static void test_key_file_errors_name_file_and_field(void)
{
    static const struct {
        const char *name, *text, *want;
    } cases[] = {
        { "notjson.json", "PRIVATE KEY", "not a JSON credentials file" },
        { "notype.json", "{\"client_email\": \"a@b\"}", "no \"type\" field" },
        { "other.json", "{\"type\": \"impersonated_service_account\"}", "are not supported" },
        { "noemail.json", "{\"type\": \"service_account\", \"private_key\": \"x\"}",
          "without a \"client_email\" field" },
        { "emptykey.json",
          "{\"type\": \"service_account\", \"client_email\": \"a@b\", "
          "\"private_key\": \"\"}",
          "without a \"private_key\" field" },
        { "numsecret.json",
          "{\"type\": \"authorized_user\", \"client_id\": \"i\", "
          "\"client_secret\": 5, \"refresh_token\": \"r\"}",
          "\"client_secret\" field (it is empty or not a string)" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *path = write_file(cases[i].name, cases[i].text);
        tfrec_gauth_cred c;
        char err[512];
        int rc = tfrec_gauth_cred_load(&c, path, err, sizeof err);
        CHECKF(rc < 0 && strstr(err, path) && strstr(err, cases[i].want), "%s: %s", cases[i].name,
               err);
    }
    /* authorized_user with everything: the default endpoint, nothing fetched */
    unsetenv("TFREC_GCS_TOKEN_URI");
    const char *path = write_file("user.json", "{\"type\": \"authorized_user\", \"client_id\": "
                                               "\"i\", \"client_secret\": \"s\", "
                                               "\"refresh_token\": \"r\"}");
    tfrec_gauth_cred c;
    char err[512];
    CHECKF(tfrec_gauth_cred_load(&c, path, err, sizeof err) == TFREC_OK, "%s", err);
    CHECK(c.kind == TFREC_GAUTH_CRED_USER);
    CHECK(strcmp(c.token_uri, TFREC_GAUTH_DEFAULT_TOKEN_URI) == 0);
    CHECK(strcmp(c.refresh_token, "r") == 0);
    tfrec_gauth_cred_clear(&c);
}

static void test_anonymous_needs_nothing(void)
{
    tfrec_gauth *a;
    char err[256], *header = (char *)"x";
    CHECK(tfrec_gauth_new(&a, "/nonexistent/key.json", 1, err, sizeof err) == TFREC_OK);
    CHECK(tfrec_gauth_header(a, 1, &header, err, sizeof err) == TFREC_OK);
    CHECK(header == NULL);
    CHECK(strcmp(tfrec_gauth_account(a), "anonymous") == 0);
    tfrec_gauth_free(a);
    tfrec_gauth_free(NULL);
}

static void test_nothing_found_lists_what_was_tried(void)
{
    /* A loopback port that refuses connections stands for the metadata
     * server; HOME has no gcloud directory. */
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof sa;
    CHECK(bind(s, (struct sockaddr *)&sa, sizeof sa) == 0);
    CHECK(getsockname(s, (struct sockaddr *)&sa, &len) == 0);
    char host[64];
    snprintf(host, sizeof host, "127.0.0.1:%d", ntohs(sa.sin_port));
    setenv("GCE_METADATA_HOST", host, 1);
    setenv("HOME", harness_tmpdir(), 1);
    unsetenv("GOOGLE_APPLICATION_CREDENTIALS");
    unsetenv("CLOUDSDK_CONFIG");

    tfrec_gauth *a;
    char err[1024], *header = NULL;
    CHECK(tfrec_gauth_new(&a, NULL, 0, err, sizeof err) == TFREC_OK);
    int rc = tfrec_gauth_header(a, 0, &header, err, sizeof err);
    close(s);
    CHECKF(rc == TFREC_E_NOT_FOUND, "rc %d: %s", rc, err);
    CHECK(header == NULL);
    CHECKF(strstr(err, "GOOGLE_APPLICATION_CREDENTIALS is not set") &&
               strstr(err, "application_default_credentials.json does not exist") &&
               strstr(err, host),
           "%s", err);
    tfrec_gauth_free(a);
}

/* An encrypted key file: OpenSSL's default would prompt on the terminal
 * for a pass phrase; the library refuses with a message instead. */
static void test_encrypted_key_is_refused_without_a_prompt(void)
{
    EVP_PKEY *key = EVP_RSA_gen(2048);
    BIO *bio = BIO_new(BIO_s_mem());
    CHECK(PEM_write_bio_PKCS8PrivateKey(bio, key, EVP_aes_256_cbc(), "secret", 6, NULL, NULL) == 1);
    char *data;
    long n = BIO_get_mem_data(bio, &data);
    char *pem = strndup(data, (size_t)n);
    BIO_free(bio);
    EVP_PKEY_free(key);
    CHECK(strstr(pem, "ENCRYPTED PRIVATE KEY"));
    EVP_PKEY *out = NULL;
    char why[300] = "";
    int rc = tfrec_gauth_pem_rsa_key(&out, pem, why, sizeof why);
    CHECKF(rc == TFREC_E_UNSUPPORTED && strstr(why, "encrypted") && !out, "rc %d: %s", rc, why);
    CHECK(!strstr(why, "secret"));
    free(pem);
}

TESTS(TEST(test_encrypted_key_is_refused_without_a_prompt), TEST(test_base64url_vectors),
      TEST(test_json_members), TEST(test_json_hostile_text_is_refused),
      TEST(test_jwt_is_rs256_signed_with_the_claims), TEST(test_non_rsa_and_junk_keys_are_refused),
      TEST(test_credentials_go_only_to_https_or_loopback),
      TEST(test_key_file_errors_name_file_and_field), TEST(test_anonymous_needs_nothing),
      TEST(test_nothing_found_lists_what_was_tried))

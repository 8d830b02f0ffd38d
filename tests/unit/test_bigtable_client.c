/* Client set-up errors that must come before any traffic: an emulator
 * address without a port, and production credentials that are missing or
 * broken (each told apart). Nothing here opens a connection: the checks
 * fail first, and the metadata probe goes to a closed loopback port. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "tfrec/tfrec.h"

static int open_client(void)
{
    tfrec_bt_client_options o = TFREC_BT_CLIENT_OPTIONS_INIT;
    o.project = "p";
    o.instance = "i";
    tfrec_bt_client *c = NULL;
    int rc = tfrec_bt_client_open(&c, &o);
    tfrec_bt_client_free(c);
    return rc;
}

static void test_emulator_host_needs_a_port(void)
{
    static const char *const bad[] = { "localhost", "127.0.0.1", "localhost:", "host:http",
                                       "::1",       "[::1]",     ":8086",      "h:123456" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("BIGTABLE_EMULATOR_HOST", bad[i], 1);
        int rc = open_client();
        CHECKF(rc == TFREC_E_INVALID, "%s: rc %d", bad[i], rc);
        CHECKF(strstr(tfrec_last_errmsg(), bad[i]) && strstr(tfrec_last_errmsg(), "PORT"), "%s: %s",
               bad[i], tfrec_last_errmsg());
    }
    /* with a port the client opens (channels connect lazily: no traffic) */
    static const char *const good[] = { "localhost:8086", "127.0.0.1:1", "[::1]:9000" };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        setenv("BIGTABLE_EMULATOR_HOST", good[i], 1);
        CHECKF(open_client() == TFREC_OK, "%s: %s", good[i], tfrec_last_errmsg());
    }
    unsetenv("BIGTABLE_EMULATOR_HOST");
}

static void test_credential_errors_told_apart(void)
{
    char dir[] = "/tmp/tfrec-creds-XXXXXX";
    CHECK(mkdtemp(dir));
    unsetenv("BIGTABLE_EMULATOR_HOST");
    setenv("HOME", dir, 1);                        /* no gcloud application-default file */
    setenv("GCE_METADATA_HOST", "127.0.0.1:1", 1); /* no metadata server */

    /* The shared credential module (lib/gauth) reads them: the same
     * messages as the storage part's (tests/python/test_gauth.py). */
    char path[600];
    snprintf(path, sizeof path, "%s/missing.json", dir);
    setenv("GOOGLE_APPLICATION_CREDENTIALS", path, 1);
    CHECK_EQ(open_client(), TFREC_E_NOT_FOUND);
    CHECKF(strstr(tfrec_last_errmsg(), "GOOGLE_APPLICATION_CREDENTIALS: ") &&
               strstr(tfrec_last_errmsg(), "cannot open the credentials file (No such file"),
           "%s", tfrec_last_errmsg());

    snprintf(path, sizeof path, "%s/garbage.json", dir);
    FILE *fp = fopen(path, "w");
    CHECK(fp);
    fputs("this is not json\n", fp);
    fclose(fp);
    setenv("GOOGLE_APPLICATION_CREDENTIALS", path, 1);
    CHECKF(open_client() == TFREC_E_PARSE, "%s", tfrec_last_errmsg());
    CHECKF(strstr(tfrec_last_errmsg(), "not a JSON credentials file"), "%s", tfrec_last_errmsg());

    fp = fopen(path, "w");
    fputs("{\"type\": \"mystery\"}", fp);
    fclose(fp);
    CHECK_EQ(open_client(), TFREC_E_UNSUPPORTED);
    CHECKF(strstr(tfrec_last_errmsg(), "of type \"mystery\" are not supported"), "%s",
           tfrec_last_errmsg());
    unlink(path);

    unsetenv("GOOGLE_APPLICATION_CREDENTIALS");
    CHECK_EQ(open_client(), TFREC_E_NOT_FOUND);
    CHECKF(strstr(tfrec_last_errmsg(), "no Google credentials found") &&
               strstr(tfrec_last_errmsg(), "GOOGLE_APPLICATION_CREDENTIALS is not set"),
           "%s", tfrec_last_errmsg());

    /* The same settings through the API instead of the environment. */
    snprintf(path, sizeof path, "%s/absent-by-api.json", dir);
    CHECK_EQ(tfrec_config_set("GOOGLE_APPLICATION_CREDENTIALS", path), TFREC_OK);
    CHECK_EQ(open_client(), TFREC_E_NOT_FOUND);
    CHECKF(strstr(tfrec_last_errmsg(), path), "%s", tfrec_last_errmsg());
    tfrec_config_set("GOOGLE_APPLICATION_CREDENTIALS", NULL);
    rmdir(dir);
}

/* Plain text only for this machine, by parsing the host: names that
 * merely start like loopback ones get TLS and need credentials. */
static void test_only_real_loopback_endpoints_are_plain_text(void)
{
    char dir[] = "/tmp/tfrec-creds-XXXXXX";
    CHECK(mkdtemp(dir));
    unsetenv("BIGTABLE_EMULATOR_HOST");
    unsetenv("GOOGLE_APPLICATION_CREDENTIALS");
    setenv("HOME", dir, 1);
    setenv("GCE_METADATA_HOST", "127.0.0.1:1", 1);
    static const char *const local[] = { "127.0.0.1:1", "127.9.8.7:1", "localhost:1", "[::1]:1" };
    static const char *const remote[] = { "localhostile.com:443", "127.evil.example:443",
                                          "localhost.example.com:443", "[::2]:443",
                                          "128.0.0.1:443" };
    for (size_t i = 0; i < sizeof local / sizeof local[0]; i++) {
        tfrec_bt_client_options o = TFREC_BT_CLIENT_OPTIONS_INIT;
        o.project = "p";
        o.instance = "i";
        o.endpoint = local[i];
        tfrec_bt_client *c = NULL;
        CHECKF(tfrec_bt_client_open(&c, &o) == TFREC_OK && tfrec_bt_client_is_emulator(c), "%s: %s",
               local[i], tfrec_last_errmsg());
        tfrec_bt_client_free(c);
    }
    for (size_t i = 0; i < sizeof remote / sizeof remote[0]; i++) {
        tfrec_bt_client_options o = TFREC_BT_CLIENT_OPTIONS_INIT;
        o.project = "p";
        o.instance = "i";
        o.endpoint = remote[i];
        tfrec_bt_client *c = NULL;
        int rc = tfrec_bt_client_open(&c, &o);
        CHECKF(rc == TFREC_E_NOT_FOUND && strstr(tfrec_last_errmsg(), "no Google credentials"),
               "%s: rc %d %s", remote[i], rc, tfrec_last_errmsg());
        tfrec_bt_client_free(c);
    }
    rmdir(dir);
}

/* A billing project that cannot be a metadata value is refused when the
 * client opens (before any token is fetched), from the option and from
 * TFREC_USER_PROJECT alike. */
static void test_user_project_must_be_a_metadata_value(void)
{
    unsetenv("BIGTABLE_EMULATOR_HOST");
    tfrec_bt_client_options o = TFREC_BT_CLIENT_OPTIONS_INIT;
    o.project = "p";
    o.instance = "i";
    o.endpoint = "127.0.0.1:1";
    o.tls = 1;
    o.user_project = "bill\nme";
    tfrec_bt_client *c = NULL;
    int rc = tfrec_bt_client_open(&c, &o);
    CHECKF(rc == TFREC_E_INVALID && strstr(tfrec_last_errmsg(), "Bigtable user project"),
           "rc %d %s", rc, tfrec_last_errmsg());
    tfrec_bt_client_free(c);
    o.user_project = NULL;
    setenv("TFREC_USER_PROJECT", "bill\tme", 1);
    c = NULL;
    rc = tfrec_bt_client_open(&c, &o);
    unsetenv("TFREC_USER_PROJECT");
    CHECKF(rc == TFREC_E_INVALID && strstr(tfrec_last_errmsg(), "Bigtable user project"),
           "rc %d %s", rc, tfrec_last_errmsg());
    tfrec_bt_client_free(c);
}

TESTS(TEST(test_emulator_host_needs_a_port), TEST(test_credential_errors_told_apart),
      TEST(test_only_real_loopback_endpoints_are_plain_text),
      TEST(test_user_project_must_be_a_metadata_value))

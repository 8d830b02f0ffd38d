/* Channel credentials: plain text to an emulator, else TLS (gRPC's roots
 * or a CA bundle for private CAs and TLS-inspecting proxies) composed with
 * call credentials carrying the shared Google access token; and what a
 * refused token means, in words that name the account and the fix. */
#include <errno.h>
#include <grpc/grpc_security.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bigtable/client_internal.h"
#include "bigtable/retry.h"
#include "gauth/gauth.h"
#include "util/config.h"

/* A CA bundle is a few certificates; a big file is a mistake. */
#define CA_BUNDLE_MAX (4 << 20)

static int load_ca_bundle(tfrec_bt_client *c, const char *path, const char *what)
{
    FILE *fp = fopen(path, "rb");
    struct stat st;
    if (!fp || fstat(fileno(fp), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > CA_BUNDLE_MAX) {
        int e = errno;
        if (fp)
            fclose(fp);
        return tfrec_fail(&c->err, TFREC_E_IO, "%s %s: %s", what, path,
                          fp ? "not a regular file of at most 4 MiB" : strerror(e));
    }
    c->ca_pem = malloc((size_t)st.st_size + 1);
    size_t n = c->ca_pem ? fread(c->ca_pem, 1, (size_t)st.st_size, fp) : 0;
    fclose(fp);
    if (!c->ca_pem)
        return tfrec_fail(&c->err, TFREC_E_NOMEM, "out of memory");
    c->ca_pem[n] = 0;
    if (!strstr(c->ca_pem, "-----BEGIN CERTIFICATE-----"))
        return tfrec_fail(&c->err, TFREC_E_PARSE,
                          "%s %s holds no PEM certificate (-----BEGIN CERTIFICATE-----)", what,
                          path);
    return TFREC_OK;
}

/* The billing project: the option, else TFREC_USER_PROJECT; a value that
 * cannot be a metadata value is refused here rather than by gRPC. */
static int set_user_project(tfrec_bt_client *c, const char *opt)
{
    char cfg[256];
    const char *v = opt && *opt ? opt : NULL;
    int n = v ? 0 : tfrec_cfg(TFREC_CFG_USER_PROJECT, cfg, sizeof cfg);
    if (n < 0)
        return tfrec_fail(&c->err, TFREC_E_INVALID, "TFREC_USER_PROJECT is too long");
    if (n > 0)
        v = cfg;
    if (!v)
        return TFREC_OK;
    for (const char *p = v; *p; p++)
        if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
            return tfrec_fail(&c->err, TFREC_E_INVALID,
                              "Bigtable user project: \"%s\" holds a control or non-ASCII "
                              "character",
                              v);
    if (!(c->user_project = strdup(v)))
        return tfrec_fail(&c->err, TFREC_E_NOMEM, "out of memory");
    return TFREC_OK;
}

int tfrec_bt_credentials_setup(tfrec_bt_client *c, const char *credentials_file,
                               const char *ca_bundle_file, const char *user_project)
{
    if (!c->tls)
        return TFREC_OK;
    char cfg[4096];
    int rc = set_user_project(c, user_project);
    if (rc)
        return rc;
    if (ca_bundle_file && *ca_bundle_file)
        rc = load_ca_bundle(c, ca_bundle_file, "CA bundle");
    else if (tfrec_cfg(TFREC_CFG_CA_BUNDLE, cfg, sizeof cfg) > 0)
        rc = load_ca_bundle(c, cfg, "TFREC_CA_BUNDLE");
    else
        rc = TFREC_OK;
    if (rc)
        return rc;
    if (credentials_file && *credentials_file && !(c->credentials_file = strdup(credentials_file)))
        return tfrec_fail(&c->err, TFREC_E_NOMEM, "out of memory");
    char why[768] = "";
    if ((rc = tfrec_gauth_new(&c->auth, c->credentials_file, 0, why, sizeof why)) < 0)
        return tfrec_fail(&c->err, rc, "Google credentials: %s", why);
    /* One token now: a missing or broken credential is reported by
     * tfrec_bt_client_open, not by the first call. The source is shared,
     * so this token also serves the calls (and the storage part). */
    char *header = NULL;
    rc = tfrec_gauth_header(c->auth, 0, &header, why, sizeof why);
    if (header) {
        memset(header, 0, strlen(header));
        free(header);
    }
    if (rc < 0)
        return tfrec_fail(&c->err, rc, "Bigtable credentials: %s", why);
    return TFREC_OK;
}

void tfrec_bt_credentials_free(tfrec_bt_client *c)
{
    tfrec_gauth_free(c->auth);
    c->auth = NULL;
    free(c->ca_pem);
    free(c->credentials_file);
    free(c->user_project);
}

grpc_channel_credentials *tfrec_bt_channel_credentials(tfrec_bt_client *c)
{
    if (!c->tls)
        return grpc_insecure_credentials_create();
    grpc_channel_credentials *ssl = grpc_ssl_credentials_create(c->ca_pem, NULL, NULL, NULL);
    grpc_call_credentials *call = ssl ? tfrec_bt_call_credentials(c) : NULL;
    grpc_channel_credentials *both =
        call ? grpc_composite_channel_credentials_create(ssl, call, NULL) : NULL;
    if (call)
        grpc_call_credentials_release(call);
    if (ssl)
        grpc_channel_credentials_release(ssl);
    return both;
}

int tfrec_bt_reauth(tfrec_bt_client *c, char *err, size_t errcap)
{
    if (!c->auth) {
        snprintf(err, errcap, "no credentials to refresh");
        return TFREC_E_UNSUPPORTED;
    }
    char *header = NULL;
    int rc = tfrec_gauth_header(c->auth, 1, &header, err, errcap);
    if (header) {
        memset(header, 0, strlen(header));
        free(header);
    }
    return rc;
}

const char *tfrec_bt_auth_hint(tfrec_bt_client *c, int code, const char *details, char *buf,
                               size_t cap)
{
    buf[0] = 0;
    const char *who = c && c->auth ? tfrec_gauth_account(c->auth) : NULL;
    if (code == BT_UNAUTHENTICATED && who)
        snprintf(buf, cap,
                 " (the access token of %s was refused, also after a fresh one: check that "
                 "these credentials are valid and not revoked, or name other ones with "
                 "GOOGLE_APPLICATION_CREDENTIALS; see docs/storage-auth.md)",
                 who);
    else if (code == BT_PERMISSION_DENIED && who)
        snprintf(buf, cap,
                 " (%s may not do this: grant it roles/bigtable.user on the instance, "
                 "roles/bigtable.admin to create tables; see docs/storage-auth.md)",
                 who);
    else if (code == BT_UNAVAILABLE && details && tfrec_bt_is_tls_failure(details))
        snprintf(buf, cap,
                 " (the TLS handshake failed: the server's certificate is not trusted%s; give "
                 "the CA that issued it with --ca_bundle (ca_bundle_file, TFREC_CA_BUNDLE))",
                 c && c->ca_pem ? " by the CA bundle given" : " by the system's roots");
    return buf;
}

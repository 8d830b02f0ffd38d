/* Credentials files as Google's tools write them: a service-account key
 * ("type": "service_account", from the console or `gcloud iam
 * service-accounts keys create`) or user credentials ("type":
 * "authorized_user", from `gcloud auth application-default login`).
 * Errors name the file and the field; secrets never appear in them. */
#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gauth/gauth_internal.h"
#include "tfrec/error.h"
#include "util/config.h"

/* A file's whole text, refusing anything larger than a key file can be. */
static int slurp(const char *path, char **out, size_t *len, char *err, size_t errcap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        snprintf(err, errcap, "%s: cannot open the credentials file (%s)", path, strerror(e));
        return e == ENOENT ? TFREC_E_NOT_FOUND : TFREC_E_IO;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > TFREC_GAUTH_BODY_MAX) {
        close(fd);
        snprintf(err, errcap, "%s: not a credentials file (not a regular file of at most %d bytes)",
                 path, TFREC_GAUTH_BODY_MAX);
        return TFREC_E_PARSE;
    }
    char *buf = malloc((size_t)st.st_size + 1);
    if (!buf) {
        close(fd);
        snprintf(err, errcap, "out of memory");
        return TFREC_E_NOMEM;
    }
    size_t n = 0;
    while (n < (size_t)st.st_size) {
        ssize_t got = read(fd, buf + n, (size_t)st.st_size - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            int e = got < 0 ? errno : EIO;
            close(fd);
            free(buf);
            snprintf(err, errcap, "%s: cannot read the credentials file (%s)", path, strerror(e));
            return TFREC_E_IO;
        }
        n += (size_t)got;
    }
    close(fd);
    buf[n] = 0;
    *out = buf;
    *len = n;
    return TFREC_OK;
}

/* A value from the file, fit for a message: printable ASCII, shortened. */
static const char *shown(char *buf, size_t cap, const char *s)
{
    size_t n = 0;
    for (; *s && n + 4 < cap; s++)
        buf[n++] = *s >= 0x20 && *s < 0x7f ? *s : '?';
    buf[n] = 0;
    if (*s)
        strcat(buf, "...");
    return buf;
}

static int dup_field(char **dst, const tfrec_gauth_json *j, const char *key, int required,
                     const char *path, const char *type, char *err, size_t errcap)
{
    const char *v = tfrec_gauth_json_string(j, key);
    if (!v || !*v) {
        if (!required)
            return TFREC_OK;
        snprintf(err, errcap, "%s: %s credentials without a \"%s\" field%s", path, type, key,
                 tfrec_gauth_json_has(j, key) ? " (it is empty or not a string)" : "");
        return TFREC_E_PARSE;
    }
    *dst = strdup(v);
    if (!*dst) {
        snprintf(err, errcap, "out of memory");
        return TFREC_E_NOMEM;
    }
    return TFREC_OK;
}

static int load_service_account(tfrec_gauth_cred *c, const tfrec_gauth_json *j, const char *path,
                                char *err, size_t errcap)
{
    static const char type[] = "service_account";
    int rc;
    if ((rc = dup_field(&c->client_email, j, "client_email", 1, path, type, err, errcap)) < 0 ||
        (rc = dup_field(&c->private_key_id, j, "private_key_id", 0, path, type, err, errcap)) < 0)
        return rc;
    const char *pem = tfrec_gauth_json_string(j, "private_key");
    if (!pem || !*pem) {
        snprintf(err, errcap, "%s: service_account credentials without a \"private_key\" field",
                 path);
        return TFREC_E_PARSE;
    }
    char why[200];
    if ((rc = tfrec_gauth_pem_rsa_key(&c->key, pem, why, sizeof why)) < 0) {
        snprintf(err, errcap, "%s: field \"private_key\": %s", path, why);
        return rc;
    }
    c->kind = TFREC_GAUTH_CRED_SERVICE_ACCOUNT;
    snprintf(c->account, sizeof c->account, "%s", c->client_email);
    return TFREC_OK;
}

static int load_user(tfrec_gauth_cred *c, const tfrec_gauth_json *j, const char *path, char *err,
                     size_t errcap)
{
    static const char type[] = "authorized_user";
    int rc;
    if ((rc = dup_field(&c->client_id, j, "client_id", 1, path, type, err, errcap)) < 0 ||
        (rc = dup_field(&c->client_secret, j, "client_secret", 1, path, type, err, errcap)) < 0 ||
        (rc = dup_field(&c->refresh_token, j, "refresh_token", 1, path, type, err, errcap)) < 0)
        return rc;
    c->kind = TFREC_GAUTH_CRED_USER;
    /* The OAuth client id tells which login made them (gcloud's own, or an
     * application's); the refresh token is a secret and stays out. */
    snprintf(c->account, sizeof c->account, "user credentials (OAuth client %.*s)",
             (int)(sizeof c->account - 40), c->client_id);
    return TFREC_OK;
}

static int set_token_uri(tfrec_gauth_cred *c, const tfrec_gauth_json *j, const char *path,
                         char *err, size_t errcap)
{
    char env[2048];
    int have_env = tfrec_cfg(TFREC_CFG_TOKEN_URI, env, sizeof env) > 0;
    const char *uri = have_env ? env : tfrec_gauth_json_string(j, "token_uri");
    const char *where = have_env ? "TFREC_GCS_TOKEN_URI" : "field \"token_uri\"";
    if (!uri || !*uri)
        uri = TFREC_GAUTH_DEFAULT_TOKEN_URI;
    char buf[120];
    if (!tfrec_gauth_url_allowed(uri)) {
        snprintf(err, errcap,
                 "%s: %s is %s: credentials are only sent over https:// (or http:// to a "
                 "loopback address)",
                 path, where, shown(buf, sizeof buf, uri));
        return TFREC_E_INVALID;
    }
    c->token_uri = strdup(uri);
    if (!c->token_uri) {
        snprintf(err, errcap, "out of memory");
        return TFREC_E_NOMEM;
    }
    return TFREC_OK;
}

int tfrec_gauth_cred_load(tfrec_gauth_cred *c, const char *path, char *err, size_t errcap)
{
    char *text = NULL;
    size_t len = 0;
    tfrec_gauth_json *j = NULL;
    memset(c, 0, sizeof *c);
    int rc = slurp(path, &text, &len, err, errcap);
    if (rc < 0)
        return rc;
    char why[120], buf[80];
    if ((rc = tfrec_gauth_json_parse(&j, text, len, why, sizeof why)) < 0) {
        snprintf(err, errcap, "%s: not a JSON credentials file (%s)", path, why);
        goto done;
    }
    if (!(c->origin = strdup(path))) {
        rc = TFREC_E_NOMEM;
        snprintf(err, errcap, "out of memory");
        goto done;
    }
    const char *type = tfrec_gauth_json_string(j, "type");
    if (!type) {
        rc = TFREC_E_PARSE;
        snprintf(err, errcap,
                 "%s: no \"type\" field (expected \"service_account\" or \"authorized_user\")",
                 path);
    } else if (strcmp(type, "service_account") == 0) {
        rc = load_service_account(c, j, path, err, errcap);
    } else if (strcmp(type, "authorized_user") == 0) {
        rc = load_user(c, j, path, err, errcap);
    } else {
        rc = TFREC_E_UNSUPPORTED;
        snprintf(err, errcap,
                 "%s: credentials of type \"%s\" are not supported (use a service_account key "
                 "or authorized_user credentials)",
                 path, shown(buf, sizeof buf, type));
    }
    if (rc == TFREC_OK)
        rc = set_token_uri(c, j, path, err, errcap);
done:
    tfrec_gauth_json_free(j); /* holds copies of the secrets too */
    OPENSSL_cleanse(text, len);
    free(text);
    if (rc < 0)
        tfrec_gauth_cred_clear(c);
    return rc;
}

static void free_secret(char *s)
{
    if (s)
        OPENSSL_cleanse(s, strlen(s));
    free(s);
}

void tfrec_gauth_cred_clear(tfrec_gauth_cred *c)
{
    free(c->origin);
    free(c->token_uri);
    free(c->client_email);
    free(c->private_key_id);
    EVP_PKEY_free(c->key);
    free(c->client_id);
    free_secret(c->client_secret);
    free_secret(c->refresh_token);
    free(c->metadata_host);
    memset(c, 0, sizeof *c);
}

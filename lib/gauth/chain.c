/* Which credentials to use, in the order Google's client libraries look:
 * a file named by the caller, GOOGLE_APPLICATION_CREDENTIALS, gcloud's
 * application-default credentials, then the GCE metadata server. A named
 * file that is missing or malformed is an error, not a reason to go on
 * down the chain: silently acting as another account would be worse. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gauth/gauth_internal.h"
#include "tfrec/error.h"
#include "util/config.h"

/* gcloud's file: $CLOUDSDK_CONFIG/application_default_credentials.json,
 * else ~/.config/gcloud/ (0 when there is no home to look in). */
static int adc_path(char *buf, size_t cap)
{
    char dir[4096], home[4096];
    if (tfrec_cfg(TFREC_CFG_CLOUDSDK_CONFIG, dir, sizeof dir) > 0)
        return snprintf(buf, cap, "%s/application_default_credentials.json", dir) < (int)cap;
    if (tfrec_cfg(TFREC_CFG_HOME, home, sizeof home) <= 0)
        return 0;
    return snprintf(buf, cap, "%s/.config/gcloud/application_default_credentials.json", home) <
           (int)cap;
}

/* GCE_METADATA_HOST (the Go and Python clients' name), GCE_METADATA_ROOT
 * (the C++ client's), else the metadata server's DNS name. */
const char *tfrec_gauth_metadata_host(char *buf, size_t cap)
{
    if (tfrec_cfg(TFREC_CFG_GCE_METADATA_HOST, buf, cap) > 0 ||
        tfrec_cfg(TFREC_CFG_GCE_METADATA_ROOT, buf, cap) > 0)
        return buf;
    return TFREC_GAUTH_METADATA_HOST;
}

/* The metadata server answers with Metadata-Flavor: Google, which tells it
 * apart from whatever else may answer at that name; its answer also names
 * the account. Off GCE this fails within the short probe timeout. */
static int probe_metadata(tfrec_gauth_cred *c, const tfrec_gauth_tuning *t, char *why,
                          size_t whycap)
{
    char hostbuf[512];
    const char *host = tfrec_gauth_metadata_host(hostbuf, sizeof hostbuf);
    char url[600];
    if (strcspn(host, "/?#@ \t\r\n") != strlen(host) ||
        snprintf(url, sizeof url,
                 "http://%s/computeMetadata/v1/instance/service-accounts/default/email",
                 host) >= (int)sizeof url) {
        snprintf(why, whycap, "GCE_METADATA_HOST is not a host[:port]");
        return TFREC_E_INVALID;
    }
    tfrec_gauth_http_reply r;
    int rc = tfrec_gauth_http(url, NULL, 1, t->probe_timeout_ms, t->probe_timeout_ms, &r);
    if (rc == TFREC_OK && r.status == 200 && r.flavor_google) {
        size_t n = r.len;
        while (n && (r.body[n - 1] == '\n' || r.body[n - 1] == '\r' || r.body[n - 1] == ' '))
            n--;
        if (n == 0 || n >= sizeof c->account || memchr(r.body, '\n', n))
            snprintf(c->account, sizeof c->account,
                     "the metadata server's default service account");
        else
            snprintf(c->account, sizeof c->account,
                     "%.*s (the metadata server's default service account)",
                     (int)(n < sizeof c->account - 60 ? n : sizeof c->account - 60), r.body);
        c->kind = TFREC_GAUTH_CRED_METADATA;
        c->metadata_host = strdup(host);
        size_t on = strlen(host) + 40;
        c->origin = malloc(on);
        if (c->origin)
            snprintf(c->origin, on, "GCE metadata server at %s", host);
        tfrec_gauth_http_reply_clear(&r);
        if (!c->metadata_host || !c->origin) {
            tfrec_gauth_cred_clear(c);
            snprintf(why, whycap, "out of memory");
            return TFREC_E_NOMEM;
        }
        return TFREC_OK;
    }
    if (rc != TFREC_OK)
        snprintf(why, whycap, "the GCE metadata server at %s did not answer (%s)", host,
                 r.curl_msg);
    else if (!r.flavor_google)
        snprintf(why, whycap,
                 "%s answered HTTP %ld without Metadata-Flavor: Google: not a GCE metadata server",
                 host, r.status);
    else
        snprintf(why, whycap,
                 "the GCE metadata server at %s has no default service account (HTTP %ld)", host,
                 r.status);
    tfrec_gauth_http_reply_clear(&r);
    return rc == TFREC_E_NOMEM ? rc : TFREC_E_NOT_FOUND;
}

int tfrec_gauth_chain_resolve(tfrec_gauth_cred *c, const char *explicit_file,
                              const tfrec_gauth_tuning *t, char *err, size_t errcap)
{
    memset(c, 0, sizeof *c);
    if (explicit_file && *explicit_file)
        return tfrec_gauth_cred_load(c, explicit_file, err, errcap);
    char env[4096];
    if (tfrec_cfg(TFREC_CFG_GOOGLE_APPLICATION_CREDENTIALS, env, sizeof env) > 0) {
        int rc = tfrec_gauth_cred_load(c, env, err, errcap);
        if (rc < 0 && errcap) {
            char tmp[512];
            snprintf(tmp, sizeof tmp, "%s", err);
            snprintf(err, errcap, "GOOGLE_APPLICATION_CREDENTIALS: %s", tmp);
        }
        return rc;
    }
    char adc[4096];
    int have_adc = adc_path(adc, sizeof adc);
    struct stat st;
    if (have_adc && stat(adc, &st) == 0)
        return tfrec_gauth_cred_load(c, adc, err, errcap);

    char why[600];
    int rc = probe_metadata(c, t, why, sizeof why);
    if (rc == TFREC_OK || rc == TFREC_E_NOMEM) {
        if (rc < 0)
            snprintf(err, errcap, "%s", why);
        return rc;
    }
    snprintf(err, errcap,
             "no Google credentials found: no credentials file was given, "
             "GOOGLE_APPLICATION_CREDENTIALS is not set, %s%s, and %s (set "
             "GOOGLE_APPLICATION_CREDENTIALS to a key file, run `gcloud auth "
             "application-default login`, or ask for anonymous access)",
             have_adc ? adc : "gcloud's application-default credentials file",
             have_adc ? " does not exist" : " has no home directory to be in", why);
    return TFREC_E_NOT_FOUND;
}

/* Project id from the GCE metadata server, as the reference loader does
 * when --project is not given. Only asked when needed; a 2 s timeout keeps
 * a run off GCE from hanging. */
#include <stdio.h>
#include <string.h>

#include "gauth/gauth_internal.h"
#include "tfrec/error.h"

int tfrec_gauth_metadata_project(char *buf, size_t cap, char *err, size_t errcap)
{
    char hostbuf[512], url[640];
    const char *host = tfrec_gauth_metadata_host(hostbuf, sizeof hostbuf);
    snprintf(url, sizeof url, "http://%s/computeMetadata/v1/project/project-id", host);
    buf[0] = 0;
    tfrec_gauth_http_reply r;
    int rc = tfrec_gauth_http(url, NULL, 1, 2000, 2000, &r);
    size_t n = rc == TFREC_OK ? r.len : 0;
    while (n && (r.body[n - 1] == '\n' || r.body[n - 1] == '\r' || r.body[n - 1] == ' '))
        n--;
    if (rc != TFREC_OK || r.status != 200 || !r.flavor_google || n == 0 || n >= cap ||
        memchr(r.body, '\n', n)) {
        snprintf(err, errcap,
                 "no project given and the GCE metadata server (%s) did not provide one (%s)", url,
                 rc != TFREC_OK ? r.curl_msg : "bad reply");
        tfrec_gauth_http_reply_clear(&r);
        return rc == TFREC_E_NOMEM ? rc : TFREC_E_INVALID;
    }
    memcpy(buf, r.body, n);
    buf[n] = 0;
    tfrec_gauth_http_reply_clear(&r);
    return TFREC_OK;
}

/* Project id from the GCE metadata server, as the reference loader does when
 * --project is not given. Only tried when needed; a 2 s timeout keeps a run
 * off GCE from hanging. */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bigtable/client_internal.h"

typedef struct sink {
    char *buf;
    size_t cap, len;
} sink;

static size_t on_data(char *p, size_t size, size_t n, void *ctx)
{
    sink *s = ctx;
    size_t got = size * n;
    if (s->len + got >= s->cap)
        return 0; /* a project id is short: refuse junk */
    memcpy(s->buf + s->len, p, got);
    s->len += got;
    s->buf[s->len] = 0;
    return got;
}

int tfrec_bt_metadata_project(char *buf, size_t cap, tfrec_err *err)
{
    const char *host = getenv("GCE_METADATA_HOST");
    if (!host || !*host)
        host = "metadata.google.internal";
    char url[512];
    snprintf(url, sizeof url, "http://%s/computeMetadata/v1/project/project-id", host);

    CURL *curl = curl_easy_init();
    if (!curl)
        return tfrec_fail(err, TFREC_E_NOMEM, "libcurl could not start");
    struct curl_slist *hdr = curl_slist_append(NULL, "Metadata-Flavor: Google");
    sink s = { buf, cap, 0 };
    buf[0] = 0;
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &s);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 2000L);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, 2000L);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_NOPROXY, "*"); /* the metadata server is never behind a proxy */
    CURLcode rc = curl_easy_perform(curl);
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(hdr);
    curl_easy_cleanup(curl);

    if (rc != CURLE_OK || status != 200 || s.len == 0) {
        buf[0] = 0;
        return tfrec_fail(err, TFREC_E_INVALID,
                          "no project given and the GCE metadata server (%s) did not provide "
                          "one (%s)",
                          url, rc != CURLE_OK ? curl_easy_strerror(rc) : "bad reply");
    }
    while (s.len && (buf[s.len - 1] == '\n' || buf[s.len - 1] == '\r' || buf[s.len - 1] == ' '))
        buf[--s.len] = 0;
    return TFREC_OK;
}

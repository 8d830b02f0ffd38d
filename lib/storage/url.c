/* gs:// names, URL building and the base64 form of CRC32C values. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/storage_internal.h"

int tfrec_gcs_parse(const char *url, gcs_name *out, tfrec_err *err)
{
    if (!tfrec_storage_is_remote(url))
        return tfrec_fail(err, TFREC_E_INVALID, "%s: not a gs:// name", url ? url : "(null)");
    const char *b = url + 5;
    const char *slash = strchr(b, '/');
    size_t blen = slash ? (size_t)(slash - b) : strlen(b);
    const char *obj = slash ? slash + 1 : "";
    if (blen == 0)
        return tfrec_fail(err, TFREC_E_INVALID, "%s: no bucket name", url);
    if (blen > GCS_MAX_BUCKET)
        return tfrec_fail(err, TFREC_E_INVALID, "%s: bucket name longer than %d bytes", url,
                          GCS_MAX_BUCKET);
    if (strlen(obj) > GCS_MAX_OBJECT)
        return tfrec_fail(err, TFREC_E_INVALID, "%.80s...: object name longer than %d bytes", url,
                          GCS_MAX_OBJECT);
    /* Bucket names are DNS-like; anything else would be escaped into a
     * different request than the user meant. */
    for (size_t i = 0; i < blen; i++) {
        char c = b[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.'))
            return tfrec_fail(err, TFREC_E_INVALID,
                              "%s: bucket names hold only a-z 0-9 - _ . (byte %zu)", url, i + 5);
    }
    if (strpbrk(obj, "\r\n"))
        return tfrec_fail(err, TFREC_E_INVALID, "%s: object names cannot hold CR or LF", url);
    memcpy(out->bucket, b, blen);
    out->bucket[blen] = 0;
    strcpy(out->object, obj);
    return TFREC_OK;
}

int tfrec_gcs_escape(char *buf, size_t cap, size_t *len, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = *len;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        unsigned char c = *p;
        int plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '.' || c == '_' || c == '~';
        if (n + (plain ? 1 : 3) >= cap)
            return -1;
        if (plain) {
            buf[n++] = (char)c;
        } else {
            buf[n++] = '%';
            buf[n++] = hex[c >> 4];
            buf[n++] = hex[c & 15];
        }
    }
    buf[n] = 0;
    *len = n;
    return 0;
}

char *tfrec_gcs_object_url(const tfrec_storage *st, const char *prefix, const char *bucket,
                           const char *obj)
{
    size_t cap = strlen(st->endpoint) + strlen(prefix) + 3 * (strlen(bucket) + 1) +
                 (obj ? 3 * strlen(obj) : 0) + 16;
    char *u = malloc(cap);
    if (!u)
        return NULL;
    size_t n = (size_t)snprintf(u, cap, "%s%s/b/", st->endpoint, prefix);
    if (tfrec_gcs_escape(u, cap, &n, bucket) || n + 3 >= cap) {
        free(u);
        return NULL;
    }
    memcpy(u + n, "/o", 3);
    n += 2;
    if (obj) {
        u[n++] = '/';
        u[n] = 0;
        if (tfrec_gcs_escape(u, cap, &n, obj)) {
            free(u);
            return NULL;
        }
    }
    if (st->opts.user_project && tfrec_gcs_url_param(&u, "userProject", st->opts.user_project)) {
        free(u);
        return NULL;
    }
    return u;
}

int tfrec_gcs_url_param(char **url, const char *key, const char *value)
{
    size_t n = strlen(*url);
    size_t cap = n + strlen(key) + 3 * strlen(value) + 3;
    char *u = realloc(*url, cap);
    if (!u)
        return -1;
    *url = u;
    u[n++] = strchr(u, '?') ? '&' : '?';
    u[n] = 0;
    if (tfrec_gcs_escape(u, cap, &n, key) || n + 1 >= cap)
        return -1;
    u[n++] = '=';
    u[n] = 0;
    return tfrec_gcs_escape(u, cap, &n, value);
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void tfrec_gcs_crc_to_base64(uint32_t crc, char out[9])
{
    unsigned char be[4] = { (unsigned char)(crc >> 24), (unsigned char)(crc >> 16),
                            (unsigned char)(crc >> 8), (unsigned char)crc };
    uint32_t g = (uint32_t)be[0] << 16 | (uint32_t)be[1] << 8 | be[2];
    out[0] = b64[g >> 18];
    out[1] = b64[(g >> 12) & 63];
    out[2] = b64[(g >> 6) & 63];
    out[3] = b64[g & 63];
    g = (uint32_t)be[3] << 16;
    out[4] = b64[g >> 18];
    out[5] = b64[(g >> 12) & 63];
    out[6] = '=';
    out[7] = '=';
    out[8] = 0;
}

int tfrec_gcs_crc_from_base64(const char *s, size_t len, uint32_t *crc)
{
    /* Exactly 4 bytes: "XXXXXX==" (the unpadded form is accepted too). */
    if (len != 8 && len != 6)
        return -1;
    if (len == 8 && (s[6] != '=' || s[7] != '='))
        return -1;
    uint64_t acc = 0;
    for (size_t i = 0; i < 6; i++) {
        const char *p = s[i] ? strchr(b64, s[i]) : NULL;
        if (!p)
            return -1;
        acc = acc << 6 | (uint64_t)(p - b64);
    }
    /* 36 bits decoded; the last 4 must be zero in a canonical encoding. */
    if (acc & 15)
        return -1;
    *crc = (uint32_t)(acc >> 4);
    return 0;
}

int tfrec_gcs_hash_header_crc(const char *value, uint32_t *crc)
{
    for (const char *p = value; p && *p;) {
        while (*p == ' ' || *p == ',')
            p++;
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        while (n && (p[n - 1] == ' ' || p[n - 1] == '\r' || p[n - 1] == '\n'))
            n--;
        if (n > 7 && strncmp(p, "crc32c=", 7) == 0)
            return tfrec_gcs_crc_from_base64(p + 7, n - 7, crc);
        p = end;
    }
    return -1;
}

/* gs:// names, URL building and the base64 form of CRC32C values. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/storage_internal.h"

/* A whole dot segment: "." or "..". */
static int dot_segment(const char *s, size_t n)
{
    return (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.');
}

/* Well-formed UTF-8 (no overlong forms, surrogates or code points past
 * U+10FFFF): Cloud Storage names are Unicode. Returns the offset of the
 * first bad byte, or n. */
static size_t utf8_valid_prefix(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        size_t k;
        unsigned min;
        if (c < 0x80) {
            i++;
            continue;
        } else if (c >= 0xC2 && c <= 0xDF) {
            k = 1, min = 0x80;
        } else if (c >= 0xE0 && c <= 0xEF) {
            k = 2, min = 0x800;
        } else if (c >= 0xF0 && c <= 0xF4) {
            k = 3, min = 0x10000;
        } else {
            return i;
        }
        if (n - i <= k)
            return i;
        unsigned cp = c & (0x3Fu >> k);
        for (size_t j = 1; j <= k; j++) {
            if ((s[i + j] & 0xC0) != 0x80)
                return i;
            cp = cp << 6 | (s[i + j] & 0x3Fu);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return i;
        i += k + 1;
    }
    return n;
}

int tfrec_gcs_bucket_check(const char *b, size_t blen, const char *url, tfrec_err *err)
{
    if (blen == 0)
        return tfrec_fail(err, TFREC_E_INVALID, "%s: no bucket name", url);
    if (blen > GCS_MAX_BUCKET)
        return tfrec_fail(err, TFREC_E_INVALID, "%s: bucket name longer than %d bytes", url,
                          GCS_MAX_BUCKET);
    /* Bucket names are DNS-like; anything else would be escaped into a
     * different request than the user meant. */
    for (size_t i = 0; i < blen; i++) {
        char c = b[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.'))
            return tfrec_fail(err, TFREC_E_INVALID,
                              "%s: bucket names hold only a-z 0-9 - _ . (byte %zu)", url, i + 5);
    }
    /* Cloud Storage's rules: a letter or digit first and last, dot-separated
     * components of at most 63 characters (so no empty one), 63 characters
     * at most without dots. They also keep "." and ".." (which a URL would
     * resolve to another resource) from ever naming a bucket. */
    int alnum_first = (b[0] >= 'a' && b[0] <= 'z') || (b[0] >= '0' && b[0] <= '9');
    char z = b[blen - 1];
    int alnum_last = (z >= 'a' && z <= 'z') || (z >= '0' && z <= '9');
    if (!alnum_first || !alnum_last)
        return tfrec_fail(err, TFREC_E_INVALID,
                          "%s: bucket names start and end with a letter or a digit", url);
    size_t comp = 0, dots = 0;
    for (size_t i = 0; i <= blen; i++) {
        if (i == blen || b[i] == '.') {
            if (comp == 0 || comp > 63)
                return tfrec_fail(err, TFREC_E_INVALID,
                                  "%s: each dot-separated part of a bucket name holds 1 to 63 "
                                  "characters",
                                  url);
            comp = 0;
            dots += i < blen;
        } else {
            comp++;
        }
    }
    if (!dots && blen > 63)
        return tfrec_fail(err, TFREC_E_INVALID,
                          "%s: a bucket name without dots holds at most 63 characters", url);
    return TFREC_OK;
}

int tfrec_gcs_object_check(const char *obj, const char *url, tfrec_err *err)
{
    size_t n = strlen(obj);
    if (n > GCS_MAX_OBJECT)
        return tfrec_fail(err, TFREC_E_INVALID, "%.80s...: object name longer than %d bytes", url,
                          GCS_MAX_OBJECT);
    if (strpbrk(obj, "\r\n"))
        return tfrec_fail(err, TFREC_E_INVALID, "%s: object names cannot hold CR or LF", url);
    size_t bad = utf8_valid_prefix((const unsigned char *)obj, n);
    if (bad != n)
        return tfrec_fail(err, TFREC_E_INVALID,
                          "%.200s: object names are UTF-8; byte %zu of the name (0x%02x) is not",
                          url, bad, (unsigned char)obj[bad]);
    /* "." and ".." cannot name an object; a name ending in such a segment
     * ("dir/..") is refused too: whatever a server or proxy on the way makes
     * of it, it is not the object the user meant. */
    const char *last = strrchr(obj, '/');
    last = last ? last + 1 : obj;
    if (n && dot_segment(last, strlen(last)))
        return tfrec_fail(err, TFREC_E_INVALID,
                          "%s: an object name cannot be or end in the segment \"%s\"", url, last);
    static const char acme[] = ".well-known/acme-challenge/";
    if (strncmp(obj, acme, sizeof acme - 1) == 0)
        return tfrec_fail(err, TFREC_E_INVALID, "%s: object names cannot start with \"%s\"", url,
                          acme);
    return TFREC_OK;
}

int tfrec_gcs_parse(const char *url, gcs_name *out, tfrec_err *err)
{
    if (!tfrec_storage_is_remote(url))
        return tfrec_fail(err, TFREC_E_INVALID, "%s: not a gs:// name", url ? url : "(null)");
    const char *b = url + 5;
    const char *slash = strchr(b, '/');
    size_t blen = slash ? (size_t)(slash - b) : strlen(b);
    const char *obj = slash ? slash + 1 : "";
    int rc = tfrec_gcs_bucket_check(b, blen, url, err);
    if (rc == 0)
        rc = tfrec_gcs_object_check(obj, url, err);
    if (rc < 0)
        return rc;
    memcpy(out->bucket, b, blen);
    out->bucket[blen] = 0;
    strcpy(out->object, obj);
    return TFREC_OK;
}

int tfrec_gcs_escape(char *buf, size_t cap, size_t *len, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = *len;
    /* A run of dots between slashes (or the ends) is a dot segment once a
     * server decodes %2F, and "." or ".." even before: such dots go out as
     * %2E, which no URL normalisation (libcurl's, a proxy's) resolves. */
    const char *seg = s;
    int seg_dots = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        unsigned char c = *p;
        if (p == (const unsigned char *)seg) {
            size_t k = strcspn(seg, "/");
            seg_dots = k > 0 && strspn(seg, ".") == k;
        }
        if (c == '/')
            seg = (const char *)p + 1;
        int plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '-' || (c == '.' && !seg_dots) || c == '_' || c == '~';
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

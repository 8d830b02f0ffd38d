/* The Cloud Storage client's reading of response headers (storage/http.c):
 * header lines, Content-Range and a resumable session's Range, x-goog-hash,
 * and the redaction of URLs for messages, all from any bytes and without a
 * curl handle. Input: header lines separated by '\n' (each handed over by
 * length, not NUL-terminated, as libcurl does); the whole input is also
 * parsed as one Content-Range, one Range and one URL. */
#include <string.h>

#include "fuzz.h"
#include "storage/storage_internal.h"

static void check_field(const char *f, size_t cap)
{
    const char *z = memchr(f, 0, cap);
    FUZZ_ASSERT(z != NULL);
}

static void ranges(const char *v)
{
    uint64_t a = 0, z = 0, t = 0;
    int rc = tfrec_gcs_parse_content_range(v, &a, &z, &t);
    FUZZ_ASSERT(rc >= -1 && rc <= 1);
    if (rc == 0) {
        FUZZ_ASSERT(a <= z);
        FUZZ_ASSERT(t == UINT64_MAX || z < t);
    }
    uint64_t held = 0;
    if (tfrec_gcs_parse_session_range(v, &held) == 0)
        FUZZ_ASSERT(v[0] ? held >= 1 : held == 0);
    uint32_t crc;
    (void)tfrec_gcs_hash_header_crc(v, &crc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gcs_resp r = { 0 };
    const char *p = (const char *)data, *end = p + size;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
        /* a copy of exactly n bytes: ASan sees any read past them */
        char *line = malloc(n ? n : 1);
        memcpy(line, p, n);
        tfrec_gcs_resp_header(&r, line, n);
        free(line);
        p += n;
    }
    FUZZ_ASSERT(r.status == 0 || (r.status >= 100 && r.status <= 999));
    check_field(r.location, sizeof r.location);
    check_field(r.range, sizeof r.range);
    check_field(r.content_range, sizeof r.content_range);
    check_field(r.goog_hash, sizeof r.goog_hash);
    check_field(r.goog_generation, sizeof r.goog_generation);
    ranges(r.content_range);
    ranges(r.range);
    ranges(r.goog_hash);

    char *s = malloc(size + 1);
    memcpy(s, data, size);
    s[size] = 0;
    ranges(s);
    char out[96];
    size_t cap = 1 + (size ? data[0] % sizeof out : 0);
    tfrec_gcs_redact_url(s, out, cap);
    FUZZ_ASSERT(strlen(out) < cap);
    /* no capability value survives: "upload_id=" is only ever followed by
     * REDACTED (or the end of a cut message) */
    for (const char *u = strstr(out, "upload_id="); u; u = strstr(u + 1, "upload_id=")) {
        const char *v = u + 10;
        if (u == out || !strchr(out, '?') || u < strchr(out, '?') ||
            (u[-1] != '?' && u[-1] != '&' && u[-1] != ';'))
            continue;
        size_t vl = strlen(v);
        FUZZ_ASSERT(strncmp(v, "REDACTED", vl < 8 ? vl : 8) == 0 ||
                    strcmp(out + strlen(out) - 3, "...") == 0);
    }
    free(s);
    return 0;
}

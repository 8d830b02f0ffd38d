/* One file over HTTP(S) into place, safely resumable: the bytes go to
 * DEST.part, which a later attempt (a retry here, or the next run) continues
 * with a Range request; a server that answers 200 instead of 206 gets the
 * file restarted from its first byte rather than appended twice. The file
 * takes its final name only once its MD5 is right, so a half-downloaded or
 * corrupted tarball is never mistaken for the real one. */
#include "download.h"

#include <curl/curl.h>
#include <errno.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../common/exit_codes.h"
#include "../common/http_reply.h"
#include "../common/progress.h"
#include "../common/signals.h"

typedef struct xfer {
    FILE *f;
    long long start;       /* bytes already in the file when the request began */
    int restarted;         /* the server ignored Range: the file was emptied */
    long long range_total; /* Content-Range's complete length, -1: none */
    char err[256];
    cli_progress prog;
} xfer;

static int say(char *msg, size_t cap, int st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, cap, fmt, ap);
    va_end(ap);
    return st;
}

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
    xfer *x = arg;
    size_t len = size * n;
    return fwrite(p, 1, len, x->f) == len ? len : 0;
}

/* The status line decides: 206 continues the file; 200 to a ranged request
 * means the server ignored Range and the whole file follows, so the partial
 * file is emptied (libcurl then stops this attempt with a range error, and
 * the retry fetches the file from its first byte). Content-Range gives the
 * file's length, which a 416 to a resumed request is checked against.
 * libcurl's line is p[0..len) and not NUL-terminated: parsed by length. */
static size_t on_header(char *p, size_t size, size_t n, void *arg)
{
    xfer *x = arg;
    size_t len = size * n;
    const char *v;
    size_t vl;
    long long total;
    /* Every status line (redirects included): the last one is the answer. */
    int code = http_status_code(p, len);
    if (code >= 0) {
        x->range_total = -1; /* a new reply: forget the last one's */
        if (code == 200 && x->start > 0) {
            /* Range ignored: the body is the whole file from byte 0. */
            if (fflush(x->f) != 0 || ftruncate(fileno(x->f), 0) != 0 ||
                fseeko(x->f, 0, SEEK_SET) != 0) {
                snprintf(x->err, sizeof x->err, "cannot restart the partial file: %s",
                         strerror(errno));
                return 0;
            }
            x->start = 0;
            x->restarted = 1;
        }
    } else if (http_header_value(p, len, "content-range", &v, &vl) &&
               http_content_range_total(v, vl, &total) == 0) {
        x->range_total = total;
    }
    return len;
}

/* Credentials go only where they were given for: the download host, the
 * same scheme, host and port as auth_url (as libcurl parses both URLs, so
 * "http://host:1@elsewhere/" is elsewhere). Any doubt is "no". */
static int same_origin(const char *url, const char *auth_url)
{
    static const CURLUPart parts[] = { CURLUPART_SCHEME, CURLUPART_HOST, CURLUPART_PORT };
    if (!url || !auth_url)
        return 0;
    CURLU *a = curl_url(), *b = curl_url();
    int same = a && b && curl_url_set(a, CURLUPART_URL, url, 0) == CURLUE_OK &&
               curl_url_set(b, CURLUPART_URL, auth_url, 0) == CURLUE_OK;
    for (size_t i = 0; same && i < sizeof parts / sizeof parts[0]; i++) {
        char *pa = NULL, *pb = NULL;
        same = curl_url_get(a, parts[i], &pa, CURLU_DEFAULT_PORT) == CURLUE_OK &&
               curl_url_get(b, parts[i], &pb, CURLU_DEFAULT_PORT) == CURLUE_OK &&
               strcasecmp(pa, pb) == 0;
        curl_free(pa);
        curl_free(pb);
    }
    curl_url_cleanup(a);
    curl_url_cleanup(b);
    return same;
}

static int on_progress(void *arg, curl_off_t total, curl_off_t now, curl_off_t ut, curl_off_t un)
{
    xfer *x = arg;
    (void)ut;
    (void)un;
    if (total > 0)
        x->prog.total = (uint64_t)(x->start + total);
    cli_progress_update(&x->prog, (uint64_t)(x->start + now), (uint64_t)(x->start + now));
    return cli_interrupted != 0;
}

static int md5_file(const char *path, char hex[33], char *msg, size_t cap)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return say(msg, cap, EXIT_IO, "%s: cannot open: %s", path, strerror(errno));
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    static unsigned char buf[1 << 20];
    int ok = c && EVP_DigestInit_ex(c, EVP_md5(), NULL) == 1;
    size_t k;
    while (ok && (k = fread(buf, 1, sizeof buf, f)) > 0)
        ok = EVP_DigestUpdate(c, buf, k) == 1;
    ok = ok && !ferror(f);
    unsigned char d[EVP_MAX_MD_SIZE];
    unsigned dl = 0;
    ok = ok && EVP_DigestFinal_ex(c, d, &dl) == 1 && dl == 16;
    EVP_MD_CTX_free(c);
    fclose(f);
    if (!ok)
        return say(msg, cap, EXIT_IO, "%s: cannot compute its MD5", path);
    for (unsigned i = 0; i < 16; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
    return EXIT_OK;
}

/* One attempt: EXIT_OK, RETRY, RESTART (the partial file was not part of
 * this file and is emptied: try again at once), or another exit status. */
#define RETRY (-1)
#define RESTART (-2)
static int attempt(const dl_request *r, const char *part, char *msg, size_t cap)
{
    xfer x;
    memset(&x, 0, sizeof x);
    x.f = fopen(part, "ab");
    if (!x.f)
        return say(msg, cap, EXIT_IO, "%s: cannot open: %s", part, strerror(errno));
    x.start = ftello(x.f);
    x.range_total = -1;
    CURL *h = curl_easy_init();
    if (!h) {
        fclose(x.f);
        return say(msg, cap, EXIT_IO, "cannot start libcurl");
    }
    char curl_err[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(h, CURLOPT_URL, r->url);
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(h, CURLOPT_FAILONERROR, 1L);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, curl_err);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &x);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &x);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, &x);
    /* A stalled connection (under 1 KB/s for 60 s) is a failed attempt. */
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1024L);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, 60L);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "imagenet2tfrec (libtfrec)");
    if (r->user && same_origin(r->url, r->auth_url)) {
        curl_easy_setopt(h, CURLOPT_USERNAME, r->user);
        curl_easy_setopt(h, CURLOPT_PASSWORD, r->password ? r->password : "");
    }
    if (x.start > 0)
        curl_easy_setopt(h, CURLOPT_RESUME_FROM_LARGE, (curl_off_t)x.start);
    cli_progress_start(&x.prog, "bytes", 0, r->quiet);
    CURLcode rc = curl_easy_perform(h);
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(h);
    cli_progress_finish(&x.prog);
    int closed = fclose(x.f) == 0;
    if (cli_interrupted)
        return say(msg, cap, EXIT_INTERRUPTED,
                   "%s: download interrupted (%s kept: run again "
                   "to resume)",
                   r->url, part);
    if (x.err[0])
        return say(msg, cap, EXIT_IO, "%s: %s", part, x.err);
    if (!closed)
        return say(msg, cap, EXIT_IO, "%s: write failed: %s", part, strerror(errno));
    if (rc == CURLE_OK)
        return EXIT_OK;
    /* A range past the end is refused (416): the file is complete if its
     * length, Content-Range: bytes STAR/N, is exactly what we have. Without
     * N only a checksum can tell, so that file is taken (the MD5 check
     * follows) and one without is fetched again. Any other N: the partial
     * file is not a prefix of this one (longer, or a server that will not
     * continue it), so it starts over rather than being renamed into place. */
    if (status == 416 && x.start > 0) {
        if (x.range_total == x.start || (x.range_total < 0 && r->md5))
            return EXIT_OK;
        if (truncate(part, 0) != 0)
            return say(msg, cap, EXIT_IO, "%s: cannot restart the partial file: %s", part,
                       strerror(errno));
        char len[64] = "no length given";
        if (x.range_total >= 0)
            snprintf(len, sizeof len, "the file has %lld bytes", x.range_total);
        if (!r->quiet)
            cli_log("%s: the server refused to resume at byte %lld (%s): downloading it "
                    "again from the start",
                    r->url, x.start, len);
        return RESTART;
    }
    say(msg, cap, EXIT_IO, "%s: %s%s", r->url, curl_err[0] ? curl_err : curl_easy_strerror(rc),
        x.restarted ? " (the server ignored Range: restarted from the start)" : "");
    /* Client errors other than timeouts will not get better. */
    if (status >= 400 && status < 500 && status != 408 && status != 429)
        return EXIT_IO;
    return RETRY;
}

int dl_fetch(const dl_request *r, char *msg, size_t cap)
{
    char hex[33];
    struct stat st;
    if (r->md5 && stat(r->dest, &st) == 0 && md5_file(r->dest, hex, msg, cap) == EXIT_OK &&
        !strcmp(hex, r->md5)) {
        if (!r->quiet)
            cli_log("%s is already here with the right MD5", r->dest);
        return EXIT_OK;
    }
    size_t n = strlen(r->dest) + 16;
    char *part = malloc(n), *bad = malloc(n);
    if (!part || !bad) {
        free(part);
        free(bad);
        return say(msg, cap, EXIT_IO, "out of memory");
    }
    snprintf(part, n, "%s.part", r->dest);
    snprintf(bad, n, "%s.bad-md5", r->dest);
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        free(part);
        free(bad);
        return say(msg, cap, EXIT_IO, "cannot initialise libcurl");
    }
    int st_ = RETRY;
    double wait = 0.2;
    for (int a = 0; a <= r->retries && st_ == RETRY; a++) {
        if (a) {
            if (!r->quiet)
                cli_log("%s; retrying (%d of %d), resuming %s", msg, a, r->retries, part);
            struct timespec ts = { (time_t)wait, (long)((wait - (double)(time_t)wait) * 1e9) };
            nanosleep(&ts, NULL);
            wait = wait * 2 > 30 ? 30 : wait * 2;
        }
        st_ = attempt(r, part, msg, cap);
        if (st_ == RESTART) { /* at most once: the part is empty now */
            st_ = attempt(r, part, msg, cap);
            if (st_ == RESTART)
                st_ = RETRY;
        }
    }
    curl_global_cleanup();
    if (st_ == RETRY)
        st_ = EXIT_IO; /* retries exhausted: msg says why */
    if (st_ == EXIT_OK && r->md5) {
        st_ = md5_file(part, hex, msg, cap);
        if (st_ == EXIT_OK && strcmp(hex, r->md5) != 0) {
            rename(part, bad);
            st_ = say(msg, cap, EXIT_DATA,
                      "%s: MD5 %s, expected %s: the download is corrupt; kept as %s for "
                      "inspection (remove it and run again)",
                      r->url, hex, r->md5, bad);
        }
    }
    if (st_ == EXIT_OK && r->check) {
        st_ = r->check(part, msg, cap);
        if (st_ != EXIT_OK) {
            size_t used = strlen(msg);
            rename(part, bad);
            snprintf(msg + used, cap - used,
                     "; kept as %s for inspection (remove it and run again)", bad);
        }
    }
    if (st_ == EXIT_OK && rename(part, r->dest) != 0)
        st_ = say(msg, cap, EXIT_IO, "%s: cannot rename into place: %s", r->dest, strerror(errno));
    free(part);
    free(bad);
    return st_;
}

int dl_check_synset_labels(const char *path, char *msg, size_t cap)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return say(msg, cap, EXIT_IO, "%s: cannot open: %s", path, strerror(errno));
    char line[16];
    unsigned long n = 0;
    int st = EXIT_OK;
    while (st == EXIT_OK && fgets(line, sizeof line, f)) {
        n++;
        size_t len = strlen(line);
        int ok = len == 10 && line[0] == 'n' && line[9] == '\n';
        for (size_t i = 1; ok && i < 9; i++)
            ok = line[i] >= '0' && line[i] <= '9';
        if (!ok)
            st = say(msg, cap, EXIT_DATA,
                     "%s: line %lu is not a synset ID (\"n\" and 8 digits, then a newline): not "
                     "a synset_labels.txt, or cut short",
                     path, n);
        else if (n > DL_LABELS_MAX_LINES)
            st = say(msg, cap, EXIT_DATA, "%s: more than %d lines: not the validation labels", path,
                     DL_LABELS_MAX_LINES);
    }
    if (st == EXIT_OK && ferror(f))
        st = say(msg, cap, EXIT_IO, "%s: read error", path);
    if (st == EXIT_OK && n == 0)
        st = say(msg, cap, EXIT_DATA, "%s: empty: not a synset_labels.txt", path);
    fclose(f);
    return st;
}

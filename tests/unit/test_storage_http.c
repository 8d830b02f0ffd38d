/* The Cloud Storage client against a scripted loopback HTTP server: what it
 * sends (no credentials to an emulator, no request anywhere but the
 * endpoint) and how it takes replies no real server is asked to give here
 * (a session URL on another host, oversized or garbled bodies, a server
 * that keeps failing). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"
#include "storage/storage_internal.h"
#include "tfrec/tfrec.h"

#define MAX_REQ 16

typedef struct fake {
    int lsock, port;
    pthread_t thread;
    const char *const *replies; /* full HTTP responses, in order; NULL ends */
    size_t nreplies;
    char requests[MAX_REQ][4096]; /* each request received, cut at 4 KiB */
    size_t nrequests;
} fake;

static void *serve(void *arg)
{
    fake *f = arg;
    for (size_t i = 0; i < f->nreplies; i++) {
        int c = accept(f->lsock, NULL, NULL);
        if (c < 0)
            return NULL;
        /* One request per connection: read the head and any body. */
        char buf[1 << 16];
        size_t n = 0;
        char *end = NULL;
        while (!end && n < sizeof buf - 1) {
            ssize_t got = read(c, buf + n, sizeof buf - 1 - n);
            if (got <= 0)
                break;
            n += (size_t)got;
            buf[n] = 0;
            end = strstr(buf, "\r\n\r\n");
        }
        if (end) {
            size_t head = (size_t)(end - buf) + 4;
            const char *cl = strcasestr(buf, "content-length:");
            size_t body = cl && cl < end ? strtoul(cl + 15, NULL, 10) : 0;
            while (n < head + body && n < sizeof buf - 1) {
                ssize_t got = read(c, buf + n, sizeof buf - 1 - n);
                if (got <= 0)
                    break;
                n += (size_t)got;
            }
            if (f->nrequests < MAX_REQ) {
                /* the head and the start of the body */
                size_t k = n < sizeof f->requests[0] - 1 ? n : sizeof f->requests[0] - 1;
                memcpy(f->requests[f->nrequests], buf, k);
                f->requests[f->nrequests++][k] = 0;
            }
        }
        const char *r = f->replies[i];
        ssize_t w = write(c, r, strlen(r));
        (void)w;
        close(c);
    }
    return NULL;
}

static int fake_start(fake *f, const char *const *replies, size_t n)
{
    memset(f, 0, sizeof *f);
    f->replies = replies;
    f->nreplies = n;
    f->lsock = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof a;
    if (bind(f->lsock, (struct sockaddr *)&a, sizeof a) || listen(f->lsock, 8) ||
        getsockname(f->lsock, (struct sockaddr *)&a, &len))
        return -1;
    f->port = ntohs(a.sin_port);
    return pthread_create(&f->thread, NULL, serve, f);
}

static void fake_stop(fake *f)
{
    shutdown(f->lsock, SHUT_RDWR);
    close(f->lsock);
    pthread_join(f->thread, NULL);
}

static tfrec_storage *client_for(const fake *f, int emulator)
{
    char ep[64];
    snprintf(ep, sizeof ep, "127.0.0.1:%d", f->port);
    tfrec_storage *st = NULL;
    tfrec_storage_options o = TFREC_STORAGE_OPTIONS_INIT;
    o.retry_deadline_ms = 2000;
    o.upload_chunk_bytes = 256 << 10;
    if (emulator) {
        setenv("STORAGE_EMULATOR_HOST", ep, 1);
    } else {
        char url[80];
        snprintf(url, sizeof url, "http://%s", ep);
        o.endpoint = url;
        o.anonymous = 1;
        unsetenv("STORAGE_EMULATOR_HOST");
        if (tfrec_storage_new(&st, &o) != TFREC_OK)
            return NULL;
        tfrec_storage_set_backoff_ms(st, 10);
        return st;
    }
    if (tfrec_storage_new(&st, &o) != TFREC_OK)
        st = NULL;
    unsetenv("STORAGE_EMULATOR_HOST");
    if (st)
        tfrec_storage_set_backoff_ms(st, 10);
    return st;
}

#define META(size, crc)                                                              \
    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n" \
    "{\"name\":\"o\",\"size\":\"" size "\",\"generation\":\"5\",\"crc32c\":\"" crc "\"}"

static void test_emulator_requests_carry_no_credentials(void)
{
    static const char *const replies[] = { META("3", "AAAAAA==") };
    fake f;
    CHECK_EQ(fake_start(&f, replies, 1), 0);
    tfrec_storage *st = client_for(&f, 1);
    CHECK(st != NULL);
    CHECK(st->emulator);
    tfrec_storage_object o = TFREC_STORAGE_OBJECT_INIT;
    CHECKF(tfrec_storage_stat(st, "gs://b/dir/a b", &o) == TFREC_OK, "%s", tfrec_last_errmsg());
    fake_stop(&f);
    CHECK_EQ(f.nrequests, 1);
    CHECKF(strncmp(f.requests[0], "GET /storage/v1/b/b/o/dir%2Fa%20b?", 34) == 0, "%s",
           f.requests[0]);
    CHECK(strcasestr(f.requests[0], "\r\nauthorization:") == NULL);
    CHECK(strcasestr(f.requests[0], "\r\nuser-agent: libtfrec/") != NULL);
    CHECK_EQ(o.size, 3);
    CHECK_EQ(o.generation, 5);
    tfrec_storage_free(st);
}

static void test_session_on_another_host_is_refused(void)
{
    /* The session URL names another port: no byte may go there. */
    static const char *const replies[] = {
        "HTTP/1.1 200 OK\r\nLocation: http://127.0.0.1:1/upload?upload_id=x\r\n"
        "Content-Length: 0\r\nConnection: close\r\n\r\n",
    };
    fake f;
    CHECK_EQ(fake_start(&f, replies, 1), 0);
    tfrec_storage *st = client_for(&f, 0);
    CHECK(st != NULL);
    tfrec_io io = TFREC_IO_INIT;
    CHECK_EQ(tfrec_storage_open_sink(st, &io, "gs://b/big"), TFREC_OK);
    char *data = calloc(1, 300 << 10);
    int rc = io.write(io.ctx, data, 300 << 10); /* past one chunk: starts the session */
    free(data);
    CHECK_EQ(rc, TFREC_E_PARSE);
    CHECKF(strstr(io.errmsg(io.ctx), "refusing") && strstr(io.errmsg(io.ctx), "127.0.0.1:1"), "%s",
           io.errmsg(io.ctx));
    /* the session id is a capability: never in a message */
    CHECKF(strstr(io.errmsg(io.ctx), "upload_id=REDACTED") &&
               !strstr(io.errmsg(io.ctx), "upload_id=x"),
           "%s", io.errmsg(io.ctx));
    CHECK_EQ(io.close(io.ctx, 1), TFREC_E_STATE);
    fake_stop(&f);
    CHECK_EQ(f.nrequests, 1);
    CHECK(strncmp(f.requests[0], "POST /upload/storage/v1/b/b/o?uploadType=resumable&name=big",
                  59) == 0);
    tfrec_storage_free(st);
}

static void test_bad_replies_are_errors(void)
{
    static char meta10[256];
    const char *const replies[] = {
        /* metadata without a size */
        "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n{\"name\":\"o\"}",
        /* garbled JSON */
        "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n{\"name\":\"o\",}",
        /* a listing whose next page token repeats */
        "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n{\"items\":[],\"nextPageToken\":\"t\"}",
        "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n{\"items\":[],\"nextPageToken\":\"t\"}",
        /* the first ranged read (the open) answered with the wrong range */
        "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 4-9/10\r\nContent-Length: 6\r\n"
        "Connection: close\r\n\r\n456789",
        /* a later one: the open learns size and generation from the first */
        "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-9/10\r\nContent-Length: 10\r\n"
        "x-goog-generation: 5\r\nConnection: close\r\n\r\n0123456789",
        /* no x-goog-hash came: the CRC32C is taken from the metadata */
        meta10,
        "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 2-9/10\r\nContent-Length: 8\r\n"
        "Connection: close\r\n\r\n23456789",
    };
    char crc[9];
    tfrec_gcs_crc_to_base64(tfrec_crc32c("0123456789", 10), crc);
    snprintf(meta10, sizeof meta10,
             "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n{\"name\":\"o\",\"size\":\"10\","
             "\"generation\":\"5\",\"crc32c\":\"%s\"}",
             crc);
    fake f;
    CHECK_EQ(fake_start(&f, replies, 8), 0);
    tfrec_storage *st = client_for(&f, 0);
    CHECK(st != NULL);
    tfrec_storage_object o = TFREC_STORAGE_OBJECT_INIT;
    CHECK_EQ(tfrec_storage_stat(st, "gs://b/o", &o), TFREC_E_PARSE);
    CHECKF(strstr(tfrec_last_errmsg(), "gs://b/o: metadata reply without a valid size"), "%s",
           tfrec_last_errmsg());
    CHECK_EQ(tfrec_storage_stat(st, "gs://b/o", &o), TFREC_E_PARSE);
    CHECKF(strstr(tfrec_last_errmsg(), "bad metadata reply"), "%s", tfrec_last_errmsg());
    tfrec_storage_list *l;
    CHECK_EQ(tfrec_storage_glob(st, "gs://b/x*", &l), TFREC_E_PARSE);
    CHECKF(strstr(tfrec_last_errmsg(), "repeated page token"), "%s", tfrec_last_errmsg());
    tfrec_io io = TFREC_IO_INIT;
    CHECK_EQ(tfrec_storage_open_source(st, &io, "gs://b/o"), TFREC_E_PARSE);
    CHECKF(strstr(tfrec_last_errmsg(), "gs://b/o: asked for bytes from 0, the server sent "
                                       "'bytes 4-9/10'"),
           "%s", tfrec_last_errmsg());
    CHECK_EQ(tfrec_storage_open_source(st, &io, "gs://b/o"), TFREC_OK);
    CHECK_EQ(io.size(io.ctx), 10);
    char buf[16];
    CHECK_EQ(io.read(io.ctx, buf, sizeof buf), 10);
    CHECK(memcmp(buf, "0123456789", 10) == 0);
    CHECK_EQ(io.seek(io.ctx, 2), TFREC_OK); /* block 0 is gone: a new request, pinned */
    CHECK_EQ(io.read(io.ctx, buf, sizeof buf), 8);
    CHECK(memcmp(buf, "23456789", 8) == 0);
    io.close(io.ctx, 0);
    fake_stop(&f);
    CHECK(strstr(f.requests[3], "pageToken=t") != NULL);
    /* No metadata request: the open's ranged GET is of the current object. */
    CHECK(strncmp(f.requests[4], "GET /storage/v1/b/b/o/o?alt=media HTTP", 38) == 0);
    CHECK(strstr(f.requests[4], "\r\nRange: bytes=0-") != NULL);
    CHECK(strstr(f.requests[5], "generation=") == NULL);
    CHECKF(strncmp(f.requests[6], "GET /storage/v1/b/b/o/o?fields=", 31) == 0 &&
               strstr(f.requests[6], "generation=5"),
           "%s", f.requests[6]);
    /* Read to the end: streamed, so the seek restarts an open-ended GET. */
    CHECK(strstr(f.requests[7], "\r\nRange: bytes=2-\r\n") != NULL);
    CHECK(strstr(f.requests[7], "generation=5") != NULL);
    tfrec_storage_free(st);
}

static void test_oversized_reply_is_refused(void)
{
    /* A metadata reply larger than any real one: refused, not buffered. */
    size_t big = GCS_MAX_JSON_BODY + 100;
    char *reply = malloc(big + 200);
    CHECK(reply != NULL);
    int n = snprintf(reply, 200, "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n", big);
    memset(reply + n, ' ', big);
    reply[n + big] = 0;
    const char *replies[] = { reply };
    fake f;
    CHECK_EQ(fake_start(&f, replies, 1), 0);
    tfrec_storage *st = client_for(&f, 0);
    CHECK(st != NULL);
    tfrec_storage_object o = TFREC_STORAGE_OBJECT_INIT;
    CHECK_EQ(tfrec_storage_stat(st, "gs://b/o", &o), TFREC_E_PARSE);
    CHECKF(strstr(tfrec_last_errmsg(), "reply larger than"), "%s", tfrec_last_errmsg());
    fake_stop(&f);
    free(reply);
    tfrec_storage_free(st);
}

static void test_retries_stop_at_the_deadline(void)
{
    static const char *const r503 = "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\n"
                                    "\r\n{\"error\":{\"message\":\"try later\"}}";
    static const char *const replies[] = { r503, r503, r503, r503, r503, r503, r503, r503 };
    fake f;
    CHECK_EQ(fake_start(&f, replies, 8), 0);
    tfrec_storage *st = client_for(&f, 0);
    CHECK(st != NULL);
    st->opts.retry_deadline_ms = 150;
    tfrec_storage_set_backoff_ms(st, 20);
    uint64_t t0 = tfrec_gcs_now_ms();
    tfrec_storage_object o = TFREC_STORAGE_OBJECT_INIT;
    CHECK_EQ(tfrec_storage_stat(st, "gs://b/o", &o), TFREC_E_NETWORK);
    uint64_t took = tfrec_gcs_now_ms() - t0;
    CHECKF(strstr(tfrec_last_errmsg(), "HTTP 503") && strstr(tfrec_last_errmsg(), "try later"),
           "%s", tfrec_last_errmsg());
    CHECKF(took < 1000, "%llu ms", (unsigned long long)took);
    CHECK(f.nrequests >= 2);
    fake_stop(&f); /* its remaining accepts fail */
    tfrec_storage_free(st);
}

/* Uploads carry the object's CRC32C: in the metadata part of a one-request
 * upload, in X-Goog-Hash on the last request of a session. A server that
 * stored other bytes than were sent is caught, and the object removed. */
static void test_uploads_send_and_check_the_crc32c(void)
{
    static char session_reply[256], final_reply[256], single_reply[256];
    const char *const replies[] = { session_reply,
                                    "HTTP/1.1 308 Resume Incomplete\r\nRange: bytes=0-262143\r\n"
                                    "Content-Length: 0\r\nConnection: close\r\n\r\n",
                                    final_reply, single_reply,
                                    "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n" };
    fake f;
    CHECK_EQ(fake_start(&f, replies, 5), 0);
    snprintf(session_reply, sizeof session_reply,
             "HTTP/1.1 200 OK\r\nLocation: http://127.0.0.1:%d/upload/storage/v1/b/b/o?"
             "uploadType=resumable&upload_id=s1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
             f.port);
    size_t size = 300 << 10;
    char *data = malloc(size);
    harness_random(data, size, 3);
    char crc[9];
    tfrec_gcs_crc_to_base64(tfrec_crc32c(data, size), crc);
    snprintf(final_reply, sizeof final_reply,
             "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n{\"name\":\"big\",\"size\":\"%zu\","
             "\"crc32c\":\"%s\"}",
             size, crc);
    /* The one-request upload comes back with another CRC32C. */
    snprintf(single_reply, sizeof single_reply,
             "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n{\"name\":\"small\",\"size\":\"5\","
             "\"crc32c\":\"AAAAAA==\"}");
    tfrec_storage *st = client_for(&f, 0);
    CHECK(st != NULL);
    tfrec_io io = TFREC_IO_INIT;
    CHECK_EQ(tfrec_storage_open_sink(st, &io, "gs://b/big"), TFREC_OK);
    CHECK_EQ(io.write(io.ctx, data, size), TFREC_OK);
    CHECKF(io.close(io.ctx, 1) == TFREC_OK, "%s", tfrec_last_errmsg());
    CHECK_EQ(tfrec_storage_open_sink(st, &io, "gs://b/small"), TFREC_OK);
    CHECK_EQ(io.write(io.ctx, "hello", 5), TFREC_OK);
    CHECK_EQ(io.close(io.ctx, 1), TFREC_E_IO);
    CHECKF(strstr(tfrec_last_errmsg(), "gs://b/small: CRC32C mismatch") &&
               strstr(tfrec_last_errmsg(), "removed"),
           "%s", tfrec_last_errmsg());
    fake_stop(&f);
    CHECK_EQ(f.nrequests, 5);
    CHECK(strstr(f.requests[1], "Content-Range: bytes 0-262143/*\r\n") != NULL);
    CHECK(strcasestr(f.requests[1], "x-goog-hash") == NULL);
    char want[64];
    snprintf(want, sizeof want, "X-Goog-Hash: crc32c=%s\r\n", crc);
    CHECKF(strstr(f.requests[2], "Content-Range: bytes 262144-307199/307200\r\n") &&
               strstr(f.requests[2], want),
           "%s", f.requests[2]);
    CHECK(strncmp(f.requests[3], "POST /upload/storage/v1/b/b/o?uploadType=multipart", 50) == 0);
    tfrec_gcs_crc_to_base64(tfrec_crc32c("hello", 5), crc);
    snprintf(want, sizeof want, "{\"name\":\"small\",\"crc32c\":\"%s\"}", crc);
    CHECKF(strstr(f.requests[3], want) && strstr(f.requests[3], "\r\n\r\nhello\r\n--"), "%s",
           f.requests[3]);
    CHECK(strncmp(f.requests[4], "DELETE /storage/v1/b/b/o/small ", 31) == 0);
    free(data);
    tfrec_storage_free(st);
}

#define OK_JSON(body) "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" body
#define NO_CONTENT "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n"

/* Names with dot segments: "gs://b/.." would be DELETE on the bucket's URL
 * once a URL resolver squashed the segment, "gs://b/." the object
 * collection, "gs://./o/x" another bucket. Such names are refused, the dots
 * of a segment of dots go out as %2E, and libcurl sends a path as is. */
static void test_dot_segments_never_reach_another_resource(void)
{
    static const char *const refused[] = {
        "gs://b/..",
        "gs://b/.",
        "gs://./o/x",
        "gs://../o/x",
        "gs://b/dir/..",
        "gs://b/dir/.",
        "gs://-b/x",
        "gs://b-/x",
        "gs://a..b/x",
        "gs://.b/x",
        "gs://b/\xff\xfe",
        "gs://b/\xc0\xae\xc0\xae", /* overlong "..": not UTF-8 */
        "gs://b/.well-known/acme-challenge/t",
    };
    gcs_name n;
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        CHECKF(tfrec_gcs_parse(refused[i], &n, NULL) == TFREC_E_INVALID, "%s accepted", refused[i]);
    static const char *const accepted[] = { "gs://b/a/../c",
                                            "gs://b/...",
                                            "gs://b/.x",
                                            "gs://b/x.",
                                            "gs://a.b-c_d/o",
                                            "gs://b/d/",
                                            "gs://b/\xc3\xa9t\xc3\xa9",
                                            "gs://b" };
    for (size_t i = 0; i < sizeof accepted / sizeof accepted[0]; i++)
        CHECKF(tfrec_gcs_parse(accepted[i], &n, NULL) == TFREC_OK, "%s: %s", accepted[i],
               tfrec_last_errmsg());

    static char reply[256];
    const char *const replies[] = { reply, NO_CONTENT };
    fake f;
    CHECK_EQ(fake_start(&f, replies, 2), 0);
    snprintf(reply, sizeof reply, "%s", META("3", "AAAAAA=="));
    tfrec_storage *st = client_for(&f, 0);
    CHECK(st != NULL);
    /* Refused before any request. */
    CHECK_EQ(tfrec_storage_remove(st, "gs://b/.."), TFREC_E_INVALID);
    CHECKF(strstr(tfrec_last_errmsg(), "gs://b/..: an object name cannot be or end in the "
                                       "segment \"..\""),
           "%s", tfrec_last_errmsg());
    tfrec_io io = TFREC_IO_INIT;
    CHECK_EQ(tfrec_storage_open_sink(st, &io, "gs://b/."), TFREC_E_INVALID);
    CHECK_EQ(tfrec_storage_open_source(st, &io, "gs://./o/x"), TFREC_E_INVALID);
    tfrec_storage_list *l;
    CHECK_EQ(tfrec_storage_glob(st, "gs://../*", &l), TFREC_E_INVALID);
    CHECK_EQ(f.nrequests, 0);
    /* A name with dot segments inside: one path segment, dots escaped. */
    tfrec_storage_object o = TFREC_STORAGE_OBJECT_INIT;
    CHECKF(tfrec_storage_stat(st, "gs://b/a/./../c", &o) == TFREC_OK, "%s", tfrec_last_errmsg());
    /* A raw path with a dot segment goes out as it is (CURLOPT_PATH_AS_IS). */
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/storage/v1/b/b/o/x/../..", f.port);
    gcs_call call = { .method = "DELETE", .url = url, .what = "raw" };
    gcs_resp resp = { 0 };
    int auth_rc;
    CHECK_EQ(tfrec_gcs_attempt(st, &call, &resp, 0, NULL, &auth_rc), CURLE_OK);
    tfrec_gcs_resp_free(&resp);
    fake_stop(&f);
    CHECK_EQ(f.nrequests, 2);
    CHECKF(strncmp(f.requests[0], "GET /storage/v1/b/b/o/a%2F%2E%2F%2E%2E%2Fc?", 43) == 0, "%s",
           f.requests[0]);
    CHECKF(strncmp(f.requests[1], "DELETE /storage/v1/b/b/o/x/../.. HTTP", 37) == 0, "%s",
           f.requests[1]);
    /* URL building: only segments made of dots are escaped. */
    char *u = tfrec_gcs_object_url(st, "/storage/v1", "b", "...");
    CHECK(u && strstr(u, "/b/b/o/%2E%2E%2E"));
    free(u);
    u = tfrec_gcs_object_url(st, "/storage/v1", "b", ".x/y./z.z");
    CHECK(u && strstr(u, "/b/b/o/.x%2Fy.%2Fz.z"));
    free(u);
    tfrec_storage_free(st);
}

/* A listing ends: page tokens that go round in a circle, or a server that
 * hands out a new token with every page for ever, are errors that name the
 * bucket and the prefix. */
static void test_listing_that_never_ends_is_cut(void)
{
    static const char *const cycle[] = {
        OK_JSON("{\"items\":[{\"name\":\"x1\",\"size\":\"1\"}],\"nextPageToken\":\"A\"}"),
        OK_JSON("{\"items\":[{\"name\":\"x2\",\"size\":\"1\"}],\"nextPageToken\":\"B\"}"),
        OK_JSON("{\"items\":[{\"name\":\"x1\",\"size\":\"1\"}],\"nextPageToken\":\"A\"}"),
    };
    fake f;
    CHECK_EQ(fake_start(&f, cycle, 3), 0);
    tfrec_storage *st = client_for(&f, 0);
    CHECK(st != NULL);
    tfrec_storage_list *l;
    CHECK_EQ(tfrec_storage_glob(st, "gs://b/dir/x*", &l), TFREC_E_PARSE);
    CHECKF(strstr(tfrec_last_errmsg(), "listing gs://b (prefix \"dir/x\")") &&
               strstr(tfrec_last_errmsg(), "repeated page token A after 3 pages"),
           "%s", tfrec_last_errmsg());
    fake_stop(&f);
    CHECK_EQ(f.nrequests, 3);
    CHECK(strstr(f.requests[2], "pageToken=B"));
    tfrec_storage_free(st);

    /* A new token on every page: the page limit ends it. */
    enum { PAGES = 6 };
    static char fresh[PAGES][160];
    const char *replies[PAGES];
    for (int i = 0; i < PAGES; i++) {
        snprintf(
            fresh[i], sizeof fresh[i],
            OK_JSON("{\"items\":[{\"name\":\"x%d\",\"size\":\"1\"}],\"nextPageToken\":\"t%d\"}"), i,
            i);
        replies[i] = fresh[i];
    }
    CHECK_EQ(fake_start(&f, replies, PAGES), 0);
    st = client_for(&f, 0);
    CHECK(st != NULL);
    st->list_max_pages = 5;
    CHECK_EQ(tfrec_storage_glob(st, "gs://b/x*", &l), TFREC_E_PARSE);
    CHECKF(strstr(tfrec_last_errmsg(), "listing gs://b (prefix \"x\"): still more pages after 5"),
           "%s", tfrec_last_errmsg());
    fake_stop(&f);
    CHECK_EQ(f.nrequests, 5);
    tfrec_storage_free(st);

    /* Empty pages with new tokens for ever: cut after a run of them. */
    size_t nempty = GCS_LIST_MAX_EMPTY_PAGES + 1;
    char **empty = calloc(nempty, sizeof *empty);
    CHECK(empty != NULL);
    for (size_t i = 0; i < nempty; i++) {
        empty[i] = malloc(128);
        snprintf(empty[i], 128, OK_JSON("{\"nextPageToken\":\"e%zu\"}"), i);
    }
    CHECK_EQ(fake_start(&f, (const char *const *)empty, nempty), 0);
    st = client_for(&f, 0);
    CHECK(st != NULL);
    CHECK_EQ(tfrec_storage_glob(st, "gs://b/x*", &l), TFREC_E_PARSE);
    CHECKF(strstr(tfrec_last_errmsg(), "1000 pages in a row without an object or a prefix"), "%s",
           tfrec_last_errmsg());
    fake_stop(&f);
    for (size_t i = 0; i < nempty; i++)
        free(empty[i]);
    free(empty);
    tfrec_storage_free(st);
}

/* The reply that ends an upload says the server stored another size: the
 * upload fails and the object it left is removed (that generation only). */
static void test_upload_of_the_wrong_size_is_removed(void)
{
    static const char *const replies[] = {
        OK_JSON("{\"name\":\"small\",\"size\":\"4\",\"generation\":\"7\"}"),
        NO_CONTENT,
    };
    fake f;
    CHECK_EQ(fake_start(&f, replies, 2), 0);
    tfrec_storage *st = client_for(&f, 0);
    CHECK(st != NULL);
    tfrec_io io = TFREC_IO_INIT;
    CHECK_EQ(tfrec_storage_open_sink(st, &io, "gs://b/small"), TFREC_OK);
    CHECK_EQ(io.write(io.ctx, "hello", 5), TFREC_OK);
    CHECK_EQ(io.close(io.ctx, 1), TFREC_E_IO);
    CHECKF(strstr(tfrec_last_errmsg(), "gs://b/small: the server stored 4 bytes, 5 were sent; "
                                       "the object was removed"),
           "%s", tfrec_last_errmsg());
    fake_stop(&f);
    CHECK_EQ(f.nrequests, 2);
    CHECKF(strncmp(f.requests[1], "DELETE /storage/v1/b/b/o/small?ifGenerationMatch=7 ", 51) == 0,
           "%s", f.requests[1]);
    tfrec_storage_free(st);
}

/* A resumable session's URL carries its upload_id, which lets anyone
 * holding it write the object: network errors name the session redacted. */
static void test_session_id_never_reaches_a_message(void)
{
    enum { N = 40 };
    static char session_reply[256];
    const char *replies[N];
    replies[0] = session_reply;
    for (int i = 1; i < N; i++)
        replies[i] = ""; /* the connection closes without a reply */
    fake f;
    CHECK_EQ(fake_start(&f, replies, N), 0);
    snprintf(session_reply, sizeof session_reply,
             "HTTP/1.1 200 OK\r\nLocation: http://127.0.0.1:%d/upload/storage/v1/b/b/o?"
             "uploadType=resumable&upload_id=SECRET-SESSION-42&x=1\r\nContent-Length: 0\r\n"
             "Connection: close\r\n\r\n",
             f.port);
    tfrec_storage *st = client_for(&f, 0);
    CHECK(st != NULL);
    st->opts.retry_deadline_ms = 100;
    tfrec_io io = TFREC_IO_INIT;
    CHECK_EQ(tfrec_storage_open_sink(st, &io, "gs://b/big"), TFREC_OK);
    char *data = calloc(1, 300 << 10);
    int rc = io.write(io.ctx, data, 300 << 10);
    free(data);
    CHECK_EQ(rc, TFREC_E_NETWORK);
    const char *m = io.errmsg(io.ctx);
    CHECKF(strstr(m, "gs://b/big: PUT http://127.0.0.1:") &&
               strstr(m, "uploadType=resumable&upload_id=REDACTED&x=1") && !strstr(m, "SECRET"),
           "%s", m);
    CHECK(!strstr(tfrec_last_errmsg(), "SECRET"));
    CHECK(io.close(io.ctx, 1) < 0);
    CHECKF(!strstr(tfrec_last_errmsg(), "SECRET"), "%s", tfrec_last_errmsg());
    fake_stop(&f);
    tfrec_storage_free(st);

    char out[64];
    tfrec_gcs_redact_url("https://h/p?upload_id=abc&alt=media&access_token=t#frag", out,
                         sizeof out);
    CHECKF(strcmp(out, "https://h/p?upload_id=REDACTED&alt=media&access_token=REDACTED") == 0, "%s",
           out);
    tfrec_gcs_redact_url("https://h/p?upload_id=abcdefghijklmnopqrstuvwxyz&a=0123456789", out, 40);
    CHECKF(strlen(out) == 39 && !strstr(out, "abc") && strcmp(out + 36, "...") == 0, "%s", out);
    tfrec_gcs_redact_url(NULL, out, sizeof out);
    CHECK(out[0] == 0);
}

/* A download whose replies carry no x-goog-hash is still checked: against
 * the CRC32C in the metadata of the generation read, or it fails unless
 * no_checksum opts out. */
static void test_download_without_hash_checks_the_metadata_crc(void)
{
#define OBJ10                                                                               \
    "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-9/10\r\nContent-Length: 10\r\n" \
    "x-goog-generation: 5\r\nConnection: close\r\n\r\n0123456789"
    static const char *const replies[] = {
        OBJ10,
        OK_JSON("{\"name\":\"o\",\"size\":\"10\",\"generation\":\"5\",\"crc32c\":\"AAAAAA==\"}"),
        OBJ10,
        OK_JSON("{\"name\":\"o\",\"size\":\"10\",\"generation\":\"5\"}"),
        OBJ10,
    };
    fake f;
    CHECK_EQ(fake_start(&f, replies, 5), 0);
    tfrec_storage *st = client_for(&f, 0);
    CHECK(st != NULL);
    char buf[16];
    tfrec_io io = TFREC_IO_INIT;
    /* The metadata's CRC32C is not the bytes': a mismatch. */
    CHECK_EQ(tfrec_storage_open_source(st, &io, "gs://b/o"), TFREC_OK);
    CHECK_EQ(io.read(io.ctx, buf, sizeof buf), TFREC_E_IO);
    CHECKF(strstr(io.errmsg(io.ctx), "gs://b/o: CRC32C mismatch: the object's is AAAAAA=="), "%s",
           io.errmsg(io.ctx));
    io.close(io.ctx, 0);
    /* No CRC32C anywhere: not read as if checked. */
    CHECK_EQ(tfrec_storage_open_source(st, &io, "gs://b/o"), TFREC_OK);
    CHECK_EQ(io.read(io.ctx, buf, sizeof buf), TFREC_E_IO);
    CHECKF(strstr(io.errmsg(io.ctx), "no x-goog-hash and the object's metadata has no crc32c") &&
               strstr(io.errmsg(io.ctx), "no_checksum"),
           "%s", io.errmsg(io.ctx));
    io.close(io.ctx, 0);
    /* no_checksum: no metadata request, the bytes as they came. */
    st->opts.no_checksum = 1;
    CHECK_EQ(tfrec_storage_open_source(st, &io, "gs://b/o"), TFREC_OK);
    CHECK_EQ(io.read(io.ctx, buf, sizeof buf), 10);
    CHECK_EQ(io.read(io.ctx, buf, sizeof buf), 0);
    io.close(io.ctx, 0);
    fake_stop(&f);
    CHECK_EQ(f.nrequests, 5);
    CHECKF(strstr(f.requests[1], "generation=5") && strstr(f.requests[1], "fields="), "%s",
           f.requests[1]);
    tfrec_storage_free(st);
#undef OBJ10
}

/* Response headers and ranges are parsed by length from any bytes, with
 * no curl handle (what fuzz_storage_http drives). */
static void test_headers_and_ranges_parse_without_curl(void)
{
    gcs_resp r = { 0 };
    static const char *const lines[] = {
        "HTTP/1.1 100 Continue\r\n",
        "Location: http://x/old\r\n",
        "\r\n",
        "HTTP/1.1 206 Partial Content\r\n",
        "content-RANGE:  bytes 5-9/10 \t\r\n",
        "X-Goog-Hash: crc32c=AAAAAA==\r\n",
        "x-goog-hash: md5=AAAAAAAAAAAAAAAAAAAAAA==\r\n",
        "x-goog-generation: 17\r\n",
        "Range: bytes=0-4",
        "no colon here\r\n",
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
        tfrec_gcs_resp_header(&r, lines[i], strlen(lines[i]));
    CHECK_EQ(r.status, 206);
    CHECK(r.location[0] == 0); /* the 100's header is forgotten */
    CHECKF(strcmp(r.content_range, "bytes 5-9/10") == 0, "'%s'", r.content_range);
    CHECKF(strcmp(r.goog_hash, "crc32c=AAAAAA==,md5=AAAAAAAAAAAAAAAAAAAAAA==") == 0, "%s",
           r.goog_hash);
    CHECK(strcmp(r.goog_generation, "17") == 0 && strcmp(r.range, "bytes=0-4") == 0);
    /* Not NUL-terminated: only n bytes are read. */
    char raw[] = { 'R', 'a', 'n', 'g', 'e', ':', ' ', 'b', 'y',
                   't', 'e', 's', '=', '0', '-', '9', 'X' };
    tfrec_gcs_resp_header(&r, raw, sizeof raw - 1);
    CHECK(strcmp(r.range, "bytes=0-9") == 0);
    /* A NUL inside a value drops the header; a long one is cut to fit. */
    tfrec_gcs_resp_header(&r, "Range: bytes=0-1\0junk", 21);
    CHECK(strcmp(r.range, "bytes=0-9") == 0);
    char longv[400];
    memset(longv, 'a', sizeof longv);
    memcpy(longv, "Range: ", 7);
    tfrec_gcs_resp_header(&r, longv, sizeof longv);
    CHECK_EQ(strlen(r.range), sizeof r.range - 1);
    tfrec_gcs_resp_header(&r, "HTTP/2 2000\r\n", 13);
    CHECK_EQ(r.status, 200); /* three digits */
    tfrec_gcs_resp_header(&r, "HTTP/1.1 -99\r\n", 14);
    CHECK_EQ(r.status, 0);
    tfrec_gcs_resp_header(&r, "HTTP/1.1 037 x\r\n", 16); /* found by fuzz_storage_http */
    CHECK_EQ(r.status, 0);

    uint64_t a = 0, z = 0, t = 0;
    CHECK_EQ(tfrec_gcs_parse_content_range("bytes 0-9/10", &a, &z, &t), 0);
    CHECK(a == 0 && z == 9 && t == 10);
    CHECK_EQ(tfrec_gcs_parse_content_range("bytes 3-4/*", &a, &z, &t), 0);
    CHECK(t == UINT64_MAX);
    CHECK_EQ(tfrec_gcs_parse_content_range("bytes */123", &a, &z, &t), 1);
    CHECK_EQ(t, 123);
    static const char *const bad_ranges[] = {
        "bytes 0-10/10", "bytes 5-4/10",  "bytes -1-9/10",
        "bytes +0-9/10", "bytes  0-9/10", "bytes 0-9/10x",
        "bytes 0-9",     "bytes=0-9/10",  "bytes 0-99999999999999999999/1",
        "bytes */",      "bytes */-1",    "",
        "bytes 0-9/ 10",
    };
    for (size_t i = 0; i < sizeof bad_ranges / sizeof bad_ranges[0]; i++)
        CHECKF(tfrec_gcs_parse_content_range(bad_ranges[i], &a, &z, &t) == -1, "'%s' accepted",
               bad_ranges[i]);
    uint64_t held = 99;
    CHECK(tfrec_gcs_parse_session_range("", &held) == 0 && held == 0);
    CHECK(tfrec_gcs_parse_session_range("bytes=0-262143", &held) == 0 && held == 262144);
    static const char *const bad_held[] = {
        "bytes=1-5", "bytes=0-", "bytes=0--1", "bytes=0-5,7-9", "bytes=0-18446744073709551615",
        "bytes 0-5"
    };
    for (size_t i = 0; i < sizeof bad_held / sizeof bad_held[0]; i++)
        CHECKF(tfrec_gcs_parse_session_range(bad_held[i], &held) == -1, "'%s' accepted",
               bad_held[i]);
}

static void header(gcs_resp *r, const char *line)
{
    tfrec_gcs_resp_header(r, line, strlen(line));
}

static void test_retry_after_is_read_in_both_forms(void)
{
    gcs_resp r = { 0 };
    header(&r, "HTTP/1.1 429 Too Many Requests\r\n");
    header(&r, "Retry-After: 7\r\n");
    CHECK(strcmp(r.retry_after, "7") == 0);
    CHECK_EQ(tfrec_gcs_retry_after_ms(r.retry_after, 0), 7000);
    header(&r, "HTTP/1.1 503 x\r\n"); /* a new answer forgets it */
    CHECK(r.retry_after[0] == 0);
    /* Sun, 06 Nov 1994 08:49:37 GMT is 784111777 s after the epoch. */
    CHECK_EQ(tfrec_gcs_retry_after_ms("Sun, 06 Nov 1994 08:49:37 GMT", 784111770), 7000);
    CHECK_EQ(tfrec_gcs_retry_after_ms("Sun, 06 Nov 1994 08:49:37 GMT", 784111790), 0); /* past */
    CHECK_EQ(tfrec_gcs_retry_after_ms("", 0), 0);
    CHECK_EQ(tfrec_gcs_retry_after_ms("5s", 0), 0);
    CHECK_EQ(tfrec_gcs_retry_after_ms("-5", 0), 0);
    CHECK_EQ(tfrec_gcs_retry_after_ms("99999999999999999999999", 0), 86400ull * 365 * 1000);
}

TESTS(TEST(test_emulator_requests_carry_no_credentials),
      TEST(test_uploads_send_and_check_the_crc32c), TEST(test_session_on_another_host_is_refused),
      TEST(test_bad_replies_are_errors), TEST(test_oversized_reply_is_refused),
      TEST(test_retries_stop_at_the_deadline), TEST(test_dot_segments_never_reach_another_resource),
      TEST(test_listing_that_never_ends_is_cut), TEST(test_upload_of_the_wrong_size_is_removed),
      TEST(test_session_id_never_reaches_a_message),
      TEST(test_download_without_hash_checks_the_metadata_crc),
      TEST(test_headers_and_ranges_parse_without_curl),
      TEST(test_retry_after_is_read_in_both_forms))

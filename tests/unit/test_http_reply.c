/* HTTP reply lines as imagenet2tfrec's downloader parses them
 * (tools/common/http_reply.c). libcurl's header buffer is not
 * NUL-terminated, so every line here is a heap copy of exactly its bytes:
 * a parser reading one byte past them (strchr, sscanf) is caught by ASan. */
#include <stdlib.h>
#include <string.h>

#include "../../tools/common/http_reply.h"
#include "harness.h"

/* s without its NUL, in a block of exactly its length. */
static char *exact(const char *s, size_t *len)
{
    *len = strlen(s);
    char *p = malloc(*len ? *len : 1);
    if (!p)
        harness_fail(__FILE__, __LINE__, "out of memory");
    memcpy(p, s, *len);
    return p;
}

static int status(const char *s)
{
    size_t n;
    char *p = exact(s, &n);
    int code = http_status_code(p, n);
    free(p);
    return code;
}

static void test_status_lines(void)
{
    CHECK_EQ(status("HTTP/1.1 206 Partial Content\r\n"), 206);
    CHECK_EQ(status("HTTP/1.1 416"), 416); /* no reason, no line end */
    CHECK_EQ(status("HTTP/2 200\r\n"), 200);
    CHECK_EQ(status("http/1.0 404 Not Found\r\n"), 404);
    CHECK_EQ(status("HTTP/1.1 20"), -1);
    CHECK_EQ(status("HTTP/1.1 2000 x"), -1);
    CHECK_EQ(status("HTTP/1.1"), -1);
    CHECK_EQ(status("HTTP/"), -1);
    CHECK_EQ(status("Content-Type: HTTP/1.1 200\r\n"), -1);
    CHECK_EQ(status("\r\n"), -1);
    CHECK_EQ(status(""), -1);
}

static long long total(const char *header)
{
    size_t n;
    char *p = exact(header, &n);
    const char *v;
    size_t vl;
    long long t = -2;
    if (http_header_value(p, n, "content-range", &v, &vl) && http_content_range_total(v, vl, &t))
        t = -1;
    free(p);
    return t;
}

static void test_content_range(void)
{
    CHECK_EQ(total("Content-Range: bytes */1234\r\n"), 1234);
    CHECK_EQ(total("content-range:bytes 0-99/1234"), 1234);
    CHECK_EQ(total("Content-Range: bytes 100-1233/1234 \r\n"), 1234);
    CHECK_EQ(total("Content-Range: bytes */0"), 0);
    CHECK_EQ(total("Content-Range: bytes 0-99/*\r\n"), -1); /* length unknown */
    CHECK_EQ(total("Content-Range: bytes */\r\n"), -1);
    CHECK_EQ(total("Content-Range: bytes 99-0/100\r\n"), -1);
    CHECK_EQ(total("Content-Range: items */5\r\n"), -1);
    CHECK_EQ(total("Content-Range: bytes */12x\r\n"), -1);
    CHECK_EQ(total("Content-Range: bytes */99999999999999999999\r\n"), -1); /* overflow */
    CHECK_EQ(total("Content-Range"), -2);
    CHECK_EQ(total("Content-Range-X: bytes */5"), -2);
    CHECK_EQ(total("Content-Length: 5\r\n"), -2);
}

static void test_header_value(void)
{
    size_t n, vl;
    const char *v;
    char *p = exact("Location:  http://x/y \t\r\n", &n);
    CHECK(http_header_value(p, n, "location", &v, &vl));
    CHECK(vl == 10 && !memcmp(v, "http://x/y", 10));
    CHECK(!http_header_value(p, n, "locatio", &v, &vl));
    free(p);
    p = exact("X:", &n);
    CHECK(http_header_value(p, n, "x", &v, &vl) && vl == 0);
    free(p);
}

TESTS(TEST(test_status_lines), TEST(test_content_range), TEST(test_header_value))

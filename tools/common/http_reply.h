/* The lines of an HTTP reply's head as libcurl hands them to a header
 * callback: p[0..len), not NUL-terminated (libcurl's buffer holds whatever
 * follows), with or without the CRLF. Everything here reads by length only,
 * so a line can be parsed in place, and fuzzed without a curl handle. */
#ifndef TFREC_TOOLS_HTTP_REPLY_H
#define TFREC_TOOLS_HTTP_REPLY_H

#include <stddef.h>

/* The status of a status line ("HTTP/1.1 206 Partial Content": 206), or -1
 * when the line is not one. */
int http_status_code(const char *p, size_t len);

/* 1 when the line is header `name` (compared without case), with *value,
 * *vlen its value without the surrounding blanks and CRLF; else 0. */
int http_header_value(const char *p, size_t len, const char *name, const char **value,
                      size_t *vlen);

/* The complete length in a Content-Range value: 1234 from "bytes 0-99/1234"
 * and from the form of a 416 reply, a star for the range ("bytes STAR/1234").
 * 0 with *total set; -1 when the value is not of either form or the length
 * itself is a star (unknown). */
int http_content_range_total(const char *v, size_t vlen, long long *total);

#endif

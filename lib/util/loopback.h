/* Internal: the one rule deciding that an address is this machine, shared
 * by every part (plain-text gRPC to an emulator, http:// token endpoints).
 * Prefix tests are not enough: "localhostile.com" and "127.evil.example"
 * start like loopback names. */
#ifndef TFREC_UTIL_LOOPBACK_H
#define TFREC_UTIL_LOOPBACK_H

#include <stddef.h>

#include "util/private_api.h"

/* 1 when the host (len bytes, no port; an IPv6 address may be in
 * brackets) is exactly "localhost" (any case), an IPv4 address in
 * 127.0.0.0/8 written as four decimal numbers, or ::1. */
TFREC_PRIVATE_API int tfrec_host_is_loopback(const char *host, size_t len);

/* The same for "host", "host:port" or "[v6]:port". */
TFREC_PRIVATE_API int tfrec_hostport_is_loopback(const char *hostport);

#endif

/* Loopback addresses, parsed rather than matched by prefix. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <strings.h>

#include "util/loopback.h"

int tfrec_host_is_loopback(const char *host, size_t len)
{
    char buf[INET6_ADDRSTRLEN + 2];
    if (len >= 2 && host[0] == '[' && host[len - 1] == ']') {
        host++;
        len -= 2;
        if (len >= sizeof buf)
            return 0;
        memcpy(buf, host, len);
        buf[len] = 0;
        struct in6_addr a6;
        return inet_pton(AF_INET6, buf, &a6) == 1 && memcmp(&a6, &in6addr_loopback, sizeof a6) == 0;
    }
    if (len == 9 && strncasecmp(host, "localhost", 9) == 0)
        return 1;
    if (len == 0 || len >= sizeof buf)
        return 0;
    memcpy(buf, host, len);
    buf[len] = 0;
    struct in_addr a4;
    struct in6_addr a6;
    if (inet_pton(AF_INET, buf, &a4) == 1)
        return (ntohl(a4.s_addr) >> 24) == 127;
    return inet_pton(AF_INET6, buf, &a6) == 1 && memcmp(&a6, &in6addr_loopback, sizeof a6) == 0;
}

int tfrec_hostport_is_loopback(const char *hostport)
{
    size_t len = strlen(hostport);
    if (hostport[0] == '[') {
        const char *end = strchr(hostport, ']');
        if (!end || (end[1] && end[1] != ':'))
            return 0;
        return tfrec_host_is_loopback(hostport, (size_t)(end - hostport) + 1);
    }
    const char *colon = strchr(hostport, ':');
    /* Two colons and no brackets: a bare IPv6 address without a port. */
    if (colon && strchr(colon + 1, ':'))
        return tfrec_host_is_loopback(hostport, len);
    return tfrec_host_is_loopback(hostport, colon ? (size_t)(colon - hostport) : len);
}

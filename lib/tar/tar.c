/* Strict tar header reader. Accepts what POSIX ustar and pax, and GNU tar
 * (long names, base-256 sizes) write; refuses everything else by name and
 * offset instead of guessing: old v7 headers without magic, bad checksums,
 * sizes past the end of the archive, a missing end-of-archive marker. A
 * tar has no index, so a reader that guesses past damage can only invent
 * members. */
#include "tar/tar.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/vec.h"

#define BLOCK 512

void tfrec_tar_open_fd(tfrec_tar *t, int fd, uint64_t base, uint64_t len)
{
    memset(t, 0, sizeof *t);
    t->fd = fd;
    t->base = t->pos = base;
    t->end = base + len;
}

void tfrec_tar_open_io(tfrec_tar *t, tfrec_io *io, uint64_t base, uint64_t len)
{
    tfrec_tar_open_fd(t, -1, base, len);
    t->io = io;
}

void tfrec_tar_open_mem(tfrec_tar *t, const void *buf, uint64_t base, uint64_t len)
{
    tfrec_tar_open_fd(t, -1, base, len);
    t->mem = buf;
}

void tfrec_tar_close(tfrec_tar *t)
{
    free(t->name);
    free(t->ext);
    memset(t, 0, sizeof *t);
    t->fd = -1;
}

int tfrec_tar_pread(const tfrec_tar *t, void *buf, size_t n, uint64_t off)
{
    if (t->mem) {
        memcpy(buf, t->mem + off, n);
        return 0;
    }
    size_t got = 0;
    if (t->io) {
        if (t->io->seek(t->io->ctx, off) < 0) {
            errno = EIO;
            return -1;
        }
        while (got < n) {
            ptrdiff_t k = t->io->read(t->io->ctx, (char *)buf + got, n - got);
            if (k <= 0) {
                errno = EIO; /* a failed read, or the object shrank */
                return -1;
            }
            got += (size_t)k;
        }
        return 0;
    }
    while (got < n) {
        ssize_t k = pread(t->fd, (char *)buf + got, n - got, (off_t)(off + got));
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            if (k == 0)
                errno = EIO; /* the file shrank under us */
            return -1;
        }
        got += (size_t)k;
    }
    return 0;
}

/* The member before the current header, for messages. */
static const char *prev_name(const tfrec_tar *t)
{
    return t->members && t->name ? t->name : "(none: first header)";
}

static int fail_at(tfrec_tar *t, tfrec_err *err, int code, uint64_t at, const char *what)
{
    t->done = code;
    return tfrec_fail(err, code, "%s at offset %llu (after member '%.200s')", what,
                      (unsigned long long)(at - t->base), prev_name(t));
}

/* An octal field: optional leading spaces, digits, then NUL or spaces to
 * the end. GNU base-256 (first byte 0x80) for large values. -1 when bad. */
static int parse_num(const uint8_t *f, size_t n, uint64_t *v)
{
    uint64_t x = 0;
    if (f[0] == 0x80) {
        for (size_t i = 1; i < n; i++) {
            if (x >> 55)
                return -1;
            x = x << 8 | f[i];
        }
        *v = x;
        return 0;
    }
    size_t i = 0;
    while (i < n && f[i] == ' ')
        i++;
    size_t digits = 0;
    for (; i < n && f[i] >= '0' && f[i] <= '7'; i++, digits++) {
        if (x >> 60)
            return -1;
        x = x << 3 | (uint64_t)(f[i] - '0');
    }
    for (; i < n; i++)
        if (f[i] != ' ' && f[i] != 0)
            return -1;
    if (!digits)
        return -1;
    *v = x;
    return 0;
}

static int is_zero(const uint8_t *b)
{
    for (size_t i = 0; i < BLOCK; i++)
        if (b[i])
            return 0;
    return 1;
}

/* Unsigned sum with the checksum field as spaces; some old writers summed
 * signed chars, which POSIX lets readers accept too. */
static int checksum_ok(const uint8_t *h)
{
    uint64_t want;
    if (parse_num(h + 148, 8, &want))
        return 0;
    uint64_t u = 0;
    int64_t s = 0;
    for (size_t i = 0; i < BLOCK; i++) {
        uint8_t c = (i >= 148 && i < 156) ? ' ' : h[i];
        u += c;
        s += (int8_t)c;
    }
    return want == u || (int64_t)want == s;
}

static int set_name(tfrec_tar *t, const char *s, size_t n, tfrec_err *err)
{
    if (tfrec_vec_fit(&t->name, &t->name_cap, n + 1))
        return tfrec_fail(err, TFREC_E_NOMEM, "out of memory");
    memcpy(t->name, s, n);
    t->name[n] = '\0';
    return TFREC_OK;
}

/* pax records "<len> <key>=<value>\n": the path and size we need; every
 * record must be well formed. */
static int parse_pax(tfrec_tar *t, size_t n, int *have_name, uint64_t *size, int *have_size,
                     uint64_t at, tfrec_err *err)
{
    const char *p = t->ext, *end = t->ext + n;
    while (p < end && *p) {
        size_t len = 0;
        const char *q = p;
        while (q < end && *q >= '0' && *q <= '9' && len < TFREC_TAR_EXT_MAX)
            len = len * 10 + (size_t)(*q++ - '0');
        if (q == p || q >= end || *q != ' ' || len <= (size_t)(q - p) + 1 ||
            len > (size_t)(end - p) || p[len - 1] != '\n')
            return fail_at(t, err, TFREC_E_PARSE, at, "malformed pax extended header");
        const char *key = q + 1, *rec_end = p + len - 1;
        const char *eq = memchr(key, '=', (size_t)(rec_end - key));
        if (!eq)
            return fail_at(t, err, TFREC_E_PARSE, at, "malformed pax extended header");
        size_t klen = (size_t)(eq - key), vlen = (size_t)(rec_end - eq - 1);
        if (klen == 4 && !memcmp(key, "path", 4)) {
            if (memchr(eq + 1, 0, vlen))
                return fail_at(t, err, TFREC_E_PARSE, at, "pax path with a NUL byte");
            if (set_name(t, eq + 1, vlen, err))
                return TFREC_E_NOMEM;
            *have_name = 1;
        } else if (klen == 4 && !memcmp(key, "size", 4)) {
            uint64_t v = 0;
            if (!vlen || vlen > 19)
                return fail_at(t, err, TFREC_E_PARSE, at, "bad pax size");
            for (size_t i = 0; i < vlen; i++) {
                char c = eq[1 + i];
                if (c < '0' || c > '9')
                    return fail_at(t, err, TFREC_E_PARSE, at, "bad pax size");
                v = v * 10 + (uint64_t)(c - '0');
            }
            *size = v;
            *have_size = 1;
        }
        p += len;
    }
    return TFREC_OK;
}

static uint64_t padded(uint64_t n)
{
    return (n + BLOCK - 1) / BLOCK * BLOCK;
}

/* Read an extended header's data (bounded) into t->ext. */
static int read_ext(tfrec_tar *t, uint64_t at, uint64_t size, tfrec_err *err)
{
    if (size > TFREC_TAR_EXT_MAX)
        return fail_at(t, err, TFREC_E_PARSE, at, "extended header larger than 64 KiB");
    /* The padding too: the next header must start inside the archive. */
    if (t->end - (at + BLOCK) < padded(size))
        return fail_at(t, err, TFREC_E_TRUNCATED, at, "truncated archive: extended header cut");
    if (tfrec_vec_fit(&t->ext, &t->ext_cap, (size_t)size + 1))
        return tfrec_fail(err, TFREC_E_NOMEM, "out of memory");
    if (tfrec_tar_pread(t, t->ext, (size_t)size, at + BLOCK))
        return fail_at(t, err, TFREC_E_IO, at, strerror(errno));
    t->ext[size] = '\0';
    return TFREC_OK;
}

/* What extended headers said about the member that follows them. */
struct pending {
    int have_name, have_size;
    uint64_t size;
};

/* The 512-byte header at t->pos into h, or a failure naming what is
 * missing there. */
static int read_header(tfrec_tar *t, uint8_t *h, tfrec_err *err)
{
    uint64_t at = t->pos;
    if (at > t->end) /* cannot happen: every advance is checked */
        return fail_at(t, err, TFREC_E_TRUNCATED, t->end, "truncated archive");
    if (at == t->end)
        return fail_at(t, err, TFREC_E_TRUNCATED, at,
                       t->members || at != t->base ? "truncated archive: no end-of-archive marker"
                                                   : "not a tar archive: empty");
    if (t->end - at < BLOCK)
        return fail_at(t, err, TFREC_E_TRUNCATED, at, "truncated archive: header cut");
    if (tfrec_tar_pread(t, h, BLOCK, at))
        return fail_at(t, err, TFREC_E_IO, at, strerror(errno));
    return TFREC_OK;
}

/* A zero block ends the archive, unless extended headers announced a
 * member that never came. */
static int end_of_archive(tfrec_tar *t, const struct pending *p, uint64_t at, tfrec_err *err)
{
    if (p->have_name || p->have_size)
        return fail_at(t, err, TFREC_E_PARSE, at, "extended header without a member");
    t->done = 1;
    return 0;
}

/* Magic and checksum of a header; *posix tells ustar and pax (which have
 * a name prefix field) from GNU. */
static int check_header(tfrec_tar *t, const uint8_t *h, uint64_t at, int *posix, tfrec_err *err)
{
    *posix = !memcmp(h + 257,
                     "ustar\0"
                     "00",
                     8);
    int gnu = !memcmp(h + 257, "ustar  \0", 8);
    if (!*posix && !gnu)
        return fail_at(t, err, TFREC_E_PARSE, at,
                       at == t->base ? "not a tar archive (no ustar header)"
                                     : "not a ustar, pax or GNU tar header");
    if (!checksum_ok(h))
        return fail_at(t, err, TFREC_E_PARSE, at, "bad header checksum");
    return TFREC_OK;
}

static int is_extended(char type)
{
    return type == 'x' || type == 'g' || type == 'L' || type == 'K';
}

/* An extended header (pax 'x' and 'g', GNU 'L' and 'K'): read its data,
 * keep what it says about the next member (pax path and size, GNU long
 * name) and step past it. */
static int take_extended(tfrec_tar *t, char type, uint64_t at, uint64_t size, struct pending *p,
                         tfrec_err *err)
{
    int rc = read_ext(t, at, size, err);
    if (rc)
        return rc;
    if (type == 'x')
        rc = parse_pax(t, (size_t)size, &p->have_name, &p->size, &p->have_size, at, err);
    else if (type == 'L') {
        size_t n = strnlen(t->ext, (size_t)size);
        rc = set_name(t, t->ext, n, err);
        p->have_name = 1;
    }
    if (rc)
        return rc;
    t->pos = at + BLOCK + padded(size);
    return TFREC_OK;
}

/* The header's own name: prefix/name for POSIX headers, name for GNU. */
static int set_header_name(tfrec_tar *t, const uint8_t *h, int posix, tfrec_err *err)
{
    size_t nl = strnlen((const char *)h, 100);
    size_t pl = posix ? strnlen((const char *)h + 345, 155) : 0;
    char buf[100 + 155 + 2];
    size_t k = 0;
    if (pl) {
        memcpy(buf, h + 345, pl);
        k = pl;
        buf[k++] = '/';
    }
    memcpy(buf + k, h, nl);
    return set_name(t, buf, k + nl, err);
}

static int member_kind(char type)
{
    if (type == '0' || type == '\0' || type == '7')
        return TFREC_TAR_FILE;
    if (type == '5')
        return TFREC_TAR_DIR;
    if (type == '1' || type == '2')
        return TFREC_TAR_LINK;
    return TFREC_TAR_OTHER;
}

/* The data must lie inside the archive, its padding included. */
static int check_data_fits(tfrec_tar *t, uint64_t at, uint64_t size, tfrec_err *err)
{
    uint64_t left = t->end - (at + BLOCK);
    if (size <= left && padded(size) <= left)
        return TFREC_OK;
    char msg[300];
    snprintf(msg, sizeof msg,
             "truncated archive or absurd size: member '%.200s' declares %llu bytes but "
             "%llu remain",
             t->name, (unsigned long long)size, (unsigned long long)left);
    return fail_at(t, err, TFREC_E_TRUNCATED, at, msg);
}

/* A member's header at `at` (its extended headers, if any, from `first`
 * on): its name, type and data, checked, into *e. */
static int take_member(tfrec_tar *t, const uint8_t *h, int posix, uint64_t at, uint64_t first,
                       uint64_t size, const struct pending *p, tfrec_tar_entry *e, tfrec_err *err)
{
    char type = (char)h[156];
    if (type == 'S' || type == 'M' || type == 'V')
        return fail_at(t, err, TFREC_E_PARSE, at,
                       "unsupported GNU member type (sparse or multi-volume)");
    if (p->have_size)
        size = p->size;
    if (!p->have_name && set_header_name(t, h, posix, err))
        return TFREC_E_NOMEM;
    if (!t->name[0])
        return fail_at(t, err, TFREC_E_PARSE, at, "member with an empty name");
    int kind = member_kind(type);
    /* Links and directories carry no data whatever their size field says. */
    if (kind == TFREC_TAR_LINK || kind == TFREC_TAR_DIR || (type >= '3' && type <= '6'))
        size = 0;
    int rc = check_data_fits(t, at, size, err);
    if (rc)
        return rc;
    t->pos = at + BLOCK + padded(size);
    t->members++;
    e->name = t->name;
    e->type = kind;
    e->size = size;
    e->offset = at + BLOCK;
    e->header = first - t->base;
    return 1;
}

int tfrec_tar_next(tfrec_tar *t, tfrec_tar_entry *e, tfrec_err *err)
{
    if (t->done)
        return t->done > 0 ? 0 : tfrec_fail(err, t->done, "tar reader already failed");
    struct pending p = { 0, 0, 0 };
    uint64_t first = t->pos;
    for (;;) {
        uint64_t at = t->pos, size;
        uint8_t h[BLOCK];
        int posix, rc = read_header(t, h, err);
        if (rc)
            return rc;
        if (is_zero(h))
            return end_of_archive(t, &p, at, err);
        rc = check_header(t, h, at, &posix, err);
        if (rc)
            return rc;
        if (parse_num(h + 124, 12, &size) || size > ((uint64_t)1 << 62))
            return fail_at(t, err, TFREC_E_PARSE, at, "bad size field");
        if (!is_extended((char)h[156]))
            return take_member(t, h, posix, at, first, size, &p, e, err);
        rc = take_extended(t, (char)h[156], at, size, &p, err);
        if (rc)
            return rc;
    }
}

const char *tfrec_tar_flat_name(const char *name, const char **why)
{
    while (name[0] == '.' && name[1] == '/')
        name += 2;
    if (name[0] == '/') {
        *why = "absolute member name";
        return NULL;
    }
    for (const char *p = name; *p;) {
        const char *s = strchr(p, '/');
        size_t n = s ? (size_t)(s - p) : strlen(p);
        if (n == 2 && p[0] == '.' && p[1] == '.') {
            *why = "member name with a '..' component (path traversal)";
            return NULL;
        }
        if (!s)
            break;
        p = s + 1;
    }
    if (strchr(name, '/')) {
        *why = "member name with a directory (expected a plain file name)";
        return NULL;
    }
    if (!name[0] || !strcmp(name, ".")) {
        *why = "empty member name";
        return NULL;
    }
    return name;
}

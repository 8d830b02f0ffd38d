/* The listing file: the scan of an input tree written once (by one process)
 * and read by every task of a conversion instead of scanning, so N tasks do
 * not each list the tree, and all plan from the same files even when the
 * tree changes under them. Text, one image a line, in the scan's order:
 *
 *   tfrec-imagenet-listing 1
 *   layout imagenet
 *   split train
 *   <size> <synset> <path below raw_data_dir>
 *   ...
 *   split validation
 *   ...
 *   end <images> <crc32c of everything above, 8 hex digits>
 *
 * Bytes below '!', '%' and DEL in a synset or path are written %XX. The
 * fingerprint is FNV-1a 64 over the same bytes as the CRC. A file that is
 * cut, edited or not in this shape is refused whole, naming the line. */
#include "imagenet/run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfrec/crc32c.h"
#include "tfrec/fs.h"
#include "util/struct_size.h"
#include "util/vec.h"

#define LISTING_MAGIC "tfrec-imagenet-listing 1"
#define LISTING_MAX_BYTES ((size_t)1 << 32) /* 4 GiB: 30x ImageNet's */

/* ------------------------------------------------------------ writing */

typedef struct outbuf {
    char *v;
    size_t n, cap;
    int nomem;
} outbuf;

static void put(outbuf *b, const char *s, size_t n)
{
    if (b->nomem || tfrec_vec_reserve(&b->v, &b->cap, b->n + n + 1, 1 << 16)) {
        b->nomem = 1;
        return;
    }
    memcpy(b->v + b->n, s, n);
    b->n += n;
}

static void puts_(outbuf *b, const char *s)
{
    put(b, s, strlen(s));
}

static void put_escaped(outbuf *b, const char *s)
{
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c <= ' ' || *c == '%' || *c == 0x7f) {
            char e[4];
            snprintf(e, sizeof e, "%%%02X", *c);
            put(b, e, 3);
        } else {
            put(b, (const char *)c, 1);
        }
    }
}

static const char *layout_word(int layout)
{
    return layout == TFREC_LAYOUT_FOLDERS ? "folders" : "imagenet";
}

static void fingerprint(const char *s, size_t n, char out[17])
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 0x100000001b3ull;
    }
    snprintf(out, 17, "%016llx", (unsigned long long)h);
}

/* The item's path below raw_data_dir (the scans join it so). */
static const char *below_root(const char *path, const char *root)
{
    size_t n = strlen(root);
    if (strncmp(path, root, n) != 0)
        return NULL;
    path += n;
    while (*path == '/')
        path++;
    return *path ? path : NULL;
}

int tfrec_in_listing_write(const in_plan *p, const in_opts *o, const char *path, char fp[17],
                           tfrec_err *err)
{
    outbuf b = { 0 };
    char line[96];
    puts_(&b, LISTING_MAGIC "\nlayout ");
    puts_(&b, layout_word(o->o.layout));
    puts_(&b, "\n");
    uint64_t n = 0;
    for (int s = 0; s < p->nsplits; s++) {
        const in_split *sp = &p->splits[s];
        puts_(&b, "split ");
        put_escaped(&b, sp->name);
        puts_(&b, "\n");
        for (size_t i = 0; i < sp->items.n; i++, n++) {
            const in_item *it = &sp->items.v[i];
            const char *rel = below_root(it->path, o->o.raw_data_dir);
            if (!rel) {
                free(b.v);
                return tfrec_fail(err, TFREC_E_INVALID, "%s is not below --raw_data_dir %s",
                                  it->path, o->o.raw_data_dir);
            }
            snprintf(line, sizeof line, "%llu ", (unsigned long long)it->size);
            puts_(&b, line);
            put_escaped(&b, it->synset);
            puts_(&b, " ");
            put_escaped(&b, rel);
            puts_(&b, "\n");
        }
    }
    if (b.nomem) {
        free(b.v);
        return tfrec_fail(err, TFREC_E_NOMEM, "out of memory writing the listing");
    }
    fingerprint(b.v, b.n, fp);
    snprintf(line, sizeof line, "end %llu %08x\n", (unsigned long long)n,
             (unsigned)tfrec_crc32c_extend(0, b.v, b.n));
    puts_(&b, line);
    if (b.nomem) {
        free(b.v);
        return tfrec_fail(err, TFREC_E_NOMEM, "out of memory writing the listing");
    }
    tfrec_io io = TFREC_IO_INIT;
    int rc = tfrec_fs_open_sink(o->fs, path, &io);
    if (!rc) {
        rc = io.write(io.ctx, b.v, b.n);
        int crc = io.close(io.ctx, rc == TFREC_OK);
        rc = rc ? rc : crc;
    }
    free(b.v);
    if (rc)
        return tfrec_fail(err, rc, "%s: cannot write the listing: %s", path, tfrec_last_errmsg());
    return TFREC_OK;
}

/* ------------------------------------------------------------ reading */

static int read_all(const in_opts *o, const char *path, char **out, size_t *len, tfrec_err *err)
{
    int rc = tfrec_fs_read_all(o->fs, path, LISTING_MAX_BYTES, out, len);
    return rc ? tfrec_fail(err, rc, "listing %s", tfrec_last_errmsg()) : TFREC_OK;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* Unescape s[0..n) in place (a NUL-terminated result); -1 when malformed
 * (a bad %XX, %00, or a byte that should have been escaped). */
static int unescape(char *s, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c <= ' ' || c == 0x7f)
            return -1;
        if (c == '%') {
            if (i + 2 >= n)
                return -1;
            int a = hexval(s[i + 1]), b = a < 0 ? -1 : hexval(s[i + 2]);
            if (a < 0 || b < 0 || (a == 0 && b == 0))
                return -1;
            c = (unsigned char)(a * 16 + b);
            i += 2;
        }
        s[o++] = (char)c;
    }
    s[o] = '\0';
    return 0;
}

/* A path below raw_data_dir a task may open: relative, no empty, "." or
 * ".." component, no hidden one (the scans skip those). */
static int safe_rel(const char *rel)
{
    if (!*rel || rel[0] == '/')
        return 0;
    for (const char *c = rel;;) {
        const char *slash = strchr(c, '/');
        size_t len = slash ? (size_t)(slash - c) : strlen(c);
        if (len == 0 || c[0] == '.')
            return 0;
        if (!slash)
            return 1;
        c = slash + 1;
    }
}

/* Directory-listing order: component by component, byte-wise. */
static int cmp_components(const char *a, const char *b)
{
    for (;;) {
        size_t la = strcspn(a, "/"), lb = strcspn(b, "/");
        int c = memcmp(a, b, la < lb ? la : lb);
        if (c)
            return c;
        if (la != lb)
            return la < lb ? -1 : 1;
        a += la;
        b += lb;
        if (!*a || !*b)
            return *a ? 1 : *b ? -1 : 0;
        a++;
        b++;
    }
}

static int parse_u64(const char *s, size_t n, uint64_t *v)
{
    if (n == 0 || n > 20 || (n > 1 && s[0] == '0'))
        return -1;
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        uint64_t d = (uint64_t)(s[i] - '0');
        if (x > (UINT64_MAX - d) / 10)
            return -1;
        x = x * 10 + d;
    }
    *v = x;
    return 0;
}

#define BAD(line, ...) tfrec_fail(err, TFREC_E_PARSE, "listing %s, line %zu: " __VA_ARGS__)

static int parse(in_plan *p, const in_opts *o, const char *path, char *text, size_t len,
                 char fp[17], tfrec_err *err)
{
    /* The trailer first: a cut or edited file is refused before anything
     * in it is believed. */
    if (len == 0 || text[len - 1] != '\n')
        return tfrec_fail(err, TFREC_E_PARSE,
                          "listing %s is truncated (no final \"end\" line): write it again "
                          "with --write_listing",
                          path);
    size_t last = len - 1;
    while (last > 0 && text[last - 1] != '\n')
        last--;
    uint64_t want_n = 0;
    unsigned want_crc = 0;
    char tail[64];
    size_t tl = len - 1 - last;
    int ok = tl < sizeof tail;
    if (ok) {
        memcpy(tail, text + last, tl);
        tail[tl] = '\0';
        char *sp1 = strncmp(tail, "end ", 4) == 0 ? strchr(tail + 4, ' ') : NULL;
        ok = sp1 && parse_u64(tail + 4, (size_t)(sp1 - tail - 4), &want_n) == 0 &&
             strlen(sp1 + 1) == 8 && strspn(sp1 + 1, "0123456789abcdef") == 8 &&
             sscanf(sp1 + 1, "%8x", &want_crc) == 1;
    }
    if (!ok)
        return tfrec_fail(err, TFREC_E_PARSE,
                          "listing %s is truncated or damaged (its last line is not \"end "
                          "<images> <crc32c>\"): write it again with --write_listing",
                          path);
    if ((unsigned)tfrec_crc32c_extend(0, text, last) != want_crc)
        return tfrec_fail(err, TFREC_E_PARSE,
                          "listing %s fails its checksum (CRC32C %08x, recorded %08x): it was "
                          "cut or edited; write it again with --write_listing",
                          path, (unsigned)tfrec_crc32c_extend(0, text, last), want_crc);
    fingerprint(text, last, fp);

    in_split *sp = NULL;
    const char *prev = NULL, *syn = NULL;
    uint64_t n = 0;
    size_t lineno = 0;
    char *s = text;
    while (s < text + last) {
        char *nl = memchr(s, '\n', (size_t)(text + last - s));
        size_t ll = (size_t)(nl - s);
        *nl = '\0';
        lineno++;
        if (lineno == 1) {
            if (strcmp(s, LISTING_MAGIC) != 0)
                return BAD(lineno, "not a listing file (no \"" LISTING_MAGIC "\" line)", path,
                           lineno);
        } else if (lineno == 2) {
            const char *want = layout_word(o->o.layout);
            if (strncmp(s, "layout ", 7) != 0)
                return BAD(lineno, "no layout line", path, lineno);
            if (strcmp(s + 7, want) != 0)
                return tfrec_fail(err, TFREC_E_INVALID,
                                  "listing %s lists a %s tree, this run's layout is %s", path,
                                  s + 7, want);
        } else if (strncmp(s, "split ", 6) == 0) {
            if (sp && sp->items.n == 0)
                return BAD(lineno, "split %s has no images", path, lineno, sp->name);
            if (unescape(s + 6, ll - 6) != 0)
                return BAD(lineno, "bad split name", path, lineno);
            for (int k = 0; k < p->nsplits; k++)
                if (!strcmp(p->splits[k].name, s + 6))
                    return BAD(lineno, "split %s listed twice", path, lineno, s + 6);
            if (!(sp = tfrec_in_plan_split(p, s + 6, err)))
                return err->code;
            prev = NULL;
        } else {
            char *a = memchr(s, ' ', ll),
                 *b = a ? memchr(a + 1, ' ', ll - (size_t)(a + 1 - s)) : NULL;
            uint64_t size;
            if (!sp)
                return BAD(lineno, "an image before any \"split\" line", path, lineno);
            if (!a || !b || parse_u64(s, (size_t)(a - s), &size) != 0 ||
                unescape(a + 1, (size_t)(b - a - 1)) != 0 || !a[1] ||
                unescape(b + 1, (size_t)(nl - b - 1)) != 0)
                return BAD(lineno, "not \"<size> <class> <path>\"", path, lineno);
            const char *rel = b + 1;
            if (!safe_rel(rel))
                return BAD(lineno, "path %s is not a plain path below the input directory", path,
                           lineno, rel);
            if (!tfrec_in_ext_ok(tfrec_in_basename(rel), o))
                return BAD(lineno, "%s has an extension this run does not accept (%s)", path,
                           lineno, rel, o->o.extensions);
            /* The scans' order, strictly: nothing listed twice. */
            if (prev && cmp_components(prev, rel) >= 0)
                return BAD(lineno, "%s is out of order (after %s) or listed twice", path, lineno,
                           rel, prev);
            in_item it = { 0 };
            it.path = tfrec_in_plan_own(p, tfrec_in_join(o->o.raw_data_dir, rel));
            if (!it.path)
                return tfrec_fail(err, TFREC_E_NOMEM, "out of memory");
            it.name = tfrec_in_basename(it.path);
            if (!syn || strcmp(syn, a + 1) != 0)
                syn = tfrec_in_plan_strdup(p, a + 1);
            if (!syn)
                return tfrec_fail(err, TFREC_E_NOMEM, "out of memory");
            it.synset = syn;
            it.size = size;
            int rc = tfrec_in_list_push(&sp->items, &it);
            if (rc)
                return tfrec_fail(err, rc, "out of memory");
            prev = it.path + (strlen(it.path) - strlen(rel));
            n++;
        }
        s = nl + 1;
    }
    if (lineno < 2)
        return BAD(lineno, "no layout line", path, lineno);
    if (!sp || sp->items.n == 0)
        return tfrec_fail(err, TFREC_E_PARSE, "listing %s has no images", path);
    if (n != want_n)
        return tfrec_fail(err, TFREC_E_PARSE, "listing %s has %llu images, its end line says %llu",
                          path, (unsigned long long)n, (unsigned long long)want_n);
    if (o->o.layout == TFREC_LAYOUT_IMAGENET &&
        (p->nsplits != 2 || strcmp(p->splits[0].name, "train") != 0 ||
         strcmp(p->splits[1].name, "validation") != 0))
        return tfrec_fail(err, TFREC_E_PARSE,
                          "listing %s: an imagenet listing has the splits train and validation",
                          path);
    return TFREC_OK;
}

int tfrec_in_listing_read(in_plan *p, const in_opts *o, const char *path, char fp[17],
                          tfrec_err *err)
{
    char *text = NULL;
    size_t len = 0;
    int rc = read_all(o, path, &text, &len, err);
    if (rc)
        return rc;
    if (memchr(text, '\0', len))
        rc = tfrec_fail(err, TFREC_E_PARSE, "listing %s holds a NUL byte: not a listing", path);
    else
        rc = parse(p, o, path, text, len, fp, err);
    free(text);
    return rc;
}

/* ------------------------------------------------------------ the entry */

int tfrec_imagenet_write_listing(const tfrec_imagenet_options *opts, const char *path,
                                 char *fingerprint_out)
{
    tfrec_err err = { 0 };
    if (!opts || !path || !*path)
        return tfrec_fail(NULL, TFREC_E_INVALID,
                          "tfrec_imagenet_write_listing: options and a path are required");
    /* The caller's options as this version knows them (an older caller's
     * shorter struct is zero-filled), with an output directory nothing
     * will be written to. */
    tfrec_imagenet_options x;
    memset(&x, 0, sizeof x);
    int rc = TFREC_STRUCT_IN(tfrec_imagenet_options, &x, opts, &err);
    if (rc)
        return rc;
    x.struct_size = sizeof x;
    if (!x.output_dir || !*x.output_dir)
        x.output_dir = ".";
    in_opts o;
    in_plan plan;
    memset(&plan, 0, sizeof plan);
    rc = tfrec_in_resolve_options(&x, &o, &err);
    if (!rc && (o.o.listing || o.o.layout == TFREC_LAYOUT_CSV || tfrec_in_wants_tars(&o)))
        rc = tfrec_fail(&err, TFREC_E_UNSUPPORTED,
                        o.o.listing ? "a listing is written from a scan, not from another listing"
                                    : "a listing file lists an image tree (the imagenet or "
                                      "folders layout), not tarballs or a CSV file");
    if (!rc)
        rc = o.o.layout == TFREC_LAYOUT_FOLDERS ? tfrec_in_scan_folders(&plan, &o, &err)
                                                : tfrec_in_scan_imagenet(&plan, &o, &err);
    char fp[17] = "";
    if (!rc)
        rc = tfrec_in_listing_write(&plan, &o, path, fp, &err);
    if (!rc && fingerprint_out)
        memcpy(fingerprint_out, fp, sizeof fp);
    tfrec_in_plan_free(&plan);
    tfrec_in_free_options(&o);
    if (rc)
        tfrec_fail(NULL, rc, "%s", err.msg);
    return rc;
}

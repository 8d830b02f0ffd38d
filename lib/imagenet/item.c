/* One image: read the file, check/normalise it, build the tf.Example with
 * exactly the reference's features. Runs on worker threads; everything it
 * touches is either read-only shared state or the worker's own. */
#include "imagenet/convert.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tfrec/image.h"
#include "util/ioerr.h"
#include "util/vec.h"

static void fail(in_result *r, int code, const char *fmt, ...) TFREC_PRINTF(3, 4);
static void fail(in_result *r, int code, const char *fmt, ...)
{
    va_list ap;
    char buf[TFREC_ERRMSG_MAX];
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    r->status = code;
    r->reason = strdup(buf);
}

/* The file's path is already in the note the reason goes to. */
static void fail_errno(in_result *r, int errnum, const char *what, ...) TFREC_PRINTF(3, 4);
static void fail_errno(in_result *r, int errnum, const char *what, ...)
{
    va_list ap;
    char buf[TFREC_ERRMSG_MAX];
    va_start(ap, what);
    tfrec_errno_vmsg(buf, sizeof buf, errnum, NULL, what, ap);
    va_end(ap);
    fail(r, TFREC_E_IO, "%s", buf);
}

static int read_file(const char *path, in_buf *b, size_t *len, in_result *r)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fail_errno(r, errno, "cannot open");
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || (uint64_t)st.st_size > IN_MAX_IMAGE_BYTES) {
        fail(r, TFREC_E_IMAGE, "file larger than %llu bytes",
             (unsigned long long)IN_MAX_IMAGE_BYTES);
        close(fd);
        return -1;
    }
    size_t n = (size_t)st.st_size, got = 0;
    if (tfrec_vec_fit(&b->data, &b->cap, n)) {
        fail(r, TFREC_E_NOMEM, "out of memory reading %zu bytes", n);
        close(fd);
        return -1;
    }
    uint8_t *buf = b->data;
    while (got < n) {
        ssize_t k = read(fd, buf + got, n - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            fail_errno(r, errno, "read failed after %zu of %zu bytes", got, n);
            close(fd);
            return -1;
        }
        if (k == 0) {
            fail(r, TFREC_E_IO, "read failed after %zu of %zu bytes: file shrank", got, n);
            close(fd);
            return -1;
        }
        got += (size_t)k;
    }
    close(fd);
    *len = n;
    return 0;
}

/* The note already names the file: drop a leading "PATH: " of msg. */
static const char *without_path(const char *msg, const char *path)
{
    size_t n = strlen(path);
    return strncmp(msg, path, n) == 0 && msg[n] == ':' && msg[n + 1] == ' ' ? msg + n + 2 : msg;
}

/* An image through the input's file system (e.g. an object in a bucket),
 * or a tarball member by a ranged read of it. */
static int read_input(const in_opts *o, const in_item *it, in_buf *b, size_t *len, in_result *r)
{
    tfrec_io io = TFREC_IO_INIT;
    int rc = it->archive ? tfrec_fs_open_range(o->in_fs, it->archive, it->offset, it->size, &io)
                         : tfrec_fs_open_source(o->in_fs, it->path, &io);
    if (rc < 0) {
        fail(r, rc, "%s", without_path(tfrec_last_errmsg(), it->archive ? "" : it->path));
        return -1;
    }
    int64_t size = io.size ? io.size(io.ctx) : -1;
    uint64_t want = size >= 0 ? (uint64_t)size : it->size;
    if (want > IN_MAX_IMAGE_BYTES) {
        fail(r, TFREC_E_IMAGE, "file larger than %llu bytes",
             (unsigned long long)IN_MAX_IMAGE_BYTES);
        io.close(io.ctx, 0);
        return -1;
    }
    size_t n = (size_t)want, got = 0;
    if (tfrec_vec_fit(&b->data, &b->cap, n ? n : 1)) {
        fail(r, TFREC_E_NOMEM, "out of memory reading %zu bytes", n);
        io.close(io.ctx, 0);
        return -1;
    }
    while (got < n) {
        ptrdiff_t k = io.read(io.ctx, b->data + got, n - got);
        if (k <= 0) {
            if (k < 0)
                fail(r, (int)k, "%s",
                     io.errmsg ? without_path(io.errmsg(io.ctx), it->path) : "read failed");
            else
                fail(r, TFREC_E_IO, "read failed after %zu of %zu bytes: it shrank", got, n);
            io.close(io.ctx, 0);
            return -1;
        }
        got += (size_t)k;
    }
    /* One more read: the end, which is where a source checks the whole
     * object's checksum. */
    uint8_t extra;
    ptrdiff_t k = io.read(io.ctx, &extra, 1);
    if (k < 0)
        fail(r, (int)k, "%s",
             io.errmsg ? without_path(io.errmsg(io.ctx), it->path) : "read failed");
    else if (k > 0)
        fail(r, TFREC_E_IO, "longer than the %zu bytes it had when opened", n);
    io.close(io.ctx, 0);
    if (k != 0)
        return -1;
    *len = n;
    return 0;
}

/* An image inside a tarball: its bytes at a known offset of the archive,
 * read with pread (one descriptor shared by every worker). */
static int read_member(const in_item *it, in_buf *b, size_t *len, in_result *r)
{
    if (it->size > IN_MAX_IMAGE_BYTES) {
        fail(r, TFREC_E_IMAGE, "member larger than %llu bytes",
             (unsigned long long)IN_MAX_IMAGE_BYTES);
        return -1;
    }
    size_t n = (size_t)it->size, got = 0;
    if (tfrec_vec_fit(&b->data, &b->cap, n ? n : 1)) {
        fail(r, TFREC_E_NOMEM, "out of memory reading %zu bytes", n);
        return -1;
    }
    while (got < n) {
        ssize_t k = pread(it->fd, b->data + got, n - got, (off_t)(it->offset + got));
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            if (k < 0)
                fail_errno(r, errno, "read failed at archive offset %llu",
                           (unsigned long long)(it->offset + got));
            else
                fail(r, TFREC_E_IO, "archive ends at offset %llu: it shrank since the scan",
                     (unsigned long long)(it->offset + got));
            return -1;
        }
        got += (size_t)k;
    }
    *len = n;
    return 0;
}

static int build(tfrec_example_builder *b, const in_item *it, const uint8_t *jpeg, size_t len,
                 const tfrec_image_info *info)
{
    int rc;
    tfrec_example_builder_reset(b);
    if ((rc = tfrec_example_add_bytes_ref(b, "image/encoded", jpeg, len)) ||
        (rc = tfrec_example_add_int64(b, "image/height", info->height)) ||
        (rc = tfrec_example_add_int64(b, "image/width", info->width)) ||
        (rc = tfrec_example_add_string(b, "image/colorspace", "RGB")) ||
        (rc = tfrec_example_add_int64(b, "image/channels", 3)) ||
        (rc = tfrec_example_add_int64(b, "image/class/label", it->label)) ||
        (rc = tfrec_example_add_string(b, "image/class/synset", it->synset)) ||
        (rc = tfrec_example_add_string(b, "image/format", "JPEG")) ||
        (rc = tfrec_example_add_string(b, "image/filename", it->name)))
        return rc;
    return TFREC_OK;
}

/* Serialize into rec (grown when needed) and hand its memory to r. */
static int serialize_into(tfrec_example_builder *b, in_buf *rec, in_result *r)
{
    size_t need = tfrec_example_serialized_size(b);
    if (tfrec_vec_fit(&rec->data, &rec->cap, need))
        return tfrec_fail(NULL, TFREC_E_NOMEM, "out of memory for a %zu-byte record", need);
    int rc = tfrec_example_serialize(b, rec->data, rec->cap, &r->record_len);
    if (rc)
        return rc;
    r->record = rec->data;
    r->record_cap = rec->cap;
    rec->data = NULL;
    rec->cap = 0;
    return TFREC_OK;
}

void tfrec_in_convert_item(const in_item *it, const in_opts *o, tfrec_example_builder *b,
                           in_buf *fbuf, in_buf *rec, in_result *r)
{
    memset(r, 0, sizeof *r);
    if (!b) {
        fail(r, TFREC_E_NOMEM, "out of memory (example builder)");
        return;
    }
    uint8_t *fixed = NULL;
    size_t len = 0, fixed_len = 0;
    int got = it->archive || (!it->from_archive && o->in_read) ? read_input(o, it, fbuf, &len, r)
              : it->from_archive                               ? read_member(it, fbuf, &len, r)
                                                               : read_file(it->path, fbuf, &len, r);
    if (got != 0)
        return;
    const uint8_t *data = fbuf->data;
    r->bytes_in = len;
    tfrec_image_normalize_options no = TFREC_IMAGE_NORMALIZE_OPTIONS_INIT;
    no.quality = o->o.quality;
    no.verify = o->o.verify;
    no.grayscale_to_rgb = o->o.grayscale_to_rgb;
    no.max_pixels = o->o.max_image_pixels;
    tfrec_image_info after = TFREC_IMAGE_INFO_INIT;
    int rc = tfrec_image_normalize(data, len, &no, &fixed, &fixed_len, &after, &r->action);
    if (rc) {
        fail(r, rc, "%s", tfrec_last_errmsg());
        return;
    }
    if (r->action == TFREC_IMAGE_FROM_CMYK) {
        /* Rare: probe again only to tell CMYK from YCCK in the manifest. */
        tfrec_image_info before = TFREC_IMAGE_INFO_INIT;
        r->source_cs = tfrec_image_probe(data, len, &before) ? TFREC_CS_CMYK : before.colorspace;
    }
    const uint8_t *jpeg = fixed ? fixed : data;
    size_t jlen = fixed ? fixed_len : len;
    rc = build(b, it, jpeg, jlen, &after);
    if (!rc)
        rc = serialize_into(b, rec, r);
    if (rc)
        fail(r, rc, "building tf.Example: %s", tfrec_example_builder_errmsg(b));
    /* Referenced bytes are gone after this: forget them in the builder. */
    tfrec_example_builder_reset(b);
    tfrec_free(fixed);
}

void tfrec_in_result_clear(in_result *r)
{
    free(r->reason);
    free(r->record);
    memset(r, 0, sizeof *r);
}

const char *tfrec_in_fixed_from(const in_result *r)
{
    switch (r->action) {
    case TFREC_IMAGE_FROM_PNG: return "PNG";
    case TFREC_IMAGE_FROM_GRAY: return "grayscale";
    default: return tfrec_image_colorspace_name(r->source_cs);
    }
}

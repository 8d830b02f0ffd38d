#include "image/jpeg_glue.h"

#include "image/image_internal.h"

#include <stdlib.h>
#include <string.h>

#include <jerror.h>

#include "util/vec.h"

static void on_error_exit(j_common_ptr c)
{
    img_jerr *e = (img_jerr *)c->err;
    e->pub.format_message(c, e->msg);
    longjmp(e->jump, 1);
}

/* Warnings that mean pixels are missing or garbage. The benign ones
 * (extraneous bytes before a marker, unknown JFIF revision, bad ICC chunk)
 * are common in real photo collections and decoders ignore them too. */
static int warning_is_corruption(int code)
{
    switch (code) {
    case JWRN_ARITH_BAD_CODE:
    case JWRN_BOGUS_PROGRESSION:
    case JWRN_HIT_MARKER:
    case JWRN_HUFF_BAD_CODE:
    case JWRN_JPEG_EOF:
    case JWRN_MUST_RESYNC:
    case JWRN_NOT_SEQUENTIAL: return 1;
    default: return 0;
    }
}

static void on_emit_message(j_common_ptr c, int level)
{
    img_jerr *e = (img_jerr *)c->err;
    if (level < 0) {
        e->pub.num_warnings++;
        if (warning_is_corruption(e->pub.msg_code)) {
            e->pub.format_message(c, e->msg);
            longjmp(e->jump, 1);
        }
    }
    /* Trace messages (level >= 0) are dropped: the library never prints. */
}

static void on_output_message(j_common_ptr c)
{
    (void)c;
}

struct jpeg_error_mgr *tfrec_img_jerr_init(img_jerr *e)
{
    jpeg_std_error(&e->pub);
    e->pub.error_exit = on_error_exit;
    e->pub.emit_message = on_emit_message;
    e->pub.output_message = on_output_message;
    e->msg[0] = '\0';
    return &e->pub;
}

/* ------------------------------------------------------------ progress */

static _Thread_local img_work thread_work;

img_work *tfrec_img_work(void)
{
    return &thread_work;
}

static void on_progress(j_common_ptr c)
{
    img_jprogress *p = (img_jprogress *)c->progress;
    j_decompress_ptr d = (j_decompress_ptr)c;
    thread_work.jpeg_ticks++;
    if (d->input_scan_number != p->last_scan) {
        p->last_scan = d->input_scan_number;
        thread_work.jpeg_scans++;
    }
    /* The marker walk has already refused such files; this keeps a decode
     * bounded should the two parsers ever disagree. */
    if (d->input_scan_number > IMG_JPEG_MAX_SCANS) {
        img_jerr *e = (img_jerr *)c->err;
        snprintf(e->msg, sizeof e->msg, "more than %d scans", IMG_JPEG_MAX_SCANS);
        longjmp(e->jump, 1);
    }
}

static void jprogress_init(j_decompress_ptr c, img_jprogress *p)
{
    memset(p, 0, sizeof *p);
    p->pub.progress_monitor = on_progress;
    c->progress = &p->pub;
}

void tfrec_img_jpeg_read_header_mem(j_decompress_ptr c, img_jprogress *p, const uint8_t *d,
                                    size_t len)
{
    jpeg_create_decompress(c);
    c->mem->max_memory_to_use = IMG_JPEG_MAX_MEMORY;
    jprogress_init(c, p);
    jpeg_mem_src(c, d, (unsigned long)len);
    jpeg_read_header(c, TRUE);
}

/* ------------------------------------------------------------ destination */

static void dest_init(j_compress_ptr c)
{
    img_mem_dest *d = (img_mem_dest *)c->dest;
    d->pub.next_output_byte = d->buf;
    d->pub.free_in_buffer = d->cap;
}

static boolean dest_grow(j_compress_ptr c)
{
    img_mem_dest *d = (img_mem_dest *)c->dest;
    /* libjpeg calls this only when the whole buffer is full. */
    size_t full = d->cap;
    if (tfrec_vec_reserve(&d->buf, &d->cap, full + 1, 4096))
        ERREXIT1(c, JERR_OUT_OF_MEMORY, 10);
    d->pub.next_output_byte = d->buf + full;
    d->pub.free_in_buffer = d->cap - full;
    return TRUE;
}

static void dest_term(j_compress_ptr c)
{
    img_mem_dest *d = (img_mem_dest *)c->dest;
    d->len = d->cap - d->pub.free_in_buffer;
}

void tfrec_img_mem_dest_init(j_compress_ptr c, img_mem_dest *d, size_t initial)
{
    memset(d, 0, sizeof *d);
    d->cap = initial < 4096 ? 4096 : initial;
    d->buf = malloc(d->cap);
    if (!d->buf)
        ERREXIT1(c, JERR_OUT_OF_MEMORY, 11);
    d->pub.init_destination = dest_init;
    d->pub.empty_output_buffer = dest_grow;
    d->pub.term_destination = dest_term;
    c->dest = &d->pub;
}

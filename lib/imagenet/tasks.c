/* A conversion split into tasks: which shards this task writes, the plan's
 * fingerprint (so parts of different plans are never merged), the part
 * file each task leaves, and the CRC32C of each shard as it is written. */
#include "imagenet/run.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tfrec/crc32c.h"
#include "tfrec/task.h"

int tfrec_in_plan_share(in_plan *p, const in_opts *o, tfrec_err *err)
{
    p->share_begin = 0;
    p->share_end = p->nshards;
    if (!o->o.num_tasks)
        return TFREC_OK;
    uint64_t b, e;
    if (tfrec_task_share(p->nshards, o->o.task_index, o->o.num_tasks, &b, &e) != TFREC_OK)
        return tfrec_fail(err, TFREC_E_INVALID, "%s", tfrec_last_errmsg());
    p->share_begin = (size_t)b;
    p->share_end = (size_t)e;
    return TFREC_OK;
}

void tfrec_in_share_items(const in_plan *p, size_t *begin, size_t *end)
{
    if (p->share_begin >= p->share_end) {
        *begin = *end = 0;
        return;
    }
    const in_shard *last = &p->shards[p->share_end - 1];
    *begin = p->shards[p->share_begin].first;
    *end = last->first + last->count;
}

/* FNV-1a, 64 bits: a fingerprint against mixing plans, not a defence
 * against someone forging one. */
static void fnv(uint64_t *h, const void *data, size_t n)
{
    const unsigned char *s = data;
    for (size_t i = 0; i < n; i++) {
        *h ^= s[i];
        *h *= 0x100000001b3ull;
    }
}

static void fnv_str(uint64_t *h, const char *s)
{
    fnv(h, s ? s : "", s ? strlen(s) + 1 : 1);
}

static void fnv_u64(uint64_t *h, uint64_t v)
{
    fnv(h, &v, sizeof v);
}

void tfrec_in_plan_fingerprint(const in_plan *p, const in_opts *o, char out[17])
{
    uint64_t h = 0xcbf29ce484222325ull;
    /* What changes the bytes of a shard besides the listing. */
    const tfrec_imagenet_options *x = &o->o;
    fnv_u64(&h, (uint64_t)x->compression);
    fnv_u64(&h, (uint64_t)x->quality);
    fnv_u64(&h, (uint64_t)x->grayscale_to_rgb);
    fnv_u64(&h, (uint64_t)x->verify);
    fnv_u64(&h, (uint64_t)x->on_error);
    fnv_u64(&h, x->max_image_pixels);
    /* The listing in output order (base names, not paths: tasks may mount
     * the input in different places), and the shard layout. */
    for (size_t i = 0; i < p->nitems; i++) {
        const in_item *it = p->order[i];
        fnv_str(&h, it->name);
        fnv_str(&h, it->synset);
        fnv_u64(&h, (uint64_t)it->label);
        fnv_u64(&h, it->size);
    }
    for (size_t k = 0; k < p->nshards; k++) {
        fnv_str(&h, p->shards[k].file);
        fnv_u64(&h, p->shards[k].first);
        fnv_u64(&h, p->shards[k].count);
    }
    snprintf(out, 17, "%016llx", (unsigned long long)h);
}

int tfrec_in_write_part(const in_opts *o, const char *json, tfrec_err *err)
{
    const tfrec_imagenet_options *x = &o->o;
    char *path = tfrec_in_part_path(x->output_dir, x->task_index, x->num_tasks);
    if (!path)
        return tfrec_fail(err, TFREC_E_NOMEM, "out of memory");
    int rc = o->out_direct ? tfrec_in_write_fs(o->out_fs, path, json, "the manifest part", err)
                           : tfrec_in_write_manifest_file(path, json, err);
    free(path);
    return rc;
}

int tfrec_in_write_fs(const tfrec_fs *fs, const char *name, const char *json, const char *what,
                      tfrec_err *err)
{
    tfrec_io io = TFREC_IO_INIT;
    int rc = tfrec_fs_open_sink(fs, name, &io);
    if (!rc) {
        rc = io.write(io.ctx, json, strlen(json));
        int crc = io.close(io.ctx, rc == TFREC_OK);
        rc = rc ? rc : crc;
    }
    if (rc)
        tfrec_fail(err, rc, "%s: cannot write %s: %s", name, what, tfrec_last_errmsg());
    return rc;
}

void tfrec_in_remove_part(const in_opts *o)
{
    const tfrec_imagenet_options *x = &o->o;
    char *path = tfrec_in_part_path(x->output_dir, x->task_index, x->num_tasks);
    if (!path)
        return;
    if (!o->out_direct)
        unlink(path);
    else
        (void)tfrec_fs_remove(o->out_fs, path); /* a missing one (or no remove): nothing to do */
    free(path);
}

/* ------------------------------------------------------------ CRC sink */

typedef struct crc_sink {
    tfrec_io inner;
    uint32_t *crc;
} crc_sink;

static int cs_write(void *ctx, const void *buf, size_t n)
{
    crc_sink *s = ctx;
    *s->crc = tfrec_crc32c_extend(*s->crc, buf, n);
    return s->inner.write(s->inner.ctx, buf, n);
}

static int cs_close(void *ctx, int commit)
{
    crc_sink *s = ctx;
    int rc = s->inner.close(s->inner.ctx, commit);
    free(s);
    return rc;
}

static const char *cs_errmsg(void *ctx)
{
    crc_sink *s = ctx;
    return s->inner.errmsg ? s->inner.errmsg(s->inner.ctx) : NULL;
}

int tfrec_in_crc_sink(tfrec_io *io, uint32_t *crc)
{
    crc_sink *s = calloc(1, sizeof *s);
    if (!s) {
        io->close(io->ctx, 0);
        return tfrec_fail(NULL, TFREC_E_NOMEM, "out of memory");
    }
    s->inner = *io;
    s->crc = crc;
    *crc = 0;
    tfrec_io w = TFREC_IO_INIT;
    w.ctx = s;
    w.write = cs_write;
    w.close = cs_close;
    w.errmsg = cs_errmsg;
    *io = w;
    return TFREC_OK;
}

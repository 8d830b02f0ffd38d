/* The run's manifest: what was asked, what was written, what was fixed and
 * what was rejected. Nothing in it depends on the thread count except the
 * timing, so two runs can be compared with the "seconds" field ignored. */
#include "imagenet/run.h"

#include <stdlib.h>
#include <string.h>

#include "imagenet/json.h"
#include "tfrec/image.h"
#include "tfrec/record.h"
#include "util/vec.h"

int tfrec_in_notes_add(in_notes *l, const char *path, const char *what)
{
    if (tfrec_vec_reserve(&l->v, &l->cap, l->n + 1, 64))
        return TFREC_E_NOMEM;
    char *w = strdup(what ? what : ""), *p = strdup(path);
    if (!w || !p) {
        free(w);
        free(p);
        return TFREC_E_NOMEM;
    }
    l->v[l->n].path = p;
    l->v[l->n].what = w;
    l->n++;
    return TFREC_OK;
}

void tfrec_in_notes_free(in_notes *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].path);
        free(l->v[i].what);
    }
    free(l->v);
    memset(l, 0, sizeof *l);
}

static const char *layout_name(int layout)
{
    switch (layout) {
    case TFREC_LAYOUT_FOLDERS: return "folders";
    case TFREC_LAYOUT_CSV: return "csv";
    default: return "imagenet";
    }
}

static void options(jbuf *b, const in_opts *o)
{
    tfrec_jb_key(b, "options");
    tfrec_jb_open(b, '{');
    tfrec_jb_key(b, "layout"); tfrec_jb_str(b, layout_name(o->o.layout));
    tfrec_jb_key(b, "raw_data_dir"); tfrec_jb_str(b, o->o.raw_data_dir);
    tfrec_jb_key(b, "csv"); tfrec_jb_str(b, o->o.csv_path);
    tfrec_jb_key(b, "output_dir"); tfrec_jb_str(b, o->o.output_dir);
    tfrec_jb_key(b, "labels_file"); tfrec_jb_str(b, o->o.labels_file);
    tfrec_jb_key(b, "extensions"); tfrec_jb_str(b, o->o.extensions);
    tfrec_jb_key(b, "train_shards"); tfrec_jb_int(b, o->o.train_shards);
    tfrec_jb_key(b, "validation_shards"); tfrec_jb_int(b, o->o.validation_shards);
    tfrec_jb_key(b, "seed"); tfrec_jb_uint(b, o->o.seed);
    tfrec_jb_key(b, "shuffle"); tfrec_jb_bool(b, !o->o.no_shuffle);
    tfrec_jb_key(b, "verify"); tfrec_jb_str(b, tfrec_verify_level_name(o->o.verify));
    tfrec_jb_key(b, "on_error"); tfrec_jb_str(b, o->o.on_error == TFREC_ON_ERROR_SKIP ? "skip" : "stop");
    tfrec_jb_key(b, "quality"); tfrec_jb_int(b, o->o.quality);
    tfrec_jb_key(b, "grayscale_to_rgb"); tfrec_jb_bool(b, o->o.grayscale_to_rgb);
    tfrec_jb_key(b, "compression"); tfrec_jb_str(b, tfrec_compression_name(o->o.compression));
    tfrec_jb_close(b, '}');
}

static void notes(jbuf *b, const char *key, const char *field, const in_notes *l)
{
    tfrec_jb_key(b, key);
    tfrec_jb_open(b, '[');
    for (size_t i = 0; i < l->n; i++) {
        tfrec_jb_open(b, '{');
        tfrec_jb_key(b, "path"); tfrec_jb_str(b, l->v[i].path);
        tfrec_jb_key(b, field); tfrec_jb_str(b, l->v[i].what);
        tfrec_jb_close(b, '}');
    }
    tfrec_jb_close(b, ']');
}

void tfrec_in_manifest_build(tfrec_imagenet_result *r, const in_opts *o, const in_plan *p,
                       const in_notes *fixed, const in_notes *rejected)
{
    jbuf b = { 0 };
    const tfrec_imagenet_counts *c = &r->counts;
    tfrec_jb_open(&b, '{');
    tfrec_jb_key(&b, "tool"); tfrec_jb_str(&b, "libtfrec imagenet converter");
    tfrec_jb_key(&b, "version"); tfrec_jb_str(&b, tfrec_version());
    tfrec_jb_key(&b, "status"); tfrec_jb_str(&b, r->status == TFREC_OK ? "ok" : "failed");
    tfrec_jb_key(&b, "error"); tfrec_jb_str(&b, r->status == TFREC_OK ? NULL : r->err.msg);
    options(&b, o);
    tfrec_jb_key(&b, "counts");
    tfrec_jb_open(&b, '{');
    tfrec_jb_key(&b, "images_total"); tfrec_jb_uint(&b, c->images_total);
    tfrec_jb_key(&b, "images_written"); tfrec_jb_uint(&b, c->images_written);
    tfrec_jb_key(&b, "images_fixed"); tfrec_jb_uint(&b, c->images_fixed);
    tfrec_jb_key(&b, "images_rejected"); tfrec_jb_uint(&b, c->images_rejected);
    tfrec_jb_key(&b, "bytes_in"); tfrec_jb_uint(&b, c->bytes_in);
    tfrec_jb_key(&b, "bytes_out"); tfrec_jb_uint(&b, c->bytes_out);
    tfrec_jb_key(&b, "shards"); tfrec_jb_uint(&b, c->shards);
    tfrec_jb_key(&b, "classes"); tfrec_jb_uint(&b, c->classes);
    tfrec_jb_key(&b, "seconds"); tfrec_jb_num(&b, c->seconds);
    tfrec_jb_close(&b, '}');
    tfrec_jb_key(&b, "labels");
    tfrec_jb_open(&b, '[');
    for (size_t i = 0; i < p->nclasses; i++) {
        tfrec_jb_open(&b, '{');
        tfrec_jb_key(&b, "label"); tfrec_jb_uint(&b, i + 1);
        tfrec_jb_key(&b, "synset"); tfrec_jb_str(&b, p->classes[i]);
        tfrec_jb_close(&b, '}');
    }
    tfrec_jb_close(&b, ']');
    tfrec_jb_key(&b, "shards");
    tfrec_jb_open(&b, '[');
    /* Shards are listed only when the run committed them. */
    for (size_t i = 0; r->status == TFREC_OK && i < p->nshards; i++) {
        const in_shard *s = &p->shards[i];
        tfrec_jb_open(&b, '{');
        tfrec_jb_key(&b, "split"); tfrec_jb_str(&b, p->splits[s->split].name);
        tfrec_jb_key(&b, "file"); tfrec_jb_str(&b, s->file);
        tfrec_jb_key(&b, "records"); tfrec_jb_uint(&b, s->records);
        tfrec_jb_key(&b, "bytes"); tfrec_jb_uint(&b, s->bytes);
        tfrec_jb_close(&b, '}');
    }
    tfrec_jb_close(&b, ']');
    notes(&b, "fixed", "from", fixed);
    notes(&b, "rejected", "reason", rejected);
    tfrec_jb_close(&b, '}');
    tfrec_jb_raw(&b, "\n");
    if (b.oom) {
        free(b.s);
        b.s = NULL;
    }
    r->json = b.s;
}

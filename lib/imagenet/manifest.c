/* The run's manifest: what was asked, what was written, what was fixed and
 * what was rejected. Nothing in it depends on the thread count except the
 * timing, so two runs can be compared with the "seconds" field ignored. */
#include "imagenet/run.h"

#include <stdlib.h>
#include <string.h>

#include "imagenet/json.h"
#include "tfrec/image.h"
#include "tfrec/record.h"

int in_notes_add(in_notes *l, const char *path, const char *what)
{
    if (l->n == l->cap) {
        size_t ncap = l->cap ? l->cap * 2 : 64;
        in_note *nv = realloc(l->v, ncap * sizeof *nv);
        if (!nv)
            return TFREC_E_NOMEM;
        l->v = nv;
        l->cap = ncap;
    }
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

void in_notes_free(in_notes *l)
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
    jb_key(b, "options");
    jb_open(b, '{');
    jb_key(b, "layout"); jb_str(b, layout_name(o->o.layout));
    jb_key(b, "raw_data_dir"); jb_str(b, o->o.raw_data_dir);
    jb_key(b, "csv"); jb_str(b, o->o.csv_path);
    jb_key(b, "output_dir"); jb_str(b, o->o.output_dir);
    jb_key(b, "labels_file"); jb_str(b, o->o.labels_file);
    jb_key(b, "extensions"); jb_str(b, o->o.extensions);
    jb_key(b, "train_shards"); jb_int(b, o->o.train_shards);
    jb_key(b, "validation_shards"); jb_int(b, o->o.validation_shards);
    jb_key(b, "seed"); jb_uint(b, o->o.seed);
    jb_key(b, "shuffle"); jb_bool(b, !o->o.no_shuffle);
    jb_key(b, "verify"); jb_str(b, tfrec_verify_level_name(o->o.verify));
    jb_key(b, "on_error"); jb_str(b, o->o.on_error == TFREC_ON_ERROR_SKIP ? "skip" : "stop");
    jb_key(b, "quality"); jb_int(b, o->o.quality);
    jb_key(b, "grayscale_to_rgb"); jb_bool(b, o->o.grayscale_to_rgb);
    jb_key(b, "compression"); jb_str(b, tfrec_compression_name(o->o.compression));
    jb_close(b, '}');
}

static void notes(jbuf *b, const char *key, const char *field, const in_notes *l)
{
    jb_key(b, key);
    jb_open(b, '[');
    for (size_t i = 0; i < l->n; i++) {
        jb_open(b, '{');
        jb_key(b, "path"); jb_str(b, l->v[i].path);
        jb_key(b, field); jb_str(b, l->v[i].what);
        jb_close(b, '}');
    }
    jb_close(b, ']');
}

void in_manifest_build(tfrec_imagenet_result *r, const in_opts *o, const in_plan *p,
                       const in_notes *fixed, const in_notes *rejected)
{
    jbuf b = { 0 };
    const tfrec_imagenet_counts *c = &r->counts;
    jb_open(&b, '{');
    jb_key(&b, "tool"); jb_str(&b, "libtfrec imagenet converter");
    jb_key(&b, "version"); jb_str(&b, tfrec_version());
    jb_key(&b, "status"); jb_str(&b, r->status == TFREC_OK ? "ok" : "failed");
    jb_key(&b, "error"); jb_str(&b, r->status == TFREC_OK ? NULL : r->err.msg);
    options(&b, o);
    jb_key(&b, "counts");
    jb_open(&b, '{');
    jb_key(&b, "images_total"); jb_uint(&b, c->images_total);
    jb_key(&b, "images_written"); jb_uint(&b, c->images_written);
    jb_key(&b, "images_fixed"); jb_uint(&b, c->images_fixed);
    jb_key(&b, "images_rejected"); jb_uint(&b, c->images_rejected);
    jb_key(&b, "bytes_in"); jb_uint(&b, c->bytes_in);
    jb_key(&b, "bytes_out"); jb_uint(&b, c->bytes_out);
    jb_key(&b, "shards"); jb_uint(&b, c->shards);
    jb_key(&b, "classes"); jb_uint(&b, c->classes);
    jb_key(&b, "seconds"); jb_num(&b, c->seconds);
    jb_close(&b, '}');
    jb_key(&b, "labels");
    jb_open(&b, '[');
    for (size_t i = 0; i < p->nclasses; i++) {
        jb_open(&b, '{');
        jb_key(&b, "label"); jb_uint(&b, i + 1);
        jb_key(&b, "synset"); jb_str(&b, p->classes[i]);
        jb_close(&b, '}');
    }
    jb_close(&b, ']');
    jb_key(&b, "shards");
    jb_open(&b, '[');
    /* Shards are listed only when the run committed them. */
    for (size_t i = 0; r->status == TFREC_OK && i < p->nshards; i++) {
        const in_shard *s = &p->shards[i];
        jb_open(&b, '{');
        jb_key(&b, "split"); jb_str(&b, p->splits[s->split].name);
        jb_key(&b, "file"); jb_str(&b, s->file);
        jb_key(&b, "records"); jb_uint(&b, s->records);
        jb_key(&b, "bytes"); jb_uint(&b, s->bytes);
        jb_close(&b, '}');
    }
    jb_close(&b, ']');
    notes(&b, "fixed", "from", fixed);
    notes(&b, "rejected", "reason", rejected);
    jb_close(&b, '}');
    jb_raw(&b, "\n");
    if (b.oom) {
        free(b.s);
        b.s = NULL;
    }
    r->json = b.s;
}

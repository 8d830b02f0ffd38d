/* The run's manifest: what was asked, what was written, what was fixed and
 * what was rejected. Nothing in it depends on the thread count except the
 * timing, so two runs can be compared with the "seconds" field ignored. */
#include "imagenet/run.h"

#include <stdlib.h>
#include <string.h>

#include "tfrec/image.h"
#include "tfrec/record.h"
#include "util/json_writer.h"
#include "util/vec.h"

int tfrec_in_notes_add(in_notes *l, const char *path, const char *what)
{
    if (!path) /* every note names a file: a caller without one has a bug */
        return TFREC_E_INVALID;
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

static void options(tfrec_json *j, const in_opts *o)
{
    tfrec_json_key(j, "options");
    tfrec_json_object_begin(j);
    tfrec_json_field_str(j, "layout", layout_name(o->o.layout));
    tfrec_json_field_str(j, "raw_data_dir", o->o.raw_data_dir);
    tfrec_json_field_str(j, "csv", o->o.csv_path);
    tfrec_json_field_str(j, "output_dir", o->o.output_dir);
    tfrec_json_field_str(j, "labels_file", o->o.labels_file);
    tfrec_json_field_str(j, "extensions", o->o.extensions);
    tfrec_json_field_int(j, "train_shards", o->o.train_shards);
    tfrec_json_field_int(j, "validation_shards", o->o.validation_shards);
    tfrec_json_field_uint(j, "seed", o->o.seed);
    tfrec_json_field_bool(j, "shuffle", !o->o.no_shuffle);
    tfrec_json_field_str(j, "verify", tfrec_verify_level_name(o->o.verify));
    tfrec_json_field_str(j, "on_error", o->o.on_error == TFREC_ON_ERROR_SKIP ? "skip" : "stop");
    tfrec_json_field_int(j, "quality", o->o.quality);
    tfrec_json_field_bool(j, "grayscale_to_rgb", o->o.grayscale_to_rgb);
    tfrec_json_field_str(j, "compression", tfrec_compression_name(o->o.compression));
    tfrec_json_field_uint(j, "max_image_pixels", o->o.max_image_pixels);
    tfrec_json_field_bool(j, "flat_output", o->o.flat_output);
    tfrec_json_field_bool(j, "overwrite", o->o.overwrite);
    tfrec_json_field_str(j, "train_tar", o->o.train_tar);
    tfrec_json_field_str(j, "validation_tar", o->o.validation_tar);
    tfrec_json_field_str(j, "listing", o->o.listing);
    tfrec_json_object_end(j);
}

static void notes(tfrec_json *j, const char *key, const char *field, const in_notes *l)
{
    tfrec_json_key(j, key);
    tfrec_json_array_begin(j);
    for (size_t i = 0; i < l->n; i++) {
        tfrec_json_object_begin(j);
        tfrec_json_field_str(j, "path", l->v[i].path);
        tfrec_json_field_str(j, field, l->v[i].what);
        tfrec_json_object_end(j);
    }
    tfrec_json_array_end(j);
}

/* A task's part: who wrote it, its share, and the plan it belongs to. */
static void task_fields(tfrec_json *j, const in_opts *o, const in_plan *p)
{
    char fp[17];
    tfrec_in_plan_fingerprint(p, o, fp);
    tfrec_json_key(j, "task");
    tfrec_json_object_begin(j);
    tfrec_json_field_uint(j, "index", o->o.task_index);
    tfrec_json_field_uint(j, "count", o->o.num_tasks);
    tfrec_json_field_str(j, "fingerprint", fp);
    /* The listing planned from (null: the task scanned the tree). */
    tfrec_json_field_str(j, "listing", o->o.listing);
    tfrec_json_field_str(j, "listing_fingerprint", p->listing_fp[0] ? p->listing_fp : NULL);
    tfrec_json_field_uint(j, "shards_begin", p->share_begin);
    tfrec_json_field_uint(j, "shards_end", p->share_end);
    tfrec_json_field_uint(j, "shards_total", p->nshards);
    tfrec_json_object_end(j);
}

void tfrec_in_manifest_counts(tfrec_json *j, const tfrec_imagenet_counts *c)
{
    tfrec_json_key(j, "counts");
    tfrec_json_object_begin(j);
    tfrec_json_field_uint(j, "images_total", c->images_total);
    tfrec_json_field_uint(j, "images_written", c->images_written);
    tfrec_json_field_uint(j, "images_fixed", c->images_fixed);
    tfrec_json_field_uint(j, "images_rejected", c->images_rejected);
    tfrec_json_field_uint(j, "bytes_in", c->bytes_in);
    tfrec_json_field_uint(j, "bytes_out", c->bytes_out);
    tfrec_json_field_uint(j, "shards", c->shards);
    tfrec_json_field_uint(j, "classes", c->classes);
    tfrec_json_field_uint(j, "stale_removed", c->stale_removed);
    tfrec_json_key(j, "seconds");
    tfrec_json_fixed(j, c->seconds, 3);
    tfrec_json_object_end(j);
}

void tfrec_in_manifest_build(tfrec_imagenet_result *r, const in_opts *o, const in_plan *p,
                             const in_notes *fixed, const in_notes *rejected)
{
    tfrec_json j;
    tfrec_json_init(&j, NULL);
    const tfrec_imagenet_counts *c = &r->counts;
    tfrec_json_object_begin(&j);
    tfrec_json_field_str(&j, "tool", "libtfrec imagenet converter");
    tfrec_json_field_str(&j, "version", tfrec_version());
    tfrec_json_field_str(&j, "status", r->status == TFREC_OK ? "ok" : "failed");
    tfrec_json_field_str(&j, "error", r->status == TFREC_OK ? NULL : r->err.msg);
    options(&j, o);
    tfrec_in_manifest_counts(&j, c);
    tfrec_json_key(&j, "labels");
    tfrec_json_array_begin(&j);
    for (size_t i = 0; i < p->nclasses; i++) {
        tfrec_json_object_begin(&j);
        tfrec_json_field_uint(&j, "label", i + 1);
        tfrec_json_field_str(&j, "synset", p->classes[i]);
        tfrec_json_object_end(&j);
    }
    tfrec_json_array_end(&j);
    tfrec_json_key(&j, "shards");
    tfrec_json_array_begin(&j);
    /* Shards are listed only when the run committed them. */
    for (size_t i = p->share_begin; r->status == TFREC_OK && i < p->share_end; i++) {
        const in_shard *s = &p->shards[i];
        tfrec_json_object_begin(&j);
        tfrec_json_field_str(&j, "split", p->splits[s->split].name);
        tfrec_json_field_str(&j, "file", s->file);
        tfrec_json_field_uint(&j, "records", s->records);
        tfrec_json_field_uint(&j, "bytes", s->bytes);
        if (o->o.num_tasks)
            tfrec_json_field_uint(&j, "crc32c", s->crc32c);
        tfrec_json_object_end(&j);
    }
    tfrec_json_array_end(&j);
    notes(&j, "fixed", "from", fixed);
    notes(&j, "rejected", "reason", rejected);
    tfrec_json_key(&j, "stale_removed");
    tfrec_json_array_begin(&j);
    for (size_t i = 0; i < r->stale.n; i++) {
        tfrec_json_object_begin(&j);
        tfrec_json_field_str(&j, "path", r->stale.v[i].path);
        tfrec_json_object_end(&j);
    }
    tfrec_json_array_end(&j);
    if (o->o.num_tasks)
        task_fields(&j, o, p);
    tfrec_json_object_end(&j);
    tfrec_json_newline(&j);
    r->json = tfrec_json_take(&j); /* NULL when memory ran out */
}

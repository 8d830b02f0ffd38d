/* The image stage of a dataset (tfrec/image_decode.h): a map function run
 * on the dataset's reader threads that parses each tf.Example, decodes its
 * JPEG to a fixed-size crop and writes label + pixels. */
#include "tfrec/image_decode.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "tfrec/example.h"

#include "image/image_internal.h"
#include "util/errors.h"
#include "util/splitmix.h"
#include "util/struct_size.h"

struct tfrec_image_stage {
    tfrec_image_decode_options decode;
    char *image_key, *label_key;
    uint64_t seed;
    int skip_corrupt;
    size_t item_size;
};

TFREC_DEFINE_STRUCT_INIT(tfrec_image_stage_options)

/* SplitMix64's output for state x (its first draw from x). */
static uint64_t mix(uint64_t x)
{
    return tfrec_splitmix64(&x);
}

static int stage_map(void *ctx, const uint8_t *data, size_t len,
                     const tfrec_dataset_record_ref *ref, uint8_t *out)
{
    const tfrec_image_stage *s = ctx;
    tfrec_example *ex = NULL;
    int rc = tfrec_example_parse(&ex, data, len);
    if (rc < 0)
        return rc;
    const uint8_t *img;
    size_t n;
    if ((rc = tfrec_example_get_bytes(ex, s->image_key, 0, &img, &n)) < 0) {
        tfrec_example_free(ex);
        return tfrec_fail(NULL, rc, "no bytes feature %s", s->image_key);
    }
    int64_t label;
    if (tfrec_example_get_int64(ex, s->label_key, 0, &label) < 0)
        label = -1;
    memcpy(out, &label, sizeof label);
    /* A function of (seed, epoch, record) alone: the same crops whatever
     * thread decodes which record. */
    uint64_t random = mix(mix(s->seed ^ mix(ref->epoch)) ^ ref->global);
    rc = tfrec_image_decode_rgb(img, n, &s->decode, random, out + sizeof label, NULL);
    tfrec_example_free(ex);
    if (rc == TFREC_E_IMAGE && s->skip_corrupt)
        return TFREC_DATASET_MAP_DROP;
    return rc;
}

int tfrec_image_stage_new(tfrec_image_stage **out, const tfrec_image_stage_options *opts)
{
    if (!out)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_image_stage_new: NULL argument");
    *out = NULL;
    tfrec_image_stage_options o;
    int rc = TFREC_STRUCT_IN(tfrec_image_stage_options, &o, opts, NULL);
    if (rc < 0)
        return rc;
    tfrec_image_stage *s = calloc(1, sizeof *s);
    if (!s)
        return tfrec_fail(NULL, TFREC_E_NOMEM, "image stage: out of memory");
    if ((rc = TFREC_STRUCT_IN(tfrec_image_decode_options, &s->decode, o.decode, NULL)) < 0) {
        free(s);
        return rc;
    }
    if ((rc = tfrec_img_decode_settle(&s->decode)) < 0) {
        free(s);
        return rc;
    }
    s->image_key = strdup(o.image_key ? o.image_key : "image/encoded");
    s->label_key = strdup(o.label_key ? o.label_key : "image/class/label");
    if (!s->image_key || !s->label_key) {
        tfrec_image_stage_free(s);
        return tfrec_fail(NULL, TFREC_E_NOMEM, "image stage: out of memory");
    }
    s->seed = o.seed;
    s->skip_corrupt = o.skip_corrupt;
    s->item_size = sizeof(int64_t) + (size_t)s->decode.size * (size_t)s->decode.size * 3;
    *out = s;
    return TFREC_OK;
}

size_t tfrec_image_stage_item_size(const tfrec_image_stage *s)
{
    return s ? s->item_size : 0;
}

int tfrec_image_stage_attach(tfrec_image_stage *s, tfrec_dataset_options *opts)
{
    if (!s || !opts)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_image_stage_attach: NULL argument");
    if (opts->struct_size < offsetof(tfrec_dataset_options, map_size) + sizeof opts->map_size)
        return tfrec_fail(NULL, TFREC_E_INVALID,
                          "tfrec_image_stage_attach: dataset options from before 1.1");
    opts->map = stage_map;
    opts->map_ctx = s;
    opts->map_size = s->item_size;
    return TFREC_OK;
}

void tfrec_image_stage_free(tfrec_image_stage *s)
{
    if (!s)
        return;
    free(s->image_key);
    free(s->label_key);
    free(s);
}

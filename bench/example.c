/* tf.Example build/serialize and parse throughput for an ImageNet-style
 * example (8 small features + one ~110 KB encoded image), next to peers
 * measured in the same run:
 *   - memcpy of the image bytes: the floor, serialization must copy them once;
 *   - the same message packed by protobuf-c directly from hand-made structs
 *     (what the builder's bookkeeping costs on top of the encoder).
 * Prints one "name: N examples/s (GB/s)" line per case and the ratios.
 * Usage: build/bench/example [seconds per case, default 1] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensorflow/core/example/example.pb-c.h"
#include "bench_util.h"
#include "tfrec/example.h"

#define IMAGE_BYTES (110 * 1024)

static uint8_t image[IMAGE_BYTES];
static uint8_t out[IMAGE_BYTES + 4096];
static volatile size_t sink;

static size_t build_with_builder(tfrec_example_builder *b)
{
    tfrec_example_builder_reset(b);
    tfrec_example_add_int64(b, "image/height", 375);
    tfrec_example_add_int64(b, "image/width", 500);
    tfrec_example_add_int64(b, "image/channels", 3);
    tfrec_example_add_int64(b, "image/class/label", 417);
    tfrec_example_add_string(b, "image/colorspace", "RGB");
    tfrec_example_add_string(b, "image/class/synset", "n04235860");
    tfrec_example_add_string(b, "image/format", "JPEG");
    tfrec_example_add_string(b, "image/filename", "n04235860_14959.JPEG");
    tfrec_example_add_bytes_ref(b, "image/encoded", image, sizeof image);
    size_t n = 0;
    tfrec_example_serialize(b, out, sizeof out, &n);
    return n;
}

/* The same message straight through protobuf-c, structs prepared by hand. */
typedef struct raw_msg {
    Tensorflow__Example ex;
    Tensorflow__Features fs;
    Tensorflow__Features__FeatureEntry e[9], *ep[9];
    Tensorflow__Feature f[9];
    Tensorflow__Int64List il[4];
    Tensorflow__BytesList bl[5];
    int64_t iv[4];
    ProtobufCBinaryData bv[5];
} raw_msg;

static void raw_init(raw_msg *m)
{
    static const char *ikeys[] = { "image/channels", "image/class/label", "image/height",
                                   "image/width" };
    static const char *bkeys[] = { "image/class/synset", "image/colorspace", "image/encoded",
                                   "image/filename", "image/format" };
    static const char *bvals[] = { "n04235860", "RGB", NULL, "n04235860_14959.JPEG", "JPEG" };
    const int64_t ivals[] = { 3, 417, 375, 500 };
    tensorflow__example__init(&m->ex);
    tensorflow__features__init(&m->fs);
    m->ex.features = &m->fs;
    m->fs.n_feature = 9;
    m->fs.feature = m->ep;
    /* keys in sorted order, like the builder's output */
    const char *order[9] = { "image/channels",   "image/class/label", "image/class/synset",
                             "image/colorspace", "image/encoded",     "image/filename",
                             "image/format",     "image/height",      "image/width" };
    for (int i = 0; i < 9; i++) {
        tensorflow__features__feature_entry__init(&m->e[i]);
        tensorflow__feature__init(&m->f[i]);
        m->e[i].key = (char *)order[i];
        m->e[i].value = &m->f[i];
        m->ep[i] = &m->e[i];
        for (int k = 0; k < 4; k++)
            if (!strcmp(order[i], ikeys[k])) {
                tensorflow__int64_list__init(&m->il[k]);
                m->iv[k] = ivals[k];
                m->il[k].n_value = 1;
                m->il[k].value = &m->iv[k];
                m->f[i].kind_case = TENSORFLOW__FEATURE__KIND_INT64_LIST;
                m->f[i].int64_list = &m->il[k];
            }
        for (int k = 0; k < 5; k++)
            if (!strcmp(order[i], bkeys[k])) {
                tensorflow__bytes_list__init(&m->bl[k]);
                m->bv[k].data = bvals[k] ? (uint8_t *)bvals[k] : image;
                m->bv[k].len = bvals[k] ? strlen(bvals[k]) : sizeof image;
                m->bl[k].n_value = 1;
                m->bl[k].value = &m->bv[k];
                m->f[i].kind_case = TENSORFLOW__FEATURE__KIND_BYTES_LIST;
                m->f[i].bytes_list = &m->bl[k];
            }
    }
}

typedef struct result {
    const char *name;
    double per_sec;
} result;

#define RUN(res, label, secs, body)                  \
    do {                                             \
        long iters_ = 0;                             \
        double t0_ = bench_now(), t_;                \
        do {                                         \
            for (int k_ = 0; k_ < 64; k_++) {        \
                body;                                \
            }                                        \
            iters_ += 64;                            \
        } while ((t_ = bench_now()) - t0_ < (secs)); \
        (res).name = (label);                        \
        (res).per_sec = (double)iters_ / (t_ - t0_); \
    } while (0)

static void print(const result *r, size_t bytes)
{
    printf("%-40s %10.0f examples/s  %6.2f GB/s\n", r->name, r->per_sec,
           r->per_sec * (double)bytes / 1e9);
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 1.0;
    for (size_t i = 0; i < sizeof image; i++)
        image[i] = (uint8_t)(i * 2654435761u >> 13);
    tfrec_example_builder *b;
    if (tfrec_example_builder_new(&b))
        return 1;
    size_t n = build_with_builder(b);
    raw_msg m;
    raw_init(&m);
    size_t n_raw = tensorflow__example__pack(&m.ex, out);
    if (n_raw != n) {
        fprintf(stderr, "peer message differs in size: %zu vs %zu\n", n_raw, n);
        return 1;
    }
    static uint8_t copy[sizeof out];
    result r_build, r_raw, r_memcpy, r_parse;
    RUN(r_memcpy, "peer: memcpy of the example bytes", secs,
        (memcpy(copy, out, n), sink += copy[k_]));
    RUN(r_raw, "peer: protobuf-c pack, hand-made structs", secs,
        sink += tensorflow__example__pack(&m.ex, out));
    RUN(r_build, "libtfrec builder: reset+add+serialize", secs, sink += build_with_builder(b));
    build_with_builder(b);
    RUN(r_parse, "libtfrec parse + get image/encoded", secs, {
        tfrec_example *ex;
        const uint8_t *d;
        size_t len;
        if (tfrec_example_parse(&ex, out, n) == 0) {
            tfrec_example_get_bytes(ex, "image/encoded", 0, &d, &len);
            sink += len;
            tfrec_example_free(ex);
        }
    });
    printf("example: %zu bytes (9 features, %d-byte image)\n", n, IMAGE_BYTES);
    print(&r_memcpy, n);
    print(&r_raw, n);
    print(&r_build, n);
    print(&r_parse, n);
    printf("ratio builder / protobuf-c pack: %.2f\n", r_build.per_sec / r_raw.per_sec);
    printf("ratio builder / memcpy:          %.2f\n", r_build.per_sec / r_memcpy.per_sec);
    printf("ratio parse / memcpy:            %.2f\n", r_parse.per_sec / r_memcpy.per_sec);
    printf("builder_per_sec %.0f\n", r_build.per_sec);
    tfrec_example_builder_free(b);
    return 0;
}

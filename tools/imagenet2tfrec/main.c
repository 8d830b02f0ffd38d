/* imagenet2tfrec: image directories to sharded tf.Example TFRecords, a
 * drop-in for tensorflow/tpu's imagenet_to_gcs.py conversion step (flag
 * names follow it), multi-threaded and deterministic. See docs/imagenet.md. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "../common/progress.h"
#include "tfrec/image.h"
#include "tfrec/imagenet.h"
#include "tfrec/record.h"

static void usage(FILE *f)
{
    fprintf(f,
"usage: imagenet2tfrec --raw_data_dir=DIR --local_scratch_dir=DIR [options]\n"
"\n"
"Converts RAW/train/<synset>/*.JPEG, RAW/validation/*.JPEG and\n"
"RAW/synset_labels.txt into train-00000-of-01024 ... validation-00127-of-00128.\n"
"\n"
"input\n"
"  --raw_data_dir=DIR        input root\n"
"  --layout=imagenet|folders|csv  [imagenet]; folders: DIR/<class>/*, one split \"train\"\n"
"  --csv=FILE                path,label[,split] lines (implies --layout=csv)\n"
"  --labels_file=FILE        one synset per line; label = line number [sorted union, 1..K]\n"
"  --validation_labels_file=FILE  [RAW/synset_labels.txt]\n"
"  --extensions=LIST         accepted extensions, any case [jpeg,jpg]\n"
"output\n"
"  --local_scratch_dir=DIR   (alias --output_dir) created if missing\n"
"  --train_shards=N          [1024]\n"
"  --validation_shards=N     [128]\n"
"  --compression=NONE|ZLIB|GZIP  [NONE]\n"
"  --manifest=FILE           JSON manifest [OUTPUT/manifest.json]; --manifest= to skip\n"
"processing\n"
"  --num_threads=N           worker threads [all cores]\n"
"  --seed=N                  train shuffle seed [0]; --no_shuffle keeps sorted order\n"
"  --verify=header|fast|full [header]\n"
"  --on_error=stop|skip      [stop]\n"
"  --quality=Q               quality of re-encoded PNG/CMYK images [100]\n"
"  --grayscale_to_rgb        re-encode grayscale JPEGs as RGB [keep, like the reference]\n"
"  --max_inflight_mb=N       image bytes held in memory at once [256]\n"
"  --quiet                   no progress display or summary\n");
}

typedef struct cli {
    tfrec_imagenet_options o;
    const char *manifest;
    int manifest_set;
    int quiet;
} cli;

static int parse_int(const char *flag, const char *v, long long lo, long long hi, long long *out)
{
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno || end == v || *end || x < lo || x > hi) {
        fprintf(stderr, "imagenet2tfrec: %s expects an integer in %lld..%lld, got \"%s\"\n", flag,
                lo, hi, v);
        return -1;
    }
    *out = x;
    return 0;
}

static int parse_bool(const char *flag, const char *v, int *out)
{
    if (!v || !strcasecmp(v, "true") || !strcmp(v, "1") || !strcasecmp(v, "yes"))
        *out = 1;
    else if (!strcasecmp(v, "false") || !strcmp(v, "0") || !strcasecmp(v, "no"))
        *out = 0;
    else {
        fprintf(stderr, "imagenet2tfrec: %s expects true or false, got \"%s\"\n", flag, v);
        return -1;
    }
    return 0;
}

/* Returns 0, -1 on a bad flag (message printed), 1 for --help. */
static int parse(int argc, char **argv, cli *c)
{
    memset(c, 0, sizeof *c);
    tfrec_imagenet_options_init(&c->o);
    static const char *value_flags[] = { "raw_data_dir", "local_scratch_dir", "output_dir", "layout",
        "csv", "labels_file", "validation_labels_file", "extensions", "train_shards",
        "validation_shards", "compression", "manifest", "num_threads", "seed", "verify",
        "on_error", "quality", "max_inflight_mb", NULL };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help"))
            return 1;
        if (strncmp(a, "--", 2) != 0) {
            fprintf(stderr, "imagenet2tfrec: unexpected argument \"%s\" (flags are --name=value)\n", a);
            return -1;
        }
        char name[64];
        const char *eq = strchr(a + 2, '='), *v = NULL;
        size_t nl = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
        if (nl >= sizeof name) {
            fprintf(stderr, "imagenet2tfrec: unknown flag %s\n", a);
            return -1;
        }
        memcpy(name, a + 2, nl);
        name[nl] = '\0';
        if (eq)
            v = eq + 1;
        int takes_value = 0;
        for (int k = 0; value_flags[k]; k++)
            takes_value |= !strcmp(name, value_flags[k]);
        if (takes_value && !v) {
            if (i + 1 >= argc) {
                fprintf(stderr, "imagenet2tfrec: --%s needs a value\n", name);
                return -1;
            }
            v = argv[++i];
        }
        long long x;
        tfrec_imagenet_options *o = &c->o;
        if (!strcmp(name, "raw_data_dir")) o->raw_data_dir = v;
        else if (!strcmp(name, "local_scratch_dir") || !strcmp(name, "output_dir")) o->output_dir = v;
        else if (!strcmp(name, "csv")) { o->csv_path = v; o->layout = TFREC_LAYOUT_CSV; }
        else if (!strcmp(name, "labels_file")) o->labels_file = v;
        else if (!strcmp(name, "validation_labels_file")) o->validation_labels_file = v;
        else if (!strcmp(name, "extensions")) o->extensions = v;
        else if (!strcmp(name, "manifest")) { c->manifest = v; c->manifest_set = 1; }
        else if (!strcmp(name, "layout")) {
            if (!strcmp(v, "imagenet")) o->layout = TFREC_LAYOUT_IMAGENET;
            else if (!strcmp(v, "folders")) o->layout = TFREC_LAYOUT_FOLDERS;
            else if (!strcmp(v, "csv")) o->layout = TFREC_LAYOUT_CSV;
            else { fprintf(stderr, "imagenet2tfrec: --layout is imagenet, folders or csv\n"); return -1; }
        } else if (!strcmp(name, "train_shards")) {
            if (parse_int("--train_shards", v, 1, 99999, &x)) return -1;
            o->train_shards = (int)x;
        } else if (!strcmp(name, "validation_shards")) {
            if (parse_int("--validation_shards", v, 1, 99999, &x)) return -1;
            o->validation_shards = (int)x;
        } else if (!strcmp(name, "num_threads")) {
            if (parse_int("--num_threads", v, 1, 256, &x)) return -1;
            o->num_threads = (int)x;
        } else if (!strcmp(name, "seed")) {
            char *end;
            errno = 0;
            unsigned long long s = strtoull(v, &end, 10);
            if (errno || end == v || *end || v[0] == '-') {
                fprintf(stderr, "imagenet2tfrec: --seed expects a non-negative integer\n");
                return -1;
            }
            o->seed = s;
        } else if (!strcmp(name, "quality")) {
            if (parse_int("--quality", v, 1, 100, &x)) return -1;
            o->quality = (int)x;
        } else if (!strcmp(name, "max_inflight_mb")) {
            if (parse_int("--max_inflight_mb", v, 1, 1 << 20, &x)) return -1;
            o->max_inflight_bytes = (size_t)x << 20;
        } else if (!strcmp(name, "verify")) {
            int lv = tfrec_verify_level_from_name(v);
            if (lv <= 0) { fprintf(stderr, "imagenet2tfrec: --verify is header, fast or full\n"); return -1; }
            o->verify = lv;
        } else if (!strcmp(name, "on_error")) {
            if (!strcmp(v, "stop")) o->on_error = TFREC_ON_ERROR_STOP;
            else if (!strcmp(v, "skip")) o->on_error = TFREC_ON_ERROR_SKIP;
            else { fprintf(stderr, "imagenet2tfrec: --on_error is stop or skip\n"); return -1; }
        } else if (!strcmp(name, "compression")) {
            int cmp = tfrec_compression_from_name(v);
            if (cmp < 0 || cmp == TFREC_COMPRESSION_AUTO) {
                fprintf(stderr, "imagenet2tfrec: --compression is NONE, ZLIB or GZIP\n");
                return -1;
            }
            o->compression = cmp;
        } else if (!strcmp(name, "grayscale_to_rgb")) {
            if (parse_bool("--grayscale_to_rgb", v, &o->grayscale_to_rgb)) return -1;
        } else if (!strcmp(name, "no_shuffle")) {
            if (parse_bool("--no_shuffle", v, &o->no_shuffle)) return -1;
        } else if (!strcmp(name, "quiet")) {
            if (parse_bool("--quiet", v, &c->quiet)) return -1;
        } else if (!strcmp(name, "gcs_upload") || !strcmp(name, "gcs_output_path") ||
                   !strcmp(name, "project") || !strcmp(name, "imagenet_username") ||
                   !strcmp(name, "imagenet_access_key")) {
            fprintf(stderr, "imagenet2tfrec: --%s (download/upload) is not part of this tool; "
                            "convert locally, then copy the shards (e.g. gsutil -m cp)\n", name);
            return -1;
        } else {
            fprintf(stderr, "imagenet2tfrec: unknown flag --%s (see --help)\n", name);
            return -1;
        }
    }
    return 0;
}

static int on_progress(void *ctx, uint64_t done, uint64_t total, uint64_t bytes_in, uint64_t bytes_out)
{
    cli_progress *p = ctx;
    (void)bytes_out;
    p->total = total;
    cli_progress_update(p, done, bytes_in);
    return 0;
}

static void summary(const tfrec_imagenet_result *r, int status)
{
    tfrec_imagenet_counts c = TFREC_IMAGENET_COUNTS_INIT;
    tfrec_imagenet_result_counts(r, &c);
    double rate = c.seconds > 0 ? (double)(c.images_written + c.images_rejected) / c.seconds : 0;
    fprintf(stderr,
            "%s: %" PRIu64 " images found, %" PRIu64 " written, %" PRIu64 " fixed (PNG/CMYK/YCCK/gray), "
            "%" PRIu64 " rejected; %u shards, %.1f MB in, %.1f MB out, %u classes, %.2f s (%.0f images/s)\n",
            status ? "FAILED" : "done", c.images_total, c.images_written, c.images_fixed,
            c.images_rejected, c.shards, (double)c.bytes_in / 1e6, (double)c.bytes_out / 1e6,
            c.classes, c.seconds, rate);
    /* The manifest has them all; the terminal gets the first few. */
    const char *path, *reason;
    size_t i = 0;
    for (; i < 20 && tfrec_imagenet_result_rejected(r, i, &path, &reason) == TFREC_OK; i++)
        fprintf(stderr, "  rejected %s: %s\n", path, reason);
    if (c.images_rejected > i)
        fprintf(stderr, "  ... and %" PRIu64 " more rejected images (see the manifest)\n",
                c.images_rejected - i);
}

int main(int argc, char **argv)
{
    cli c;
    int pr = parse(argc, argv, &c);
    if (pr) {
        if (pr > 0)
            usage(stdout);
        return pr > 0 ? 0 : 2;
    }
    if (argc == 1) {
        usage(stderr);
        return 2;
    }
    /* Missing required flags are usage errors, reported before anything runs. */
    if (!c.o.output_dir || !*c.o.output_dir) {
        fprintf(stderr, "imagenet2tfrec: --local_scratch_dir (or --output_dir) is required\n");
        return 2;
    }
    if (c.o.layout != TFREC_LAYOUT_CSV && (!c.o.raw_data_dir || !*c.o.raw_data_dir)) {
        fprintf(stderr, "imagenet2tfrec: --raw_data_dir is required\n");
        return 2;
    }
    if (c.o.layout == TFREC_LAYOUT_CSV && (!c.o.csv_path || !*c.o.csv_path)) {
        fprintf(stderr, "imagenet2tfrec: --layout=csv needs --csv=FILE\n");
        return 2;
    }
    char *manifest_default = NULL;
    if (!c.manifest_set && c.o.output_dir) {
        size_t n = strlen(c.o.output_dir) + 16;
        manifest_default = malloc(n);
        if (manifest_default)
            snprintf(manifest_default, n, "%s/manifest.json", c.o.output_dir);
        c.o.manifest_path = manifest_default;
    } else if (c.manifest && *c.manifest) {
        c.o.manifest_path = c.manifest;
    }
    cli_progress prog;
    cli_progress_start(&prog, "images", 0, c.quiet);
    c.o.progress = on_progress;
    c.o.progress_ctx = &prog;
    tfrec_imagenet_result *r = NULL;
    int rc = tfrec_imagenet_convert(&c.o, &r);
    cli_progress_finish(&prog);
    if (rc)
        fprintf(stderr, "imagenet2tfrec: %s\n", r ? tfrec_imagenet_result_errmsg(r) : tfrec_last_errmsg());
    tfrec_imagenet_counts counts = TFREC_IMAGENET_COUNTS_INIT;
    tfrec_imagenet_result_counts(r, &counts);
    /* A run that failed before finding images has nothing to summarise. */
    if (r && (!c.quiet || rc) && counts.images_total)
        summary(r, rc);
    /* Point at the manifest of a failed run only if one could be written
     * (an input error can stop the run before the output directory exists). */
    if (rc && c.o.manifest_path && r && access(c.o.manifest_path, F_OK) == 0)
        fprintf(stderr, "manifest: %s\n", c.o.manifest_path);
    tfrec_imagenet_result_free(r);
    free(manifest_default);
    return rc ? 1 : 0;
}

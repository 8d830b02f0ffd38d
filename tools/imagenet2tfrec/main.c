/* imagenet2tfrec: image directories to sharded tf.Example TFRecords, a
 * drop-in for tensorflow/tpu's imagenet_to_gcs.py conversion step (flag
 * names follow it), multi-threaded and deterministic. See docs/imagenet.md. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/exit_codes.h"
#include "../common/files.h"
#include "../common/flag_types.h"
#include "../common/flags.h"
#include "../common/progress.h"
#include "../common/signals.h"
#include "tfrec/image.h"
#include "tfrec/imagenet.h"
#include "tfrec/record.h"

static const char usage[] =
    "usage: imagenet2tfrec --raw_data_dir=DIR --local_scratch_dir=DIR [flags]\n"
    "\n"
    "Converts RAW/train/<synset>/*.JPEG, RAW/validation/*.JPEG and\n"
    "RAW/synset_labels.txt into OUT/train/train-00000-of-01024 ...\n"
    "OUT/validation/validation-00127-of-00128 and OUT/manifest.json, as\n"
    "tensorflow/tpu's imagenet_to_gcs.py lays them out (--flat_output: all in OUT).\n"
    "SIGINT/SIGTERM stop the run, remove its staging directory and exit 130;\n"
    "staging directories of runs killed outright are removed by the next run.\n";

static const char footer[] =
    "Uploading: with --gcs_output_path=gs://BUCKET/PATH (and --gcs_upload, the\n"
    "default) the shards stream straight to the bucket, no local scratch copy;\n"
    "each object appears only once complete, and a failed or interrupted run\n"
    "removes the shards it had uploaded. --output_dir=gs://... does the same.\n"
    "Without --gcs_output_path the shards stay in the output directory, as with\n"
    "the reference's --nogcs_upload. Credentials: see docs/storage.md.\n"
    "Downloading (--imagenet_username, --imagenet_access_key without\n"
    "--raw_data_dir) is not built: it is refused with a message naming the flag.\n";

static const char footer_no_storage[] =
    "Uploading (--gcs_output_path with --gcs_upload) and downloading\n"
    "(--imagenet_username, --imagenet_access_key without --raw_data_dir) need\n"
    "modules that are not built yet: they are refused with a message naming the\n"
    "flag. Without --gcs_output_path the shards stay in the output directory\n"
    "(copy them with gsutil -m cp), as with the reference's --nogcs_upload.\n";

typedef struct cli {
    tfrec_imagenet_options o;
    const char *manifest;
    int quiet;
    /* the reference's Cloud Storage and download flags */
    const char *project, *gcs_output_path, *imagenet_username, *imagenet_access_key;
    int gcs_upload;
    uint64_t max_inflight_mb;
} cli;

static const char *const layouts[] = { "imagenet", "folders", "csv", NULL }; /* TFREC_LAYOUT_* */
static const char *const on_errors[] = { "stop", "skip", NULL };             /* TFREC_ON_ERROR_* */

/* The reference's upload flags with the storage part: --gcs_output_path
 * (upload on, the default) is where the shards go, streamed; an explicit
 * --gcs_upload without it is an error naming the way out. Without
 * --gcs_output_path the default conversion stays local (--output_dir or
 * --local_scratch_dir), so command lines without upload flags keep working. */
static int check_upload_flags(const cli_cmdline *cl, cli *c)
{
    if (c->gcs_upload && c->gcs_output_path) {
        if (!cli_is_remote(c->gcs_output_path)) {
            cli_usage_error(cl, "--gcs_output_path must start with gs://, not '%s'",
                            c->gcs_output_path);
            return EXIT_USAGE;
        }
        if (cli_flag_seen(cl, "output_dir")) {
            cli_usage_error(cl,
                            "--gcs_output_path=%s and --output_dir=%s both name the output: "
                            "give one (--output_dir may be gs:// too)",
                            c->gcs_output_path, c->o.output_dir);
            return EXIT_USAGE;
        }
        c->o.output_dir = c->gcs_output_path; /* streamed: --local_scratch_dir is not used */
        return EXIT_OK;
    }
    if (c->gcs_upload && cli_flag_seen(cl, "gcs_upload")) {
        cli_usage_error(cl, "--gcs_upload needs --gcs_output_path=gs://BUCKET/PATH (where the "
                            "shards are uploaded); pass --nogcs_upload to keep them in "
                            "--local_scratch_dir");
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

/* The reference's upload and download flags: what they ask for is not
 * built, so say so, naming the flag (never "unknown flag"). */
static int check_reference_flags(const cli_cmdline *cl, cli *c)
{
    if (cli_have_storage()) {
        int st = check_upload_flags(cl, c);
        if (st != EXIT_OK)
            return st;
    } else if (c->gcs_upload && c->gcs_output_path) {
        if (strncmp(c->gcs_output_path, "gs://", 5) != 0)
            cli_usage_error(cl, "--gcs_output_path must start with gs://, not '%s'",
                            c->gcs_output_path);
        else
            cli_usage_error(cl,
                            "--gcs_output_path=%s: uploading to Cloud Storage needs the "
                            "storage module, which is not built yet; convert with "
                            "--nogcs_upload and copy the shards (gsutil -m cp)",
                            c->gcs_output_path);
        return EXIT_USAGE;
    }
    if (c->gcs_upload && cli_flag_seen(cl, "gcs_upload")) {
        cli_usage_error(cl, "--gcs_upload needs --gcs_output_path=gs://BUCKET/PATH, and "
                            "uploading is not built yet: pass --nogcs_upload to convert locally");
        return EXIT_USAGE;
    }
    if (!c->o.raw_data_dir && c->o.layout != TFREC_LAYOUT_CSV &&
        (c->imagenet_username || c->imagenet_access_key)) {
        cli_usage_error(cl,
                        "%s: downloading ImageNet is not built yet; download and extract "
                        "the tar files, then pass --raw_data_dir",
                        c->imagenet_username ? "--imagenet_username" : "--imagenet_access_key");
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

/* Returns CLI_PARSED or an exit status. */
static int parse(cli_cmdline *cl, cli_flag *flags, int argc, char **argv, cli *c)
{
    memset(cl, 0, sizeof *cl);
    cl->prog = "imagenet2tfrec";
    cl->usage = usage;
    cl->footer = cli_have_storage() ? footer : footer_no_storage;
    cl->flags = flags;
    cl->max_args = 0;
    int st = cli_parse(cl, argc, argv);
    if (st != CLI_PARSED)
        return st;
    if (argc == 1) {
        cli_print_help(cl, stderr, 0);
        return EXIT_USAGE;
    }
    if ((st = check_reference_flags(cl, c)) != EXIT_OK)
        return st;
    if (c->o.csv_path && !cli_flag_seen(cl, "layout"))
        c->o.layout = TFREC_LAYOUT_CSV; /* --csv implies --layout=csv */
    c->o.max_inflight_bytes = (size_t)c->max_inflight_mb << 20;
    /* Missing required flags are usage errors, reported before anything runs. */
    if (!c->o.output_dir || !*c->o.output_dir) {
        cli_usage_error(cl, "--local_scratch_dir (or --output_dir) is required");
        return EXIT_USAGE;
    }
    if (c->o.layout != TFREC_LAYOUT_CSV && (!c->o.raw_data_dir || !*c->o.raw_data_dir)) {
        cli_usage_error(cl, "--raw_data_dir is required");
        return EXIT_USAGE;
    }
    if (c->o.layout == TFREC_LAYOUT_CSV && (!c->o.csv_path || !*c->o.csv_path)) {
        cli_usage_error(cl, "--layout=csv needs --csv=FILE");
        return EXIT_USAGE;
    }
    return CLI_PARSED;
}

static int on_progress(void *ctx, uint64_t done, uint64_t total, uint64_t bytes_in,
                       uint64_t bytes_out)
{
    cli_progress *p = ctx;
    (void)bytes_out;
    p->total = total;
    cli_progress_update(p, done, bytes_in);
    return cli_interrupted != 0; /* stop: the library removes its partial shards */
}

static void list_rejected(const tfrec_imagenet_result *r, uint64_t rejected)
{
    /* The manifest has them all; the terminal gets the first few. */
    const char *path, *reason;
    size_t i = 0;
    for (; i < 20 && tfrec_imagenet_result_rejected(r, i, &path, &reason) == TFREC_OK; i++)
        fprintf(stderr, "  rejected %s: %s\n", path, reason);
    if (rejected > i)
        fprintf(stderr, "  ... and %" PRIu64 " more rejected images (see the manifest)\n",
                rejected - i);
}

static void summary_ok(const cli *c, const tfrec_imagenet_counts *n)
{
    double rate =
        n->seconds > 0 ? (double)(n->images_written + n->images_rejected) / n->seconds : 0;
    cli_log("done: %" PRIu64 " images found, %" PRIu64 " written, %" PRIu64
            " fixed (PNG/CMYK/YCCK/gray), %" PRIu64
            " rejected; %u shards, %.1f MB in, %.1f MB out, %u classes, %.2f s (%.0f images/s)",
            n->images_total, n->images_written, n->images_fixed, n->images_rejected, n->shards,
            (double)n->bytes_in / 1e6, (double)n->bytes_out / 1e6, n->classes, n->seconds, rate);
    if (c->o.flat_output)
        cli_log("output: %s/<split>-NNNNN-of-NNNNN", c->o.output_dir);
    else
        cli_log("output: %s/<split>/<split>-NNNNN-of-NNNNN (e.g. %s/train/)", c->o.output_dir,
                c->o.output_dir);
    if (c->o.manifest_path)
        cli_log("manifest: %s", c->o.manifest_path);
}

/* A failed run wrote nothing into place: no rate, no output sizes. */
static void summary_failed(const tfrec_imagenet_counts *n)
{
    cli_log("FAILED after %.2f s: %" PRIu64 " images found, %" PRIu64
            " rejected; no shard was moved into the output directory",
            n->seconds, n->images_total, n->images_rejected);
}

static void report_stale(const tfrec_imagenet_result *r)
{
    const char *path;
    for (size_t i = 0; tfrec_imagenet_result_stale(r, i, &path) == TFREC_OK; i++)
        cli_log("removed %s: the staging directory of an interrupted run whose process is "
                "no longer running",
                path);
}

/* A manifest in a bucket: the library writes local files only, so the
 * result's JSON is uploaded here (an object that appears when complete). */
static int upload_manifest(const char *name, const char *json)
{
    tfrec_io io = TFREC_IO_INIT;
    int rc = cli_open_sink(NULL, &io, name);
    if (rc == TFREC_OK) {
        rc = io.write(io.ctx, json, strlen(json));
        int crc = io.close(io.ctx, rc == TFREC_OK);
        rc = rc ? rc : crc;
    }
    if (rc)
        cli_log("cannot write the manifest %s: %s", name, tfrec_last_errmsg());
    return rc;
}

static int convert(cli *c)
{
    char *manifest_default = NULL;
    if (!c->manifest) {
        size_t n = strlen(c->o.output_dir) + 16;
        manifest_default = malloc(n);
        if (manifest_default)
            snprintf(manifest_default, n, "%s/manifest.json", c->o.output_dir);
        c->o.manifest_path = manifest_default;
    } else if (*c->manifest) {
        c->o.manifest_path = c->manifest; /* --manifest= writes none */
    }
    cli_progress prog;
    cli_progress_start(&prog, "images", 0, c->quiet);
    c->o.progress = on_progress;
    c->o.progress_ctx = &prog;
    /* The workers and the scan stop at the signal too, not only the writer. */
    c->o.cancel = (const volatile int *)&cli_interrupted;
    int remote = cli_is_remote(c->o.output_dir);
    if (remote) { /* shards stream to their objects; no staging directory */
        c->o.open_sink = cli_open_sink;
        c->o.remove_output = cli_remove;
    }
    const char *remote_manifest = NULL;
    if (cli_is_remote(c->o.manifest_path)) {
        remote_manifest = c->o.manifest_path;
        c->o.manifest_path = NULL;
    }
    /* The library writes a failed run's manifest only where none exists. */
    int had_manifest = c->o.manifest_path && access(c->o.manifest_path, F_OK) == 0;
    tfrec_imagenet_result *r = NULL;
    int rc = tfrec_imagenet_convert(&c->o, &r);
    /* Only a complete set gets a manifest in the bucket (its failure is
     * reported by upload_manifest: the shards are in place). */
    int manifest_failed = 0;
    if (!rc && remote_manifest && upload_manifest(remote_manifest, tfrec_imagenet_result_json(r))) {
        rc = TFREC_E_IO;
        manifest_failed = 1;
    }
    c->o.manifest_path = remote_manifest ? remote_manifest : c->o.manifest_path;
    cli_progress_finish(&prog);
    tfrec_imagenet_counts counts = TFREC_IMAGENET_COUNTS_INIT;
    tfrec_imagenet_result_counts(r, &counts);
    report_stale(r);
    if (rc && cli_interrupted && remote) {
        cli_log("interrupted by %s after %.1f s: the shard being uploaded was cancelled and "
                "those already uploaded to %s were removed; run the same command again to "
                "convert from the start",
                cli_interrupted == SIGINT ? "SIGINT" : "SIGTERM", counts.seconds, c->o.output_dir);
    } else if (rc && cli_interrupted) {
        cli_log("interrupted by %s after %.1f s: the run's staging directory in %s was removed "
                "and no shard was moved into place; the conversion cannot be resumed, run the "
                "same command again to convert from the start",
                cli_interrupted == SIGINT ? "SIGINT" : "SIGTERM", counts.seconds, c->o.output_dir);
    } else if (rc && !manifest_failed) {
        cli_log("%s", r ? tfrec_imagenet_result_errmsg(r) : tfrec_last_errmsg());
        /* A run that failed before finding images has nothing to summarise. */
        if (counts.images_total) {
            summary_failed(&counts);
            list_rejected(r, counts.images_rejected);
        }
    } else if (!c->quiet) {
        summary_ok(c, &counts);
        list_rejected(r, counts.images_rejected);
    }
    /* Point at the manifest of a failed run only if one could be written
     * (an input error can stop the run before the output directory exists). */
    if (rc && !remote_manifest && c->o.manifest_path && r && !had_manifest &&
        access(c->o.manifest_path, F_OK) == 0)
        cli_log("manifest of the failed run: %s", c->o.manifest_path);
    tfrec_imagenet_result_free(r);
    free(manifest_default);
    if (cli_interrupted)
        return EXIT_INTERRUPTED;
    /* Shards of another set in the output directory: the user chooses
     * (--overwrite or another directory). */
    if (rc == TFREC_E_STATE)
        return EXIT_USAGE;
    /* The options were checked by the flags: an invalid input here is an
     * inconsistent dataset (labels file, CSV), i.e. bad data. */
    return rc == TFREC_E_INVALID ? EXIT_DATA : cli_exit_for(rc);
}

/* The run's own staging directory (flat: shards and temporary files), for
 * a stop that could not wait for the library to remove it. */
static void remove_own_staging(void *out)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/.tfrec-staging-%ld", (const char *)out, (long)getpid());
    /* The writer may still create a file meanwhile: a few passes. */
    for (int pass = 0; pass < 5; pass++) {
        DIR *d = opendir(dir);
        if (!d)
            return;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            char f[8192];
            snprintf(f, sizeof f, "%s/%s", dir, e->d_name);
            if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
                unlink(f);
        }
        closedir(d);
        if (rmdir(dir) == 0 || errno == ENOENT)
            return;
    }
}

int main(int argc, char **argv)
{
    cli c;
    memset(&c, 0, sizeof c);
    tfrec_imagenet_options_init(&c.o);
    c.gcs_upload = 1; /* the reference's default */
    c.max_inflight_mb = 256;
    tfrec_imagenet_options *o = &c.o;
    cli_flag flags[] = {
        { .name = "raw_data_dir",
          .type = CLI_LOCAL_PATH,
          .dest = &o->raw_data_dir,
          .value_name = "DIR",
          .section = "Flags of imagenet_to_gcs.py:",
          .help = "input root: train/, validation/, synset_labels.txt\n"
                  "(a local directory)" },
        { .name = "local_scratch_dir",
          .type = CLI_PATH,
          .dest = &o->output_dir,
          .value_name = "DIR",
          .help = "output directory, created if missing (not used when\n"
                  "uploading: the shards stream to --gcs_output_path)" },
        { .name = "gcs_upload",
          .type = CLI_BOOL,
          .dest = &c.gcs_upload,
          .help = "upload the shards to --gcs_output_path [true, as the\n"
                  "reference; without --gcs_output_path the output stays local]" },
        { .name = "gcs_output_path",
          .type = CLI_STRING,
          .dest = &c.gcs_output_path,
          .value_name = "gs://B/P",
          .help = "where the shards go: gs://BUCKET/PATH (needs the\n"
                  "storage part of the build)" },
        { .name = "project",
          .type = CLI_STRING,
          .dest = &c.project,
          .value_name = "P",
          .help = "Cloud project (accepted; objects are addressed by\n"
                  "bucket, credentials come from the environment)" },
        { .name = "imagenet_username",
          .type = CLI_STRING,
          .dest = &c.imagenet_username,
          .value_name = "U",
          .help = "image-net.org account, for downloading (not built yet;\n"
                  "ignored with --raw_data_dir, as by the reference)" },
        { .name = "imagenet_access_key",
          .type = CLI_STRING,
          .dest = &c.imagenet_access_key,
          .value_name = "K",
          .help = "image-net.org access key, likewise" },
        { .name = "layout",
          .type = CLI_CHOICE,
          .dest = &o->layout,
          .choices = layouts,
          .section = "Input:",
          .help = "[imagenet]; folders: DIR/<class>/*, one split \"train\"" },
        { .name = "csv",
          .type = CLI_LOCAL_PATH,
          .dest = &o->csv_path,
          .value_name = "FILE",
          .help = "path,label[,split] lines (implies --layout=csv)" },
        { .name = "labels_file",
          .type = CLI_LOCAL_PATH,
          .dest = &o->labels_file,
          .value_name = "FILE",
          .help = "one synset per line; label = line number\n[sorted union, 1..K]" },
        { .name = "validation_labels_file",
          .type = CLI_LOCAL_PATH,
          .dest = &o->validation_labels_file,
          .value_name = "FILE",
          .help = "[RAW/synset_labels.txt]" },
        { .name = "extensions",
          .type = CLI_STRING,
          .dest = &o->extensions,
          .value_name = "LIST",
          .help = "accepted extensions, any case [jpeg,jpg]" },
        { .name = "output_dir",
          .type = CLI_PATH,
          .dest = &o->output_dir,
          .value_name = "DIR",
          .section = "Output:",
          .help = "the same as --local_scratch_dir; gs://BUCKET/PATH\n"
                  "streams the shards there" },
        { .name = "train_shards",
          .type = CLI_INT,
          .dest = &o->train_shards,
          .min = 1,
          .max = 99999,
          .help = "[1024]" },
        { .name = "validation_shards",
          .type = CLI_INT,
          .dest = &o->validation_shards,
          .min = 1,
          .max = 99999,
          .help = "[128]" },
        { .name = "compression",
          .type = CLI_CUSTOM,
          .dest = &o->compression,
          .parse = cli_parse_output_compression,
          .value_name = "NONE|ZLIB|GZIP",
          .help = "[NONE]" },
        { .name = "flat_output",
          .type = CLI_BOOL,
          .dest = &o->flat_output,
          .help = "all shards directly in the output directory [OUTPUT/train/\n"
                  "train-*, OUTPUT/validation/validation-*, as the reference]" },
        { .name = "overwrite",
          .type = CLI_BOOL,
          .dest = &o->overwrite,
          .help = "replace shards of another set (other shard counts or\n"
                  "layout) found in the output directory [refuse]" },
        { .name = "manifest",
          .type = CLI_PATH,
          .dest = &c.manifest,
          .value_name = "FILE",
          .help = "JSON manifest [OUTPUT/manifest.json]; --manifest= for none" },
        { .name = "num_threads",
          .type = CLI_INT,
          .dest = &o->num_threads,
          .min = 1,
          .max = 256,
          .section = "Processing:",
          .help = "worker threads [all cores]" },
        { .name = "seed", .type = CLI_UINT64, .dest = &o->seed, .help = "train shuffle seed [0]" },
        { .name = "no_shuffle",
          .type = CLI_BOOL,
          .dest = &o->no_shuffle,
          .help = "keep the train images in sorted order" },
        { .name = "verify",
          .type = CLI_CUSTOM,
          .dest = &o->verify,
          .parse = cli_parse_verify_level,
          .value_name = "header|fast|full",
          .help = "[header]" },
        { .name = "on_error",
          .type = CLI_CHOICE,
          .dest = &o->on_error,
          .choices = on_errors,
          .help = "[stop]" },
        { .name = "quality",
          .type = CLI_INT,
          .dest = &o->quality,
          .min = 1,
          .max = 100,
          .help = "quality of re-encoded PNG/CMYK images [100]" },
        { .name = "grayscale_to_rgb",
          .type = CLI_BOOL,
          .dest = &o->grayscale_to_rgb,
          .help = "re-encode grayscale JPEGs as RGB [keep, like the\nreference]" },
        { .name = "max_image_pixels",
          .type = CLI_UINT64,
          .dest = &o->max_image_pixels,
          .umin = 1,
          .umax = UINT64_MAX,
          .value_name = "N",
          .help = "larger images (width x height) are bad images\n[89478485, PIL's limit]" },
        { .name = "max_inflight_mb",
          .type = CLI_UINT64,
          .dest = &c.max_inflight_mb,
          .umin = 1,
          .umax = 1 << 20,
          .help = "image bytes held in memory at once [256]" },
        { .name = "quiet",
          .type = CLI_BOOL,
          .dest = &c.quiet,
          .help = "no progress display or summary" },
        { 0 }
    };
    cli_cmdline cl;
    int st = parse(&cl, flags, argc, argv, &c);
    if (st == CLI_PARSED) {
        /* The run stops within an image per worker; if it has not after
         * 10 s (a read hung on a network mount), the signal thread
         * removes the staging directory itself and exits. */
        cli_catch_interrupts_cleanup(remove_own_staging, (void *)c.o.output_dir, 10.0);
        st = convert(&c);
    }
    cli_cmdline_free(&cl);
    return st;
}

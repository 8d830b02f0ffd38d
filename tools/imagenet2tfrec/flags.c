/* imagenet2tfrec's flags: one table, in the order --help shows them,
 * grouped in sections (the reference's, downloading, input, output,
 * processing, tasks). */
#include <string.h>

#include "../common/flag_types.h"
#include "../common/gcs_conn.h"
#include "download.h"
#include "imagenet2tfrec.h"

static const char *const layouts[] = { "imagenet", "folders", "csv", NULL }; /* TFREC_LAYOUT_* */
static const char *const on_errors[] = { "stop", "skip", NULL };             /* TFREC_ON_ERROR_* */

void in_defaults(cli *c)
{
    memset(c, 0, sizeof *c);
    tfrec_imagenet_options_init(&c->o);
    c->gcs_upload = 1; /* the reference's default */
    c->max_inflight_mb = 256;
    c->download_url = "https://image-net.org/data/ILSVRC/2012/";
    c->labels_url = "https://raw.githubusercontent.com/tensorflow/models/master/research/slim/"
                    "datasets/imagenet_2012_validation_synset_labels.txt";
    c->train_md5 = IN_TRAIN_MD5;
    c->validation_md5 = IN_VAL_MD5;
    c->download_retries = 8;
    c->task.count = 1;
}

size_t in_flag_table(cli *c, cli_flag *out, size_t cap)
{
    tfrec_imagenet_options *o = &c->o;
    const cli_flag flags[] = {
        { .name = "raw_data_dir",
          .type = CLI_PATH,
          .dest = &o->raw_data_dir,
          .value_name = "DIR",
          .section = "Flags of imagenet_to_gcs.py:",
          .help = "input root: train/, validation/, synset_labels.txt;\n"
                  "or ILSVRC2012_img_train.tar, ILSVRC2012_img_val.tar,\n"
                  "synset_labels.txt (read without extracting); a tree\n"
                  "may be gs://BUCKET/PATH (read in place)" },
        { .name = "local_scratch_dir",
          .type = CLI_PATH,
          .dest = &o->output_dir,
          .value_name = "DIR",
          .help = "output directory, created if missing (not used when\n"
                  "uploading: the shards stream to --gcs_output_path)" },
        { .name = "gcs_upload",
          .type = CLI_BOOL,
          .dest = &c->gcs_upload,
          .help = "upload the shards to --gcs_output_path [true, as the\n"
                  "reference; without --gcs_output_path the output stays local]" },
        { .name = "gcs_output_path",
          .type = CLI_STRING,
          .dest = &c->gcs_output_path,
          .value_name = "gs://B/P",
          .help = "where the shards go: gs://BUCKET/PATH (needs the\n"
                  "storage part of the build)" },
        { .name = "project",
          .type = CLI_STRING,
          .dest = &c->project,
          .value_name = "P",
          .help = "Cloud project (accepted; objects are addressed by\n"
                  "bucket, credentials come from the environment)" },
        { .name = "imagenet_username",
          .type = CLI_STRING,
          .dest = &c->imagenet_username,
          .value_name = "U",
          .help = "image-net.org account, for downloading (ignored with\n"
                  "--raw_data_dir, as by the reference)" },
        { .name = "imagenet_access_key",
          .type = CLI_STRING,
          .dest = &c->imagenet_access_key,
          .value_name = "K",
          .help = "image-net.org access key, likewise" },
        { .name = "download_url",
          .type = CLI_STRING,
          .dest = &c->download_url,
          .value_name = "URL",
          .section = "Downloading (without --raw_data_dir or --train_tar):",
          .help = "where ILSVRC2012_img_{train,val}.tar are; given, or with\n"
                  "--imagenet_username and --imagenet_access_key (sent as\n"
                  "HTTP basic auth, to this URL's scheme, host and port\n"
                  "only), the tarballs are downloaded into\n"
                  "OUT/downloads/ (resumed if partial) and converted from\n"
                  "there [https://image-net.org/data/ILSVRC/2012/]" },
        { .name = "labels_url",
          .type = CLI_STRING,
          .dest = &c->labels_url,
          .value_name = "URL",
          .help = "synset_labels.txt, unless --validation_labels [the\n"
                  "tensorflow/models file the reference fetches]" },
        { .name = "train_md5",
          .type = CLI_STRING,
          .dest = &c->train_md5,
          .value_name = "HEX",
          .help = "expected MD5 of the train tarball; empty: unchecked\n"
                  "[" IN_TRAIN_MD5 ", the official one]" },
        { .name = "validation_md5",
          .type = CLI_STRING,
          .dest = &c->validation_md5,
          .value_name = "HEX",
          .help = "likewise for the validation tarball [" IN_VAL_MD5 "]" },
        { .name = "labels_md5",
          .type = CLI_STRING,
          .dest = &c->labels_md5,
          .value_name = "HEX",
          .help = "expected MD5 of the downloaded labels file [none: its\n"
                  "form is checked, one synset ID a line]" },
        { .name = "download_retries",
          .type = CLI_INT,
          .dest = &c->download_retries,
          .min = 0,
          .max = 1000,
          .help = "attempts after a failed one, each resuming [8]" },
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
          .type = CLI_PATH,
          .dest = &o->validation_labels_file,
          .value_name = "FILE",
          .help = "[RAW/synset_labels.txt]; may be gs://" },
        { .name = "validation_labels",
          .type = CLI_PATH,
          .dest = &o->validation_labels_file,
          .value_name = "FILE",
          .help = "the same as --validation_labels_file" },
        { .name = "train_tar",
          .type = CLI_PATH,
          .dest = &o->train_tar,
          .value_name = "FILE",
          .help = "ILSVRC2012_img_train.tar (a tar of nXXXXXXXX.tar), read\n"
                  "in place: no image is extracted to disk; may be gs://;\n"
                  "alone (no validation tarball) the train split only" },
        { .name = "validation_tar",
          .type = CLI_PATH,
          .dest = &o->validation_tar,
          .value_name = "FILE",
          .help = "ILSVRC2012_img_val.tar (flat), needs the validation labels;\n"
                  "may be gs://; alone the validation split only" },
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
          .dest = &c->manifest,
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
          .dest = &c->max_inflight_mb,
          .umin = 1,
          .umax = 1 << 20,
          .help = "image bytes held in memory at once [256]" },
        { .name = "quiet",
          .type = CLI_BOOL,
          .dest = &c->quiet,
          .help = "no progress display or summary" },
        CLI_TASK_FLAGS(&c->task),
        { .name = "write_listing",
          .type = CLI_PATH,
          .dest = &c->write_listing,
          .value_name = "FILE",
          .help = "list the input tree once into FILE (may be gs://) and\n"
                  "exit; the tasks then plan from it with --listing" },
        { .name = "listing",
          .type = CLI_PATH,
          .dest = &o->listing,
          .value_name = "FILE",
          .help = "plan from this listing (--write_listing) instead of\n"
                  "scanning --raw_data_dir: every task the same images" },
        { .name = "merge_manifests",
          .type = CLI_BOOL,
          .dest = &c->merge,
          .help = "after all tasks: check their parts in the output directory\n"
                  "(each task once, same plan, shard sizes) and write\n"
                  "OUTPUT/manifest.json (or --manifest) for the whole set" },
        CLI_GCS_CONN_FLAGS,
        CLI_GCS_AUTH_FLAGS,
        { 0 }
    };
    return cli_flags_copy(out, cap, flags, sizeof flags / sizeof flags[0]);
}

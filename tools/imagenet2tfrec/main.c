/* imagenet2tfrec: image directories to sharded tf.Example TFRecords, a
 * drop-in for tensorflow/tpu's imagenet_to_gcs.py conversion step (flag
 * names follow it), multi-threaded and deterministic. See docs/imagenet.md. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/exit_codes.h"
#include "../common/files.h"
#include "../common/flag_types.h"
#include "../common/flags.h"
#include "../common/gcs_conn.h"
#include "../common/progress.h"
#include "../common/signals.h"
#include "../common/task.h"
#include "download.h"
#include "imagenet2tfrec.h"
#include "tfrec/fs.h"
#include "tfrec/image.h"
#include "tfrec/imagenet.h"
#include "tfrec/record.h"
#include "tfrec/task.h"

static const char usage[] =
    "usage: imagenet2tfrec --raw_data_dir=DIR --local_scratch_dir=DIR [flags]\n"
    "       imagenet2tfrec --train_tar=T --validation_tar=V --validation_labels=F\n"
    "                      --local_scratch_dir=DIR [flags]\n"
    "       imagenet2tfrec --merge_manifests --output_dir=DIR (or --gcs_output_path)\n"
    "\n"
    "Converts RAW/train/<synset>/*.JPEG, RAW/validation/*.JPEG and\n"
    "RAW/synset_labels.txt (or the official tarballs, unextracted) into\n"
    "OUT/train/train-00000-of-01024 ...\n"
    "OUT/validation/validation-00127-of-00128 and OUT/manifest.json, as\n"
    "tensorflow/tpu's imagenet_to_gcs.py lays them out (--flat_output: all in OUT).\n"
    "SIGINT/SIGTERM stop the run, remove its staging directory and exit 130;\n"
    "staging directories of runs killed outright are removed by the next run.\n"
    "\n"
    "Split into tasks (--num_tasks=N, --task_index=I, or JOB_COMPLETION_INDEX and\n"
    "TFREC_NUM_TASKS as a Kubernetes Indexed Job sets them), every task runs the\n"
    "same command, plans the whole set and writes only its share of the shards\n"
    "and OUT/manifest-task-IIIII-of-NNNNN.json; --merge_manifests then checks the\n"
    "parts and writes OUT/manifest.json. The shards are those of one process.\n";

static const char footer[] =
    "Uploading: with --gcs_output_path=gs://BUCKET/PATH (and --gcs_upload, the\n"
    "default) the shards stream straight to the bucket, no local scratch copy;\n"
    "each object appears only once complete, and a failed or interrupted run\n"
    "removes the shards it had uploaded. --output_dir=gs://... does the same.\n"
    "Without --gcs_output_path the shards stay in the output directory, as with\n"
    "the reference's --nogcs_upload. Credentials: see docs/storage.md.\n"
    "Downloading (--imagenet_username and --imagenet_access_key, or --download_url,\n"
    "without --raw_data_dir) fetches the tarballs into OUT/downloads/ (a local\n"
    "output directory) and converts them in place; a file whose MD5 is wrong is\n"
    "kept as NAME.bad-md5 (exit 1).\n";

static const char footer_no_storage[] =
    "Uploading (--gcs_output_path with --gcs_upload) needs the storage part,\n"
    "which this build leaves out: it is refused with a message naming the flag.\n"
    "Without --gcs_output_path the shards stay in the output directory (copy them\n"
    "with gsutil -m cp), as with the reference's --nogcs_upload. Downloading\n"
    "(--imagenet_username and --imagenet_access_key, or --download_url, without\n"
    "--raw_data_dir) fetches the tarballs into OUT/downloads/ and converts them\n"
    "in place; a file whose MD5 is wrong is kept as NAME.bad-md5 (exit 1).\n";

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

/* The reference's upload flags. With the storage part they are taken as
 * check_upload_flags says; without it, asking to upload is refused naming
 * the flag (never "unknown flag") and the way out. */
static int check_reference_flags(const cli_cmdline *cl, cli *c)
{
    if (cli_have_storage())
        return check_upload_flags(cl, c);
    if (c->gcs_upload && c->gcs_output_path) {
        if (!cli_is_remote(c->gcs_output_path))
            cli_usage_error(cl, "--gcs_output_path must start with gs://, not '%s'",
                            c->gcs_output_path);
        else
            cli_usage_error(cl,
                            "--gcs_output_path=%s: uploading to Cloud Storage needs the "
                            "storage part, which this build leaves out; convert with "
                            "--nogcs_upload and copy the shards (gsutil -m cp)",
                            c->gcs_output_path);
        return EXIT_USAGE;
    }
    if (c->gcs_upload && cli_flag_seen(cl, "gcs_upload")) {
        cli_usage_error(cl, "--gcs_upload needs --gcs_output_path=gs://BUCKET/PATH and the "
                            "storage part, which this build leaves out: pass --nogcs_upload "
                            "to convert locally");
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
    if ((st = cli_gcs_conn_apply("imagenet2tfrec")) != EXIT_OK)
        return st;
    if (argc == 1) {
        cli_print_help(cl, stderr, 0);
        return EXIT_USAGE;
    }
    if ((st = check_reference_flags(cl, c)) != EXIT_OK)
        return st;
    if ((st = cli_task_resolve(cl, &c->task)) != CLI_PARSED)
        return st;
    /* Task mode when asked for, even as 1 task: its part makes a merge work. */
    if (cli_flag_seen(cl, "task_index") || cli_flag_seen(cl, "num_tasks") ||
        getenv(TFREC_TASK_COUNT_ENV) || getenv(TFREC_TASK_INDEX_ENV)) {
        c->o.task_index = (uint32_t)c->task.index;
        c->o.num_tasks = (uint32_t)c->task.count;
    }
    if (c->o.csv_path && !cli_flag_seen(cl, "layout"))
        c->o.layout = TFREC_LAYOUT_CSV; /* --csv implies --layout=csv */
    c->o.max_inflight_bytes = (size_t)c->max_inflight_mb << 20;
    if (c->write_listing && (c->merge || c->o.listing)) {
        cli_usage_error(cl, "--write_listing lists the input: not with %s",
                        c->merge ? "--merge_manifests" : "--listing");
        return EXIT_USAGE;
    }
    if (c->write_listing && (!c->o.raw_data_dir || !*c->o.raw_data_dir)) {
        cli_usage_error(cl, "--write_listing needs --raw_data_dir (the tree to list)");
        return EXIT_USAGE;
    }
    if (c->write_listing)
        return CLI_PARSED; /* no output directory */
    /* Missing required flags are usage errors, reported before anything runs. */
    if (!c->o.output_dir || !*c->o.output_dir) {
        cli_usage_error(cl, "--local_scratch_dir (or --output_dir) is required");
        return EXIT_USAGE;
    }
    if (c->merge)
        return CLI_PARSED; /* only the output directory is needed */
    /* The reference downloads when it is given no input directory. */
    c->download =
        c->o.layout == TFREC_LAYOUT_IMAGENET && !c->o.raw_data_dir && !c->o.train_tar &&
        !c->o.validation_tar &&
        ((c->imagenet_username && c->imagenet_access_key) || cli_flag_seen(cl, "download_url"));
    if (!c->download && !c->o.raw_data_dir && (c->imagenet_username || c->imagenet_access_key) &&
        c->o.layout == TFREC_LAYOUT_IMAGENET) {
        cli_usage_error(cl, "downloading needs both --imagenet_username and --imagenet_access_key "
                            "(or --download_url)");
        return EXIT_USAGE;
    }
    if (c->download)
        return CLI_PARSED;
    int tars = c->o.train_tar || c->o.validation_tar; /* either alone: one split */
    if (tars && c->o.layout != TFREC_LAYOUT_IMAGENET) {
        cli_usage_error(cl, "--train_tar and --validation_tar need --layout=imagenet");
        return EXIT_USAGE;
    }
    if (c->o.validation_tar && !c->o.validation_labels_file && !c->o.raw_data_dir) {
        cli_usage_error(cl, "--validation_tar needs --validation_labels=FILE (or --raw_data_dir "
                            "holding synset_labels.txt)");
        return EXIT_USAGE;
    }
    if (!tars && c->o.layout != TFREC_LAYOUT_CSV && (!c->o.raw_data_dir || !*c->o.raw_data_dir)) {
        cli_usage_error(cl, "--raw_data_dir (or --train_tar and/or --validation_tar) is required");
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
        cli_log("  rejected %s: %s", path, reason);
    if (rejected > i)
        cli_log("  ... and %" PRIu64 " more rejected images (see the manifest)", rejected - i);
}

static void summary_ok(const cli *c, const tfrec_imagenet_counts *n)
{
    if (c->o.num_tasks) {
        if (n->shards_begin < n->shards_end)
            cli_log("task %u of %u: shards %u..%u of %u", c->o.task_index, c->o.num_tasks,
                    n->shards_begin, n->shards_end - 1, n->shards_planned);
        else
            cli_log("task %u of %u: no shard to write (%u shards for %u tasks)", c->o.task_index,
                    c->o.num_tasks, n->shards_planned, c->o.num_tasks);
    }
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
    if (c->o.num_tasks)
        cli_log("manifest part: %s/manifest-task-%05u-of-%05u.json (merge with "
                "--merge_manifests once every task is done)",
                c->o.output_dir, c->o.task_index, c->o.num_tasks);
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
        cli_log("removed %s: the staging directory of an interrupted run (no converter holds "
                "its lock: its process is no longer running, on any host)",
                path);
}

static int stop_at_first(void *ctx, const char *name, const tfrec_fs_info *info)
{
    (void)name;
    (void)info;
    *(int *)ctx = 1;
    return 1;
}

/* Whether dir/suffix (a pattern) matches anything, local or gs://. */
static int input_has(const char *dir, const char *suffix)
{
    char pat[4096];
    size_t dl = strlen(dir);
    while (dl > 1 && dir[dl - 1] == '/')
        dl--;
    snprintf(pat, sizeof pat, "%.*s/%s", (int)dl, dir, suffix);
    int found = 0;
    cli_fs_setup();
    (void)tfrec_fs_list(NULL, pat, stop_at_first, &found);
    return found;
}

/* Converting from one tarball converts its split only (the library skips
 * the other): say which split is skipped and why. */
static void note_skipped_split(const cli *c)
{
    const tfrec_imagenet_options *x = &c->o;
    const char *raw = x->raw_data_dir;
    if (x->layout != TFREC_LAYOUT_IMAGENET)
        return;
    if (!x->train_tar && !x->validation_tar && (!raw || input_has(raw, "train/*/*")))
        return; /* the extracted tree */
    int tr = x->train_tar || (raw && input_has(raw, "ILSVRC2012_img_train.tar"));
    int va = x->validation_tar || (raw && input_has(raw, "ILSVRC2012_img_val.tar"));
    if (tr == va)
        return; /* both, or neither (the library's error says so) */
    const char *skipped = tr ? "validation" : "train";
    const char *flag = tr ? "--validation_tar" : "--train_tar";
    const char *name = tr ? "ILSVRC2012_img_val.tar" : "ILSVRC2012_img_train.tar";
    if (raw)
        cli_log("the %s split is skipped: no %s and no %s in %s; converting the %s split only",
                skipped, flag, name, raw, tr ? "train" : "validation");
    else
        cli_log("the %s split is skipped: no %s given; converting the %s split only", skipped, flag,
                tr ? "train" : "validation");
}

/* The tarballs (and the validation labels) into OUT/downloads/, then the
 * conversion reads them in place. */
static int download(cli *c)
{
    if (cli_is_remote(c->o.output_dir)) {
        cli_log("downloading needs a local output directory for the tarballs, not %s: "
                "download with --nogcs_upload --local_scratch_dir=DIR, then convert with "
                "--raw_data_dir=DIR/downloads --gcs_output_path=...",
                c->o.output_dir);
        return EXIT_USAGE;
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/downloads", c->o.output_dir);
    char msg[1024];
    char *cmd_dirs[] = { (char *)c->o.output_dir, dir };
    for (int i = 0; i < 2; i++)
        if (mkdir(cmd_dirs[i], 0777) != 0 && errno != EEXIST) {
            cli_log("%s: cannot create directory: %s", cmd_dirs[i], strerror(errno));
            return EXIT_IO;
        }
    const char *base = c->download_url;
    size_t bl = strlen(base);
    const char *sep = bl && base[bl - 1] == '/' ? "" : "/";
    struct {
        const char *name, *md5;
        char **dest;
    } files[] = { { "ILSVRC2012_img_val.tar", c->validation_md5, &c->dl_val },
                  { "ILSVRC2012_img_train.tar", c->train_md5, &c->dl_train },
                  { "synset_labels.txt", c->labels_md5, &c->dl_labels } };
    for (int i = 0; i < 3; i++) {
        if (i == 2 && c->o.validation_labels_file)
            break;
        /* The labels URL is its own, longer than the download URL by
         * default: its buffer is sized from it. */
        size_t n = i == 2 ? strlen(c->labels_url) + 1 : strlen(base) + strlen(files[i].name) + 2;
        size_t m = strlen(dir) + 64;
        char *url = malloc(n), *dest = malloc(m);
        if (!url || !dest) {
            free(url);
            free(dest);
            return EXIT_IO;
        }
        if (i == 2)
            snprintf(url, n, "%s", c->labels_url);
        else
            snprintf(url, n, "%s%s%s", base, sep, files[i].name);
        snprintf(dest, m, "%s/%s", dir, files[i].name);
        *files[i].dest = dest;
        if (!c->quiet)
            cli_log("downloading %s to %s", url, dest);
        dl_request r = { .url = url,
                         .dest = dest,
                         .md5 = files[i].md5 && *files[i].md5 ? files[i].md5 : NULL,
                         .check = i == 2 ? dl_check_synset_labels : NULL,
                         .user = c->imagenet_username,
                         .password = c->imagenet_access_key,
                         /* the credentials are for the download host only */
                         .auth_url = base,
                         .retries = c->download_retries,
                         .quiet = c->quiet };
        int st = dl_fetch(&r, msg, sizeof msg);
        free(url);
        if (st != EXIT_OK) {
            cli_log("%s", msg);
            return st;
        }
    }
    c->o.train_tar = c->dl_train;
    c->o.validation_tar = c->dl_val;
    if (!c->o.validation_labels_file)
        c->o.validation_labels_file = c->dl_labels;
    return EXIT_OK;
}

static int convert(cli *c)
{
    char *manifest_default = NULL;
    if (c->o.num_tasks) {
        /* A task's manifest is its part; OUT/manifest.json comes from the merge. */
        if (c->manifest && *c->manifest)
            c->o.manifest_path = c->manifest;
    } else if (!c->manifest) {
        size_t n = strlen(c->o.output_dir) + 16;
        manifest_default = malloc(n);
        if (manifest_default)
            snprintf(manifest_default, n, "%s/manifest.json", c->o.output_dir);
        c->o.manifest_path = manifest_default;
    } else if (*c->manifest) {
        c->o.manifest_path = c->manifest; /* --manifest= writes none */
    }
    if (c->o.num_tasks && !c->quiet)
        cli_log("task %u of %u: planning the whole set, writing this task's share of the shards",
                c->o.task_index, c->o.num_tasks);
    cli_progress prog;
    cli_progress_start(&prog, "images", 0, c->quiet);
    c->o.progress = on_progress;
    c->o.progress_ctx = &prog;
    /* The workers and the scan stop at the signal too, not only the writer. */
    c->o.cancel = (const volatile int *)&cli_interrupted;
    /* Every name goes through the file system layer (c->o.fs NULL): an
     * output_dir outside the local file system gets its shards streamed to
     * their objects, no staging directory; a manifest_path there is written
     * by a complete run only. */
    int remote = cli_is_remote(c->o.output_dir);
    int remote_manifest = cli_is_remote(c->o.manifest_path);
    /* The library writes a failed run's manifest only where none exists. */
    int had_manifest =
        c->o.manifest_path && !remote_manifest && access(c->o.manifest_path, F_OK) == 0;
    tfrec_imagenet_result *r = NULL;
    if (!c->quiet)
        note_skipped_split(c);
    int rc = tfrec_imagenet_convert(&c->o, &r);
    tfrec_imagenet_counts counts = TFREC_IMAGENET_COUNTS_INIT;
    tfrec_imagenet_result_counts(r, &counts);
    /* The shards are in place and only the manifest (elsewhere than the
     * local disk, written last) failed: the counts of the run stand. */
    int manifest_failed = rc && remote_manifest && counts.shards > 0;
    cli_progress_finish(&prog);
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
    } else if (manifest_failed) {
        cli_log("%s", r ? tfrec_imagenet_result_errmsg(r) : tfrec_last_errmsg());
    } else if (rc) {
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

/* --merge_manifests: the tasks' parts into OUT/manifest.json. */
static int merge_manifests(cli *c)
{
    tfrec_imagenet_merge_options m = TFREC_IMAGENET_MERGE_OPTIONS_INIT;
    m.output_dir = c->o.output_dir;
    m.manifest_path = c->manifest && *c->manifest ? c->manifest : NULL;
    /* The parts are listed, read and checked through the file system
     * layer, wherever output_dir is (m.fs NULL: local, gs://, mem://). */
    tfrec_imagenet_result *r = NULL;
    int rc = tfrec_imagenet_merge_manifests(&m, &r);
    tfrec_imagenet_counts n = TFREC_IMAGENET_COUNTS_INIT;
    tfrec_imagenet_result_counts(r, &n);
    if (rc) {
        cli_log("%s", r ? tfrec_imagenet_result_errmsg(r) : tfrec_last_errmsg());
    } else if (!c->quiet) {
        cli_log("merged: %u shards, %" PRIu64 " images found, %" PRIu64 " written, %" PRIu64
                " fixed, %" PRIu64 " rejected; %.1f MB out, %u classes",
                n.shards, n.images_total, n.images_written, n.images_fixed, n.images_rejected,
                (double)n.bytes_out / 1e6, n.classes);
        cli_log("manifest: %s%s", m.manifest_path ? m.manifest_path : c->o.output_dir,
                m.manifest_path ? "" : "/manifest.json");
    }
    tfrec_imagenet_result_free(r);
    /* A missing part or shard, or parts of different runs: re-run tasks. */
    return rc == TFREC_E_STATE || rc == TFREC_E_NOT_FOUND ? EXIT_DATA : cli_exit_for(rc);
}

/* The run's own staging directory (flat: shards and temporary files), for
 * a stop that could not wait for the library to remove it. */
static const cli *staging_of; /* the run whose directory it is */

/* --write_listing: the scan of the input into the listing file. */
static int write_listing(cli *c)
{
    c->o.cancel = (const volatile int *)&cli_interrupted;
    char fp[17];
    int rc = tfrec_imagenet_write_listing(&c->o, c->write_listing, fp);
    if (rc) {
        cli_log("%s", tfrec_last_errmsg());
        return cli_interrupted ? EXIT_INTERRUPTED : cli_exit_for(rc);
    }
    if (!c->quiet)
        cli_log("wrote listing %s (fingerprint %s): give every task --listing=%s", c->write_listing,
                fp, c->write_listing);
    return EXIT_OK;
}

/* This process's staging directory: the one whose lock file it holds open
 * (a name with its pid could be another PID namespace's run). */
static int own_staging(const char *out, char *dir, size_t cap)
{
    char prefix[4200];
    char *real = realpath(out, NULL); /* /proc/self/fd names are canonical */
    if (real)
        out = real;
    if (staging_of && staging_of->o.num_tasks)
        snprintf(prefix, sizeof prefix, "%s/.tfrec-staging-task-%05u-", out,
                 staging_of->o.task_index);
    else
        snprintf(prefix, sizeof prefix, "%s/.tfrec-staging-", out);
    free(real);
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    int found = 0;
    while (d && !found && (e = readdir(d)) != NULL) {
        char link[300], target[4096];
        snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(link, target, sizeof target - 1);
        if (n <= 0)
            continue;
        target[n] = '\0';
        size_t pl = strlen(prefix), tl = (size_t)n;
        if (strncmp(target, prefix, pl) != 0 || tl < 6 || strcmp(target + tl - 6, "/.lock") != 0 ||
            target[pl] < '0' || target[pl] > '9' || tl - 6 >= cap)
            continue;
        memcpy(dir, target, tl - 6);
        dir[tl - 6] = '\0';
        found = 1;
    }
    if (d)
        closedir(d);
    return found;
}

static void remove_own_staging(void *out)
{
    char dir[4096];
    if (!own_staging((const char *)out, dir, sizeof dir))
        return;
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
    cli_flag flags[IN_MAX_FLAGS];
    in_defaults(&c);
    if (!in_flag_table(&c, flags, IN_MAX_FLAGS)) {
        cli_log("the flag table does not fit IN_MAX_FLAGS");
        return EXIT_IO;
    }
    cli_cmdline cl;
    int st = parse(&cl, flags, argc, argv, &c);
    if (st == CLI_PARSED) {
        /* The run stops within an image per worker; if it has not after
         * 10 s (a read hung on a network mount), the signal thread
         * removes the staging directory itself and exits. */
        staging_of = &c;
        cli_catch_interrupts_cleanup(remove_own_staging, (void *)c.o.output_dir, 10.0);
        if (c.write_listing) {
            st = write_listing(&c);
        } else if (c.merge) {
            st = merge_manifests(&c);
        } else {
            st = c.download ? download(&c) : EXIT_OK;
            if (st == EXIT_OK)
                st = convert(&c);
        }
    }
    free(c.dl_train);
    free(c.dl_val);
    free(c.dl_labels);
    cli_cmdline_free(&cl);
    return st;
}

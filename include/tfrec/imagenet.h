/* libtfrec: image directories to sharded tf.Example TFRecords, the job of
 * tensorflow/tpu's imagenet_to_gcs.py, multi-threaded and deterministic.
 *
 * One call scans and checks the whole input first (missing directories,
 * labels files that do not match, no images: errors before any work), then
 * converts with a pool of worker threads while a single writer emits the
 * records in plan order, so the output bytes do not depend on num_threads.
 * Shards are written into a staging directory and renamed into the output
 * directory only when the whole run succeeded: OUT/train/train-00000-of-01024,
 * OUT/validation/validation-00000-of-00128 (as imagenet_to_gcs.py lays them
 * out), or all in OUT with flat_output. A cancelled or failed run removes its
 * staging directory; a run removes the staging directories that processes
 * no longer running left behind (killed, or a second signal), and refuses
 * an output directory that holds shards of another set unless overwrite.
 *
 * Every record is a tf.Example with image/encoded (RGB or grayscale JPEG),
 * image/height, image/width, image/channels (3), image/colorspace ("RGB"),
 * image/format ("JPEG"), image/class/label, image/class/synset and
 * image/filename (base name). See docs/imagenet.md.
 */
#ifndef TFREC_IMAGENET_H
#define TFREC_IMAGENET_H

#include "common.h"

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "io.h"

TFREC_BEGIN_DECLS

struct tfrec_fs; /* include/tfrec/fs.h */

enum tfrec_input_layout {
    /* RAW/train/<synset>/<image>, RAW/validation/<image> and
     * RAW/synset_labels.txt (one synset per validation image, in sorted
     * file-name order). */
    TFREC_LAYOUT_IMAGENET = 0,
    /* ROOT/<class>/<image>: one split, named "train". */
    TFREC_LAYOUT_FOLDERS = 1,
    /* A CSV file of path,label[,split] lines (TFRecorder style); relative
     * paths are relative to raw_data_dir, or to the CSV's directory. */
    TFREC_LAYOUT_CSV = 2
};

enum tfrec_on_error {
    TFREC_ON_ERROR_STOP = 0, /* first bad image fails the run, nothing is renamed into place */
    TFREC_ON_ERROR_SKIP = 1  /* bad images are left out and listed in the manifest */
};

/* Called on the thread that called tfrec_imagenet_convert, a few times a
 * second at most. Return non-zero to cancel the run (TFREC_E_STATE). */
typedef int (*tfrec_imagenet_progress_fn)(void *ctx, uint64_t done, uint64_t total,
                                          uint64_t bytes_in, uint64_t bytes_out);

/* TFREC_IMAGENET_OPTIONS_INIT, then the fields that differ from the
 * defaults in brackets. Strings may be NULL. */
typedef struct tfrec_imagenet_options {
    size_t struct_size;
    int layout;                         /* tfrec_input_layout [IMAGENET] */
    const char *raw_data_dir;           /* input root (required except for CSV) */
    const char *csv_path;               /* LAYOUT_CSV input */
    const char *output_dir;             /* created if missing (required) */
    const char *labels_file;            /* one synset per line: label = line number;
                                   [labels 1..K over the sorted union of synsets] */
    const char *validation_labels_file; /* [RAW/synset_labels.txt] */
    const char *extensions;             /* comma list, case-insensitive ["jpeg,jpg"] */
    int train_shards;          /* [1024]; for FOLDERS/CSV splits other than validation too */
    int validation_shards;     /* [128] */
    int num_threads;           /* worker threads [online CPUs] */
    uint64_t seed;             /* train shuffle seed (SplitMix64 + Fisher-Yates) [0] */
    int no_shuffle;            /* keep train in sorted order [0] */
    int verify;                /* tfrec_verify_level [HEADER] */
    int on_error;              /* tfrec_on_error [STOP] */
    int quality;               /* re-encode quality 1..100 [100] */
    int grayscale_to_rgb;      /* re-encode grayscale JPEGs as RGB [0] */
    int compression;           /* tfrec_compression of the shards [NONE] */
    size_t max_inflight_bytes; /* image bytes read but not yet written [256 MiB] */
    const char *manifest_path; /* also write the manifest JSON there [not written] */
    tfrec_imagenet_progress_fn progress;
    void *progress_ctx;
    /* Images above this many pixels (width x height, from the header) are
     * bad images [TFREC_IMAGE_DEFAULT_MAX_PIXELS, PIL's limit]; UINT64_MAX:
     * no limit. */
    uint64_t max_image_pixels;
    int flat_output; /* shards directly in output_dir [0: OUTPUT/<split>/<split>-*] */
    /* Shards of another set (another shard count, split or layout) in the
     * output directory make the run fail before any work (TFREC_E_STATE,
     * naming them) [0]; non-zero: they are removed when the new set is
     * moved into place. */
    int overwrite;
    /* When *cancel becomes non-zero (e.g. set by a signal handler) the run
     * stops within about one image per worker: the scan, the workers and
     * the writer check it; the run then fails with TFREC_E_STATE and its
     * staging directory is removed [NULL: never]. */
    const volatile int *cancel;
    /* LAYOUT_IMAGENET from the official tarballs instead of an extracted
     * tree: train_tar is ILSVRC2012_img_train.tar (a tar of per-synset
     * tars nXXXXXXXX.tar), validation_tar ILSVRC2012_img_val.tar (a flat
     * tar), labels from validation_labels_file [RAW/synset_labels.txt].
     * Both tars must be files (a first pass seeks over the image data to
     * list them); no image is written to disk. The shards are the bytes a
     * conversion of the extracted tree gives. raw_data_dir holding the two
     * tars under those names and no train/ directory means the same [NULL:
     * the tree]. */
    const char *train_tar;
    const char *validation_tar;
    /* Deprecated since 1.1, use fs. When open_sink is set, shards (and a
     * task's part) are written through open_sink(sink_ctx, io, name) and a
     * failed run's completed shards removed with remove_output (when set),
     * as fs does for an output_dir outside the local file system; the
     * manifest_path stays a local file then. */
    int (*open_sink)(void *sink_ctx, tfrec_io *io, const char *name);
    int (*remove_output)(void *sink_ctx, const char *name);
    void *sink_ctx;
    /* One task of a conversion split over num_tasks tasks (processes,
     * machines, the pods of a Kubernetes Indexed Job; include/tfrec/task.h).
     * Every task plans the whole set (same scan, labels, shuffle and shard
     * names) and writes only the shards tfrec_task_share(shards of all
     * splits, task_index, num_tasks) gives it, in plan order (train shards,
     * then validation, then the other splits), reading only their images.
     * It writes its manifest part OUTPUT/manifest-task-IIIII-of-NNNNN.json
     * (through open_sink when set) listing its shards with their CRC32C and
     * a fingerprint of the plan, which tfrec_imagenet_merge_manifests turns
     * into the manifest of the whole set. Shards other tasks wrote are
     * neither conflicts nor removed; stale staging directories of other
     * tasks are left alone. The union of the tasks' shards is the output of
     * one process with the same options, byte for byte [0: one process, no
     * part; 1: the whole set as task 0 of 1, with its part]. */
    uint32_t task_index;
    uint32_t num_tasks;
    /* Deprecated since 1.1, use fs. When set, they take precedence over
     * fs for the input: list_input(input_ctx, pattern, add, add_ctx) calls
     * add(add_ctx, name, size) for every file matching pattern (any order,
     * TFREC_OK also when nothing matches) and lists the IMAGENET or FOLDERS
     * tree; open_input(input_ctx, io, name) opens an image, a labels file or
     * a tarball; open_input_range(input_ctx, io, name, offset, length) one
     * image's bytes of a tarball. They are called from several threads at
     * once. open_input alone (no list_input) serves the tarballs and the
     * labels files, a local tree being scanned as usual. */
    int (*list_input)(void *input_ctx, const char *pattern,
                      int (*add)(void *add_ctx, const char *name, uint64_t size), void *add_ctx);
    int (*open_input)(void *input_ctx, tfrec_io *io, const char *name);
    void *input_ctx;
    int (*open_input_range)(void *input_ctx, tfrec_io *io, const char *name, uint64_t offset,
                            uint64_t length);
    /* Plan from this listing file (tfrec_imagenet_write_listing) instead
     * of scanning raw_data_dir: the images it names (paths below
     * raw_data_dir, which may be mounted elsewhere), with its classes and
     * sizes, whatever the tree holds now. Read through the file system
     * layer (include/tfrec/fs.h: a local path, gs://, mem://). A file that
     * is cut, edited or of another layout is refused (TFREC_E_PARSE /
     * TFREC_E_INVALID, naming the line). Its fingerprint goes into a
     * task's part ("task": {"listing"}) and the merge refuses parts of
     * different listings. The IMAGENET and FOLDERS trees only [NULL:
     * scan]. */
    const char *listing;
    /* (since 1.1) The file system every name of the run goes through:
     * raw_data_dir (listed with fs->list: patterns put * in place of whole
     * path components), the images, tarballs (their members read with
     * ranged reads), labels files, the listing, output_dir and
     * manifest_path [NULL: tfrec_fs_default(): local paths and every
     * registered scheme, e.g. gs:// when libtfrec-storage is loaded;
     * include/tfrec/fs.h]. Names of the local file system are scanned,
     * read and written as they always were (a local output is staged and
     * renamed into place); any other output_dir gets each shard through a
     * sink that makes it appear only when complete (no staging directory,
     * no check for shards of another set; a failed or cancelled run
     * removes the shards it had completed), and a manifest_path outside
     * the local file system is written only by a run that succeeded. The
     * CSV layout reads a local CSV file and local images only. */
    const struct tfrec_fs *fs;
} tfrec_imagenet_options;

#define TFREC_IMAGENET_OPTIONS_INIT TFREC_STRUCT_INIT(tfrec_imagenet_options)
void tfrec_imagenet_options_init(tfrec_imagenet_options *opts);

/* Totals of a run. */
typedef struct tfrec_imagenet_counts {
    size_t struct_size;
    uint64_t images_total;    /* images found by the scan */
    uint64_t images_written;  /* records written */
    uint64_t images_fixed;    /* PNG/CMYK/YCCK/grayscale re-encoded */
    uint64_t images_rejected; /* bad images (left out with ON_ERROR_SKIP) */
    uint64_t bytes_in;        /* image file bytes read */
    uint64_t bytes_out;       /* shard bytes written */
    uint32_t shards;          /* shard files written */
    uint32_t classes;         /* labels in the mapping */
    double seconds;           /* wall time of the conversion */
    uint32_t stale_removed;   /* staging directories of dead processes removed */
    /* The shards of the whole set, and this run's share of them in plan
     * order: [shards_begin, shards_end) (all of them without tasks). */
    uint32_t shards_planned;
    uint32_t shards_begin, shards_end;
} tfrec_imagenet_counts;

#define TFREC_IMAGENET_COUNTS_INIT TFREC_STRUCT_INIT(tfrec_imagenet_counts)
void tfrec_imagenet_counts_init(tfrec_imagenet_counts *counts);

typedef struct tfrec_imagenet_result tfrec_imagenet_result;

/* Run a conversion (opts NULL: all defaults, which lack the required
 * directories). *out (if out is not NULL) receives a result even when
 * the run fails, so the message and the manifest of a failed run (which
 * image, why) can be read; free it with tfrec_imagenet_result_free(). */
int tfrec_imagenet_convert(const tfrec_imagenet_options *opts, tfrec_imagenet_result **out);

/* Status of the run (the value tfrec_imagenet_convert returned). */
int tfrec_imagenet_result_status(const tfrec_imagenet_result *r);
const char *tfrec_imagenet_result_errmsg(const tfrec_imagenet_result *r);
/* Copy the totals into *c (struct_size set by the caller). */
int tfrec_imagenet_result_counts(const tfrec_imagenet_result *r, tfrec_imagenet_counts *c);
/* The i-th rejected image (0 <= i < images_rejected), in plan order:
 * path and reason stay valid until the result is freed. TFREC_E_INVALID
 * when i is out of range. */
int tfrec_imagenet_result_rejected(const tfrec_imagenet_result *r, size_t i, const char **path,
                                   const char **reason);

/* The i-th stale staging directory this run removed (left by a process
 * that is no longer running), valid until the result is freed.
 * TFREC_E_INVALID when i is out of range. */
int tfrec_imagenet_result_stale(const tfrec_imagenet_result *r, size_t i, const char **path);

/* The manifest as JSON text (valid until the result is freed):
 * {"status", "error", options, "labels", "shards": [{"split", "file",
 *  "records", "bytes"}], counts, "fixed": [...], "rejected": [{"path",
 *  "reason"}], "stale_removed": [{"path"}]}; "file" is relative to the output
 * directory ("train/train-00000-of-01024"). Documented in docs/imagenet.md. */
const char *tfrec_imagenet_result_json(const tfrec_imagenet_result *r);
void tfrec_imagenet_result_free(tfrec_imagenet_result *r);

/* Scan the input as tfrec_imagenet_convert with opts would (the IMAGENET
 * or FOLDERS tree, local or through list_input; not tarballs or CSV) and
 * write the listing file path through the file system layer (fs NULL
 * routing: a local path, gs://, mem://), for the tasks of a conversion to
 * plan from (tfrec_imagenet_options.listing): the tree is listed once, and
 * every task plans from the same images even when the tree changes. The
 * 16 hex digits of its fingerprint go to fingerprint (17 bytes, may be
 * NULL). Nothing is converted; output_dir is not needed. */
int tfrec_imagenet_write_listing(const tfrec_imagenet_options *opts, const char *path,
                                 char *fingerprint);

/* Merging the manifest parts of a conversion split into tasks. */
typedef struct tfrec_imagenet_merge_options {
    size_t struct_size;
    const char *output_dir;    /* where the tasks wrote (required) */
    const char *manifest_path; /* the merged manifest [OUTPUT/manifest.json] */
    /* The parts to merge [NULL: every manifest-task-*-of-*.json in
     * output_dir, listed through fs]. */
    const char *const *parts;
    size_t nparts;
    /* Deprecated since 1.1, use fs. When set, the parts and shards are read
     * through open_source(io_ctx, io, name) (a shard's source must report
     * its size) and the manifest written through open_sink; parts not
     * given are then listed in a local output_dir. */
    int (*open_source)(void *io_ctx, tfrec_io *io, const char *name);
    int (*open_sink)(void *io_ctx, tfrec_io *io, const char *name);
    void *io_ctx;
    /* (since 1.1) The file system output_dir, the parts, the shards and
     * manifest_path are reached through [NULL: tfrec_fs_default()]: parts
     * not given are every OUTPUT/manifest-task-*-of-*.json fs->list finds,
     * shard sizes come from fs->stat, the manifest appears whole through a
     * sink. */
    const struct tfrec_fs *fs;
} tfrec_imagenet_merge_options;

#define TFREC_IMAGENET_MERGE_OPTIONS_INIT TFREC_STRUCT_INIT(tfrec_imagenet_merge_options)
void tfrec_imagenet_merge_options_init(tfrec_imagenet_merge_options *opts);

/* Check the parts and write the manifest of the whole set: every task
 * 0..N-1 has exactly one part (a missing one is TFREC_E_NOT_FOUND naming
 * the task to re-run), all parts have the same plan fingerprint and task
 * count (else TFREC_E_STATE), every planned shard is listed once and its
 * file has the recorded size (else TFREC_E_STATE naming it). The manifest
 * has the shape of a one-process run's (tfrec_imagenet_result_json): counts
 * summed (seconds: the longest task), shards in plan order, fixed and
 * rejected images in plan order. *out as for tfrec_imagenet_convert: its
 * JSON is the merged manifest, its counts the sums. */
int tfrec_imagenet_merge_manifests(const tfrec_imagenet_merge_options *opts,
                                   tfrec_imagenet_result **out);

TFREC_END_DECLS
#endif

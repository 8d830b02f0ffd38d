/* Option defaults and validation: every problem with the request is
 * reported before anything is scanned or written. */
#include "imagenet/run.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "tfrec/image.h"
#include "tfrec/record.h"
#include "tfrec/task.h"
#include "util/struct_size.h"

#define IN_DEFAULT_TRAIN_SHARDS 1024
#define IN_DEFAULT_VALIDATION_SHARDS 128
#define IN_DEFAULT_INFLIGHT ((size_t)256 * 1024 * 1024)
#define IN_MAX_SHARDS 99999
#define IN_MAX_THREADS 256

TFREC_DEFINE_STRUCT_INIT(tfrec_imagenet_options)

int tfrec_in_is_local(const tfrec_fs *fs, const char *name)
{
    if (fs && fs != tfrec_fs_default() && fs != tfrec_fs_local())
        return 0;
    return !name || tfrec_fs_scheme_length(name) == 0;
}

/* A name of the default file system whose scheme nobody registered fails
 * here, before the scan, with the layer's message ("gs:// names need
 * libtfrec-storage, which is not linked"). */
static int reachable(const tfrec_fs *fs, const char *what, const char *name, tfrec_err *err)
{
    if (!name || !*name || (fs && fs != tfrec_fs_default()) || tfrec_fs_for(name))
        return TFREC_OK;
    const char *msg = tfrec_last_errmsg();
    size_t n = strlen(name);
    if (strncmp(msg, name, n) == 0 && msg[n] == ':' && msg[n + 1] == ' ')
        msg += n + 2; /* named below */
    return tfrec_fail(err, TFREC_E_UNSUPPORTED, "%s %s: %s", what, name, msg);
}

/* The file systems of the run: the deprecated callbacks (through the one
 * shim, lib/fs/opener.c) or fs. */
static int resolve_io(in_opts *o, tfrec_err *err)
{
    const tfrec_imagenet_options *x = &o->o;
    o->fs = x->fs;
    if (x->list_input || x->open_input || x->open_input_range) {
        o->in_shim.ctx = x->input_ctx;
        o->in_shim.open_io = x->open_input;
        o->in_shim.open_range_io = x->open_input_range;
        o->in_shim.list_add = x->list_input;
        o->in_fs = tfrec_fs_opener_make(&o->in_shim);
        o->in_listed = x->list_input != NULL;
        o->in_read = x->open_input != NULL;
    } else {
        o->in_fs = x->fs;
        const char *what[] = { "input", "tarball", "tarball", "labels file", "labels file", "CSV" };
        const char *names[] = { x->raw_data_dir,           x->train_tar,   x->validation_tar,
                                x->validation_labels_file, x->labels_file, x->csv_path };
        for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
            if (!names[i] || !*names[i] || tfrec_in_is_local(x->fs, names[i]))
                continue;
            int rc = reachable(x->fs, what[i], names[i], err);
            if (rc)
                return rc;
            o->in_read = 1;
        }
        o->in_listed = x->raw_data_dir && !tfrec_in_is_local(x->fs, x->raw_data_dir);
    }
    if (x->open_sink) {
        o->out_shim.ctx = x->sink_ctx;
        o->out_shim.open_sink_io = x->open_sink;
        o->out_shim.remove = x->remove_output;
        o->out_fs = tfrec_fs_opener_make(&o->out_shim);
        o->out_direct = 1;
    } else {
        o->out_fs = x->fs;
        o->out_direct = !tfrec_in_is_local(x->fs, x->output_dir);
        int rc = reachable(x->fs, "output", x->output_dir, err);
        if (rc)
            return rc;
    }
    return reachable(x->fs, "manifest", x->manifest_path, err);
}

/* What the request names: a layout, an output, callbacks that go together. */
static int check_request(const tfrec_imagenet_options *x, tfrec_err *err)
{
    if (x->layout < TFREC_LAYOUT_IMAGENET || x->layout > TFREC_LAYOUT_CSV)
        return tfrec_fail(err, TFREC_E_INVALID, "unknown input layout %d", x->layout);
    if (!x->output_dir || !*x->output_dir)
        return tfrec_fail(err, TFREC_E_INVALID,
                          "an output directory (--local_scratch_dir / --output_dir) is required");
    if (x->list_input && !x->open_input)
        return tfrec_fail(err, TFREC_E_INVALID, "list_input needs open_input");
    if (x->open_input_range && !x->open_input)
        return tfrec_fail(err, TFREC_E_INVALID, "open_input_range needs open_input");
    return TFREC_OK;
}

/* The input: one of a tree, tarballs or a CSV file, readable where it is. */
static int check_input(const in_opts *o, tfrec_err *err)
{
    const tfrec_imagenet_options *x = &o->o;
    if (o->in_read && x->layout == TFREC_LAYOUT_CSV)
        return tfrec_fail(err, TFREC_E_UNSUPPORTED,
                          "input through a file system other than the local one (e.g. gs://) is "
                          "read from a train/validation or class-folder tree or from tarballs, "
                          "not from a CSV list");
    if (x->open_input && (x->train_tar || x->validation_tar) && !x->open_input_range)
        return tfrec_fail(err, TFREC_E_INVALID,
                          "tarballs read through open_input need open_input_range (the workers "
                          "read each image's bytes with it)");
    int tars = x->layout == TFREC_LAYOUT_IMAGENET && (x->train_tar || x->validation_tar);
    /* Either tarball alone converts its split only. */
    if (tars && ((x->train_tar && !*x->train_tar) || (x->validation_tar && !*x->validation_tar)))
        return tfrec_fail(err, TFREC_E_INVALID, "an empty tarball name");
    if (tars && x->validation_tar && !x->validation_labels_file &&
        (!x->raw_data_dir || !*x->raw_data_dir))
        return tfrec_fail(err, TFREC_E_INVALID,
                          "converting the validation tarball needs the validation labels "
                          "(--validation_labels=FILE, one synset per image in file-name order)");
    if ((x->train_tar || x->validation_tar) && x->layout != TFREC_LAYOUT_IMAGENET)
        return tfrec_fail(err, TFREC_E_INVALID, "tarballs are read with the imagenet layout only");
    if (x->listing && (tars || x->layout == TFREC_LAYOUT_CSV))
        return tfrec_fail(err, TFREC_E_UNSUPPORTED,
                          "a listing file lists an image tree (the imagenet or folders layout), "
                          "not tarballs or a CSV file");
    if (!tars && (x->layout == TFREC_LAYOUT_CSV ? !x->csv_path || !*x->csv_path
                                                : !x->raw_data_dir || !*x->raw_data_dir))
        return tfrec_fail(err, TFREC_E_INVALID,
                          x->layout == TFREC_LAYOUT_CSV
                              ? "a CSV file (--csv) is required"
                              : "an input directory (--raw_data_dir) is required");
    if (x->num_tasks > TFREC_TASK_MAX || (x->num_tasks && x->task_index >= x->num_tasks) ||
        (!x->num_tasks && x->task_index))
        return tfrec_fail(err, TFREC_E_INVALID,
                          "task_index %u must be below num_tasks %u (at most %u tasks)",
                          x->task_index, x->num_tasks, TFREC_TASK_MAX);
    return TFREC_OK;
}

#define IN_STR_(x) #x
#define IN_STR(x) IN_STR_(x)

/* An int option: the value 0 (or given) stands for, the range it must then
 * be in, and the message of one outside (%d: the value). */
typedef struct int_rule {
    size_t offset; /* in tfrec_imagenet_options */
    int given, dflt, lo, hi;
    const char *msg;
} int_rule;

#define IN_RULE(field, given, dflt, lo, hi, msg)                          \
    {                                                                     \
        offsetof(tfrec_imagenet_options, field), given, dflt, lo, hi, msg \
    }

static const int_rule int_rules[] = {
    IN_RULE(train_shards, 0, IN_DEFAULT_TRAIN_SHARDS, 1, IN_MAX_SHARDS,
            "shard counts must be in 1.." IN_STR(IN_MAX_SHARDS)),
    IN_RULE(validation_shards, 0, IN_DEFAULT_VALIDATION_SHARDS, 1, IN_MAX_SHARDS,
            "shard counts must be in 1.." IN_STR(IN_MAX_SHARDS)),
    IN_RULE(num_threads, 0, 0, 1, IN_MAX_THREADS, /* 0: online CPUs, set first */
            "num_threads must be in 1.." IN_STR(IN_MAX_THREADS)),
    IN_RULE(verify, 0, TFREC_VERIFY_HEADER, TFREC_VERIFY_HEADER, TFREC_VERIFY_FULL,
            "unknown verify level %d"),
    IN_RULE(on_error, 0, TFREC_ON_ERROR_STOP, TFREC_ON_ERROR_STOP, TFREC_ON_ERROR_SKIP,
            "unknown on_error mode %d"),
    IN_RULE(quality, 0, 100, 1, 100, "quality must be in 1..100"),
    IN_RULE(compression, TFREC_COMPRESSION_AUTO, TFREC_COMPRESSION_NONE, TFREC_COMPRESSION_NONE,
            TFREC_COMPRESSION_GZIP, "unknown compression %d"),
};

static int online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)(n < IN_MAX_THREADS ? n : IN_MAX_THREADS) : 1;
}

static int apply_defaults(tfrec_imagenet_options *x, tfrec_err *err)
{
    if (!x->num_threads)
        x->num_threads = online_cpus();
    for (size_t i = 0; i < sizeof int_rules / sizeof *int_rules; i++) {
        const int_rule *r = &int_rules[i];
        int *v = (int *)(void *)((char *)x + r->offset);
        if (*v == r->given)
            *v = r->dflt;
        if (*v < r->lo || *v > r->hi)
            return tfrec_fail(err, TFREC_E_INVALID, r->msg, *v);
    }
    if (!x->max_image_pixels)
        x->max_image_pixels = TFREC_IMAGE_DEFAULT_MAX_PIXELS;
    if (!x->max_inflight_bytes)
        x->max_inflight_bytes = IN_DEFAULT_INFLIGHT;
    if (!x->extensions || !*x->extensions)
        x->extensions = "jpeg,jpg";
    return TFREC_OK;
}

/* Split the extension list once; entries may carry a leading dot. */
static int split_extensions(in_opts *o, tfrec_err *err)
{
    const char *list = o->o.extensions;
    char *copy = strdup(list);
    if (!copy)
        return tfrec_fail(err, TFREC_E_NOMEM, "out of memory");
    size_t cap = 1;
    for (const char *s = copy; *s; s++)
        cap += *s == ',' || *s == ' ';
    o->ext_buf = copy;
    o->exts = calloc(cap, sizeof *o->exts);
    if (!o->exts)
        return tfrec_fail(err, TFREC_E_NOMEM, "out of memory");
    for (char *save, *tok = strtok_r(copy, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save))
        o->exts[o->nexts++] = tok[0] == '.' ? tok + 1 : tok;
    if (o->nexts == 0)
        return tfrec_fail(err, TFREC_E_INVALID, "no extensions in \"%s\"", list);
    return TFREC_OK;
}

int tfrec_in_resolve_options(const tfrec_imagenet_options *in, in_opts *o, tfrec_err *err)
{
    memset(o, 0, sizeof *o);
    int rc = TFREC_STRUCT_IN(tfrec_imagenet_options, &o->o, in, err);
    if (!rc)
        rc = check_request(&o->o, err);
    if (!rc)
        rc = resolve_io(o, err);
    if (!rc)
        rc = check_input(o, err);
    if (!rc)
        rc = apply_defaults(&o->o, err);
    if (!rc)
        rc = split_extensions(o, err);
    return rc;
}

void tfrec_in_free_options(in_opts *o)
{
    free(o->exts);
    free(o->ext_buf);
}

/* Option defaults and validation: every problem with the request is
 * reported before anything is scanned or written. */
#include "imagenet/run.h"

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

int tfrec_in_resolve_options(const tfrec_imagenet_options *in, in_opts *o, tfrec_err *err)
{
    memset(o, 0, sizeof *o);
    int rc = TFREC_STRUCT_IN(tfrec_imagenet_options, &o->o, in, err);
    if (rc)
        return rc;
    tfrec_imagenet_options *x = &o->o;
    if (x->layout < TFREC_LAYOUT_IMAGENET || x->layout > TFREC_LAYOUT_CSV)
        return tfrec_fail(err, TFREC_E_INVALID, "unknown input layout %d", x->layout);
    if (!x->output_dir || !*x->output_dir)
        return tfrec_fail(err, TFREC_E_INVALID,
                          "an output directory (--local_scratch_dir / --output_dir) is required");
    if (x->list_input && !x->open_input)
        return tfrec_fail(err, TFREC_E_INVALID, "list_input needs open_input");
    if (x->open_input_range && !x->open_input)
        return tfrec_fail(err, TFREC_E_INVALID, "open_input_range needs open_input");
    if ((rc = resolve_io(o, err)))
        return rc;
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
    if (!x->train_shards)
        x->train_shards = IN_DEFAULT_TRAIN_SHARDS;
    if (!x->validation_shards)
        x->validation_shards = IN_DEFAULT_VALIDATION_SHARDS;
    if (x->train_shards < 1 || x->train_shards > IN_MAX_SHARDS || x->validation_shards < 1 ||
        x->validation_shards > IN_MAX_SHARDS)
        return tfrec_fail(err, TFREC_E_INVALID, "shard counts must be in 1..%d", IN_MAX_SHARDS);
    if (!x->num_threads) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        x->num_threads = n > 0 ? (int)(n < IN_MAX_THREADS ? n : IN_MAX_THREADS) : 1;
    }
    if (x->num_threads < 1 || x->num_threads > IN_MAX_THREADS)
        return tfrec_fail(err, TFREC_E_INVALID, "num_threads must be in 1..%d", IN_MAX_THREADS);
    if (!x->verify)
        x->verify = TFREC_VERIFY_HEADER;
    if (x->verify < TFREC_VERIFY_HEADER || x->verify > TFREC_VERIFY_FULL)
        return tfrec_fail(err, TFREC_E_INVALID, "unknown verify level %d", x->verify);
    if (x->on_error != TFREC_ON_ERROR_STOP && x->on_error != TFREC_ON_ERROR_SKIP)
        return tfrec_fail(err, TFREC_E_INVALID, "unknown on_error mode %d", x->on_error);
    if (!x->quality)
        x->quality = 100;
    if (x->quality < 1 || x->quality > 100)
        return tfrec_fail(err, TFREC_E_INVALID, "quality must be in 1..100");
    if (x->compression == TFREC_COMPRESSION_AUTO)
        x->compression = TFREC_COMPRESSION_NONE;
    if (x->compression < TFREC_COMPRESSION_NONE || x->compression > TFREC_COMPRESSION_GZIP)
        return tfrec_fail(err, TFREC_E_INVALID, "unknown compression %d", x->compression);
    if (!x->max_image_pixels)
        x->max_image_pixels = TFREC_IMAGE_DEFAULT_MAX_PIXELS;
    if (!x->max_inflight_bytes)
        x->max_inflight_bytes = IN_DEFAULT_INFLIGHT;
    if (!x->extensions || !*x->extensions)
        x->extensions = "jpeg,jpg";
    /* Split the extension list once; entries may carry a leading dot. */
    char *copy = strdup(x->extensions);
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
        return tfrec_fail(err, TFREC_E_INVALID, "no extensions in \"%s\"", x->extensions);
    return TFREC_OK;
}

void tfrec_in_free_options(in_opts *o)
{
    free(o->exts);
    free(o->ext_buf);
}

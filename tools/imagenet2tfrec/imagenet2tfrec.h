/* imagenet2tfrec's command line: the flags' destinations, their defaults
 * and the flag table (flags.c). */
#ifndef IMAGENET2TFREC_H
#define IMAGENET2TFREC_H

#include <stddef.h>
#include <stdint.h>

#include "../common/flags.h"
#include "../common/task.h"
#include "tfrec/imagenet.h"

typedef struct cli {
    tfrec_imagenet_options o;
    const char *manifest;
    int quiet;
    /* the reference's Cloud Storage and download flags */
    const char *project, *gcs_output_path, *imagenet_username, *imagenet_access_key;
    /* downloading the tarballs */
    const char *download_url, *labels_url, *train_md5, *validation_md5, *labels_md5;
    int download_retries, download;
    char *dl_train, *dl_val, *dl_labels;
    int gcs_upload;
    uint64_t max_inflight_mb;
    cli_task task;
    int merge;                 /* --merge_manifests */
    const char *write_listing; /* --write_listing=FILE */
} cli;

/* Room for the flag table (main refuses to start if it is too small). */
#define IN_MAX_FLAGS 80

/* The defaults of the reference and of ours, before parsing. */
void in_defaults(cli *c);
/* The flag table, pointing into c, in --help order; returns the entries
 * written (the last is the zeroed end), 0 when cap is too small. */
size_t in_flag_table(cli *c, cli_flag *out, size_t cap);

#endif

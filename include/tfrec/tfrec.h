/* libtfrec: everything. Include this or the module headers you need. */
#ifndef TFREC_TFREC_H
#define TFREC_TFREC_H

#include "version.h"
#include "error.h"
#include "crc32c.h"
#include "io.h"
#include "fs.h"
#include "record.h"
#include "batch.h"
#include "dataset.h"
#include "task.h"
#include "config.h"
#include "example.h"
/* The optional parts' headers are installed with their part (tfrec-image,
 * tfrec-bigtable): include those that are there. */
#if defined(__has_include)
#if __has_include("bigtable.h")
#include "bigtable.h"
#endif
#if __has_include("bigtable_load.h")
#include "bigtable_load.h"
#endif
#if __has_include("bigtable_plan.h")
#include "bigtable_plan.h"
#endif
#if __has_include("bigtable_export.h")
#include "bigtable_export.h"
#endif
#if __has_include("image.h")
#include "image.h"
#endif
#if __has_include("image_decode.h")
#include "image_decode.h"
#endif
#if __has_include("imagenet.h")
#include "imagenet.h"
#endif
#else
#include "bigtable.h"
#include "bigtable_load.h"
#include "bigtable_plan.h"
#include "bigtable_export.h"
#include "image.h"
#include "image_decode.h"
#include "imagenet.h"
#endif

#endif

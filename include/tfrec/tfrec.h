/* libtfrec: everything. Include this or the module headers you need. */
#ifndef TFREC_TFREC_H
#define TFREC_TFREC_H

#include "version.h"
#include "error.h"
#include "crc32c.h"
#include "io.h"
#include "record.h"
#include "batch.h"
#include "example.h"
#include "bigtable.h"
#include "bigtable_load.h"
#include "image.h"
#include "imagenet.h"

#endif

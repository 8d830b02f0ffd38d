/* Internal, for tests only: fault injection into the bulk writer.
 *
 * Not part of the public API (not exported from libtfrec.so; present in
 * libtfrec.a so unit tests and test builds of tools can reach it). */
#ifndef TFREC_BT_WRITER_TESTING_H
#define TFREC_BT_WRITER_TESTING_H

#include <stdint.h>

#include "tfrec/bigtable.h"

/* Called for every per-entry result before the writer acts on it; returns
 * the gRPC status code to use instead (return `code` to keep it). `attempt`
 * counts from 1. Lets tests inject failures against a real server. */
typedef int (*tfrec_bt_status_hook)(void *ctx, uint64_t index, unsigned attempt, int code);

/* Install (or, with hook NULL, remove) the hook; call it before the first put. */
void tfrec_bt_writer_set_status_hook(tfrec_bt_writer *w, tfrec_bt_status_hook hook, void *ctx);

#endif

/* Internal: test machinery of the Bigtable writer. Declared here, not in
 * the public headers: the function is hidden in libtfrec.so and used only
 * by unit tests and the test builds of the tools (TFREC_TESTING). */
#ifndef TFREC_BT_WRITER_TESTING_H
#define TFREC_BT_WRITER_TESTING_H

#include <stdint.h>

#include "tfrec/bigtable.h"

/* Called for every per-entry result before the writer acts on it; returns
 * the gRPC status code to use instead (return `code` to keep it). attempt
 * counts from 1. Lets tests inject failures against a real server. */
typedef int (*tfrec_bt_status_hook)(void *ctx, uint64_t index, unsigned attempt, int code);

/* Install (or with NULL remove) the hook on w. */
void tfrec_bt_writer_set_status_hook(tfrec_bt_writer *w, tfrec_bt_status_hook hook, void *ctx);

#endif

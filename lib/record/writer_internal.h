/* Internal: what other parts of the library may do to a writer. */
#ifndef TFREC_RECORD_WRITER_INTERNAL_H
#define TFREC_RECORD_WRITER_INTERNAL_H

#include "tfrec/record.h"
#include "util/errors.h"

/* Refuse a call's arguments: the message goes to the writer's own slot
 * (tfrec_writer_errmsg) after the writer's name, the writer stays usable.
 * Returns TFREC_E_INVALID; a writer that has already failed returns its
 * failure instead and keeps its message. */
int tfrec_writer_refuse(tfrec_writer *w, const char *fmt, ...) TFREC_PRINTF(2, 3);

#endif

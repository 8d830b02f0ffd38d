/* Internal: the record batch container, shared by the files that fill it. */
#ifndef TFREC_BATCH_INTERNAL_H
#define TFREC_BATCH_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "tfrec/batch.h"

struct tfrec_record_batch {
    uint8_t *data;
    size_t data_len, data_cap;
    uint64_t *ends;
    uint64_t *offsets;
    size_t count, index_cap;
};

/* Room for one more item of len bytes (geometric growth keeps appends
 * cheap). Returns TFREC_OK or TFREC_E_NOMEM, leaving the batch unchanged. */
int tfrec_batch_reserve(tfrec_record_batch *b, size_t len);

#endif

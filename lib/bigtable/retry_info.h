/* Internal: the server's own retry delay (google.rpc.RetryInfo) in a
 * google.rpc.Status, as a call's grpc-status-details-bin trailer or a
 * MutateRows entry's status carries it. */
#ifndef TFREC_BT_RETRY_INFO_H
#define TFREC_BT_RETRY_INFO_H

#include <stddef.h>
#include <stdint.h>

/* The longest delay honoured: a larger one is cut to this, so a hostile or
 * mistaken server cannot park a writer for hours (the retry deadline still
 * bounds the whole). */
#define BT_RETRY_INFO_MAX_MS 60000

/* The RetryInfo.retry_delay of a serialized google.rpc.Status in
 * milliseconds (rounded up, at most BT_RETRY_INFO_MAX_MS), or 0 when it
 * carries none, only zero or invalid (negative) ones, or the bytes around
 * it are malformed. The first positive one among the details counts. Reads
 * only within [data, data+len). */
int64_t tfrec_bt_retry_info_ms(const uint8_t *data, size_t len);

#endif

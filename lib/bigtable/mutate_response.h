/* Internal: the entries of a MutateRowsResponse, decoded in place.
 *
 * For 1 KB rows a response carries thousands of entries; protobuf-c would
 * allocate two structures per entry only for the writer to read two numbers
 * and free them again (bench/RESULTS.md, "One polling thread, responses decoded in place"). */
#ifndef TFREC_BT_MUTATE_RESPONSE_H
#define TFREC_BT_MUTATE_RESPONSE_H

#include <stddef.h>
#include <stdint.h>

/* One entry's result: the request position it answers and its status.
 * message points into the response (not NUL-terminated), "" if absent.
 * retry_delay_ms: the wait a failed entry's status names
 * (google.rpc.RetryInfo in its details, retry_info.h), 0 if none. */
typedef void (*bt_entry_result_fn)(void *ctx, int64_t index, int32_t code, const char *message,
                                   size_t message_len, int64_t retry_delay_ms);

/* Check the whole message first, then call fn once per entry in order, so
 * a malformed response yields no results at all (as protobuf-c's unpack
 * would fail). The same fields and wire types as the generated code accept:
 * unknown fields are skipped, a known field with another wire type, a
 * truncated field or a group is malformed. Returns 0, or -1 if malformed. */
int tfrec_bt_mutate_response_each(const uint8_t *data, size_t len, bt_entry_result_fn fn,
                                  void *ctx);

#endif

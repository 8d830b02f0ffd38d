/* google.rpc.Status (google/rpc/status.proto): details = 3, repeated
 * google.protobuf.Any (type_url = 1, value = 2). RetryInfo
 * (google/rpc/error_details.proto): retry_delay = 1, a
 * google.protobuf.Duration (seconds = 1 int64, nanos = 2 int32). */
#include "bigtable/retry_info.h"

#include <string.h>

#include "bigtable/pb_wire.h"

static const char retry_info_type[] = "type.googleapis.com/google.rpc.RetryInfo";

/* Duration -> ms, or 0 if malformed or not positive. */
static int64_t duration_ms(pb_cursor c)
{
    int64_t seconds = 0, nanos = 0;
    uint32_t field;
    unsigned wt;
    int rc;
    while ((rc = pb_tag(&c, &field, &wt)) == 1) {
        uint64_t v;
        if ((field == 1 || field == 2) && wt == WT_VARINT) {
            if (pb_varint(&c, &v))
                return 0;
            if (field == 1)
                seconds = (int64_t)v;
            else
                nanos = (int32_t)(uint32_t)v;
        } else if (pb_skip(&c, wt)) {
            return 0;
        }
    }
    if (rc < 0 || seconds < 0 || nanos < 0 || nanos > 999999999 || (seconds == 0 && nanos == 0))
        return 0;
    if (seconds >= BT_RETRY_INFO_MAX_MS / 1000)
        return BT_RETRY_INFO_MAX_MS;
    int64_t ms = seconds * 1000 + (nanos + 999999) / 1000000;
    return ms > BT_RETRY_INFO_MAX_MS ? BT_RETRY_INFO_MAX_MS : ms;
}

/* RetryInfo -> ms of its retry_delay, 0 if none. */
static int64_t retry_info(pb_cursor c)
{
    uint32_t field;
    unsigned wt;
    int rc;
    int64_t ms = 0;
    while ((rc = pb_tag(&c, &field, &wt)) == 1) {
        if (field == 1 && wt == WT_BYTES) {
            pb_cursor d;
            if (pb_bytes(&c, &d))
                return 0;
            ms = duration_ms(d);
        } else if (pb_skip(&c, wt)) {
            return 0;
        }
    }
    return rc < 0 ? 0 : ms;
}

/* One Any: its value's delay if its type is RetryInfo, else 0. */
static int64_t any_delay(pb_cursor c)
{
    pb_cursor type = { NULL, NULL }, value = { NULL, NULL };
    uint32_t field;
    unsigned wt;
    int rc;
    while ((rc = pb_tag(&c, &field, &wt)) == 1) {
        if ((field == 1 || field == 2) && wt == WT_BYTES) {
            if (pb_bytes(&c, field == 1 ? &type : &value))
                return 0;
        } else if (pb_skip(&c, wt)) {
            return 0;
        }
    }
    size_t n = sizeof retry_info_type - 1;
    if (rc < 0 || !type.p || (size_t)(type.end - type.p) != n ||
        memcmp(type.p, retry_info_type, n) != 0 || !value.p)
        return 0;
    return retry_info(value);
}

int64_t tfrec_bt_retry_info_ms(const uint8_t *data, size_t len)
{
    if (!data || !len)
        return 0;
    pb_cursor c = { data, data + len };
    uint32_t field;
    unsigned wt;
    int rc;
    while ((rc = pb_tag(&c, &field, &wt)) == 1) {
        if (field == 3 && wt == WT_BYTES) {
            pb_cursor any;
            if (pb_bytes(&c, &any))
                return 0;
            int64_t ms = any_delay(any);
            if (ms > 0)
                return ms;
        } else if (pb_skip(&c, wt)) {
            return 0;
        }
    }
    return 0;
}

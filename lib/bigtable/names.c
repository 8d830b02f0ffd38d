/* Row keys like the reference loader's, and gRPC status names for messages. */
#include <string.h>

#include "tfrec/bigtable.h"

int tfrec_bt_key_width(uint64_t num_records)
{
    if (num_records == 0)
        return 10;
    int w = 1;
    for (uint64_t v = num_records - 1; v >= 10; v /= 10)
        w++;
    return w;
}

size_t tfrec_bt_row_key(char *buf, size_t cap, const char *prefix, uint64_t index, int width,
                        int reversed)
{
    if (width < 1)
        width = 1;
    if (width > 20)
        width = 20;
    /* The digits by hand, as "%0*llu" would print them: snprintf per row
     * was a measurable share of a load's CPU for 1 KB rows. */
    int n = 1;
    for (uint64_t rest = index / 10; rest; rest /= 10)
        n++;
    if (n < width)
        n = width; /* the rest of the places are leading zeros */
    char digits[21];
    digits[n] = '\0';
    for (int i = n - 1; i >= 0; i--, index /= 10)
        digits[i] = (char)('0' + index % 10);
    if (reversed) /* reverse the padded digits: keys of consecutive rows scatter */
        for (int i = 0, j = n - 1; i < j; i++, j--) {
            char t = digits[i];
            digits[i] = digits[j];
            digits[j] = t;
        }
    size_t pl = prefix ? strlen(prefix) : 0, need = pl + (size_t)n;
    if (need + 1 > cap)
        return need;
    memcpy(buf, prefix, pl);
    memcpy(buf + pl, digits, (size_t)n + 1);
    return need;
}

const char *tfrec_bt_code_name(int code)
{
    static const char *const names[] = { "OK",
                                         "CANCELLED",
                                         "UNKNOWN",
                                         "INVALID_ARGUMENT",
                                         "DEADLINE_EXCEEDED",
                                         "NOT_FOUND",
                                         "ALREADY_EXISTS",
                                         "PERMISSION_DENIED",
                                         "RESOURCE_EXHAUSTED",
                                         "FAILED_PRECONDITION",
                                         "ABORTED",
                                         "OUT_OF_RANGE",
                                         "UNIMPLEMENTED",
                                         "INTERNAL",
                                         "UNAVAILABLE",
                                         "DATA_LOSS",
                                         "UNAUTHENTICATED" };
    if (code >= 0 && code < (int)(sizeof names / sizeof names[0]))
        return names[code];
    return "UNKNOWN_CODE";
}

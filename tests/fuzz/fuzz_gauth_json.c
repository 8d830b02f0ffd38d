/* The JSON reader of the Cloud Storage credentials (gauth/gauth_internal.h):
 * key files and token endpoint replies come from outside, so any bytes must
 * give a value or a message, within bounded stack (nesting) and memory.
 * Input: the JSON text itself. */
#include <string.h>

#include "fuzz.h"
#include "gauth/gauth_internal.h"
#include "tfrec/error.h"

static const char *const keys[] = {
    "type",       "private_key", "client_email", "access_token",
    "expires_in", "token_type",  "error",        "error_description"
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tfrec_gauth_json *j = NULL;
    char why[128];
    int rc = tfrec_gauth_json_parse(&j, (const char *)data, size, why, sizeof why);
    if (rc != TFREC_OK) {
        FUZZ_ASSERT(j == NULL && memchr(why, 0, sizeof why) && why[0]);
        return 0;
    }
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const char *s = tfrec_gauth_json_string(j, keys[i]);
        int64_t v;
        if (s) {
            /* unescaping never grows a string */
            FUZZ_ASSERT(strlen(s) <= size);
            fuzz_touch(s, strlen(s) + 1);
            FUZZ_ASSERT(tfrec_gauth_json_has(j, keys[i]));
        }
        if (tfrec_gauth_json_int(j, keys[i], &v))
            FUZZ_ASSERT(tfrec_gauth_json_has(j, keys[i]));
    }
    tfrec_gauth_json_free(j);
    return 0;
}

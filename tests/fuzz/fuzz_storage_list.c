/* One objects.list reply as the Cloud Storage client reads it
 * (tfrec_gcs_list_parse_page in storage/list.c): any bytes give a page or
 * a message. Input: a control byte choosing the glob pattern, then the
 * reply body. Every listed name is in the bucket and matches the pattern;
 * a page token, when given, is not empty. */
#include <string.h>

#include "fuzz.h"
#include "storage/storage_internal.h"

static const char *const patterns[] = { "*", "a*", "dir/*.tfrecord", "x?[a-c]*", "*/*", "\\*" };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in in = { data, size };
    const char *pattern = patterns[fuzz_byte(&in) % (sizeof patterns / sizeof patterns[0])];
    tfrec_storage_list *l = tfrec_gcs_list_new();
    if (!l)
        return 0;
    char *next = (char *)1;
    size_t entries = 99;
    int rc = tfrec_gcs_list_parse_page((const char *)in.p, in.n, "bkt", pattern, "gs://bkt/x", l,
                                       &next, &entries);
    if (rc < 0) {
        FUZZ_ASSERT(next == NULL);
        FUZZ_ASSERT(tfrec_last_errmsg()[0]);
    } else {
        FUZZ_ASSERT(!next || next[0]);
        if (next)
            fuzz_touch(next, strlen(next) + 1);
        FUZZ_ASSERT(tfrec_storage_list_count(l) <= entries);
        for (size_t i = 0; i < tfrec_storage_list_count(l); i++) {
            const tfrec_storage_object *o = tfrec_storage_list_get(l, i);
            FUZZ_ASSERT(o && o->name && strncmp(o->name, "gs://bkt/", 9) == 0);
            FUZZ_ASSERT(tfrec_gcs_glob_match(pattern, o->name + 9));
            fuzz_touch(o->name, strlen(o->name) + 1);
        }
    }
    free(next);
    tfrec_storage_list_free(l);
    return 0;
}

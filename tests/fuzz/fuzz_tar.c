/* The tar header reader (lib/tar) on arbitrary bytes, as the tarball scan
 * uses it: the members of an archive and, for each member named *.tar,
 * the members of that inner archive (the ImageNet train tarball's shape).
 * Every entry the reader returns must lie inside the archive it came from,
 * and reading its data must stay inside the input.
 * Input: the archive bytes. */
#include <string.h>

#include "fuzz.h"
#include "tar/tar.h"

static void walk(const uint8_t *data, uint64_t base, uint64_t len, int depth)
{
    tfrec_tar t;
    tfrec_tar_open_mem(&t, data, base, len);
    tfrec_tar_entry e;
    tfrec_err err = { 0 };
    int rc;
    uint64_t n = 0;
    while ((rc = tfrec_tar_next(&t, &e, &err)) == 1) {
        FUZZ_ASSERT(e.offset >= base + 512 && e.offset <= base + len);
        FUZZ_ASSERT(e.size <= base + len - e.offset);
        FUZZ_ASSERT(e.name && e.name[0]);
        FUZZ_ASSERT(n++ < len / 512); /* every member costs a header block */
        const char *why = NULL, *flat = tfrec_tar_flat_name(e.name, &why);
        FUZZ_ASSERT(flat ? strchr(flat, '/') == NULL : why != NULL);
        uint8_t head[16];
        size_t k = e.size < sizeof head ? (size_t)e.size : sizeof head;
        FUZZ_ASSERT(tfrec_tar_pread(&t, head, k, e.offset) == 0);
        fuzz_touch(head, k);
        size_t nl = strlen(e.name);
        if (depth == 0 && e.type == TFREC_TAR_FILE && nl > 4 && !strcmp(e.name + nl - 4, ".tar"))
            walk(data, e.offset, e.size, 1);
    }
    FUZZ_ASSERT(rc == 0 || (rc < 0 && err.msg[0] != '\0'));
    /* After the end or an error the reader stays there. */
    FUZZ_ASSERT(tfrec_tar_next(&t, &e, &err) == (rc == 0 ? 0 : rc));
    tfrec_tar_close(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    walk(data, 0, size, 0);
    return 0;
}

/* The converter's text inputs: a CSV list ("path,label[,split]" lines) with
 * or without a labels file, scanned, labelled and planned as
 * imagenet2tfrec does; and synset_labels.txt-style files read by first
 * token. The parsers read files, so each input is written to a scratch
 * directory first; it holds two images the lists can name.
 * Input: one control byte; for a labels file, its text, a NUL, then the CSV. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "imagenet/plan.h"
#include "imagenet/run.h"
#include "util/strlist.h"

static char dir[64];

static void put(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    FUZZ_ASSERT(f != NULL);
    FUZZ_ASSERT(fwrite(data, 1, len, f) == len || len == 0);
    FUZZ_ASSERT(fclose(f) == 0);
}

/* The scratch directory goes when the fuzzer exits normally. */
static void cleanup(void)
{
    static const char *const names[] = { "a.jpg", "b.JPEG", "list.csv", "labels.txt" };
    char path[128];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
}

static void setup(void)
{
    if (dir[0])
        return;
    /* TMPDIR on a tmpfs (/dev/shm) makes each input cheaper to write. */
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/tfrec-fuzz-lists-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    FUZZ_ASSERT(mkdtemp(dir) != NULL);
    char path[128];
    snprintf(path, sizeof path, "%s/a.jpg", dir);
    put(path, "x", 1);
    snprintf(path, sizeof path, "%s/b.JPEG", dir);
    put(path, "y", 1);
    atexit(cleanup);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup();
    fuzz_in in = { data, size };
    unsigned flags = fuzz_byte(&in);
    char csv[128], labels[128], out[128];
    snprintf(csv, sizeof csv, "%s/list.csv", dir);
    snprintf(labels, sizeof labels, "%s/labels.txt", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    tfrec_err err = { 0 };
    const uint8_t *nul = (flags & 1) ? memchr(in.p, 0, in.n) : NULL;
    if (nul) {
        put(labels, in.p, (size_t)(nul - in.p));
        put(csv, nul + 1, in.n - (size_t)(nul - in.p) - 1);
    } else {
        put(csv, in.p, in.n);
    }
    if (flags & 2) { /* the same text as a synset_labels.txt */
        tfrec_strlist lines = { 0 };
        if (tfrec_in_read_lines(NULL, csv, 1, &lines, &err) == TFREC_OK)
            for (size_t i = 0; i < lines.n; i++)
                FUZZ_ASSERT(lines.v[i] && lines.v[i][0] != '\0');
        tfrec_strlist_free(&lines);
        return 0;
    }
    tfrec_imagenet_options io = TFREC_IMAGENET_OPTIONS_INIT;
    io.layout = TFREC_LAYOUT_CSV;
    io.csv_path = csv;
    io.output_dir = out;
    io.labels_file = nul ? labels : NULL;
    io.train_shards = 1 + (int)((flags >> 2) & 3);
    io.validation_shards = 1 + (int)((flags >> 4) & 3);
    io.num_threads = 1;
    io.no_shuffle = (flags >> 6) & 1;
    in_opts o;
    if (tfrec_in_resolve_options(&io, &o, &err) != TFREC_OK)
        return 0;
    in_plan p;
    memset(&p, 0, sizeof p);
    int rc = tfrec_in_scan_csv(&p, &o, &err);
    if (!rc)
        rc = tfrec_in_assign_labels(&p, &o, &err);
    if (!rc)
        rc = tfrec_in_plan_finish(&p, &o, &err);
    if (!rc) {
        for (size_t i = 0; i < p.nitems; i++) {
            FUZZ_ASSERT(p.order[i]->label >= 1 && (size_t)p.order[i]->label <= p.nclasses);
            fuzz_touch(p.order[i]->path, strlen(p.order[i]->path));
        }
    } else {
        FUZZ_ASSERT(err.msg[0] != '\0');
    }
    tfrec_in_plan_free(&p);
    tfrec_in_free_options(&o);
    return 0;
}

/* The merge of a split conversion's manifest parts
 * (tfrec_imagenet_merge_manifests): parts that claim any task, plan, shard
 * list or fixed/rejected entries are refused with a message or give a
 * manifest that reads back as JSON, every rejected image with a path. The
 * parts and shards are served from memory through the open hooks, the
 * manifest written to memory, so nothing touches the disk.
 * Input: a control byte (bits 0-1: 1 to 4 parts; bit 2: shards whose name
 * holds "missing" cannot be opened), a byte giving the size every shard
 * reports, then the parts' texts separated by NUL bytes; part i of n is
 * named out/manifest-task-0000i-of-0000n.json. */
#include <string.h>

#include "fuzz.h"
#include "tfrec/imagenet.h"
#include "tfrec/io.h"
#include "util/json_read.h"

#define MAX_PARTS 4

typedef struct served {
    const uint8_t *part[MAX_PARTS];
    size_t len[MAX_PARTS];
    size_t nparts;
    int64_t shard_size;
    int missing;
    char *manifest; /* what the sink received */
    size_t manifest_len;
} served;

/* A shard: no bytes to read, only its size. */
static ptrdiff_t shard_read(void *ctx, void *buf, size_t n)
{
    (void)ctx;
    (void)buf;
    (void)n;
    return 0;
}

static int64_t shard_size(void *ctx)
{
    return *(const int64_t *)ctx;
}

static int shard_close(void *ctx, int commit)
{
    (void)ctx;
    (void)commit;
    return TFREC_OK;
}

static int open_source(void *io_ctx, tfrec_io *io, const char *name)
{
    served *s = io_ctx;
    for (size_t i = 0; i < s->nparts; i++) {
        char want[64];
        snprintf(want, sizeof want, "out/manifest-task-%05zu-of-%05zu.json", i, s->nparts);
        if (!strcmp(name, want))
            return tfrec_io_open_memory(io, s->part[i], s->len[i]);
    }
    if (s->missing && strstr(name, "missing"))
        return TFREC_E_NOT_FOUND;
    io->ctx = &s->shard_size;
    io->read = shard_read;
    io->size = shard_size;
    io->close = shard_close;
    return TFREC_OK;
}

static int sink_write(void *ctx, const void *buf, size_t n)
{
    served *s = ctx;
    char *m = realloc(s->manifest, s->manifest_len + n + 1);
    if (!m)
        return TFREC_E_NOMEM;
    memcpy(m + s->manifest_len, buf, n);
    s->manifest = m;
    s->manifest_len += n;
    m[s->manifest_len] = '\0';
    return TFREC_OK;
}

static int open_sink(void *io_ctx, tfrec_io *io, const char *name)
{
    (void)name;
    io->ctx = io_ctx;
    io->write = sink_write;
    io->close = shard_close;
    return TFREC_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in in = { data, size };
    unsigned flags = fuzz_byte(&in);
    served s;
    memset(&s, 0, sizeof s);
    s.nparts = 1 + (flags & 3);
    s.missing = (flags >> 2) & 1;
    s.shard_size = (int64_t)fuzz_byte(&in);
    const char *names[MAX_PARTS];
    char name_buf[MAX_PARTS][64];
    for (size_t i = 0; i < s.nparts; i++) {
        const uint8_t *nul = memchr(in.p, 0, in.n);
        size_t n = nul ? (size_t)(nul - in.p) : in.n;
        s.part[i] = in.p;
        s.len[i] = n;
        in.p += n + (nul != NULL);
        in.n -= n + (nul != NULL);
        snprintf(name_buf[i], sizeof name_buf[i], "out/manifest-task-%05zu-of-%05zu.json", i,
                 s.nparts);
        names[i] = name_buf[i];
    }
    tfrec_imagenet_merge_options o = TFREC_IMAGENET_MERGE_OPTIONS_INIT;
    o.output_dir = "out";
    o.parts = names;
    o.nparts = s.nparts;
    o.open_source = open_source;
    o.open_sink = open_sink;
    o.io_ctx = &s;
    tfrec_imagenet_result *r = NULL;
    int rc = tfrec_imagenet_merge_manifests(&o, &r);
    FUZZ_ASSERT(r != NULL);
    if (rc == TFREC_OK) {
        const char *json = tfrec_imagenet_result_json(r);
        FUZZ_ASSERT(json != NULL && s.manifest != NULL && !strcmp(json, s.manifest));
        tfrec_json_value *root = NULL;
        char why[128];
        tfrec_json_limits lim = { (size_t)1 << 30, 128, 100000000, 1 };
        FUZZ_ASSERT(tfrec_json_parse(json, strlen(json), &lim, &root, why, sizeof why) == 0);
        tfrec_json_value_free(root);
        const char *path, *reason;
        for (size_t i = 0; tfrec_imagenet_result_rejected(r, i, &path, &reason) == TFREC_OK; i++)
            FUZZ_ASSERT(path != NULL && reason != NULL);
    } else {
        FUZZ_ASSERT(tfrec_imagenet_result_errmsg(r)[0] != '\0');
    }
    tfrec_imagenet_result_free(r);
    free(s.manifest);
    return 0;
}

/* The streamed `.idx` writer. The writer commits this sink only after its
 * data file, so a finished index is never older than its data (the
 * freshness rule, index_format.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/index_format.h"

enum { OUT_CAP = 64 * 1024 };

struct index_out {
    tfrec_io sink;
    uint64_t next; /* offset of the next record */
    size_t used;
    char buf[OUT_CAP];
    char name[];
};

static int sink_fail(index_out *x, int rc, tfrec_err *err)
{
    const char *why = x->sink.errmsg ? x->sink.errmsg(x->sink.ctx) : NULL;
    return tfrec_fail(err, rc, "%s: %s", x->name, why && *why ? why : tfrec_strerror(rc));
}

int tfrec_index_out_open(index_out **out, const tfrec_io *sink, const char *name, tfrec_err *err)
{
    *out = NULL;
    index_out *x = calloc(1, sizeof *x + strlen(name) + 1);
    if (!x) {
        sink->close(sink->ctx, 0);
        return tfrec_fail(err, TFREC_E_NOMEM, "%s: out of memory", name);
    }
    x->sink = *sink;
    strcpy(x->name, name);
    *out = x;
    return TFREC_OK;
}

int tfrec_index_out_add(index_out *x, uint64_t framed, tfrec_err *err)
{
    x->used += tfrec_idx_format_line(x->buf + x->used, x->next, framed);
    x->next += framed;
    if (x->used > OUT_CAP - TFREC_IDX_LINE_MAX) {
        int rc = x->sink.write(x->sink.ctx, x->buf, x->used);
        x->used = 0;
        if (rc < 0)
            return sink_fail(x, rc, err);
    }
    return TFREC_OK;
}

int tfrec_index_out_close(index_out *x, int commit, tfrec_err *err)
{
    if (!x)
        return TFREC_OK;
    int rc = TFREC_OK;
    if (commit && x->used) {
        rc = x->sink.write(x->sink.ctx, x->buf, x->used);
        if (rc < 0) {
            sink_fail(x, rc, err);
            commit = 0;
        }
    }
    int crc = x->sink.close(x->sink.ctx, commit);
    if (rc == TFREC_OK && crc < 0)
        rc = tfrec_fail(err, crc, "%s: %s", x->name, tfrec_last_errmsg());
    free(x);
    return rc;
}

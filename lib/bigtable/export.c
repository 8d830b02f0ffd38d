/* tfrec_bt_export: rows of a shard -> TFRecord outputs and a part file. The
 * loop bt2tfrec and Python's export_bigtable both run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bigtable/bt_files.h"
#include "bigtable/export_part.h"
#include "bigtable/plan_internal.h"
#include "bigtable/reader_internal.h"
#include "tfrec/bigtable_export.h"
#include "tfrec/crc32c.h"
#include "tfrec/record.h"
#include "util/struct_size.h"

TFREC_DEFINE_STRUCT_INIT(tfrec_bt_export_options)
TFREC_DEFINE_STRUCT_INIT(tfrec_bt_export_stats)

#define MAX_NAME 4200

size_t tfrec_bt_export_output_name(char *buf, size_t cap, const char *output, int shard_index,
                                   int num_shards, int parallel_scans, int output_shards, size_t i)
{
    int n;
    long par = parallel_scans > 0 ? parallel_scans : 1, shards = num_shards > 0 ? num_shards : 1;
    if (output_shards)
        n = snprintf(buf, cap, "%s-%05ld-of-%05ld", output, (long)shard_index * par + (long)i,
                     shards * par);
    else if (shards > 1 && strcmp(output, "-") != 0)
        n = snprintf(buf, cap, "%s-%05d-of-%05ld", output, shard_index, shards);
    else
        n = snprintf(buf, cap, "%s", output);
    return n < 0 ? 0 : (size_t)n;
}

size_t tfrec_bt_export_part_name(char *buf, size_t cap, const char *output, int shard_index,
                                 int num_shards)
{
    int n = snprintf(buf, cap, "%s.part-%05d-of-%05d", output, shard_index,
                     num_shards > 0 ? num_shards : 1);
    return n < 0 ? 0 : (size_t)n;
}

/* A sink that passes bytes on and keeps their count and CRC32C; its ctx
 * belongs to the export (close does not free it). */
typedef struct crc_sink {
    tfrec_io inner;
    uint64_t size;
    uint32_t crc;
    int opened, closed;
} crc_sink;

static int crc_write(void *ctx, const void *buf, size_t n)
{
    crc_sink *s = ctx;
    int rc = s->inner.write(s->inner.ctx, buf, n);
    if (!rc) {
        s->crc = tfrec_crc32c_extend(s->crc, buf, n);
        s->size += n;
    }
    return rc;
}

static int crc_close(void *ctx, int commit)
{
    crc_sink *s = ctx;
    s->closed = 1;
    return s->inner.close(s->inner.ctx, commit);
}

static const char *crc_errmsg(void *ctx)
{
    crc_sink *s = ctx;
    return s->inner.errmsg ? s->inner.errmsg(s->inner.ctx) : "write failed";
}

typedef struct export_run {
    tfrec_bt_export_options o;
    tfrec_bt_read_options ro;
    tfrec_bt_export_stats st;
    const char *output;
    size_t nout;
    crc_sink *sinks;
    tfrec_writer **w;
    char **names;
    uint64_t *records;
    tfrec_io keys;
    int have_keys;
    char *kbuf;
    size_t klen;
    double t0;
} export_run;

static int open_sink(const export_run *e, tfrec_io *io, const char *name)
{
    return tfrec_fs_open_sink(e->o.fs, name, io);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int open_outputs(export_run *e)
{
    tfrec_writer_options wo = TFREC_WRITER_OPTIONS_INIT;
    wo.compression = e->o.compression ? e->o.compression : TFREC_COMPRESSION_NONE;
    e->nout =
        e->o.output_shards ? (size_t)(e->ro.parallel_scans > 0 ? e->ro.parallel_scans : 1) : 1;
    e->sinks = calloc(e->nout, sizeof *e->sinks);
    e->w = calloc(e->nout, sizeof *e->w);
    e->names = calloc(e->nout, sizeof *e->names);
    e->records = calloc(e->nout, sizeof *e->records);
    if (!e->sinks || !e->w || !e->names || !e->records)
        return tfrec_fail(NULL, TFREC_E_NOMEM, "out of memory");
    for (size_t i = 0; i < e->nout; i++) {
        size_t len =
            tfrec_bt_export_output_name(NULL, 0, e->output, e->ro.shard_index, e->ro.num_shards,
                                        e->ro.parallel_scans, e->o.output_shards, i);
        if (!(e->names[i] = malloc(len + 1)))
            return tfrec_fail(NULL, TFREC_E_NOMEM, "out of memory");
        tfrec_bt_export_output_name(e->names[i], len + 1, e->output, e->ro.shard_index,
                                    e->ro.num_shards, e->ro.parallel_scans, e->o.output_shards, i);
        crc_sink *s = &e->sinks[i];
        s->inner = (tfrec_io)TFREC_IO_INIT;
        int rc = open_sink(e, &s->inner, e->names[i]);
        if (rc)
            return rc;
        s->opened = 1;
        tfrec_io io = TFREC_IO_INIT;
        io.ctx = s;
        io.write = crc_write;
        io.close = crc_close;
        io.errmsg = crc_errmsg;
        if ((rc = tfrec_writer_open_io(&e->w[i], &io, e->names[i], &wo)))
            return rc; /* the writer closed the sink */
    }
    if (e->o.keys_output) {
        e->keys = (tfrec_io)TFREC_IO_INIT;
        int rc = open_sink(e, &e->keys, e->o.keys_output);
        if (rc)
            return rc;
        e->have_keys = 1;
        if (!(e->kbuf = malloc(1 << 16)))
            return tfrec_fail(NULL, TFREC_E_NOMEM, "out of memory");
    }
    return TFREC_OK;
}

static int keys_flush(export_run *e)
{
    int rc = e->klen ? e->keys.write(e->keys.ctx, e->kbuf, e->klen) : TFREC_OK;
    e->klen = 0;
    if (rc)
        return tfrec_fail(NULL, rc, "%s: %s", e->o.keys_output,
                          e->keys.errmsg ? e->keys.errmsg(e->keys.ctx) : "write failed");
    return TFREC_OK;
}

static int key_line(export_run *e, const uint8_t *k, size_t n)
{
    if (e->klen + n + 1 > (1 << 16)) {
        int rc = keys_flush(e);
        if (rc)
            return rc;
        if (n + 1 > (1 << 16)) { /* longer than the buffer: straight through */
            rc = e->keys.write(e->keys.ctx, k, n);
            if (!rc)
                rc = e->keys.write(e->keys.ctx, "\n", 1);
            return rc ? tfrec_fail(NULL, rc, "%s: write failed", e->o.keys_output) : TFREC_OK;
        }
    }
    memcpy(e->kbuf + e->klen, k, n);
    e->kbuf[e->klen + n] = '\n';
    e->klen += n + 1;
    return TFREC_OK;
}

/* The latest cell of family:column; the row's stripped marker cell (empty
 * value) may be a copy of it, so the longest value wins. */
static const tfrec_bt_cell *cell_of(const export_run *e, const tfrec_bt_row *row)
{
    const tfrec_bt_cell *best = NULL;
    size_t clen = strlen(e->o.column);
    for (size_t i = 0; i < row->ncells; i++) {
        const tfrec_bt_cell *c = row->cells[i];
        if (!strcmp(c->family, e->o.family) && c->qualifier_len == clen &&
            !memcmp(c->qualifier, e->o.column, clen) && (!best || c->value_len > best->value_len))
            best = c;
    }
    return best;
}

static int copy_rows(export_run *e, tfrec_bt_reader *rd)
{
    tfrec_bt_row row = TFREC_BT_ROW_INIT;
    int rc;
    double interval = e->o.progress_interval > 0 ? e->o.progress_interval : 0.25;
    double next = now_s() + interval;
    uint64_t seen = 0;
    while ((rc = tfrec_bt_reader_next(rd, &row)) == TFREC_OK) {
        const tfrec_bt_cell *cell = cell_of(e, &row);
        if (!cell) {
            if (e->o.missing_cell == TFREC_BT_MISSING_CELL_SKIP) {
                e->st.rows_skipped++;
                continue;
            }
            char k[200];
            return tfrec_fail(NULL, TFREC_E_NOT_FOUND,
                              "row %s has no %s:%s cell (skip such rows with the missing-cell "
                              "policy \"skip\")",
                              tfrec_bt_key_show(row.key, row.key_len, "''", k, sizeof k),
                              e->o.family, e->o.column);
        }
        size_t i = e->nout > 1 ? row.range : 0;
        if ((rc = tfrec_writer_write(e->w[i], cell->value, cell->value_len)))
            return tfrec_fail(NULL, rc, "%s", tfrec_writer_errmsg(e->w[i]));
        if (e->have_keys && (rc = key_line(e, row.key, row.key_len)))
            return rc;
        e->records[i]++;
        e->st.rows++;
        e->st.bytes += cell->value_len;
        if (e->o.progress && (++seen & 63) == 0 && now_s() >= next) {
            next = now_s() + interval;
            e->st.seconds = now_s() - e->t0;
            if (e->o.progress(e->o.progress_ctx, &e->st))
                return tfrec_fail(NULL, TFREC_E_STATE, "export stopped after %llu rows",
                                  (unsigned long long)e->st.rows);
        }
    }
    if (rc < 0)
        return tfrec_fail(NULL, rc, "%s", tfrec_bt_reader_errmsg(rd));
    return TFREC_OK;
}

/* Commit every output (status 0) or discard them all. */
static int close_outputs(export_run *e, int status)
{
    for (size_t i = 0; e->w && i < e->nout; i++) {
        if (e->w[i]) {
            if (status)
                tfrec_writer_abort(e->w[i]);
            else {
                int rc = tfrec_writer_close(e->w[i]);
                if (rc)
                    status = tfrec_fail(NULL, rc, "%s", tfrec_writer_errmsg(e->w[i]));
                else
                    e->st.outputs++;
            }
            tfrec_writer_free(e->w[i]);
            e->w[i] = NULL;
        } else if (e->sinks && e->sinks[i].opened && !e->sinks[i].closed) {
            e->sinks[i].inner.close(e->sinks[i].inner.ctx, 0);
        }
    }
    if (e->have_keys) {
        int rc = status ? TFREC_OK : keys_flush(e);
        int crc = e->keys.close(e->keys.ctx, !status && !rc);
        if (!status)
            status = rc ? rc : crc;
    }
    return status;
}

static int basename_dup(const char *name, char **out)
{
    const char *b = strrchr(name, '/');
    *out = strdup(b ? b + 1 : name);
    return *out ? TFREC_OK : TFREC_E_NOMEM;
}

static int copy_key(bt_key *d, const bt_key *s)
{
    *d = (bt_key){ 0 };
    if (!s || !s->n)
        return TFREC_OK;
    if (!(d->p = malloc(s->n)))
        return TFREC_E_NOMEM;
    memcpy(d->p, s->p, s->n);
    d->n = s->n;
    return TFREC_OK;
}

static int write_part(export_run *e, const tfrec_bt_reader *rd)
{
    const tfrec_bt_plan *pl = rd->plan;
    if (!pl)
        return TFREC_OK; /* a key list: no share bounds to record */
    bt_part p = { 0 };
    int rc = TFREC_OK;
    p.table = pl->table;
    p.plan_id = pl->id;
    p.set = pl->set;
    p.shards = pl->shards;
    p.task = rd->shard;
    if (copy_key(&p.lo, rd->shard ? &pl->cuts[rd->shard - 1] : NULL) ||
        copy_key(&p.hi, rd->shard + 1 < pl->shards ? &pl->cuts[rd->shard] : NULL))
        rc = TFREC_E_NOMEM;
    p.rows = e->st.rows;
    p.bytes = e->st.bytes;
    p.skipped = e->st.rows_skipped;
    p.nout = e->nout;
    p.out = calloc(e->nout, sizeof *p.out);
    if (!p.out)
        rc = TFREC_E_NOMEM;
    for (size_t i = 0; !rc && i < e->nout; i++) {
        rc = basename_dup(e->names[i], &p.out[i].name);
        p.out[i].size = e->sinks[i].size;
        p.out[i].crc = e->sinks[i].crc;
        p.out[i].records = e->records[i];
    }
    bt_text t = { 0 };
    if (!rc) {
        tfrec_bt_part_print(&p, &t);
        if (t.failed)
            rc = TFREC_E_NOMEM;
    }
    char name[MAX_NAME];
    if (!rc && tfrec_bt_export_part_name(name, sizeof name, e->output, e->ro.shard_index,
                                         e->ro.num_shards) >= sizeof name)
        rc = tfrec_fail(NULL, TFREC_E_INVALID, "output name too long");
    else if (!rc) {
        tfrec_io io = TFREC_IO_INIT;
        rc = open_sink(e, &io, name);
        if (!rc) {
            rc = io.write(io.ctx, t.p, t.n);
            if (rc)
                tfrec_fail(NULL, rc, "%s: %s", name,
                           io.errmsg ? io.errmsg(io.ctx) : "write failed");
            int crc = io.close(io.ctx, rc == TFREC_OK);
            rc = rc ? rc : crc;
        }
    } else
        tfrec_fail(NULL, rc, "out of memory writing the part file");
    tfrec_bt_text_free(&t);
    for (size_t i = 0; p.out && i < p.nout; i++)
        free(p.out[i].name);
    free(p.out);
    free(p.lo.p);
    free(p.hi.p);
    return rc;
}

int tfrec_bt_export(tfrec_bt_client *c, const char *table, const char *output,
                    const tfrec_bt_read_options *read, const tfrec_bt_export_options *opts,
                    tfrec_bt_export_stats *stats)
{
    export_run e = { 0 };
    e.t0 = now_s();
    tfrec_bt_export_stats_init(&e.st);
    int rc = TFREC_STRUCT_IN(tfrec_bt_export_options, &e.o, opts, NULL);
    if (!rc)
        rc = TFREC_STRUCT_IN(tfrec_bt_read_options, &e.ro, read, NULL);
    if (!rc && (!c || !table || !*table || !output || !*output))
        rc = tfrec_fail(NULL, TFREC_E_INVALID,
                        "tfrec_bt_export needs a client, a table and an "
                        "output name");
    if (!rc && e.o.missing_cell != TFREC_BT_MISSING_CELL_ERROR &&
        e.o.missing_cell != TFREC_BT_MISSING_CELL_SKIP)
        rc = tfrec_fail(NULL, TFREC_E_INVALID, "missing_cell %d: not a policy", e.o.missing_cell);
    if (!rc && e.o.output_shards && !strcmp(output, "-"))
        rc = tfrec_fail(NULL, TFREC_E_INVALID, "output_shards needs a file name, not -");
    if (!rc && strlen(output) > MAX_NAME - 64)
        rc = tfrec_fail(NULL, TFREC_E_INVALID, "output name too long");
    e.output = output;
    if (!e.o.family)
        e.o.family = "tfexample";
    if (!e.o.column)
        e.o.column = "example";
    e.ro.family = e.o.family;
    e.ro.column = e.o.column;
    e.ro.all_versions = 0;
    e.ro.unordered = e.o.output_shards; /* each file is still in key order */
    tfrec_bt_reader *rd = NULL;
    /* the reader first: a refused plan or sharding costs no output file */
    if (!rc)
        rc = tfrec_bt_reader_open_flags(&rd, c, table, &e.ro, BT_READ_ROWS_WITHOUT_COLUMN);
    if (!rc)
        rc = open_outputs(&e);
    if (!rc && e.o.on_reader)
        e.o.on_reader(e.o.reader_ctx, rd);
    if (!rc)
        rc = copy_rows(&e, rd);
    if (rd && e.o.on_reader)
        e.o.on_reader(e.o.reader_ctx, NULL);
    rc = close_outputs(&e, rc);
    if (!rc && strcmp(output, "-") != 0 && !e.o.no_part_file)
        rc = write_part(&e, rd);
    char msg[TFREC_ERRMSG_MAX];
    snprintf(msg, sizeof msg, "%s", tfrec_last_errmsg());
    if (rd) {
        e.st.ranges = rd->st.ranges;
        e.st.samples = rd->st.samples;
        e.st.streams = rd->st.streams;
        e.st.resumed = rd->st.resumed;
    }
    tfrec_bt_reader_free(rd);
    for (size_t i = 0; e.names && i < e.nout; i++)
        free(e.names[i]);
    free(e.names);
    free(e.w);
    free(e.sinks);
    free(e.records);
    free(e.kbuf);
    e.st.seconds = now_s() - e.t0;
    if (stats)
        TFREC_STRUCT_OUT(tfrec_bt_export_stats, stats, &e.st, NULL);
    if (rc)
        tfrec_fail(NULL, rc, "%s", msg);
    return rc;
}

/* tfrec_bt_export_check: the part files of an export's tasks tile the row
 * set and their outputs are intact, or the task to run again is named. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bigtable/bt_files.h"
#include "bigtable/export_part.h"
#include "bigtable/plan_internal.h"
#include "tfrec/bigtable_export.h"
#include "tfrec/crc32c.h"
#include "util/struct_size.h"

TFREC_DEFINE_STRUCT_INIT(tfrec_bt_export_check_result)

typedef struct check {
    bt_part *parts;
    char **names;
    size_t n;
    bt_part **by_task; /* shards entries */
    size_t shards;
    const bt_part *ref; /* table, row set, shard count every part must have */
    uint32_t plan_id;
    bt_text report;
    const tfrec_fs *fs;
    uint64_t problems;
    char first[TFREC_ERRMSG_MAX];
} check;

static void problem(check *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(check *k, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (!k->problems++)
        snprintf(k->first, sizeof k->first, "%.500s", line);
    tfrec_bt_text_printf(&k->report, "%s\n", line);
}

static int kcmp(const bt_key *a, const bt_key *b)
{
    return tfrec_bt_key_cmp(a->p, a->n, b->p, b->n);
}

/* The plan id most parts ran (the given plan's when there is one). */
static uint32_t majority_id(const check *k)
{
    uint32_t best = k->parts[0].plan_id;
    size_t best_n = 0;
    for (size_t i = 0; i < k->n; i++) {
        size_t c = 0;
        for (size_t j = 0; j < k->n; j++)
            c += k->parts[j].plan_id == k->parts[i].plan_id;
        if (c > best_n) {
            best_n = c;
            best = k->parts[i].plan_id;
        }
    }
    return best;
}

static void check_tasks(check *k)
{
    for (size_t i = 0; i < k->n; i++) {
        bt_part *p = &k->parts[i];
        if (strcmp(p->table, k->ref->table) != 0 || p->shards != k->shards ||
            !tfrec_bt_rowset_equal(&p->set, &k->ref->set)) {
            problem(k,
                    "task %zu of %zu (%s): made for table %s, %zu shards and another row set "
                    "than the others (%s, %zu shards): it belongs to another export; remove "
                    "it or run task %zu again",
                    p->task, p->shards, k->names[i], p->table, p->shards, k->ref->table, k->shards,
                    p->task);
            continue;
        }
        if (k->by_task[p->task]) {
            problem(k,
                    "task %zu of %zu: two part files (%s and another): remove the stale one "
                    "and run task %zu again",
                    p->task, k->shards, k->names[i], p->task);
            continue;
        }
        k->by_task[p->task] = p;
        if (p->plan_id != k->plan_id)
            problem(k,
                    "task %zu of %zu ran split plan %08x, the export's plan is %08x: run "
                    "task %zu again with the shared plan",
                    p->task, k->shards, (unsigned)p->plan_id, (unsigned)k->plan_id, p->task);
    }
    for (size_t t = 0; t < k->shards; t++)
        if (!k->by_task[t])
            problem(k, "task %zu of %zu: no part file (it did not finish): run task %zu", t,
                    k->shards, t);
}

/* Which of two neighbours to run again: one that ran another plan, else the later. */
static size_t culprit(const check *k, const bt_part *a, const bt_part *b)
{
    if (a->plan_id != k->plan_id)
        return a->task;
    return b->task;
}

static void check_tiling(check *k)
{
    char s1[120], s2[120];
    const bt_part *first = k->by_task[0], *last = k->by_task[k->shards - 1];
    if (first && first->lo.n)
        problem(k,
                "task 0 of %zu: its share starts at %s, not at the start of the rows: rows "
                "before it are in no share; run task 0 again with the shared plan",
                k->shards, tfrec_bt_key_show(first->lo.p, first->lo.n, "", s1, sizeof s1));
    if (last && last->hi.n)
        problem(k,
                "task %zu of %zu: its share ends at %s, not at the end of the rows: rows "
                "after it are in no share; run task %zu again with the shared plan",
                k->shards - 1, k->shards,
                tfrec_bt_key_show(last->hi.p, last->hi.n, "", s1, sizeof s1), k->shards - 1);
    for (size_t t = 0; t < k->shards; t++) {
        const bt_part *a = k->by_task[t];
        if (!a)
            continue;
        if (a->hi.n && kcmp(&a->lo, &a->hi) > 0)
            problem(k,
                    "task %zu of %zu: its share ends (%s) before it starts (%s): run task %zu "
                    "again with the shared plan",
                    t, k->shards, tfrec_bt_key_show(a->hi.p, a->hi.n, "", s1, sizeof s1),
                    tfrec_bt_key_show(a->lo.p, a->lo.n, "", s2, sizeof s2), t);
        const bt_part *b = t + 1 < k->shards ? k->by_task[t + 1] : NULL;
        if (!b)
            continue;
        int c = !a->hi.n ? 1 : kcmp(&a->hi, &b->lo); /* open end: past every start */
        if (c < 0)
            problem(k,
                    "tasks %zu and %zu of %zu: gap: rows in [%s, %s) are in neither share: "
                    "run task %zu again with the shared plan",
                    t, t + 1, k->shards, tfrec_bt_key_show(a->hi.p, a->hi.n, "", s1, sizeof s1),
                    tfrec_bt_key_show(b->lo.p, b->lo.n, "", s2, sizeof s2), culprit(k, a, b));
        else if (c > 0)
            problem(k,
                    "tasks %zu and %zu of %zu: overlap: rows in [%s, %s) are in both shares: "
                    "run task %zu again with the shared plan",
                    t, t + 1, k->shards, tfrec_bt_key_show(b->lo.p, b->lo.n, "", s1, sizeof s1),
                    tfrec_bt_key_show(a->hi.p, a->hi.n, "end of table", s2, sizeof s2),
                    culprit(k, a, b));
    }
}

/* Size and CRC32C of a whole file; TFREC_E_NOT_FOUND-ish failures as < 0. */
static int measure(const tfrec_fs *fs, const char *name, uint64_t *size, uint32_t *crc)
{
    tfrec_io io = TFREC_IO_INIT;
    int rc = tfrec_fs_open_source(fs, name, &io);
    if (rc)
        return rc;
    static __thread char buf[1 << 16];
    *size = 0;
    *crc = 0;
    ptrdiff_t got;
    while ((got = io.read(io.ctx, buf, sizeof buf)) > 0) {
        *crc = tfrec_crc32c_extend(*crc, buf, (size_t)got);
        *size += (uint64_t)got;
    }
    io.close(io.ctx, 0);
    return got < 0 ? (int)got : TFREC_OK;
}

static void check_outputs(check *k, tfrec_bt_export_check_result *res)
{
    for (size_t i = 0; i < k->n; i++) {
        const bt_part *p = &k->parts[i];
        const char *slash = strrchr(k->names[i], '/');
        int dirlen = slash ? (int)(slash - k->names[i]) + 1 : 0;
        for (size_t j = 0; j < p->nout; j++) {
            const bt_part_output *o = &p->out[j];
            size_t len = (size_t)dirlen + strlen(o->name) + 1;
            char *path = malloc(len);
            if (!path) {
                problem(k, "out of memory");
                return;
            }
            snprintf(path, len, "%.*s%s", dirlen, k->names[i], o->name);
            uint64_t size;
            uint32_t crc;
            res->outputs++;
            if (measure(k->fs, path, &size, &crc))
                problem(k, "task %zu of %zu: output %s cannot be read (%s): run task %zu again",
                        p->task, p->shards, path, tfrec_last_errmsg(), p->task);
            else if (size != o->size || crc != o->crc)
                problem(k,
                        "task %zu of %zu: output %s has %llu bytes with CRC32C %08x, its part "
                        "file says %llu bytes with %08x (rewritten or damaged): run task %zu "
                        "again",
                        p->task, p->shards, path, (unsigned long long)size, (unsigned)crc,
                        (unsigned long long)o->size, (unsigned)o->crc, p->task);
            free(path);
        }
    }
}

void tfrec_bt_free(void *p)
{
    free(p);
}

int tfrec_bt_export_check(const tfrec_fs *fs, const char *const *parts, size_t n,
                          const tfrec_bt_plan *plan, tfrec_bt_export_check_result *result)
{
    tfrec_bt_export_check_result res;
    tfrec_bt_export_check_result_init(&res);
    int rc = result ? TFREC_STRUCT_CHECK_OUT(tfrec_bt_export_check_result, result, NULL) : TFREC_OK;
    if (rc)
        return rc;
    if (!parts || !n)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_bt_export_check: no part files");
    check k = { 0 };
    k.parts = calloc(n, sizeof *k.parts);
    k.names = (char **)parts;
    k.fs = fs;
    if (!k.parts)
        return tfrec_fail(NULL, TFREC_E_NOMEM, "out of memory");
    for (size_t i = 0; i < n && !rc; i++) {
        char *text;
        size_t len;
        char why[300];
        rc = tfrec_fs_read_all(fs, parts[i], BT_PART_MAX_TEXT, &text, &len);
        if (!rc) {
            rc = tfrec_bt_part_parse(&k.parts[i], text, len, why, sizeof why);
            free(text);
            if (rc)
                tfrec_fail(NULL, rc,
                           "%s: not a valid part file: %s (run the task that wrote it "
                           "again)",
                           parts[i], why);
        }
        if (!rc)
            k.n++;
    }
    if (!rc) {
        bt_part ref = { 0 };
        if (plan) {
            ref.table = plan->table;
            ref.set = plan->set;
            ref.shards = plan->shards;
            k.ref = &ref;
            k.plan_id = plan->id;
        } else {
            k.ref = &k.parts[0];
            k.plan_id = majority_id(&k);
        }
        k.shards = k.ref->shards;
        k.by_task = calloc(k.shards, sizeof *k.by_task);
        if (!k.by_task)
            rc = tfrec_fail(NULL, TFREC_E_NOMEM, "out of memory");
        else {
            check_tasks(&k);
            check_tiling(&k);
            check_outputs(&k, &res);
        }
        for (size_t i = 0; i < k.n; i++) {
            res.rows += k.parts[i].rows;
            res.bytes += k.parts[i].bytes;
        }
        res.tasks = k.n;
        res.problems = k.problems;
        if (!rc && k.problems) {
            rc = tfrec_fail(NULL, TFREC_E_STATE, "%s%s", k.first,
                            k.problems > 1 ? " (and more: see the report)" : "");
            if (!k.report.failed)
                res.report = k.report.p;
            k.report.p = NULL;
        }
    }
    tfrec_bt_text_free(&k.report);
    for (size_t i = 0; i < k.n; i++)
        tfrec_bt_part_free(&k.parts[i]);
    free(k.parts);
    free(k.by_task);
    if (result)
        TFREC_STRUCT_OUT(tfrec_bt_export_check_result, result, &res, NULL);
    else
        free(res.report);
    return rc;
}

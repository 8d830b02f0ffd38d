/* DS_MAPPED: block-shuffled local files of small records, read by the
 * consumer in place from each file's mapping in the delivery order, with
 * no threads and no copies (dataset.c picks the mode at open). */
#include "dataset/dataset_internal.h"
#include "dataset/plan.h"

/* DS_MAPPED: records this far ahead in the delivery order are fetched
 * into the cache while the consumer works on the current one. Each record
 * lies at an unpredictable place, and without this its first bytes wait
 * for memory, most of a small record's time (bench/RESULTS.md, "Local
 * shuffled reads"). */
/* The consumer keeps up to MAPPED_OPEN files open (a descriptor and a
 * mapping each): the records of the buffer's window come from the many
 * files its blocks were drawn from, and reopening one per record would
 * cost far more than the record. */
enum { MAPPED_AHEAD = 8, MAPPED_OPEN = 256 };

static void prefetch_mapped(const tfrec_dataset *ds, uint64_t g)
{
    size_t f = tfrec_ds_file_of(ds->cum, ds->nfiles, g);
    if (ds->mapped_r[f])
        tfrec_random_reader_prefetch(ds->mapped_r[f], g - ds->cum[f]);
}

static int mapped_reader(tfrec_dataset *ds, size_t f, tfrec_random_reader **out)
{
    ds->mapped_used[f] = ++ds->mapped_clock;
    if ((*out = ds->mapped_r[f]))
        return TFREC_OK;
    if (ds->mapped_open >= MAPPED_OPEN) { /* close the least recently used */
        size_t old = ds->nfiles;
        for (size_t i = 0; i < ds->nfiles; i++)
            if (ds->mapped_r[i] && (old == ds->nfiles || ds->mapped_used[i] < ds->mapped_used[old]))
                old = i;
        tfrec_random_reader_free(ds->mapped_r[old]);
        ds->mapped_r[old] = NULL;
        ds->mapped_open--;
    }
    int rc = tfrec_random_reader_open_fs_shared(&ds->mapped_r[f], ds->fs, ds->names[f], ds->ix[f],
                                                NULL, ds->o.use_mmap);
    if (rc < 0)
        return ds->sticky = tfrec_fail(&ds->err, rc, "%s", tfrec_last_errmsg());
    ds->mapped_open++;
    *out = ds->mapped_r[f];
    return TFREC_OK;
}

/* DS_MAPPED: the next record of the delivery order, in place. */
int tfrec_ds_next_mapped(tfrec_dataset *ds, const uint8_t **data, size_t *len, uint64_t *global)
{
    if (ds->mapped_pos >= ds->nitems)
        return TFREC_END;
    uint64_t g = ds->items[ds->mapped_pos];
    size_t f = tfrec_ds_file_of(ds->cum, ds->nfiles, g);
    uint64_t k = g - ds->cum[f];
    if (ds->mapped_pos + MAPPED_AHEAD < ds->nitems)
        prefetch_mapped(ds, ds->items[ds->mapped_pos + MAPPED_AHEAD]);
    tfrec_random_reader *r;
    const uint8_t *where;
    int rc = mapped_reader(ds, f, &r);
    if (rc < 0)
        return rc;
    if ((rc = tfrec_random_reader_span(r, k, 1, NULL, &where)) < 0)
        return ds->sticky = tfrec_fail(&ds->err, rc, "%s", tfrec_random_reader_errmsg(r));
    ds->mapped_pos++;
    *data = where + 12;
    *len = (size_t)(ds->ix[f]->start[k + 1] - ds->ix[f]->start[k] - 16);
    *global = g;
    return TFREC_OK;
}

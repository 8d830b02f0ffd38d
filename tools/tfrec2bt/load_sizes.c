/* What tfrec2bt works out before loading: the batch size a throttle
 * allows, and how many rows the load has when the indexes say. */
#include <string.h>

#include "tfrec/tfrec.h"
#include "tfrec2bt.h"

#define WRITER_BATCH_ROWS 5000 /* the writer's default (include/tfrec/bigtable.h) */

size_t t2b_batch_rows(const t2b_flags *f)
{
    size_t rows = f->batch_rows ? (size_t)f->batch_rows : WRITER_BATCH_ROWS;
    if (f->max_rows_per_sec > 0) {
        double per_second = f->max_rows_per_sec < 1 ? 1 : f->max_rows_per_sec;
        if ((double)rows > per_second)
            rows = (size_t)per_second;
    }
    return rows;
}

uint64_t t2b_total_from_indexes(const t2b_flags *f, const cli_files *files)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < files->n; i++) {
        if (!strcmp(files->paths[i], "-"))
            return 0;
        tfrec_index *ix;
        if (tfrec_index_load_fresh(&ix, files->paths[i]) != TFREC_OK)
            return 0; /* no index, a stale or bad one: the load says so if it matters */
        sum += tfrec_index_records(ix);
        tfrec_index_free(ix);
    }
    return sum > f->start_index ? sum - f->start_index : 0;
}

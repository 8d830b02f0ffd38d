/* Many records per call, for callers whose per-call overhead is high. */
#include "tfrec/batch.h"

#include <stdlib.h>
#include <string.h>

#include "record/writer_internal.h"
#include "util/errors.h"
#include "util/vec.h"

struct tfrec_record_batch {
    uint8_t *data;
    size_t data_len, data_cap;
    uint64_t *ends;
    uint64_t *offsets;
    size_t count, index_cap;
};

/* Both stop at the first record that fails; the writer's record count
 * (tfrec_writer_records) then tells how many of the batch went in. */
int tfrec_writer_write_batch(tfrec_writer *w, const void *data, const uint64_t *ends, size_t n)
{
    if (!w)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_writer_write_batch: NULL writer");
    if (n && (!data || !ends))
        return tfrec_writer_refuse(w, "write_batch: NULL data or ends for %zu records", n);
    const uint8_t *bytes = data;
    uint64_t start = 0;
    for (size_t i = 0; i < n; i++) {
        if (ends[i] < start)
            return tfrec_writer_refuse(w,
                                       "write_batch: record %zu of %zu ends at %llu, before its "
                                       "start %llu (the records before it were written)",
                                       i, n, (unsigned long long)ends[i],
                                       (unsigned long long)start);
        int rc = tfrec_writer_write(w, bytes + start, (size_t)(ends[i] - start));
        if (rc < 0)
            return rc;
        start = ends[i];
    }
    return TFREC_OK;
}

int tfrec_writer_write_vec(tfrec_writer *w, const void *const *ptrs, const size_t *lens, size_t n)
{
    if (!w)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_writer_write_vec: NULL writer");
    if (n && (!ptrs || !lens))
        return tfrec_writer_refuse(w, "write_vec: NULL ptrs or lens for %zu records", n);
    for (size_t i = 0; i < n; i++) {
        if (!ptrs[i] && lens[i])
            return tfrec_writer_refuse(w,
                                       "write_vec: record %zu of %zu is NULL with length %zu "
                                       "(the records before it were written)",
                                       i, n, lens[i]);
        int rc = tfrec_writer_write(w, ptrs[i], lens[i]);
        if (rc < 0)
            return rc;
    }
    return TFREC_OK;
}

int tfrec_record_batch_new(tfrec_record_batch **out)
{
    if (!out)
        return tfrec_fail(NULL, TFREC_E_INVALID, "record_batch_new: NULL argument");
    *out = calloc(1, sizeof **out);
    if (!*out)
        return tfrec_fail(NULL, TFREC_E_NOMEM, "record_batch_new: out of memory");
    return TFREC_OK;
}

void tfrec_record_batch_free(tfrec_record_batch *b)
{
    if (!b)
        return;
    free(b->data);
    free(b->ends);
    free(b->offsets);
    free(b);
}

/* Room for one more item of len bytes (geometric growth keeps appends
 * cheap). Returns TFREC_OK or TFREC_E_NOMEM, leaving the batch unchanged. */
static int batch_reserve(tfrec_record_batch *b, size_t len)
{
    /* ends and offsets are parallel arrays with one capacity. */
    size_t ends_cap = b->index_cap, offsets_cap = b->index_cap;
    int rc = tfrec_vec_reserve(&b->ends, &ends_cap, b->count + 1, 256);
    if (!rc)
        rc = tfrec_vec_reserve(&b->offsets, &offsets_cap, b->count + 1, 256);
    b->index_cap = ends_cap < offsets_cap ? ends_cap : offsets_cap;
    if (rc)
        return rc;
    if (len > SIZE_MAX / 2 - b->data_len)
        return TFREC_E_NOMEM;
    return tfrec_vec_reserve(&b->data, &b->data_cap, b->data_len + len, 64 * 1024);
}

void tfrec_record_batch_clear(tfrec_record_batch *b)
{
    if (b) {
        b->count = 0;
        b->data_len = 0;
    }
}

int tfrec_record_batch_append(tfrec_record_batch *b, const void *data, size_t len, uint64_t offset)
{
    if (!b || (!data && len))
        return tfrec_fail(NULL, TFREC_E_INVALID, "record_batch_append: NULL argument");
    if (batch_reserve(b, len))
        return tfrec_fail(NULL, TFREC_E_NOMEM, "record_batch_append: out of memory");
    if (len)
        memcpy(b->data + b->data_len, data, len);
    b->data_len += len;
    b->ends[b->count] = b->data_len;
    b->offsets[b->count] = offset;
    b->count++;
    return TFREC_OK;
}

int tfrec_reader_read_batch(tfrec_reader *r, tfrec_record_batch *b, size_t max_records,
                            size_t max_bytes)
{
    if (!r || !b)
        return tfrec_fail(NULL, TFREC_E_INVALID, "read_batch: NULL argument");
    tfrec_record_batch_clear(b);
    while ((max_records == 0 || b->count < max_records) &&
           (max_bytes == 0 || b->data_len < max_bytes)) {
        const uint8_t *rec;
        size_t len;
        int rc = tfrec_reader_next(r, &rec, &len);
        if (rc != TFREC_OK) /* hand over what we have; the reader repeats a failure */
            return b->count > 0 ? TFREC_OK : rc;
        if (tfrec_record_batch_append(b, rec, len, tfrec_reader_offset(r)) < 0) {
            tfrec_record_batch_clear(b);
            return tfrec_fail(NULL, TFREC_E_NOMEM, "read_batch: out of memory for %zu bytes", len);
        }
    }
    return TFREC_OK;
}

int tfrec_reader_skip(tfrec_reader *r, uint64_t n, uint64_t *skipped)
{
    uint64_t done = 0;
    int rc = TFREC_OK;
    if (!r)
        rc = tfrec_fail(NULL, TFREC_E_INVALID, "reader_skip: NULL reader");
    while (rc == TFREC_OK && (n == 0 || done < n)) {
        const uint8_t *rec;
        size_t len;
        rc = tfrec_reader_next(r, &rec, &len);
        if (rc == TFREC_OK)
            done++;
    }
    if (skipped)
        *skipped = done;
    return rc;
}

size_t tfrec_record_batch_count(const tfrec_record_batch *b)
{
    return b ? b->count : 0;
}

const uint8_t *tfrec_record_batch_data(const tfrec_record_batch *b)
{
    return b ? b->data : NULL;
}

const uint64_t *tfrec_record_batch_ends(const tfrec_record_batch *b)
{
    return b ? b->ends : NULL;
}

const uint64_t *tfrec_record_batch_offsets(const tfrec_record_batch *b)
{
    return b ? b->offsets : NULL;
}

/* Internal: the in-memory index and the pieces of dataset/ that share it. */
#ifndef TFREC_DATASET_INDEX_INTERNAL_H
#define TFREC_DATASET_INDEX_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "tfrec/dataset.h"
#include "tfrec/fs.h"
#include "util/errors.h"

/* Records tile the file (each starts where the previous one ends), so one
 * offset per record plus the end is the whole index: 8 bytes a record. */
struct tfrec_index {
    uint64_t *start; /* start[0..n] ascending; record k is [start[k], start[k+1]) */
    size_t n, cap;   /* records; capacity of start in elements */
};

/* Append a record [offset, offset + length); it must start where the
 * previous one ended (0 for the first). name and line are for messages. */
int tfrec_index_push(tfrec_index *ix, uint64_t offset, uint64_t length, const char *name,
                     uint64_t line, tfrec_err *err);
tfrec_index *tfrec_index_new_empty(void);

/* Read framed bytes [offset, offset + n) through src exactly: a seek and
 * reads until n bytes arrived. A source that ends early is
 * TFREC_E_TRUNCATED naming the file. */
int tfrec_io_pread_exact(const tfrec_io *src, uint64_t offset, void *buf, size_t n,
                         const char *name, tfrec_err *err);

/* Check the framed record at p (framed length n, at file offset for
 * messages): header CRC, length field == n - 16, data CRC. */
int tfrec_frame_check(const uint8_t *p, uint64_t n, uint64_t offset, const char *name,
                      tfrec_err *err);

/* What a scan keeps of the bytes it reads: grant(ctx, n) returns 0 when
 * n more bytes may be held (and counts them), release(ctx, n) gives them
 * back. After a scan that kept the whole file, bytes holds its records'
 * bytes [0, size) in a buffer of cap bytes (util/big_buffer.h; the
 * caller's to free, with cap still granted); else NULL, with nothing
 * granted. */
typedef struct tfrec_scan_keep {
    int (*grant)(void *ctx, uint64_t n);
    void (*release)(void *ctx, uint64_t n);
    void *ctx;
    uint8_t *bytes;
    uint64_t size, cap;
} tfrec_scan_keep;

/* Open a local file's index if fresh (tfrec_index_load_fresh), else build
 * it by reading the file, unless policy says otherwise. keep (if not
 * NULL) asks a scan to keep the file's bytes. */
int tfrec_index_for_source(tfrec_index **out, const char *name, int policy, const tfrec_fs *fs,
                           uint64_t max_record, tfrec_scan_keep *keep, tfrec_err *err);
/* The fresh index of path through fs (NULL: the default). */
int tfrec_index_fresh_fs(const tfrec_fs *fs, tfrec_index **out, const char *path);

#endif

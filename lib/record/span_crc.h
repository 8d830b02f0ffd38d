/* Internal: CRC32Cs of stretches of the reader's buffer at a cost that does
 * not grow with their length.
 *
 * Resynchronising tries a record at every byte offset, and each candidate
 * whose header is valid needs the CRC of the data its length field claims.
 * Computed directly, a stream of headers that each claim megabytes costs
 * the claimed length at every one of them: quadratic. Here running CRCs are
 * kept at every SPAN_STEP-th stream offset (checkpoints, extended only
 * forward, so each byte is CRC'd once), and the CRC of any stretch comes
 * from two of them, fewer than 2 * SPAN_STEP bytes at its ends and one
 * tfrec_crc32c_shift(). The checkpoints take 4 bytes per SPAN_STEP bytes of
 * the buffer. */
#ifndef TFREC_RECORD_SPAN_CRC_H
#define TFREC_RECORD_SPAN_CRC_H

#include <stddef.h>
#include <stdint.h>

typedef struct span_crc {
    uint64_t base; /* stream offset of ck[0] */
    uint32_t *ck;  /* ck[k]: CRC of the stream from a fixed origin to base + k * SPAN_STEP */
    size_t n, cap; /* entries in use; allocated */
} span_crc;

/* The window: win[0 .. win_len) holds the stream bytes from offset win_pos.
 * Returns the CRC32C of the len bytes at stream offset at, which must lie
 * inside the window; calls with increasing `at` (as resynchronising makes)
 * reuse the checkpoints. Adds the bytes CRC'd to *work. */
uint32_t tfrec_span_crc(span_crc *s, const uint8_t *win, uint64_t win_pos, size_t win_len,
                        uint64_t at, uint64_t len, uint64_t *work);

/* Forget the checkpoints (the stream bytes behind them may change, e.g.
 * after a seek), keeping the memory. */
void tfrec_span_crc_reset(span_crc *s);
void tfrec_span_crc_free(span_crc *s);

#endif

/* Internal: the CRC32C of a concatenation from the CRCs of its parts.
 *
 * For the tfrec_crc32c() values of any byte strings A and B,
 *   CRC(A || B) == tfrec_crc32c_shift(CRC(A), |B|) ^ CRC(B)
 * (the initial and final complements cancel out). So the CRC of any stretch
 * of a stream follows from two running CRCs, at a cost independent of the
 * stretch's length: record/span_crc.c resynchronises in linear time with
 * it. */
#ifndef TFREC_CRC32C_SHIFT_H
#define TFREC_CRC32C_SHIFT_H

#include <stdint.h>

/* crc times x^(8 len) mod P: one multiply per nonzero byte of len.
 * Thread-safe. */
uint32_t tfrec_crc32c_shift(uint32_t crc, uint64_t len);

#endif

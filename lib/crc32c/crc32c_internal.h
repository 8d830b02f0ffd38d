/* Internal to lib/crc32c: the implementations, their shared tables, and the
 * GF(2) arithmetic the tables are generated with.
 *
 * The entry points below take and return the public CRC value, so that
 * tfrec_crc32c_extend() is a bare tail call; inside, they work on the raw
 * register, its complement (CRC32C starts from all ones and ends with a
 * final complement). */
#ifndef TFREC_CRC32C_INTERNAL_H
#define TFREC_CRC32C_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* Internal symbols carry the tfrec_ prefix (no clash for static-library
 * users) but stay out of the shared library's export list. */
#define TFREC_CRC_HIDDEN __attribute__((visibility("hidden")))

/* The Castagnoli polynomial 0x1EDC6F41 with its bits reversed: bit i of a
 * "reflected" 32-bit value is the coefficient of x^(31-i). */
#define TFREC_CRC32C_POLY_REFLECTED 0x82F63B78u

typedef uint32_t (*tfrec_crc32c_fn)(uint32_t crc, const uint8_t *p, size_t n);

/* Per-stream block of the three-stream crc32 loop, and the longest shift
 * the shift table covers (in 8-byte words). */
#define TFREC_CRC32C_BLOCK 1024
#define TFREC_CRC32C_SHIFT_WORDS (2 * TFREC_CRC32C_BLOCK / 8)

/* Fold constants for distances of 128..TFREC_CRC32C_FOLD_MAX*128 bits. */
#define TFREC_CRC32C_FOLD_MAX 16

/* The AVX-512 path's hybrid chunks: ROUNDS rounds, each folding 256 bytes
 * with VPCLMULQDQ while the crc32 unit takes WORDS 8-byte words in each of
 * three streams, so both units work at once. Layout: [fold: 256*ROUNDS
 * bytes][stream 0][stream 1][stream 2], each stream 8*WORDS*ROUNDS bytes.
 * WORDS=2 and ROUNDS=16 measured best (bench/RESULTS.md, "CRC32C: folding
 * thresholds, hybrid chunks and prefetch"). */
#define TFREC_CRC32C_HYB_ROUNDS 16
#define TFREC_CRC32C_HYB_FOLD (256 * TFREC_CRC32C_HYB_ROUNDS)
#define TFREC_CRC32C_HYB_WORDS 2
#define TFREC_CRC32C_HYB_STREAM (8 * TFREC_CRC32C_HYB_WORDS * TFREC_CRC32C_HYB_ROUNDS)
#define TFREC_CRC32C_HYB_CHUNK (TFREC_CRC32C_HYB_FOLD + 3 * TFREC_CRC32C_HYB_STREAM)

typedef struct tfrec_crc32c_tables {
    /* Slicing-by-8: slice[k][b] is the register after byte b followed by
     * k zero bytes. */
    uint32_t slice[8][256];
    /* shift[m] = x^(64m-33) mod P: carry-less multiplying a register by it
     * and reducing the 64-bit product with the crc32 instruction advances
     * the register over 8m zero bytes (the -33 cancels the factor x^32 the
     * instruction applies and the x^1 a reflected product carries). */
    uint32_t shift[TFREC_CRC32C_SHIFT_WORDS + 1];
    /* fold[j] = { x^(128j+31) mod P, x^(128j-33) mod P } as 64-bit lanes:
     * multiplies the low and high halves of a 128-bit reflected chunk so
     * that the sum is congruent to the chunk times x^(128j). */
    uint64_t fold[TFREC_CRC32C_FOLD_MAX + 1][2] __attribute__((aligned(16)));
    /* The same constants in reverse, lane t holding fold[15 - t], so that
     * sixteen consecutive 128-bit lanes (four 512-bit vectors) each move to
     * the position of the last one with one multiply; lane 15's zero
     * constant drops its products and it is added unchanged instead. */
    uint64_t to_last16[16][2] __attribute__((aligned(64)));
    /* Hybrid chunks: fold pair moving the folded part over the three
     * streams (distance 3*HYB_STREAM bytes), and the shift (as in shift[])
     * over a whole chunk for the incoming register. */
    uint64_t hyb_fold[2] __attribute__((aligned(16)));
    uint32_t hyb_shift_chunk;
} tfrec_crc32c_tables;

extern tfrec_crc32c_tables tfrec_crc32c_tab TFREC_CRC_HIDDEN;

/* Fill tfrec_crc32c_tab; called once by the dispatcher before any use. */
void tfrec_crc32c_tables_init(void) TFREC_CRC_HIDDEN;
/* x^n mod P, reflected. */
uint32_t tfrec_crc32c_xpow(uint64_t n) TFREC_CRC_HIDDEN;

uint32_t tfrec_crc32c_portable_extend(uint32_t crc, const uint8_t *p, size_t n) TFREC_CRC_HIDDEN;

#if defined(__x86_64__)
/* crc32 instruction, three streams, combined with PCLMULQDQ or (on CPUs
 * without it) a software carry-less multiply. */
uint32_t tfrec_crc32c_sse42_extend(uint32_t crc, const uint8_t *p, size_t n) TFREC_CRC_HIDDEN;
uint32_t tfrec_crc32c_sse42_soft_extend(uint32_t crc, const uint8_t *p, size_t n) TFREC_CRC_HIDDEN;
/* 128-bit PCLMULQDQ folding from 64 bytes, crc32 below. */
uint32_t tfrec_crc32c_clmul_extend(uint32_t crc, const uint8_t *p, size_t n) TFREC_CRC_HIDDEN;
/* 512-bit VPCLMULQDQ folding from 64 bytes, crc32 below: AUTO's choice. */
uint32_t tfrec_crc32c_avx512_extend(uint32_t crc, const uint8_t *p, size_t n) TFREC_CRC_HIDDEN;
#endif

#if defined(__aarch64__)
int tfrec_crc32c_arm64_supported(void) TFREC_CRC_HIDDEN;
uint32_t tfrec_crc32c_arm64_extend(uint32_t crc, const uint8_t *p, size_t n) TFREC_CRC_HIDDEN;
#endif

#endif

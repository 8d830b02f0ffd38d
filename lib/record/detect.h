/* Internal: guess a file's compression from its first bytes, and what a
 * file that is not TFRecord data holds instead. */
#ifndef TFREC_RECORD_DETECT_H
#define TFREC_RECORD_DETECT_H

#include <stddef.h>
#include <stdint.h>

/* Bytes detection wants to see (fewer only at the end of the file). */
enum { DETECT_BYTES = 12 };

/* In order: a 12-byte record header with a valid length CRC is NONE (so an
 * uncompressed file whose length bytes happen to look like a zlib header,
 * e.g. length 376 = 78 01 ..., stays NONE); then the gzip magic 1f 8b is
 * GZIP; then a valid zlib header (deflate, window <= 32 KiB, no preset
 * dictionary, header check multiple of 31) is ZLIB; anything else NONE,
 * which lets the reader report exactly what is wrong with it. */
int tfrec_detect_compression(const uint8_t *head, size_t len);

/* What a stream whose first record header is bad starts like, for the
 * message ("JSON", "a JPEG image", "text", ...), or NULL when it looks like
 * nothing in particular (a damaged record file, most likely). head holds
 * the first len bytes of the stream; a tar archive is recognised only from
 * 263 bytes on, the rest from the first DETECT_BYTES. */
const char *tfrec_detect_other_format(const uint8_t *head, size_t len);

#endif

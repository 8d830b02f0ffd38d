/* Internal: the small line format of split plans and export part files.
 *
 * A file is lines of space-separated words, the first line "MAGIC VERSION",
 * the last "crc32c XXXXXXXX": the CRC32C (lower-case hex) of every byte
 * before that line. Keys and names are words escaped so that any bytes fit:
 * bytes outside '!'..'~' and '%' itself are written %XX, and the empty
 * string is "-" (a lone '-' byte is %2D). Reading is bounded by the caller:
 * the whole text is in memory (its size checked first), every word is at
 * most the line, and nothing is allocated beyond a copy of the text. */
#ifndef TFREC_BT_PLAN_TEXT_H
#define TFREC_BT_PLAN_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "bigtable/rowset.h"
#include "util/vec.h"

/* A growing text buffer; failed is set on the first allocation failure. */
typedef struct bt_text {
    char *p;
    size_t n, cap;
    int failed;
} bt_text;

void tfrec_bt_text_printf(bt_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append bytes p[0..n) as one escaped word. */
void tfrec_bt_text_word(bt_text *t, const void *p, size_t n);
/* Append "crc32c XXXXXXXX\n" over everything so far. */
void tfrec_bt_text_seal(bt_text *t);
void tfrec_bt_text_free(bt_text *t);

/* A parse over a copy of the text, line by line. */
typedef struct bt_lines {
    char *buf;      /* the copy, NUL-separated as lines are taken */
    size_t len;     /* bytes covered by the checksum */
    size_t pos;     /* start of the next line */
    size_t lineno;  /* of the line last taken (1-based) */
    char *words[8]; /* the words of the line last taken */
    size_t nwords;
} bt_lines;

/* Check the magic line, the version (1 .. max_version) and the trailing
 * checksum line; on success the lines after the magic one are ready to be
 * taken and *version is set. TFREC_E_PARSE with why filled otherwise. */
int tfrec_bt_lines_open(bt_lines *l, const void *text, size_t len, const char *magic,
                        unsigned max_version, unsigned *version, char *why, size_t whycap);
/* Take the next line: 1 with words set, 0 at the checksum line (the end).
 * A line of more than 8 words, or an empty one, is TFREC_E_PARSE. */
int tfrec_bt_lines_next(bt_lines *l, char *why, size_t whycap);
void tfrec_bt_lines_close(bt_lines *l);

/* Decode an escaped word into a new key (k->p NULL when empty).
 * TFREC_E_PARSE for a bad escape or a key above max bytes. */
int tfrec_bt_word_key(const char *w, size_t max, bt_key *k);
/* A decimal count 0 .. max, nothing else in the word. */
int tfrec_bt_word_u64(const char *w, uint64_t max, uint64_t *v);

#endif

/* Internal: a growable list of malloc'ed strings that the list owns. */
#ifndef TFREC_UTIL_STRLIST_H
#define TFREC_UTIL_STRLIST_H

#include "util/private_api.h"
#include <stddef.h>

/* Zero-initialised means empty. */
typedef struct tfrec_strlist {
    char **v;
    size_t n, cap;
} tfrec_strlist;

/* Append a copy of s, or of its first len bytes (plus a NUL). Return
 * TFREC_OK or TFREC_E_NOMEM (the list is then unchanged). */
TFREC_PRIVATE_API int tfrec_strlist_add(tfrec_strlist *l, const char *s);
TFREC_PRIVATE_API int tfrec_strlist_add_n(tfrec_strlist *l, const char *s, size_t len);
/* Append s itself (malloc'ed), which the list then owns; on failure s is
 * freed. Returns s, or NULL when s was NULL or memory ran out. */
TFREC_PRIVATE_API char *tfrec_strlist_take(tfrec_strlist *l, char *s);
/* Move every string of src to the end of dst (src is left empty): all
 * of them or, on TFREC_E_NOMEM, none. */
TFREC_PRIVATE_API int tfrec_strlist_move_all(tfrec_strlist *dst, tfrec_strlist *src);
/* Byte-wise (strcmp) order, so results never depend on the locale or on
 * the order a file system lists names in. tfrec_strv_sort sorts any array
 * of strings the same way, owned or borrowed. */
TFREC_PRIVATE_API void tfrec_strlist_sort(tfrec_strlist *l);
TFREC_PRIVATE_API void tfrec_strv_sort(char **v, size_t n);
/* The array itself, handed to the caller (free each string, then the
 * array); the list is left empty. NULL when the list is empty. */
char **tfrec_strlist_release(tfrec_strlist *l, size_t *n);
/* Free every string and the array; the list is left empty. */
TFREC_PRIVATE_API void tfrec_strlist_free(tfrec_strlist *l);

#endif

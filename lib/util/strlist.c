#include "util/strlist.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tfrec/error.h"
#include "util/vec.h"

char *tfrec_strlist_take(tfrec_strlist *l, char *s)
{
    if (!s)
        return NULL;
    if (tfrec_vec_reserve(&l->v, &l->cap, l->n + 1, 64)) {
        free(s);
        return NULL;
    }
    l->v[l->n++] = s;
    return s;
}

int tfrec_strlist_add(tfrec_strlist *l, const char *s)
{
    return tfrec_strlist_take(l, strdup(s)) ? TFREC_OK : TFREC_E_NOMEM;
}

int tfrec_strlist_add_n(tfrec_strlist *l, const char *s, size_t len)
{
    return tfrec_strlist_take(l, strndup(s, len)) ? TFREC_OK : TFREC_E_NOMEM;
}

int tfrec_strlist_move_all(tfrec_strlist *dst, tfrec_strlist *src)
{
    if (src->n > SIZE_MAX - dst->n || tfrec_vec_reserve(&dst->v, &dst->cap, dst->n + src->n, 64))
        return TFREC_E_NOMEM;
    if (src->n)
        memcpy(dst->v + dst->n, src->v, src->n * sizeof *src->v);
    dst->n += src->n;
    free(src->v);
    memset(src, 0, sizeof *src);
    return TFREC_OK;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void tfrec_strv_sort(char **v, size_t n)
{
    if (n > 1)
        qsort(v, n, sizeof *v, cmp_str);
}

void tfrec_strlist_sort(tfrec_strlist *l)
{
    tfrec_strv_sort(l->v, l->n);
}

char **tfrec_strlist_release(tfrec_strlist *l, size_t *n)
{
    char **v = l->v;
    *n = l->n;
    if (!l->n) {
        free(v);
        v = NULL;
    }
    memset(l, 0, sizeof *l);
    return v;
}

void tfrec_strlist_free(tfrec_strlist *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

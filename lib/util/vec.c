#include "util/vec.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tfrec/error.h"

int tfrec_vec_resize_(void *arrp, size_t *cap, size_t new_cap, size_t elem)
{
    if (elem == 0 || new_cap > SIZE_MAX / elem)
        return TFREC_E_NOMEM;
    void *arr;
    memcpy(&arr, arrp, sizeof arr);
    /* realloc(p, 0) may free p; keep at least one element's room. */
    void *p = realloc(arr, (new_cap ? new_cap : 1) * elem);
    if (!p)
        return TFREC_E_NOMEM;
    memcpy(arrp, &p, sizeof p);
    *cap = new_cap;
    return TFREC_OK;
}

int tfrec_vec_reserve_(void *arrp, size_t *cap, size_t need, size_t elem, size_t first)
{
    if (need <= *cap)
        return TFREC_OK;
    if (elem == 0 || need > SIZE_MAX / elem)
        return TFREC_E_NOMEM;
    size_t max = SIZE_MAX / elem;
    size_t n = *cap ? *cap : (first ? first : 1);
    while (n < need)
        n = n > max / 2 ? max : n * 2;
    return tfrec_vec_resize_(arrp, cap, n, elem);
}

int tfrec_vec_fit_(void *arrp, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return TFREC_OK;
    if (elem == 0 || need > SIZE_MAX / elem)
        return TFREC_E_NOMEM;
    size_t room = SIZE_MAX / elem - need, slack = need / 4;
    size_t n = need + (slack < room ? slack : room);
    return tfrec_vec_resize_(arrp, cap, n, elem);
}

/* The result of a conversion run, as the caller reads it. */
#include "imagenet/run.h"

#include <stdlib.h>

#include "util/struct_size.h"

TFREC_DEFINE_STRUCT_INIT(tfrec_imagenet_counts)

int tfrec_imagenet_result_status(const tfrec_imagenet_result *r)
{
    return r ? r->status : TFREC_E_INVALID;
}

const char *tfrec_imagenet_result_errmsg(const tfrec_imagenet_result *r)
{
    return r ? r->err.msg : tfrec_last_errmsg();
}

int tfrec_imagenet_result_counts(const tfrec_imagenet_result *r, tfrec_imagenet_counts *c)
{
    if (!r)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_imagenet_result_counts: NULL result");
    return TFREC_STRUCT_OUT(tfrec_imagenet_counts, c, &r->counts, NULL);
}

int tfrec_imagenet_result_rejected(const tfrec_imagenet_result *r, size_t i, const char **path,
                                   const char **reason)
{
    if (!r || i >= r->rejected.n)
        return TFREC_E_INVALID;
    if (path)
        *path = r->rejected.v[i].path;
    if (reason)
        *reason = r->rejected.v[i].what;
    return TFREC_OK;
}

int tfrec_imagenet_result_stale(const tfrec_imagenet_result *r, size_t i, const char **path)
{
    if (!r || i >= r->stale.n)
        return TFREC_E_INVALID;
    if (path)
        *path = r->stale.v[i].path;
    return TFREC_OK;
}

const char *tfrec_imagenet_result_json(const tfrec_imagenet_result *r)
{
    return r && r->json ? r->json : "";
}

void tfrec_imagenet_result_free(tfrec_imagenet_result *r)
{
    if (!r)
        return;
    free(r->json);
    tfrec_in_notes_free(&r->rejected);
    tfrec_in_notes_free(&r->stale);
    free(r);
}

/* Access tokens: placeholder that supports anonymous access only; the
 * credential chain of auth.h replaces it. */
#include <stdio.h>
#include <stdlib.h>

#include "storage/auth.h"
#include "tfrec/error.h"

struct tfrec_gcs_auth {
    int anonymous;
};

int tfrec_gcs_auth_new(tfrec_gcs_auth **out, const char *credentials_file, int anonymous, char *err,
                       size_t errcap)
{
    (void)credentials_file;
    *out = calloc(1, sizeof **out);
    if (!*out) {
        snprintf(err, errcap, "out of memory");
        return TFREC_E_NOMEM;
    }
    (*out)->anonymous = anonymous;
    return TFREC_OK;
}

void tfrec_gcs_auth_free(tfrec_gcs_auth *a)
{
    free(a);
}

int tfrec_gcs_auth_header(tfrec_gcs_auth *a, int force_refresh, char **header, char *err,
                          size_t errcap)
{
    (void)force_refresh;
    *header = NULL;
    if (a->anonymous)
        return TFREC_OK;
    snprintf(err, errcap, "Cloud Storage credentials are not supported yet");
    return TFREC_E_UNSUPPORTED;
}

const char *tfrec_gcs_auth_account(tfrec_gcs_auth *a)
{
    return a->anonymous ? "anonymous" : "";
}

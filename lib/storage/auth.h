/* Internal: access tokens for Cloud Storage requests.
 *
 * The chain, in the order Google's clients use: an explicit credentials
 * file, GOOGLE_APPLICATION_CREDENTIALS (service-account key: an RS256 JWT
 * exchanged at the key's token_uri; authorized_user: a refresh-token
 * exchange), gcloud's application-default credentials file
 * ($CLOUDSDK_CONFIG or ~/.config/gcloud/application_default_credentials.json),
 * then the GCE metadata server (GCE_METADATA_HOST overrides its address).
 * Tokens are cached and refreshed about 5 minutes before they expire; one
 * tfrec_gcs_auth may be used by many threads at once.
 */
#ifndef TFREC_STORAGE_AUTH_H
#define TFREC_STORAGE_AUTH_H

#include <stddef.h>

typedef struct tfrec_gcs_auth tfrec_gcs_auth;

/* credentials_file: NULL for the chain above. anonymous: never send a
 * token (emulators, public buckets). Nothing is read or fetched here;
 * the chain is walked at the first tfrec_gcs_auth_header(). */
int tfrec_gcs_auth_new(tfrec_gcs_auth **out, const char *credentials_file, int anonymous, char *err,
                       size_t errcap);
void tfrec_gcs_auth_free(tfrec_gcs_auth *a);

/* Set *header to a malloc'd "Authorization: Bearer TOKEN" line for the
 * next request, or to NULL when anonymous. force_refresh != 0 (after a 401)
 * fetches a new token even if the cached one has not expired. Returns
 * TFREC_OK, or a negative TFREC_E_* with the reason in err (which file or
 * endpoint failed and why; never the secret itself). */
int tfrec_gcs_auth_header(tfrec_gcs_auth *a, int force_refresh, char **header, char *err,
                          size_t errcap);

/* The account the tokens act as (service account e-mail, "user
 * credentials", "GCE default service account", "anonymous"), for 403
 * messages. Valid while a lives. */
const char *tfrec_gcs_auth_account(tfrec_gcs_auth *a);

#endif

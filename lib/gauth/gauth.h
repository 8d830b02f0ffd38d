/* Internal: Google access tokens for the Bigtable and Cloud Storage parts
 * (libtfrec-gcp; docs/storage-auth.md).
 *
 * The chain, in the order Google's clients use: an explicit credentials
 * file, GOOGLE_APPLICATION_CREDENTIALS (service-account key: an RS256 JWT
 * exchanged at the key's token_uri; authorized_user: a refresh-token
 * exchange), gcloud's application-default credentials file
 * ($CLOUDSDK_CONFIG or ~/.config/gcloud/application_default_credentials.json),
 * then the GCE metadata server (GCE_METADATA_HOST overrides its address).
 * Settings come through util/config.h.
 *
 * Sources are process-wide: every handle asking for the same credentials
 * (the same file, or the chain under the same settings) shares one source,
 * so one token serves both parts and every client of the process. Tokens
 * are cached and refreshed about 5 minutes before they expire (halfway
 * for short-lived ones); a source may be used by many threads at once.
 */
#ifndef TFREC_GAUTH_H
#define TFREC_GAUTH_H

#include <stddef.h>
#include <stdint.h>

#include "util/private_api.h"

typedef struct tfrec_gauth tfrec_gauth;

/* credentials_file: NULL or "" for the chain above. anonymous: a private
 * handle that never sends a token (emulators, public buckets). Nothing is
 * read or fetched here; the chain is walked at the first token request. */
TFREC_PRIVATE_API int tfrec_gauth_new(tfrec_gauth **out, const char *credentials_file,
                                      int anonymous, char *err, size_t errcap);
/* Drop a handle. A shared source stays cached for the next handle. */
TFREC_PRIVATE_API void tfrec_gauth_free(tfrec_gauth *a);

/* Set *header to a malloc'd "Authorization: Bearer TOKEN" line for the
 * next request, or to NULL when anonymous. force_refresh != 0 (after a 401
 * or UNAUTHENTICATED) fetches a new token even if the cached one has not
 * expired. Returns TFREC_OK, or a negative TFREC_E_* with the reason in
 * err (which file or endpoint failed and why; never the secret itself). */
TFREC_PRIVATE_API int tfrec_gauth_header(tfrec_gauth *a, int force_refresh, char **header,
                                         char *err, size_t errcap);

/* Nonzero when a token is cached and not due for a refresh: the next
 * tfrec_gauth_header without force_refresh needs no network exchange
 * (gRPC's credentials plugin answers inline then, else from a thread). */
TFREC_PRIVATE_API int tfrec_gauth_fresh(tfrec_gauth *a);

/* The account the tokens act as (service account e-mail, "user
 * credentials", the metadata server's account, "anonymous"), for 401/403
 * messages. Valid while a lives. */
TFREC_PRIVATE_API const char *tfrec_gauth_account(tfrec_gauth *a);

/* Tokens this handle's source has obtained so far (tests; not exported). */
uint64_t tfrec_gauth_tokens_fetched(tfrec_gauth *a);

/* Project id from the GCE metadata server (GCE_METADATA_HOST), 2 s
 * timeout, for callers given no project. */
TFREC_PRIVATE_API int tfrec_gauth_metadata_project(char *buf, size_t cap, char *err, size_t errcap);

#endif

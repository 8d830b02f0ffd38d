/* Internal to lib/storage/auth*.c: the pieces behind storage/auth.h.
 *
 *   auth.c          the handle: token cache, one refresher at a time
 *   auth_chain.c    which credentials: file, env, gcloud ADC, metadata server
 *   auth_keyfile.c  service-account and authorized_user JSON files
 *   auth_json.c     key files and token replies, read with util/json_read.h
 *   auth_jwt.c      base64url and the RS256-signed JWT assertion
 *   auth_http.c     one bounded HTTP exchange over its own libcurl handle
 *   auth_token.c    token endpoint / metadata server exchange with retries
 *
 * Every function reports failure as a negative TFREC_E_* code with the
 * reason in err (errcap bytes), never including a secret. */
#ifndef TFREC_STORAGE_AUTH_INTERNAL_H
#define TFREC_STORAGE_AUTH_INTERNAL_H

#include <openssl/evp.h>
#include <stddef.h>
#include <stdint.h>

#include "storage/auth.h"

/* Key files and token replies are small; anything bigger is not one. */
#define TFREC_GCS_AUTH_BODY_MAX (64 * 1024)
#define TFREC_GCS_DEFAULT_TOKEN_URI "https://oauth2.googleapis.com/token"
/* Objects only (read, write, list, delete): the least the storage client
 * needs. cloud-platform would also open every other Google API. */
#define TFREC_GCS_SCOPE "https://www.googleapis.com/auth/devstorage.read_write"
#define TFREC_GCS_METADATA_HOST "metadata.google.internal"
/* Room for an account name (an e-mail address is at most 254 bytes). */
#define TFREC_GCS_ACCOUNT_MAX 320

/* ---- auth_json.c: the top-level members of one JSON object, parsed by
 * util/json_read.h (strict RFC 8259; strings unescaped to UTF-8, \u0000 and lone
 * surrogates refused); the strings are wiped when freed. */
typedef struct tfrec_gcs_json tfrec_gcs_json;
int tfrec_gcs_json_parse(tfrec_gcs_json **out, const char *text, size_t len, char *why,
                         size_t whycap);
void tfrec_gcs_json_free(tfrec_gcs_json *j);
/* Member key as a string; NULL when absent or not a string. */
const char *tfrec_gcs_json_string(const tfrec_gcs_json *j, const char *key);
/* Member key as an integer (a JSON number, or a string holding one):
 * 1 and *v, else 0. */
int tfrec_gcs_json_int(const tfrec_gcs_json *j, const char *key, int64_t *v);
/* Nonzero when member key is present, whatever its type. */
int tfrec_gcs_json_has(const tfrec_gcs_json *j, const char *key);

/* ---- auth_jwt.c */
/* base64url without padding (RFC 7515); malloc'd, NULL when out of memory. */
char *tfrec_gcs_base64url(const void *data, size_t len);
/* A PEM private key (PKCS#8 or PKCS#1 RSA). */
int tfrec_gcs_pem_rsa_key(EVP_PKEY **out, const char *pem, char *err, size_t errcap);
/* header.claims.signature, RS256 over SHA-256; kid may be NULL. */
int tfrec_gcs_jwt_sign(EVP_PKEY *key, const char *kid, const char *iss, const char *scope,
                       const char *aud, int64_t iat, char **out, char *err, size_t errcap);

/* ---- auth_keyfile.c / auth_chain.c: where tokens come from */
enum {
    TFREC_GCS_CRED_SERVICE_ACCOUNT = 1,
    TFREC_GCS_CRED_USER,     /* authorized_user: a refresh token */
    TFREC_GCS_CRED_METADATA, /* the GCE metadata server */
};

typedef struct tfrec_gcs_cred {
    int kind;
    char *origin;    /* file path, or "GCE metadata server at HOST" */
    char *token_uri; /* key files */
    char *client_email, *private_key_id;
    EVP_PKEY *key;
    char *client_id, *client_secret, *refresh_token;
    char *metadata_host; /* host[:port] */
    char account[TFREC_GCS_ACCOUNT_MAX];
} tfrec_gcs_cred;

/* Parse a key file. TFREC_GCS_TOKEN_URI in the environment overrides its
 * token_uri (tests point it at a local server). */
int tfrec_gcs_cred_load(tfrec_gcs_cred *c, const char *path, char *err, size_t errcap);
void tfrec_gcs_cred_clear(tfrec_gcs_cred *c);

/* Timeouts and retries of the exchanges; zero fields take the defaults.
 * Tests shorten them through tfrec_gcs_auth_tune(). */
typedef struct tfrec_gcs_tuning {
    long timeout_ms;       /* one token request (30 s) */
    long probe_timeout_ms; /* the metadata server probe (1.5 s) */
    int attempts;          /* tries of a token request on transient failures (4) */
    long backoff_ms;       /* first retry delay, doubled each time, jittered (250 ms) */
} tfrec_gcs_tuning;
void tfrec_gcs_auth_tune(tfrec_gcs_auth *a, const tfrec_gcs_tuning *t);

/* Walk the chain: explicit file, GOOGLE_APPLICATION_CREDENTIALS, gcloud
 * ADC, metadata server (probed). Not finding any is TFREC_E_NOT_FOUND with
 * the list of what was tried. */
int tfrec_gcs_chain_resolve(tfrec_gcs_cred *c, const char *explicit_file, const tfrec_gcs_tuning *t,
                            char *err, size_t errcap);

/* ---- auth_http.c */
typedef struct tfrec_gcs_http_reply {
    long status;       /* 0: no HTTP answer (see curl_rc) */
    int curl_rc;       /* CURLcode */
    int flavor_google; /* the reply carried Metadata-Flavor: Google */
    int too_big;       /* the body went past TFREC_GCS_AUTH_BODY_MAX */
    char *body;        /* NUL-terminated, at most TFREC_GCS_AUTH_BODY_MAX */
    size_t len;
    char curl_msg[256];
} tfrec_gcs_http_reply;
/* GET url (form NULL) or POST form as application/x-www-form-urlencoded.
 * metadata != 0: send Metadata-Flavor: Google and never use a proxy. */
int tfrec_gcs_http(const char *url, const char *form, int metadata, long connect_timeout_ms,
                   long timeout_ms, tfrec_gcs_http_reply *r);
void tfrec_gcs_http_reply_clear(tfrec_gcs_http_reply *r);
/* Nonzero for a URL a credential may be sent to: https://, or http:// to a
 * loopback address (local test servers). */
int tfrec_gcs_url_allowed(const char *url);

/* ---- auth_token.c: one access token (malloc'd) and its lifetime. */
int tfrec_gcs_token_fetch(const tfrec_gcs_cred *c, const tfrec_gcs_tuning *t, char **token,
                          int64_t *expires_in, char *err, size_t errcap);

#endif

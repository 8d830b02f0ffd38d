/* Internal to lib/gauth/: the pieces behind gauth/gauth.h.
 *
 *   source.c    the shared sources: registry, token cache, one refresher
 *   chain.c     which credentials: file, env, gcloud ADC, metadata server
 *   keyfile.c   service-account and authorized_user JSON files
 *   json.c      key files and token replies, read with util/json_read.h
 *   jwt.c       base64url and the RS256-signed JWT assertion
 *   http.c      one bounded HTTP exchange over its own libcurl handle
 *   token.c     token endpoint / metadata server exchange with retries
 *   project.c   the project id from the metadata server
 *
 * Every function reports failure as a negative TFREC_E_* code with the
 * reason in err (errcap bytes), never including a secret. */
#ifndef TFREC_GAUTH_INTERNAL_H
#define TFREC_GAUTH_INTERNAL_H

#include <openssl/evp.h>
#include <stddef.h>
#include <stdint.h>

#include "gauth/gauth.h"

/* Key files and token replies are small; anything bigger is not one. */
#define TFREC_GAUTH_BODY_MAX (64 * 1024)
#define TFREC_GAUTH_DEFAULT_TOKEN_URI "https://oauth2.googleapis.com/token"
/* One token serves both parts, so it carries the scopes of both and no
 * more: objects (read, write, list, delete), Bigtable data, and Bigtable
 * table admin (tfrec2bt --create_table). cloud-platform would also open
 * every other Google API. */
#define TFREC_GAUTH_SCOPE                                    \
    "https://www.googleapis.com/auth/devstorage.read_write " \
    "https://www.googleapis.com/auth/bigtable.data "         \
    "https://www.googleapis.com/auth/bigtable.admin.table"
#define TFREC_GAUTH_METADATA_HOST "metadata.google.internal"
/* Room for an account name (an e-mail address is at most 254 bytes). */
#define TFREC_GAUTH_ACCOUNT_MAX 320

/* ---- auth_json.c: the top-level members of one JSON object, parsed by
 * util/json_read.h (strict RFC 8259; strings unescaped to UTF-8, \u0000 and lone
 * surrogates refused); the strings are wiped when freed. */
typedef struct tfrec_gauth_json tfrec_gauth_json;
int tfrec_gauth_json_parse(tfrec_gauth_json **out, const char *text, size_t len, char *why,
                           size_t whycap);
void tfrec_gauth_json_free(tfrec_gauth_json *j);
/* Member key as a string; NULL when absent or not a string. */
const char *tfrec_gauth_json_string(const tfrec_gauth_json *j, const char *key);
/* Member key as an integer (a JSON number, or a string holding one):
 * 1 and *v, else 0. */
int tfrec_gauth_json_int(const tfrec_gauth_json *j, const char *key, int64_t *v);
/* Nonzero when member key is present, whatever its type. */
int tfrec_gauth_json_has(const tfrec_gauth_json *j, const char *key);

/* ---- auth_jwt.c */
/* base64url without padding (RFC 7515); malloc'd, NULL when out of memory. */
char *tfrec_gauth_base64url(const void *data, size_t len);
/* A PEM private key (PKCS#8 or PKCS#1 RSA). */
int tfrec_gauth_pem_rsa_key(EVP_PKEY **out, const char *pem, char *err, size_t errcap);
/* header.claims.signature, RS256 over SHA-256; kid may be NULL. */
int tfrec_gauth_jwt_sign(EVP_PKEY *key, const char *kid, const char *iss, const char *scope,
                         const char *aud, int64_t iat, char **out, char *err, size_t errcap);

/* ---- auth_keyfile.c / auth_chain.c: where tokens come from */
enum {
    TFREC_GAUTH_CRED_SERVICE_ACCOUNT = 1,
    TFREC_GAUTH_CRED_USER,     /* authorized_user: a refresh token */
    TFREC_GAUTH_CRED_METADATA, /* the GCE metadata server */
};

typedef struct tfrec_gauth_cred {
    int kind;
    char *origin;    /* file path, or "GCE metadata server at HOST" */
    char *token_uri; /* key files */
    char *client_email, *private_key_id;
    EVP_PKEY *key;
    char *client_id, *client_secret, *refresh_token;
    char *metadata_host; /* host[:port] */
    char account[TFREC_GAUTH_ACCOUNT_MAX];
} tfrec_gauth_cred;

/* Parse a key file. The TFREC_GCS_TOKEN_URI setting overrides its
 * token_uri (private endpoints; tests point it at a local server). */
int tfrec_gauth_cred_load(tfrec_gauth_cred *c, const char *path, char *err, size_t errcap);
void tfrec_gauth_cred_clear(tfrec_gauth_cred *c);

/* Timeouts and retries of the exchanges; zero fields take the defaults.
 * Tests shorten them through tfrec_gauth_tune(). */
typedef struct tfrec_gauth_tuning {
    long timeout_ms;       /* one token request (30 s) */
    long probe_timeout_ms; /* the metadata server probe (1.5 s) */
    int attempts;          /* tries of a token request on transient failures (4) */
    long backoff_ms;       /* first retry delay, doubled each time, jittered (250 ms) */
} tfrec_gauth_tuning;
void tfrec_gauth_tune(tfrec_gauth *a, const tfrec_gauth_tuning *t);

/* The metadata server's host[:port]: GCE_METADATA_HOST (the Go and Python
 * clients' name), GCE_METADATA_ROOT (the C++ client's), else its DNS
 * name. buf holds a configured value (cap bytes). */
const char *tfrec_gauth_metadata_host(char *buf, size_t cap);

/* Walk the chain: explicit file, GOOGLE_APPLICATION_CREDENTIALS, gcloud
 * ADC, metadata server (probed). Not finding any is TFREC_E_NOT_FOUND with
 * the list of what was tried. */
int tfrec_gauth_chain_resolve(tfrec_gauth_cred *c, const char *explicit_file,
                              const tfrec_gauth_tuning *t, char *err, size_t errcap);

/* ---- auth_http.c */
typedef struct tfrec_gauth_http_reply {
    long status;       /* 0: no HTTP answer (see curl_rc) */
    int curl_rc;       /* CURLcode */
    int flavor_google; /* the reply carried Metadata-Flavor: Google */
    int too_big;       /* the body went past TFREC_GAUTH_BODY_MAX */
    char *body;        /* NUL-terminated, at most TFREC_GAUTH_BODY_MAX */
    size_t len;
    char curl_msg[256];
} tfrec_gauth_http_reply;
/* GET url (form NULL) or POST form as application/x-www-form-urlencoded.
 * metadata != 0: send Metadata-Flavor: Google and never use a proxy. */
int tfrec_gauth_http(const char *url, const char *form, int metadata, long connect_timeout_ms,
                     long timeout_ms, tfrec_gauth_http_reply *r);
void tfrec_gauth_http_reply_clear(tfrec_gauth_http_reply *r);
/* Nonzero for a URL a credential may be sent to: https://, or http:// to a
 * loopback address (local test servers). */
int tfrec_gauth_url_allowed(const char *url);

/* ---- auth_token.c: one access token (malloc'd) and its lifetime. */
int tfrec_gauth_token_fetch(const tfrec_gauth_cred *c, const tfrec_gauth_tuning *t, char **token,
                            int64_t *expires_in, char *err, size_t errcap);

#endif

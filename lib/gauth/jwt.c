/* The assertion a service account trades for an access token: a JWT
 * (RFC 7519) signed with RS256 (RSASSA-PKCS1-v1_5 over SHA-256) by the
 * key file's private key, through OpenSSL's EVP interface. */
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gauth/gauth_internal.h"
#include "tfrec/error.h"

char *tfrec_gauth_base64url(const void *data, size_t len)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const unsigned char *p = data;
    char *out = malloc(len / 3 * 4 + 5);
    if (!out)
        return NULL;
    size_t o = 0, i = 0;
    for (; i + 3 <= len; i += 3) {
        unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8 | p[i + 2];
        out[o++] = abc[v >> 18];
        out[o++] = abc[v >> 12 & 63];
        out[o++] = abc[v >> 6 & 63];
        out[o++] = abc[v & 63];
    }
    if (len - i == 1) {
        unsigned v = (unsigned)p[i] << 16;
        out[o++] = abc[v >> 18];
        out[o++] = abc[v >> 12 & 63];
    } else if (len - i == 2) {
        unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8;
        out[o++] = abc[v >> 18];
        out[o++] = abc[v >> 12 & 63];
        out[o++] = abc[v >> 6 & 63];
    }
    out[o] = 0;
    return out;
}

/* The first queued OpenSSL error as text (and the queue emptied), so a
 * later, unrelated failure does not report a stale reason. */
static const char *ssl_reason(char *buf, size_t cap)
{
    unsigned long e = ERR_get_error();
    if (!e)
        snprintf(buf, cap, "no detail");
    else
        ERR_error_string_n(e, buf, cap);
    ERR_clear_error();
    return buf;
}

/* OpenSSL's default for an encrypted key is to prompt on the terminal,
 * which a library must never do: refuse, and remember that it asked. */
static int refuse_pass_phrase(char *buf, int size, int rwflag, void *asked)
{
    (void)buf, (void)size, (void)rwflag;
    *(int *)asked = 1;
    return -1;
}

int tfrec_gauth_pem_rsa_key(EVP_PKEY **out, const char *pem, char *err, size_t errcap)
{
    char why[160];
    ERR_clear_error();
    BIO *bio = BIO_new_mem_buf(pem, -1);
    if (!bio) {
        snprintf(err, errcap, "out of memory");
        return TFREC_E_NOMEM;
    }
    int asked = 0;
    EVP_PKEY *key = PEM_read_bio_PrivateKey(bio, NULL, refuse_pass_phrase, &asked);
    BIO_free(bio);
    if (!key && asked) {
        ERR_clear_error();
        snprintf(err, errcap,
                 "the private key is encrypted (a pass phrase would be needed): use the "
                 "unencrypted key file Google issues, or decrypt it with `openssl pkey`");
        return TFREC_E_UNSUPPORTED;
    }
    if (!key) {
        snprintf(err, errcap, "not a PEM private key (%s)", ssl_reason(why, sizeof why));
        return TFREC_E_PARSE;
    }
    if (EVP_PKEY_base_id(key) != EVP_PKEY_RSA) {
        EVP_PKEY_free(key);
        snprintf(err, errcap, "not an RSA key (RS256 needs one)");
        return TFREC_E_PARSE;
    }
    *out = key;
    return TFREC_OK;
}

/* s as a JSON string body: the values come from a key file, so quotes,
 * backslashes and control characters are escaped. */
static size_t json_escape(char *o, size_t cap, const char *s)
{
    size_t n = 0;
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        char tmp[8];
        size_t k;
        if (ch == '"' || ch == '\\') {
            tmp[0] = '\\';
            tmp[1] = (char)ch;
            k = 2;
        } else if (ch < 0x20) {
            k = (size_t)snprintf(tmp, sizeof tmp, "\\u%04x", ch);
        } else {
            tmp[0] = (char)ch;
            k = 1;
        }
        if (n + k < cap)
            memcpy(o + n, tmp, k);
        n += k;
    }
    if (n < cap)
        o[n] = 0;
    return n;
}

/* base64url of a JSON text of at most a few KiB (key file fields). */
static char *encode_json(const char *json, int n)
{
    return n < 0 || n >= 8192 ? NULL : tfrec_gauth_base64url(json, (size_t)n);
}

int tfrec_gauth_jwt_sign(EVP_PKEY *key, const char *kid, const char *iss, const char *scope,
                         const char *aud, int64_t iat, char **out, char *err, size_t errcap)
{
    char ekid[1024], eiss[1024], escope[512], eaud[2048], json[8192];
    if (json_escape(ekid, sizeof ekid, kid ? kid : "") >= sizeof ekid ||
        json_escape(eiss, sizeof eiss, iss) >= sizeof eiss ||
        json_escape(escope, sizeof escope, scope) >= sizeof escope ||
        json_escape(eaud, sizeof eaud, aud) >= sizeof eaud) {
        snprintf(err, errcap, "a key file field is too long for a JWT");
        return TFREC_E_INVALID;
    }
    char *header =
        encode_json(json, kid ? snprintf(json, sizeof json,
                                         "{\"alg\":\"RS256\",\"typ\":\"JWT\",\"kid\":\"%s\"}", ekid)
                              : snprintf(json, sizeof json, "{\"alg\":\"RS256\",\"typ\":\"JWT\"}"));
    char *claims = encode_json(
        json, snprintf(json, sizeof json,
                       "{\"iss\":\"%s\",\"scope\":\"%s\",\"aud\":\"%s\",\"iat\":%lld,\"exp\":%lld}",
                       eiss, escope, eaud, (long long)iat, (long long)(iat + 3600)));
    char *input = NULL, *sig64 = NULL;
    unsigned char *sig = NULL;
    EVP_MD_CTX *md = NULL;
    int rc = TFREC_E_NOMEM;
    snprintf(err, errcap, "out of memory");
    if (!header || !claims)
        goto done;
    size_t hl = strlen(header), cl = strlen(claims);
    input = malloc(hl + cl + 2);
    if (!input)
        goto done;
    memcpy(input, header, hl);
    input[hl] = '.';
    memcpy(input + hl + 1, claims, cl + 1);

    char why[160];
    size_t siglen = 0;
    ERR_clear_error();
    md = EVP_MD_CTX_new();
    if (!md || EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, key) != 1 ||
        EVP_DigestSign(md, NULL, &siglen, (const unsigned char *)input, hl + 1 + cl) != 1 ||
        !(sig = malloc(siglen)) ||
        EVP_DigestSign(md, sig, &siglen, (const unsigned char *)input, hl + 1 + cl) != 1) {
        snprintf(err, errcap, "signing the JWT failed (%s)", ssl_reason(why, sizeof why));
        rc = TFREC_E_INVALID;
        goto done;
    }
    sig64 = tfrec_gauth_base64url(sig, siglen);
    char *jwt = sig64 ? malloc(hl + cl + strlen(sig64) + 3) : NULL;
    if (!jwt)
        goto done;
    sprintf(jwt, "%s.%s", input, sig64);
    *out = jwt;
    rc = TFREC_OK;
    if (errcap)
        err[0] = 0;
done:
    EVP_MD_CTX_free(md);
    free(header);
    free(claims);
    free(input);
    free(sig);
    free(sig64);
    return rc;
}

/* The JSON of key files and token replies, read with util/json_read.h: one object
 * whose top-level members are looked up by name. This file adds what the
 * credential code needs on top: the document must be an object, integers
 * come as int64, and every decoded string is wiped on free because values
 * may be secrets (private keys, refresh tokens, access tokens). */
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gauth/gauth_internal.h"
#include "util/json_read.h"
#include "tfrec/error.h"

/* Key files and token replies are bounded by TFREC_GAUTH_BODY_MAX before
 * they get here; the parser's own limits are the storage part's. */
#define AUTH_JSON_LIMITS (&(const tfrec_json_limits){ 4u << 20, 32, 200000, 0 })

struct tfrec_gauth_json {
    tfrec_json_value *root; /* TFREC_JSON_OBJ */
};

int tfrec_gauth_json_parse(tfrec_gauth_json **out, const char *text, size_t len, char *why,
                           size_t whycap)
{
    *out = NULL;
    size_t at = 0;
    while (at < len &&
           (text[at] == ' ' || text[at] == '\t' || text[at] == '\n' || text[at] == '\r'))
        at++;
    if (at == len || text[at] != '{') {
        snprintf(why, whycap, "not a JSON object at byte %zu", at);
        return TFREC_E_PARSE;
    }
    tfrec_gauth_json *j = calloc(1, sizeof *j);
    if (!j) {
        snprintf(why, whycap, "out of memory");
        return TFREC_E_NOMEM;
    }
    int rc = tfrec_json_parse(text, len, AUTH_JSON_LIMITS, &j->root, why, whycap);
    if (rc != TFREC_OK) {
        free(j);
        return rc;
    }
    *out = j;
    return TFREC_OK;
}

/* Siblings iteratively, children recursively (the reader bounds the depth). */
static void wipe(tfrec_json_value *v)
{
    for (; v; v = v->next) {
        wipe(v->child);
        if (v->str)
            OPENSSL_cleanse(v->str, v->slen);
        if (v->key)
            OPENSSL_cleanse(v->key, strlen(v->key));
    }
}

void tfrec_gauth_json_free(tfrec_gauth_json *j)
{
    if (!j)
        return;
    wipe(j->root);
    tfrec_json_value_free(j->root);
    free(j);
}

const char *tfrec_gauth_json_string(const tfrec_gauth_json *j, const char *key)
{
    return tfrec_json_member_str(j->root, key);
}

int tfrec_gauth_json_int(const tfrec_gauth_json *j, const char *key, int64_t *v)
{
    return tfrec_json_member_i64(j->root, key, v) == 0;
}

int tfrec_gauth_json_has(const tfrec_gauth_json *j, const char *key)
{
    return tfrec_json_member(j->root, key) != NULL;
}

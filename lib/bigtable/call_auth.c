/* gRPC call credentials over the shared Google token source: a metadata
 * plugin that attaches "authorization: Bearer TOKEN" to every call. The
 * token comes from libtfrec-gcp, so Bigtable and Cloud Storage clients of
 * one process share it (docs/storage-auth.md).
 *
 * gRPC requires get_metadata not to block: a fresh cached token is handed
 * over inline; a token to be fetched is fetched on a short-lived thread of
 * ours, which then calls gRPC back (the callback must not run on the
 * calling thread). */
#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>
#include <grpc/support/string_util.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bigtable/client_internal.h"
#include "gauth/gauth.h"

typedef struct plugin {
    atomic_int refs; /* gRPC's reference, plus one per fetching thread */
    tfrec_gauth *auth;
    char *user_project; /* x-goog-user-project with every token; NULL: none */
} plugin;

typedef struct pending {
    plugin *p;
    grpc_credentials_plugin_metadata_cb cb;
    void *user_data;
} pending;

static void unref(plugin *p)
{
    if (atomic_fetch_sub(&p->refs, 1) == 1) {
        tfrec_gauth_free(p->auth);
        free(p->user_project);
        free(p);
    }
}

/* One token as call metadata, and the billing project after it: TFREC_OK
 * and md[0] (md[1]) filled, *n their count, or the failure (gRPC fails the
 * call with it: UNAUTHENTICATED, our message). */
static int token_md(plugin *p, grpc_metadata *md, size_t *n, char *err, size_t errcap)
{
    char *header = NULL;
    int rc = tfrec_gauth_header(p->auth, 0, &header, err, errcap);
    if (rc != TFREC_OK)
        return rc;
    static const char prefix[] = "Authorization: ";
    memset(md, 0, sizeof *md);
    md->key = grpc_slice_from_static_string("authorization");
    md->value = grpc_slice_from_copied_string(header + sizeof prefix - 1);
    memset(header, 0, strlen(header));
    free(header);
    *n = 1;
    if (p->user_project) {
        /* Quota and billing of the call go to this project, as Google's
         * clients send it (the caller needs serviceusage.services.use). */
        memset(&md[1], 0, sizeof md[1]);
        md[1].key = grpc_slice_from_static_string("x-goog-user-project");
        md[1].value = grpc_slice_from_copied_string(p->user_project);
        *n = 2;
    }
    return TFREC_OK;
}

static void *fetch_thread(void *arg)
{
    pending *q = arg;
    grpc_metadata md[2];
    size_t n = 0;
    char err[768];
    int rc = token_md(q->p, md, &n, err, sizeof err);
    if (rc == TFREC_OK) {
        q->cb(q->user_data, md, n, GRPC_STATUS_OK, NULL);
        for (size_t i = 0; i < n; i++) {
            grpc_slice_unref(md[i].key);
            grpc_slice_unref(md[i].value);
        }
    } else {
        q->cb(q->user_data, NULL, 0, GRPC_STATUS_UNAUTHENTICATED, err);
    }
    unref(q->p);
    free(q);
    return NULL;
}

static int get_metadata(void *state, grpc_auth_metadata_context context,
                        grpc_credentials_plugin_metadata_cb cb, void *user_data,
                        grpc_metadata creds_md[GRPC_METADATA_CREDENTIALS_PLUGIN_SYNC_MAX],
                        size_t *num_creds_md, grpc_status_code *status, const char **error_details)
{
    (void)context;
    plugin *p = state;
    char err[768];
    *num_creds_md = 0;
    *error_details = NULL;
    if (tfrec_gauth_fresh(p->auth)) {
        if (token_md(p, creds_md, num_creds_md, err, sizeof err) == TFREC_OK) {
            *status = GRPC_STATUS_OK;
        } else {
            *status = GRPC_STATUS_UNAUTHENTICATED;
            *error_details = gpr_strdup(err);
        }
        return 1;
    }
    pending *q = malloc(sizeof *q);
    pthread_t th;
    pthread_attr_t attr;
    if (q) {
        *q = (pending){ p, cb, user_data };
        atomic_fetch_add(&p->refs, 1);
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        int started = pthread_create(&th, &attr, fetch_thread, q) == 0;
        pthread_attr_destroy(&attr);
        if (started)
            return 0;
        atomic_fetch_sub(&p->refs, 1);
        free(q);
    }
    *status = GRPC_STATUS_UNAVAILABLE;
    *error_details = gpr_strdup("could not start a thread to fetch an access token");
    return 1;
}

static char *debug_string(void *state)
{
    (void)state;
    return gpr_strdup("tfrec Google access token");
}

static void destroy(void *state)
{
    unref(state);
}

grpc_call_credentials *tfrec_bt_call_credentials(tfrec_bt_client *c)
{
    plugin *p = calloc(1, sizeof *p);
    char why[512];
    if (!p || tfrec_gauth_new(&p->auth, c->credentials_file, 0, why, sizeof why) != TFREC_OK ||
        (c->user_project && !(p->user_project = strdup(c->user_project)))) {
        if (p)
            tfrec_gauth_free(p->auth);
        free(p);
        tfrec_fail(&c->err, TFREC_E_NOMEM, "out of memory");
        return NULL;
    }
    atomic_init(&p->refs, 1);
    grpc_metadata_credentials_plugin plug = {
        .get_metadata = get_metadata,
        .debug_string = debug_string,
        .destroy = destroy,
        .state = p,
        .type = "tfrec_google_token",
    };
    /* Tokens only ever travel over TLS. */
    return grpc_metadata_credentials_create_from_plugin(plug, GRPC_PRIVACY_AND_INTEGRITY, NULL);
}

/* Production credentials and gRPC's own logging.
 *
 * gRPC core prints its errors straight to stderr ("E1123 ...
 * google_default_credentials.cc:...") before the caller can say anything,
 * and "Could not create google default credentials" does not tell a
 * missing GOOGLE_APPLICATION_CREDENTIALS file from no credentials at all.
 * So its log lines are routed here (the last error kept for our messages),
 * and the credential sources are checked before gRPC looks at them. */
#include <errno.h>
#include <grpc/support/log.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bigtable/client_internal.h"

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char last_grpc_error[512];

static void on_grpc_log(gpr_log_func_args *a)
{
    if (a->severity < GPR_LOG_SEVERITY_ERROR)
        return;
    pthread_mutex_lock(&log_lock);
    snprintf(last_grpc_error, sizeof last_grpc_error, "%s", a->message ? a->message : "");
    pthread_mutex_unlock(&log_lock);
}

static void route_once(void)
{
    /* Someone asking gRPC for its logs gets them, as gRPC prints them. */
    const char *v = getenv("GRPC_VERBOSITY"), *t = getenv("GRPC_TRACE");
    if ((v && *v) || (t && *t))
        return;
    gpr_set_log_function(on_grpc_log);
}

void tfrec_bt_route_grpc_logs(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, route_once);
}

void tfrec_bt_last_grpc_error(char *buf, size_t cap)
{
    pthread_mutex_lock(&log_lock);
    snprintf(buf, cap, "%s", last_grpc_error);
    last_grpc_error[0] = 0;
    pthread_mutex_unlock(&log_lock);
}

/* The "type" of a credentials JSON file, or NULL (err set) if it has none. */
static int key_file_type(const char *path, char *type, size_t cap, const char **missing,
                         tfrec_err *err)
{
    FILE *fp = fopen(path, "r");
    if (!fp)
        return tfrec_fail(err, TFREC_E_IO,
                          "GOOGLE_APPLICATION_CREDENTIALS=%s: cannot open it: %s (point it at a "
                          "service-account or authorized-user JSON key file, or unset it)",
                          path, strerror(errno));
    char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    int rerr = ferror(fp);
    fclose(fp);
    buf[n] = 0;
    if (rerr)
        return tfrec_fail(err, TFREC_E_IO, "GOOGLE_APPLICATION_CREDENTIALS=%s: cannot read it",
                          path);
    const char *p = buf + strspn(buf, " \t\r\n");
    const char *k = strstr(p, "\"type\"");
    const char *q = k ? k + 6 + strspn(k + 6, " \t\r\n") : NULL;
    if (*p == '{' && q && *q == ':') {
        q++;
        q += strspn(q, " \t\r\n");
        size_t len = *q == '"' ? strcspn(q + 1, "\"") : 0;
        if (len && q[1 + len] == '"' && len < cap) {
            memcpy(type, q + 1, len);
            type[len] = 0;
            /* the fields gRPC needs for the two usual kinds */
            static const char *const sa[] = { "\"private_key\"", "\"client_email\"", NULL };
            static const char *const au[] = { "\"refresh_token\"", "\"client_id\"",
                                              "\"client_secret\"", NULL };
            const char *const *need = !strcmp(type, "service_account")   ? sa
                                      : !strcmp(type, "authorized_user") ? au
                                                                         : NULL;
            *missing = NULL;
            for (; need && *need && !*missing; need++)
                if (!strstr(buf, *need))
                    *missing = *need;
            return TFREC_OK;
        }
    }
    return tfrec_fail(err, TFREC_E_INVALID,
                      "GOOGLE_APPLICATION_CREDENTIALS=%s is not a Google credentials file (a "
                      "JSON object with a \"type\", as `gcloud iam service-accounts keys "
                      "create` writes)",
                      path);
}

int tfrec_bt_check_credentials(tfrec_err *err)
{
    const char *path = getenv("GOOGLE_APPLICATION_CREDENTIALS");
    if (path && *path) {
        char type[64];
        const char *missing = NULL;
        int rc = key_file_type(path, type, sizeof type, &missing, err);
        if (rc)
            return rc;
        if (missing)
            return tfrec_fail(err, TFREC_E_INVALID,
                              "GOOGLE_APPLICATION_CREDENTIALS=%s is a %s file without %s", path,
                              type, missing);
        if (strcmp(type, "service_account") && strcmp(type, "authorized_user") &&
            strcmp(type, "external_account"))
            return tfrec_fail(err, TFREC_E_INVALID,
                              "GOOGLE_APPLICATION_CREDENTIALS=%s has type \"%s\"; gRPC takes "
                              "service_account, authorized_user or external_account",
                              path, type);
        return TFREC_OK;
    }
    /* gRPC's next places: gcloud's application-default file, then GCE. */
    const char *home = getenv("HOME");
    char well_known[4096];
    struct stat sb;
    snprintf(well_known, sizeof well_known,
             "%s/.config/gcloud/application_default_credentials.json", home ? home : "");
    if (home && stat(well_known, &sb) == 0)
        return TFREC_OK;
    char project[256];
    tfrec_err probe = { 0 };
    if (tfrec_bt_metadata_project(project, sizeof project, &probe) == TFREC_OK)
        return TFREC_OK;
    return tfrec_fail(err, TFREC_E_NETWORK,
                      "no Google credentials found: GOOGLE_APPLICATION_CREDENTIALS is not set, "
                      "%s does not exist (`gcloud auth application-default login` writes it) "
                      "and no GCE metadata server answered; set BIGTABLE_EMULATOR_HOST=host:port "
                      "to use the emulator",
                      home ? well_known
                           : "$HOME/.config/gcloud/application_default_credentials.json");
}

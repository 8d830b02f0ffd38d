/* The Cloud Storage flags onto a client registered for gs://. */
#include "gcs_conn.h"

#include <stdio.h>

#include "exit_codes.h"
#include "log.h"
#include "tfrec/error.h"
#ifdef TFREC_CLI_HAVE_STORAGE
#include "tfrec/fs.h"
#include "tfrec/storage.h"
#endif

cli_gcs_conn cli_gcs;

#ifdef TFREC_CLI_HAVE_STORAGE
/* Reachable until exit: the registry points at them. */
static tfrec_storage *client;
static tfrec_fs client_fs = TFREC_FS_INIT;
#endif

int cli_gcs_conn_apply(const char *prog)
{
#ifdef TFREC_CLI_HAVE_STORAGE
    const cli_gcs_conn *c = &cli_gcs;
    if (client || !(c->endpoint || c->user_project || c->credentials_file || c->ca_bundle))
        return EXIT_OK; /* the default client, from the environment */
    tfrec_storage_options o = TFREC_STORAGE_OPTIONS_INIT;
    o.endpoint = c->endpoint;
    o.user_project = c->user_project;
    o.credentials_file = c->credentials_file;
    o.ca_bundle_file = c->ca_bundle;
    int rc = tfrec_storage_new(&client, &o);
    if (rc == TFREC_OK && (rc = tfrec_storage_fs_init(client, &client_fs)) == TFREC_OK)
        rc = tfrec_fs_register(&client_fs);
    if (rc != TFREC_OK) {
        cli_log_as(prog, "Cloud Storage: %s", tfrec_last_errmsg());
        return EXIT_USAGE;
    }
#else
    (void)prog;
#endif
    return EXIT_OK;
}

/* The Bigtable connection flags onto the client options. */
#include "bt_conn.h"

void cli_bt_conn_apply(const cli_bt_conn *c, tfrec_bt_client_options *o)
{
    o->endpoint = c->endpoint;
    o->admin_endpoint = c->admin_endpoint;
    o->credentials_file = c->credentials_file;
    o->ca_bundle_file = c->ca_bundle;
    o->tls = c->tls;
    /* --user_project bills the Bigtable calls too (one project per run). */
    o->user_project = cli_gcs.user_project;
}

int cli_bt_conn_share_with_gcs(const cli_bt_conn *c, const char *prog)
{
    if (!cli_gcs.credentials_file)
        cli_gcs.credentials_file = c->credentials_file;
    if (!cli_gcs.ca_bundle)
        cli_gcs.ca_bundle = c->ca_bundle;
    return cli_gcs_conn_apply(prog);
}

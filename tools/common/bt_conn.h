/* Where and how the Bigtable tools connect: the flags both tfrec2bt and
 * bt2tfrec take, and their mapping onto tfrec_bt_client_options. */
#ifndef TFREC_CLI_BT_CONN_H
#define TFREC_CLI_BT_CONN_H

#include "flags.h"
#include "gcs_conn.h"
#include "tfrec/bigtable.h"

typedef struct cli_bt_conn {
    const char *endpoint, *admin_endpoint, *credentials_file, *ca_bundle;
    int tls;
} cli_bt_conn;

/* The flag table entries, to put in a tool's table (c: a cli_bt_conn *). */
#define CLI_BT_CONN_FLAGS(c)                                                      \
    { .name = "endpoint",                                                         \
      .type = CLI_STRING,                                                         \
      .dest = &(c)->endpoint,                                                     \
      .value_name = "HOST:PORT",                                                  \
      .section = "Connection (credentials: docs/storage-auth.md):",               \
      .help = "Bigtable data endpoint [$BIGTABLE_EMULATOR_HOST, else\n"           \
              "bigtable.googleapis.com:443]; plain text when loopback" },         \
        { .name = "admin_endpoint",                                               \
          .type = CLI_STRING,                                                     \
          .dest = &(c)->admin_endpoint,                                           \
          .value_name = "HOST:PORT",                                              \
          .help = "table admin endpoint [the emulator, else\n"                    \
                  "bigtableadmin.googleapis.com:443]" },                          \
        { .name = "credentials_file",                                             \
          .type = CLI_LOCAL_PATH,                                                 \
          .dest = &(c)->credentials_file,                                         \
          .value_name = "FILE",                                                   \
          .help = "Google credentials (service-account key or\n"                  \
                  "authorized_user) [$GOOGLE_APPLICATION_CREDENTIALS,\n"          \
                  "gcloud's application-default file, GCE metadata server]" },    \
        { .name = "ca_bundle",                                                    \
          .type = CLI_LOCAL_PATH,                                                 \
          .dest = &(c)->ca_bundle,                                                \
          .value_name = "PEM",                                                    \
          .help = "CAs to trust for TLS (private CA, TLS-inspecting proxy)\n"     \
                  "[$TFREC_CA_BUNDLE, else the system's roots]" },                \
        { .name = "tls",                                                          \
          .type = CLI_BOOL,                                                       \
          .dest = &(c)->tls,                                                      \
          .help = "TLS and tokens even to a loopback --endpoint (a TLS front)" }, \
        CLI_GCS_CONN_FLAGS

/* The table's flags, the same names and forms in both tools (each says in
 * its help whether it reads or writes): instance and table (pointers to
 * const char *), the project, the cell's family and column. */
#define CLI_BT_TABLE_FLAGS(instance, table, instance_help, table_help)                    \
    { .name = "bigtable_instance",                                                        \
      .type = CLI_STRING,                                                                 \
      .dest = (instance),                                                                 \
      .value_name = "I",                                                                  \
      .help = (instance_help) },                                                          \
    {                                                                                     \
        .name = "bigtable_table", .type = CLI_STRING, .dest = (table), .value_name = "T", \
        .help = (table_help)                                                              \
    }
#define CLI_BT_PROJECT_FLAG(project)                                                 \
    {                                                                                \
        .name = "project", .type = CLI_STRING, .dest = (project), .value_name = "P", \
        .help = "project [from the GCE metadata server]"                             \
    }
#define CLI_BT_CELL_FLAGS(family, column, column_help)                             \
    { .name = "column_family",                                                     \
      .type = CLI_STRING,                                                          \
      .dest = (family),                                                            \
      .value_name = "F",                                                           \
      .help = "[tfexample]" },                                                     \
    {                                                                              \
        .name = "column", .type = CLI_STRING, .dest = (column), .value_name = "C", \
        .help = (column_help)                                                      \
    }

void cli_bt_conn_apply(const cli_bt_conn *c, tfrec_bt_client_options *o);

/* After parsing: --credentials_file and --ca_bundle serve gs:// too (one
 * identity and one set of trust roots per run), then cli_gcs_conn_apply. */
int cli_bt_conn_share_with_gcs(const cli_bt_conn *c, const char *prog);

#endif

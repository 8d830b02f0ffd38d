/* Where and how the tools reach Cloud Storage: the flags every tool that
 * may touch gs:// takes, and the client built from them. The values live
 * in one process-wide cli_gcs_conn (a tool has one gs:// client). */
#ifndef TFREC_CLI_GCS_CONN_H
#define TFREC_CLI_GCS_CONN_H

#include "flags.h"

typedef struct cli_gcs_conn {
    const char *endpoint, *user_project, *credentials_file, *ca_bundle;
} cli_gcs_conn;

extern cli_gcs_conn cli_gcs;

/* The endpoint and billing project flags (every tool). */
#define CLI_GCS_CONN_FLAGS                                                           \
    { .name = "storage_endpoint",                                                    \
      .type = CLI_STRING,                                                            \
      .dest = &cli_gcs.endpoint,                                                     \
      .value_name = "URL",                                                           \
      .section = "Cloud Storage (docs/storage-auth.md):",                            \
      .help = "JSON API base URL (private or regional endpoint, a TLS front)\n"      \
              "[$STORAGE_EMULATOR_HOST, $CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE,\n" \
              "else https://storage.googleapis.com]; http:// only to loopback" },    \
    {                                                                                \
        .name = "user_project", .type = CLI_STRING, .dest = &cli_gcs.user_project,   \
        .value_name = "PROJECT",                                                     \
        .help = "billing/quota project for gs:// requests (requester pays)\n"        \
                "and Bigtable calls [$TFREC_USER_PROJECT]"                           \
    }

/* Credentials and trust roots, for tools without the Bigtable flags of the
 * same names (which serve both there). */
#define CLI_GCS_AUTH_FLAGS                                                       \
    { .name = "credentials_file",                                                \
      .type = CLI_LOCAL_PATH,                                                    \
      .dest = &cli_gcs.credentials_file,                                         \
      .value_name = "FILE",                                                      \
      .help = "Google credentials (service-account key or authorized_user)\n"    \
              "[$GOOGLE_APPLICATION_CREDENTIALS, gcloud's application-default\n" \
              "file, GCE metadata server]" },                                    \
    {                                                                            \
        .name = "ca_bundle", .type = CLI_LOCAL_PATH, .dest = &cli_gcs.ca_bundle, \
        .value_name = "PEM",                                                     \
        .help = "CAs to trust for TLS (private CA, TLS-inspecting proxy)\n"      \
                "[$TFREC_CA_BUNDLE, else the system's roots]"                    \
    }

/* After the flags are parsed: when any of them is set, build the gs://
 * client from them and route gs:// names to it. Prints why on stderr
 * (prefixed with prog) and returns EXIT_USAGE when the client cannot be
 * built; EXIT_OK otherwise (also without the storage part, where the
 * flags have nothing to configure). */
int cli_gcs_conn_apply(const char *prog);

#endif

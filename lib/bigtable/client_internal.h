/* Internal: the client handle shared by the writer, reader and admin calls. */
#ifndef TFREC_BT_CLIENT_INTERNAL_H
#define TFREC_BT_CLIENT_INTERNAL_H

#include <grpc/grpc.h>
#include <pthread.h>
#include <stdint.h>

#include "tfrec/bigtable.h"
#include "util/errors.h"

#define BT_NAME_MAX 512

struct tfrec_bt_client {
    tfrec_err err;
    char project[BT_NAME_MAX];
    char instance[BT_NAME_MAX];
    char app_profile[BT_NAME_MAX];
    char instance_name[BT_NAME_MAX]; /* projects/P/instances/I */
    char endpoint[BT_NAME_MAX];
    char admin_endpoint[BT_NAME_MAX];
    int emulator; /* endpoints are plain-text (emulator or loopback) */
    int64_t rpc_timeout_ms;
    int64_t max_message_bytes;
    grpc_channel *data;
    grpc_channel *admin; /* created on first admin call */
    pthread_mutex_t admin_lock;
    int grpc_started; /* grpc_init() called, grpc_shutdown() owed */
};

/* "projects/P/instances/I/tables/T" into buf; TFREC_E_INVALID if too long. */
int tfrec_bt_table_name(const tfrec_bt_client *c, const char *table, char *buf, size_t cap);

/* The admin channel, created on first use (thread-safe). NULL on failure. */
grpc_channel *tfrec_bt_admin_channel(tfrec_bt_client *c);

/* A new channel to the data endpoint over its own TCP connection (not
 * shared with the client's channel); the caller destroys it. NULL (and the
 * client's message set) on failure. */
grpc_channel *tfrec_bt_data_channel_new(tfrec_bt_client *c);
/* The same for ReadRows streams: a fixed stream window (no BDP probing). */
grpc_channel *tfrec_bt_read_channel_new(tfrec_bt_client *c);

/* Project id from the GCE metadata server ($GCE_METADATA_HOST overrides the
 * address), 2 s timeout. */
int tfrec_bt_metadata_project(char *buf, size_t cap, tfrec_err *err);

/* credentials.c: send gRPC core's log lines to us instead of stderr (unless
 * GRPC_VERBOSITY or GRPC_TRACE asks for them); call before grpc_init. */
void tfrec_bt_route_grpc_logs(void);
/* The last error gRPC logged since the previous call ("" if none). */
void tfrec_bt_last_grpc_error(char *buf, size_t cap);
/* Production credentials: a readable GOOGLE_APPLICATION_CREDENTIALS key
 * file of a type gRPC takes, else gcloud's application-default file, else
 * a GCE metadata server. TFREC_OK, or which of these is wrong. */
int tfrec_bt_check_credentials(tfrec_err *err);

#endif

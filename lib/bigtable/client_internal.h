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

/* Project id from the GCE metadata server ($GCE_METADATA_HOST overrides the
 * address), 2 s timeout. */
int tfrec_bt_metadata_project(char *buf, size_t cap, tfrec_err *err);

#endif

/* Internal: the client handle shared by the writer, reader and admin calls. */
#ifndef TFREC_BT_CLIENT_INTERNAL_H
#define TFREC_BT_CLIENT_INTERNAL_H

#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
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
    int emulator;           /* endpoints are plain-text (emulator or loopback) */
    int tls;                /* TLS with call credentials (!emulator, or forced by the tls option) */
    char *credentials_file; /* NULL: the chain */
    char *user_project;     /* x-goog-user-project; NULL: none */
    char *ca_pem;           /* trust roots (PEM); NULL: gRPC's */
    struct tfrec_gauth *auth; /* the shared token source (TLS only) */
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

/* grpc_log.c: send gRPC core's log lines to us instead of stderr (unless
 * GRPC_VERBOSITY or GRPC_TRACE asks for them); call before grpc_init. */
void tfrec_bt_route_grpc_logs(void);
/* The last error gRPC logged since the previous call ("" if none). */
void tfrec_bt_last_grpc_error(char *buf, size_t cap);

/* credentials.c: with TLS, the CA bundle (option, else TFREC_CA_BUNDLE)
 * and the shared token source, one token fetched to report a broken
 * credential now. TFREC_OK or the reason in c->err. */
int tfrec_bt_credentials_setup(tfrec_bt_client *c, const char *credentials_file,
                               const char *ca_bundle_file, const char *user_project);
void tfrec_bt_credentials_free(tfrec_bt_client *c);
/* Insecure credentials for plain text, else TLS composed with the call
 * credentials below. NULL on failure. */
grpc_channel_credentials *tfrec_bt_channel_credentials(tfrec_bt_client *c);
/* call_auth.c: "authorization: Bearer" from the shared token source. */
grpc_call_credentials *tfrec_bt_call_credentials(tfrec_bt_client *c);
/* After UNAUTHENTICATED: fetch a new token now (the next calls carry it).
 * TFREC_OK, or why not in err. */
int tfrec_bt_reauth(tfrec_bt_client *c, char *err, size_t errcap);
/* Words to append to a failure's message: for UNAUTHENTICATED and
 * PERMISSION_DENIED the account and the fix, for a TLS handshake failure
 * the CA to give; "" otherwise. Returns buf. */
const char *tfrec_bt_auth_hint(tfrec_bt_client *c, int code, const char *details, char *buf,
                               size_t cap);

#endif

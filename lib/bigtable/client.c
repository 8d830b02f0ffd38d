/* Client handle: endpoint choice, credentials, channel arguments. */
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bigtable/client_internal.h"
#include "gauth/gauth.h"
#include "util/config.h"
#include "util/loopback.h"
#include "util/struct_size.h"

TFREC_DEFINE_STRUCT_INIT(tfrec_bt_client_options)

#define PROD_DATA "bigtable.googleapis.com:443"
#define PROD_ADMIN "bigtableadmin.googleapis.com:443"

/* Plain text is for this machine only (one rule with the storage part:
 * util/loopback.h); unix: sockets are local by nature. */
static int is_loopback(const char *hostport)
{
    return !strncmp(hostport, "unix:", 5) || tfrec_hostport_is_loopback(hostport);
}

/* BIGTABLE_EMULATOR_HOST must name a port: without one gRPC would quietly
 * use 443, which no emulator listens on. */
static int check_host_port(const char *hp)
{
    if (!strncmp(hp, "unix:", 5))
        return TFREC_OK;
    const char *colon = strrchr(hp, ':');
    const char *bracket = strrchr(hp, ']');
    const char *port = colon && (!bracket || colon > bracket) ? colon + 1 : NULL;
    size_t digits = port ? strspn(port, "0123456789") : 0;
    if (!port || !digits || port[digits] || digits > 5 || atol(port) > 65535 || colon == hp)
        return tfrec_fail(NULL, TFREC_E_INVALID,
                          "BIGTABLE_EMULATOR_HOST=%s does not end in :PORT; set it to HOST:PORT "
                          "as the emulator prints it (e.g. localhost:8086)",
                          hp);
    if (!bracket && memchr(hp, ':', (size_t)(colon - hp)))
        return tfrec_fail(NULL, TFREC_E_INVALID,
                          "BIGTABLE_EMULATOR_HOST=%s: write an IPv6 address in brackets, "
                          "[ADDRESS]:PORT",
                          hp);
    return TFREC_OK;
}

static grpc_channel *make_channel(tfrec_bt_client *c, const char *target, int own_connection,
                                  int reading)
{
    grpc_arg args[7];
    int na = 0;
    char ua[] = "tfrec/" TFREC_VERSION_STRING;
    args[na].type = GRPC_ARG_INTEGER;
    args[na].key = GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH;
    args[na++].value.integer = (int)c->max_message_bytes;
    args[na].type = GRPC_ARG_INTEGER;
    args[na].key = GRPC_ARG_MAX_SEND_MESSAGE_LENGTH;
    args[na++].value.integer = (int)c->max_message_bytes;
    args[na].type = GRPC_ARG_STRING;
    args[na].key = GRPC_ARG_PRIMARY_USER_AGENT_STRING;
    args[na++].value.string = ua;
    /* Our own retry policy decides what to re-send; gRPC's transparent
     * retries would keep large requests buffered for nothing. */
    args[na].type = GRPC_ARG_INTEGER;
    args[na].key = GRPC_ARG_ENABLE_RETRIES;
    args[na++].value.integer = 0;
    if (reading) {
        /* A fixed stream window instead of gRPC's BDP probing, which on a
         * loaded machine left long ReadRows streams waiting for the window
         * to open (bench/RESULTS.md, "Bigtable reads: a fixed HTTP/2 stream
         * window"). */
        args[na].type = GRPC_ARG_INTEGER;
        args[na].key = GRPC_ARG_HTTP2_BDP_PROBE;
        args[na++].value.integer = 0;
        args[na].type = GRPC_ARG_INTEGER;
        args[na].key = GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES;
        args[na++].value.integer = 4 << 20;
    }
    if (own_connection) {
        /* Channels with equal arguments share one subchannel, i.e. one TCP
         * connection; a private subchannel pool gives this one its own. */
        args[na].type = GRPC_ARG_INTEGER;
        args[na].key = GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL;
        args[na++].value.integer = 1;
    }
    grpc_channel_args ca = { (size_t)na, args };

    grpc_channel_credentials *creds = tfrec_bt_channel_credentials(c);
    if (!creds) {
        if (!c->err.code)
            tfrec_fail(&c->err, TFREC_E_NETWORK, "could not set up TLS credentials for %s", target);
        return NULL;
    }
    grpc_channel *ch = grpc_channel_create(target, creds, &ca);
    grpc_channel_credentials_release(creds);
    if (!ch)
        tfrec_fail(&c->err, TFREC_E_NETWORK, "could not create a gRPC channel to %s", target);
    return ch;
}

int tfrec_bt_table_name(const tfrec_bt_client *c, const char *table, char *buf, size_t cap)
{
    int n = snprintf(buf, cap, "%s/tables/%s", c->instance_name, table);
    if (n < 0 || (size_t)n >= cap)
        return TFREC_E_INVALID;
    return TFREC_OK;
}

static int copy_opt(tfrec_bt_client *c, char *dst, const char *src, const char *what)
{
    if (!src)
        src = "";
    if (strlen(src) >= BT_NAME_MAX)
        return tfrec_fail(&c->err, TFREC_E_INVALID, "%s is too long", what);
    strcpy(dst, src);
    return TFREC_OK;
}

int tfrec_bt_client_open(tfrec_bt_client **out, const tfrec_bt_client_options *opts)
{
    if (!out)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_bt_client_open: out is NULL");
    *out = NULL;
    tfrec_bt_client_options obuf;
    int rc = TFREC_STRUCT_IN(tfrec_bt_client_options, &obuf, opts, NULL);
    if (rc)
        return rc;
    opts = &obuf;
    if (!opts->instance || !*opts->instance)
        return tfrec_fail(NULL, TFREC_E_INVALID, "a Bigtable instance is required");

    tfrec_bt_client *c = calloc(1, sizeof *c);
    if (!c)
        return tfrec_fail(NULL, TFREC_E_NOMEM, "out of memory");
    pthread_mutex_init(&c->admin_lock, NULL);
    c->rpc_timeout_ms = opts->rpc_timeout_ms > 0 ? opts->rpc_timeout_ms : 120000;
    c->max_message_bytes = opts->max_message_bytes > 0 ? opts->max_message_bytes : 256LL << 20;
    if (c->max_message_bytes > 0x7fffffff)
        c->max_message_bytes = 0x7fffffff;

    char emu[BT_NAME_MAX];
    int have_emu = tfrec_cfg(TFREC_CFG_BIGTABLE_EMULATOR_HOST, emu, sizeof emu);
    if (opts->endpoint && *opts->endpoint) {
        rc = copy_opt(c, c->endpoint, opts->endpoint, "endpoint");
        c->emulator = is_loopback(opts->endpoint);
    } else if (have_emu < 0) {
        rc = tfrec_fail(&c->err, TFREC_E_INVALID, "BIGTABLE_EMULATOR_HOST is too long");
    } else if (have_emu) {
        rc = check_host_port(emu);
        if (!rc)
            rc = copy_opt(c, c->endpoint, emu, "BIGTABLE_EMULATOR_HOST");
        c->emulator = 1;
    } else {
        rc = copy_opt(c, c->endpoint, PROD_DATA, "endpoint");
    }
    if (!rc) {
        const char *admin = opts->admin_endpoint && *opts->admin_endpoint ? opts->admin_endpoint
                            : c->emulator                                 ? c->endpoint
                                                                          : PROD_ADMIN;
        rc = copy_opt(c, c->admin_endpoint, admin, "admin endpoint");
    }
    if (!rc)
        rc = copy_opt(c, c->instance, opts->instance, "instance");
    if (!rc)
        rc = copy_opt(c, c->app_profile, opts->app_profile_id, "app profile");
    if (!rc) {
        if (opts->project && *opts->project)
            rc = copy_opt(c, c->project, opts->project, "project");
        else {
            char why[768];
            rc = tfrec_gauth_metadata_project(c->project, sizeof c->project, why, sizeof why);
            if (rc)
                tfrec_fail(&c->err, rc, "%s", why);
        }
    }
    if (!rc && snprintf(c->instance_name, sizeof c->instance_name, "projects/%s/instances/%s",
                        c->project, c->instance) >= (int)sizeof c->instance_name)
        rc = tfrec_fail(&c->err, TFREC_E_INVALID, "project/instance names too long");
    c->tls = !c->emulator || opts->tls > 0;
    if (c->tls)
        c->emulator = 0; /* a TLS front on this machine is not the emulator */
    if (!rc)
        rc = tfrec_bt_credentials_setup(c, opts->credentials_file, opts->ca_bundle_file,
                                        opts->user_project);
    if (rc) {
        if (c->err.msg[0]) /* else the message is already the thread's last one */
            tfrec_fail_copy(NULL, &c->err);
        tfrec_bt_credentials_free(c);
        pthread_mutex_destroy(&c->admin_lock);
        free(c);
        return rc;
    }

    tfrec_bt_route_grpc_logs();
    grpc_init();
    c->grpc_started = 1;
    c->data = make_channel(c, c->endpoint, 0, 0);
    if (!c->data) {
        rc = c->err.code;
        tfrec_fail_copy(NULL, &c->err);
        tfrec_bt_client_free(c);
        return rc;
    }
    *out = c;
    return TFREC_OK;
}

grpc_channel *tfrec_bt_data_channel_new(tfrec_bt_client *c)
{
    return make_channel(c, c->endpoint, 1, 0);
}

grpc_channel *tfrec_bt_read_channel_new(tfrec_bt_client *c)
{
    return make_channel(c, c->endpoint, 1, 1);
}

grpc_channel *tfrec_bt_admin_channel(tfrec_bt_client *c)
{
    pthread_mutex_lock(&c->admin_lock);
    if (!c->admin) {
        /* A separate channel even when the emulator serves both APIs on one
         * port: admin calls then never queue behind large MutateRows. */
        c->admin = make_channel(c, c->admin_endpoint, 1, 0);
    }
    grpc_channel *ch = c->admin;
    pthread_mutex_unlock(&c->admin_lock);
    return ch;
}

void tfrec_bt_client_free(tfrec_bt_client *c)
{
    if (!c)
        return;
    int inited = c->grpc_started;
    if (c->data)
        grpc_channel_destroy(c->data);
    if (c->admin)
        grpc_channel_destroy(c->admin);
    tfrec_bt_credentials_free(c);
    pthread_mutex_destroy(&c->admin_lock);
    free(c);
    if (inited)
        grpc_shutdown();
}

const char *tfrec_bt_client_errmsg(const tfrec_bt_client *c)
{
    return c ? c->err.msg : tfrec_last_errmsg();
}
const char *tfrec_bt_client_project(const tfrec_bt_client *c)
{
    return c ? c->project : "";
}
const char *tfrec_bt_client_endpoint(const tfrec_bt_client *c)
{
    return c ? c->endpoint : "";
}
int tfrec_bt_client_is_emulator(const tfrec_bt_client *c)
{
    return c ? c->emulator : 0;
}

/* gRPC's own logging.
 *
 * gRPC core prints its errors straight to stderr ("E1123 ... ssl_transport
 * _security.cc:...") before the caller can say anything. Its log lines are
 * routed here instead (the last error kept for our messages), unless
 * GRPC_VERBOSITY or GRPC_TRACE asks for gRPC's own output. */
#include <grpc/support/log.h>
#include <pthread.h>
#include <stdio.h>

#include "bigtable/client_internal.h"
#include "util/config.h"

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
    char v[64];
    if (tfrec_cfg(TFREC_CFG_GRPC_VERBOSITY, v, sizeof v) ||
        tfrec_cfg(TFREC_CFG_GRPC_TRACE, v, sizeof v))
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

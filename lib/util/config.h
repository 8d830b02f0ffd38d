/* Internal: the settings table behind tfrec/config.h. Every environment
 * variable the library honours is an entry here, and lib/util/config.c is
 * the only file that calls getenv (docs/config.md lists the table). */
#ifndef TFREC_UTIL_CONFIG_H
#define TFREC_UTIL_CONFIG_H

#include <stddef.h>

#include "util/private_api.h"

typedef enum tfrec_cfg_id {
    TFREC_CFG_GOOGLE_APPLICATION_CREDENTIALS,
    TFREC_CFG_CLOUDSDK_CONFIG,
    TFREC_CFG_HOME,
    TFREC_CFG_GCE_METADATA_HOST,
    TFREC_CFG_GCE_METADATA_ROOT,
    TFREC_CFG_TOKEN_URI,
    TFREC_CFG_CA_BUNDLE,
    TFREC_CFG_BIGTABLE_EMULATOR_HOST,
    TFREC_CFG_STORAGE_EMULATOR_HOST,
    TFREC_CFG_GRPC_VERBOSITY,
    TFREC_CFG_GRPC_TRACE,
    TFREC_CFG_BT_POLLERS,
    TFREC_CFG_BT_CONNECTIONS,
    TFREC_CFG_CRC32C,
    TFREC_CFG_MMAP,
    TFREC_CFG_DEFLATE,
    TFREC_CFG_TASK_INDEX,
    TFREC_CFG_TASK_COUNT,
    TFREC_CFG_STORAGE_ENDPOINT,
    TFREC_CFG_USER_PROJECT,
    TFREC_CFG_COUNT
} tfrec_cfg_id;

/* The value in effect (tfrec/config.h: set value, environment, unset):
 * 1 with it in buf; 0 when unset or empty (buf ""); -1 when it does not
 * fit in cap bytes (buf ""; callers treat it as malformed). */
TFREC_PRIVATE_API int tfrec_cfg(tfrec_cfg_id id, char *buf, size_t cap);

/* An integer setting: 1 and *v for a decimal number, 0 when unset, -1 when
 * set to something else. */
TFREC_PRIVATE_API int tfrec_cfg_int(tfrec_cfg_id id, long *v);

#endif

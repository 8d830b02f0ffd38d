/* The settings table: every environment variable the library honours, and
 * the only getenv in lib/. A value set through tfrec_config_set() wins over
 * the environment; the environment is read at each lookup (not cached
 * here), so a program that changes it before opening a handle is heard.
 * docs/config.md is this table in prose; keep them together. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "tfrec/config.h"
#include "util/config.h"
#include "util/errors.h"

typedef struct setting {
    const char *name;
    const char *doc;
} setting;

/* Indexed by tfrec_cfg_id. */
static const setting table[TFREC_CFG_COUNT] = {
    [TFREC_CFG_GOOGLE_APPLICATION_CREDENTIALS] = { "GOOGLE_APPLICATION_CREDENTIALS",
                                                   "Google credentials file (service-account key or authorized_user) for Bigtable and "
                                                   "Cloud Storage; API: credentials_file in tfrec_bt_client_options / "
                                                   "tfrec_storage_options" },
    [TFREC_CFG_CLOUDSDK_CONFIG] = { "CLOUDSDK_CONFIG",
                                    "gcloud's configuration directory, where "
                                    "application_default_credentials.json is looked for "
                                    "[~/.config/gcloud]" },
    [TFREC_CFG_HOME] = { "HOME", "home directory holding ~/.config/gcloud" },
    [TFREC_CFG_GCE_METADATA_HOST] = { "GCE_METADATA_HOST",
                                      "host[:port] of the GCE metadata server (tokens, project "
                                      "id) [metadata.google.internal]" },
    [TFREC_CFG_GCE_METADATA_ROOT] = { "GCE_METADATA_ROOT",
                                      "the same, under google-cloud-cpp's name (used when "
                                      "GCE_METADATA_HOST is unset)" },
    [TFREC_CFG_TOKEN_URI] = { "TFREC_GCS_TOKEN_URI",
                              "token endpoint replacing every credentials file's token_uri "
                              "(private endpoints, tests); both parts" },
    [TFREC_CFG_CA_BUNDLE] = { "TFREC_CA_BUNDLE",
                              "PEM file of trust roots for TLS to Bigtable and Cloud Storage "
                              "(private CAs, TLS-inspecting proxies) [gRPC's / libcurl's "
                              "roots]; API: ca_bundle_file in tfrec_bt_client_options / "
                              "tfrec_storage_options" },
    [TFREC_CFG_BIGTABLE_EMULATOR_HOST] = { "BIGTABLE_EMULATOR_HOST",
                                           "host:port of a Bigtable emulator (plain text, no "
                                           "credentials); API: tfrec_bt_client_options.endpoint" },
    [TFREC_CFG_STORAGE_EMULATOR_HOST] = { "STORAGE_EMULATOR_HOST",
                                          "[http://]host:port of a Cloud Storage emulator (no "
                                          "credentials); API: tfrec_storage_options.endpoint" },
    [TFREC_CFG_GRPC_VERBOSITY] = { "GRPC_VERBOSITY",
                                   "gRPC's own; when it or GRPC_TRACE is set, gRPC's log lines go "
                                   "to stderr as gRPC prints them instead of into our messages" },
    [TFREC_CFG_GRPC_TRACE] = { "GRPC_TRACE", "gRPC's own; see GRPC_VERBOSITY" },
    [TFREC_CFG_BT_POLLERS] = { "TFREC_BT_POLLERS",
                               "polling threads of a Bigtable writer [1]; 0: the writer's own "
                               "thread polls; API: tfrec_config_set" },
    [TFREC_CFG_BT_CONNECTIONS] = { "TFREC_BT_CONNECTIONS",
                                   "default gRPC connections of a Bigtable writer [max_inflight]; "
                                   "API: tfrec_bt_writer_options.connections" },
    [TFREC_CFG_CRC32C] = { "TFREC_CRC32C",
                           "CRC32C implementation (auto, portable, sse42, clmul, avx512, arm64), "
                           "read at first use; API: tfrec_crc32c_force_impl" },
    [TFREC_CFG_MMAP] = { "TFREC_MMAP",
                         "1: map local files by default, read at the first open; API: "
                         "use_mmap in tfrec_reader_options / tfrec_dataset_options" },
    [TFREC_CFG_DEFLATE] = { "TFREC_DEFLATE",
                            "GZIP/ZLIB backend (zlib, isal), read at first use; API: "
                            "tfrec_set_deflate_backend" },
    [TFREC_CFG_TASK_INDEX] = { "JOB_COMPLETION_INDEX",
                               "this task's index (Kubernetes Indexed Job), read by "
                               "tfrec_task_from_env; API: pass the index to tfrec_task_share" },
    [TFREC_CFG_TASK_COUNT] = { "TFREC_NUM_TASKS",
                               "the number of tasks, with JOB_COMPLETION_INDEX; API: pass the "
                               "count to tfrec_task_share" },
    [TFREC_CFG_STORAGE_ENDPOINT] = { "CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE",
                                     "Cloud Storage endpoint as gcloud names it "
                                     "(https://HOST/storage/v1/; private or regional endpoints), "
                                     "below STORAGE_EMULATOR_HOST; API: "
                                     "tfrec_storage_options.endpoint" },
    [TFREC_CFG_USER_PROJECT] = { "TFREC_USER_PROJECT",
                                 "billing/quota project for Cloud Storage requests (userProject, "
                                 "x-goog-user-project; requester pays) and Bigtable calls "
                                 "(x-goog-user-project); API: tfrec_storage_options.user_project, "
                                 "tfrec_bt_client_options.user_project" },
    [TFREC_CFG_TF_CONFIG] = { "TF_CONFIG",
                              "TensorFlow's cluster and task (AI Platform, Vertex AI), read by "
                              "tfrec_task_resolve; API: tfrec_task_options" },
    [TFREC_CFG_CLUSTER_SPEC] = { "CLUSTER_SPEC",
                                 "Vertex AI's cluster and task (worker pools), read by "
                                 "tfrec_task_resolve; API: tfrec_task_options" },
    [TFREC_CFG_RANK] = { "RANK",
                         "torch.distributed's rank, with WORLD_SIZE, read by tfrec_task_resolve; "
                         "API: tfrec_task_options" },
    [TFREC_CFG_WORLD_SIZE] = { "WORLD_SIZE", "torch.distributed's process count, with RANK; API: "
                                             "tfrec_task_options" },
    [TFREC_CFG_LOCAL_RANK] = { "LOCAL_RANK",
                               "torch.distributed's rank on this machine, reported by "
                               "tfrec_task_resolve (per-device readers)" },
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char *overrides[TFREC_CFG_COUNT]; /* set values, under lock */
static atomic_int no_env;

static int find(const char *name)
{
    if (name)
        for (int i = 0; i < TFREC_CFG_COUNT; i++)
            if (strcmp(table[i].name, name) == 0)
                return i;
    return -1;
}

/* The value into buf: 1 set, 0 unset, -1 too long. */
static int lookup(int id, char *buf, size_t cap)
{
    int rc = 0;
    if (cap)
        buf[0] = 0;
    pthread_mutex_lock(&lock);
    const char *v = overrides[id];
    if (!v && !atomic_load(&no_env))
        v = getenv(table[id].name);
    if (v && *v) {
        size_t n = strlen(v);
        if (n < cap) {
            memcpy(buf, v, n + 1);
            rc = 1;
        } else {
            rc = -1;
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

int tfrec_cfg(tfrec_cfg_id id, char *buf, size_t cap)
{
    if ((int)id < 0 || id >= TFREC_CFG_COUNT)
        return 0;
    return lookup((int)id, buf, cap);
}

int tfrec_cfg_int(tfrec_cfg_id id, long *v)
{
    char buf[32], *end;
    int rc = tfrec_cfg(id, buf, sizeof buf);
    if (rc <= 0)
        return rc;
    errno = 0;
    long x = strtol(buf, &end, 10);
    if (errno || end == buf || *end)
        return -1;
    *v = x;
    return 1;
}

int tfrec_config_set(const char *name, const char *value)
{
    int id = find(name);
    if (id < 0)
        return tfrec_fail(NULL, TFREC_E_INVALID,
                          "tfrec_config_set: no setting named \"%s\" (see docs/config.md)",
                          name ? name : "(null)");
    char *copy = value ? strdup(value) : NULL;
    if (value && !copy)
        return tfrec_fail(NULL, TFREC_E_NOMEM, "out of memory");
    pthread_mutex_lock(&lock);
    char *old = overrides[id];
    overrides[id] = copy;
    pthread_mutex_unlock(&lock);
    free(old);
    return TFREC_OK;
}

int tfrec_config_get(const char *name, char *buf, size_t cap)
{
    int id = find(name);
    if (id < 0 || !buf || !cap)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_config_get: %s",
                          id < 0 ? "unknown setting name" : "no buffer");
    int rc = lookup(id, buf, cap);
    if (rc < 0)
        return tfrec_fail(NULL, TFREC_E_INVALID, "%s: the value is longer than %zu bytes",
                          table[id].name, cap - 1);
    return rc ? TFREC_OK : TFREC_E_NOT_FOUND;
}

void tfrec_config_use_environment(int on)
{
    atomic_store(&no_env, !on);
}

const char *tfrec_config_name(size_t i, const char **doc)
{
    if (i >= TFREC_CFG_COUNT)
        return NULL;
    if (doc)
        *doc = table[i].doc;
    return table[i].name;
}

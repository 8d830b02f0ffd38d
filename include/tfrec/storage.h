/* libtfrec: Cloud Storage (gs://) and local files behind one interface.
 *
 * Part tfrec-storage (libtfrec-storage, pkg-config tfrec-storage): libcurl
 * for HTTP, libcrypto for signing service-account tokens.
 *
 * Every function taking a name accepts a local path, "-" (stdin/stdout) or
 * gs://BUCKET/OBJECT, so a program that opens its inputs and outputs
 * through this header handles both without looking at the names. Remote
 * sources and sinks are ordinary tfrec_io tables: hand them to
 * tfrec_reader_open_io() / tfrec_writer_open_io(), or use the two
 * shortcuts below.
 *
 * Semantics of gs:// objects:
 * - a source pins the object's generation when opened, so a concurrent
 *   overwrite cannot mix two versions; reading the whole object checks its
 *   CRC32C and a mismatch is an error naming the object;
 * - a sink uploads with a resumable session and the object appears only
 *   when the sink is closed with commit != 0 (like the local
 *   temp-then-rename); closing with commit == 0 cancels the session;
 * - transient failures (connection errors, 408, 429, 5xx) are retried with
 *   jittered exponential backoff until the options' deadline.
 *
 * Threads: a tfrec_storage handle may be shared by any number of threads
 * (connections and the access token are shared under a lock). Each
 * tfrec_io it opens belongs to one thread at a time. Failures set
 * tfrec_last_errmsg() on the calling thread; an open tfrec_io also reports
 * through its errmsg callback.
 */
#ifndef TFREC_STORAGE_H
#define TFREC_STORAGE_H

#include "common.h"
#include "fs.h"
#include "io.h"
#include "record.h"

#include <stddef.h>
#include <stdint.h>

TFREC_BEGIN_DECLS

typedef struct tfrec_storage tfrec_storage;

typedef struct tfrec_storage_options {
    size_t struct_size; /* TFREC_STORAGE_OPTIONS_INIT / tfrec_storage_options_init() */
    /* Base URL of the JSON API, e.g. "http://127.0.0.1:9199". NULL: the
     * STORAGE_EMULATOR_HOST environment variable ("http://" assumed when it
     * has no scheme; no credentials are sent to an emulator), else
     * CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE (gcloud's form,
     * "https://HOST/storage/v1/", is accepted), else
     * https://storage.googleapis.com. Credentials go only to https://
     * endpoints; plain http:// only to a loopback host (localhost,
     * 127.0.0.0/8, ::1), the rule Bigtable endpoints follow too. */
    const char *endpoint;
    /* Credentials file (service-account key or authorized_user). NULL:
     * GOOGLE_APPLICATION_CREDENTIALS, then gcloud's application-default
     * credentials, then the GCE metadata server. */
    const char *credentials_file;
    /* Billing (quota) project: sent as userProject on every request
     * (requester-pays buckets) and as x-goog-user-project. NULL:
     * TFREC_USER_PROJECT, else none. */
    const char *user_project;
    /* 1: send no credentials (public buckets, emulators). */
    int anonymous;
    /* Overall deadline of one operation including its retries (0: 600 s). */
    uint32_t retry_deadline_ms;
    /* Sequential read-ahead of a source (0: 8 MiB). */
    size_t read_ahead_bytes;
    /* Ranged requests in flight for a large source (0: 4; 1 = serial). */
    unsigned parallel_reads;
    /* Resumable upload chunk, a multiple of 256 KiB (0: 16 MiB). Objects
     * closed below this size are sent in one request. */
    size_t upload_chunk_bytes;
    /* 1: skip the CRC32C check of whole-object reads and uploads. */
    int no_checksum;
    /* (since 1.1) PEM file of the CAs to trust for https:// endpoints
     * (private CAs, TLS-inspecting proxies). NULL: TFREC_CA_BUNDLE, else
     * libcurl's built-in bundle. */
    const char *ca_bundle_file;
} tfrec_storage_options;

#define TFREC_STORAGE_OPTIONS_INIT TFREC_STRUCT_INIT(tfrec_storage_options)
void tfrec_storage_options_init(tfrec_storage_options *opts);

/* Nonzero when name is a gs:// URL (any case of the scheme). */
int tfrec_storage_is_remote(const char *name);

/* A client. opts may be NULL (all defaults). Credentials are looked up
 * lazily, at the first request that needs them. */
int tfrec_storage_new(tfrec_storage **out, const tfrec_storage_options *opts);
void tfrec_storage_free(tfrec_storage *st);

/* The process-wide client built from the environment with default
 * options, created on first use (thread-safe) and released at exit.
 * Returns NULL (message in tfrec_last_errmsg()) if it cannot be built. */
tfrec_storage *tfrec_storage_default(void);

/* Open name (local path, "-" or gs://) as a source or a sink; io must be
 * set up with TFREC_IO_INIT. st may be NULL (tfrec_storage_default()). */
int tfrec_storage_open_source(tfrec_storage *st, tfrec_io *io, const char *name);
int tfrec_storage_open_sink(tfrec_storage *st, tfrec_io *io, const char *name);

/* A source over bytes [offset, offset + length) of an object or file only
 * (length UINT64_MAX: to the end), e.g. one member of an archive: a gs://
 * object is asked for exactly those bytes (one ranged request for a small
 * part, the generation pinned as for a whole object, no CRC32C check since
 * the object's covers all of it). Offsets of the source are relative to
 * offset; a range past the end is TFREC_E_INVALID. */
int tfrec_storage_open_source_range(tfrec_storage *st, tfrec_io *io, const char *name,
                                    uint64_t offset, uint64_t length);

/* Shortcuts: a record reader / writer over tfrec_storage_open_source/_sink. */
int tfrec_storage_reader_open(tfrec_storage *st, tfrec_reader **out, const char *name,
                              const tfrec_reader_options *opts);
int tfrec_storage_writer_open(tfrec_storage *st, tfrec_writer **out, const char *name,
                              const tfrec_writer_options *opts);

/* What is known about one object or file. */
typedef struct tfrec_storage_object {
    size_t struct_size; /* TFREC_STORAGE_OBJECT_INIT / tfrec_storage_object_init() */
    const char *name;   /* full name as given or listed (gs://b/o or a path) */
    uint64_t size;
    int64_t generation; /* 0 for local files */
    int has_crc32c;
    uint32_t crc32c; /* of the whole object (remote objects only) */
} tfrec_storage_object;

#define TFREC_STORAGE_OBJECT_INIT TFREC_STRUCT_INIT(tfrec_storage_object)
void tfrec_storage_object_init(tfrec_storage_object *obj);

/* Size (and for gs://, generation and CRC32C) of one object or file.
 * A missing one is TFREC_E_NOT_FOUND. name in *info points into storage
 * owned by the caller's argument. */
int tfrec_storage_stat(tfrec_storage *st, const char *name, tfrec_storage_object *info);

/* Delete an object or file. */
int tfrec_storage_remove(tfrec_storage *st, const char *name);

/* The names matched by a pattern, sorted bytewise. Patterns use * ? and
 * [...] with glob(3) meaning ("*" does not cross "/"), the same for local
 * paths and gs:// names; a name without them is returned as is if it
 * exists. No match is TFREC_E_NOT_FOUND. */
typedef struct tfrec_storage_list tfrec_storage_list;
int tfrec_storage_glob(tfrec_storage *st, const char *pattern, tfrec_storage_list **out);
size_t tfrec_storage_list_count(const tfrec_storage_list *list);
/* Entry i (NULL past the end); valid until the list is freed. */
const tfrec_storage_object *tfrec_storage_list_get(const tfrec_storage_list *list, size_t i);
void tfrec_storage_list_free(tfrec_storage_list *list);
/* The same matches handed to fn(ctx, name, size) one by one, in the same
 * order, until fn returns non-zero. No match is TFREC_E_NOT_FOUND. The
 * signature fits tfrec_imagenet_options.list_input (st NULL: the default
 * client). */
int tfrec_storage_glob_each(tfrec_storage *st, const char *pattern,
                            int (*fn)(void *ctx, const char *name, uint64_t size), void *ctx);

/* ------------------------------------------------------------ file system
 * (since 1.1) gs:// as a tfrec_fs (include/tfrec/fs.h): with it
 * registered, every function of the library that takes a name accepts
 * gs://BUCKET/OBJECT. */

/* The gs:// file system over the default client (tfrec_storage_default(),
 * created at the first call that needs it). */
const tfrec_fs *tfrec_storage_fs(void);
/* The gs:// file system over client st (NULL: the default client), filled
 * into *fs (set up with TFREC_FS_INIT); st must outlive every use of it.
 * Register it with tfrec_fs_register() to route gs:// names to st. */
int tfrec_storage_fs_init(tfrec_storage *st, tfrec_fs *fs);
/* Register tfrec_storage_fs() for gs:// in the core's registry.
 * libtfrec-storage.so does it when it is loaded; a program linked with
 * libtfrec-storage.a calls it once before opening gs:// names through the
 * core (tfrec_fs_default(), tfrec_reader_open(), datasets...). Idempotent
 * (registering again replaces the entry with an equal one). */
int tfrec_storage_register(void);

TFREC_END_DECLS
#endif

/* Internal: object sources and sinks over a client (source.c, sink.c).
 * Apart from storage_internal.h so that the client and the object calls
 * below them do not see, and cannot call, the transfers above them. */
#ifndef TFREC_STORAGE_TRANSFER_H
#define TFREC_STORAGE_TRANSFER_H

#include "storage/storage_internal.h"

int tfrec_gcs_open_source(tfrec_storage *st, tfrec_io *io, const char *name);
/* Bytes [offset, offset + length) only (length UINT64_MAX: to the end). */
int tfrec_gcs_open_source_range(tfrec_storage *st, tfrec_io *io, const char *name, uint64_t offset,
                                uint64_t length);
int tfrec_gcs_open_sink(tfrec_storage *st, tfrec_io *io, const char *name);

/* What a source did, for tests: requests made, the most ranges in flight at
 * once, whether a whole-object CRC32C was checked. ctx is io->ctx. */
typedef struct gcs_source_stats {
    unsigned long requests, resumes;
    unsigned max_in_flight;
    int crc_checked;
} gcs_source_stats;
void tfrec_gcs_source_stats(void *ctx, gcs_source_stats *out);

/* What a sink did: 0 = one request, else the resumable chunks sent. */
typedef struct gcs_sink_stats {
    unsigned long chunks, status_queries;
    int resumable;
} gcs_sink_stats;
void tfrec_gcs_sink_stats(void *ctx, gcs_sink_stats *out);

#endif

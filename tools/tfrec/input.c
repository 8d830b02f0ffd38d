/* Reading one input file record by record, with error reporting. */
#include <inttypes.h>
#include <string.h>

#include "cli.h"

static void warn_skip(void *ctx, const char *file, uint64_t offset, uint64_t bytes, const char *why)
{
    (void)ctx;
    why = cli_strip_file(why, file);
    cli_log("%s: skipped corrupt region at offset %" PRIu64 " (%" PRIu64 " bytes)%s%s", file,
            offset, bytes, why && *why ? ": " : "", why ? why : "");
}

const char *cli_strip_file(const char *msg, const char *file)
{
    size_t n = strlen(file);
    if (msg && strncmp(msg, file, n) == 0 && msg[n] == ':' && msg[n + 1] == ' ')
        return msg + n + 2;
    return msg;
}

static void report(const cli_read_opts *o, cli_file_result *res, const char *msg)
{
    snprintf(res->error, sizeof res->error, "%s", msg);
    if (!o->keep_errors)
        cli_log("%s", msg);
}

void cli_read_file(const char *path, const cli_read_opts *o, cli_record_fn fn, void *ctx,
                   cli_file_result *res)
{
    memset(res, 0, sizeof *res);
    tfrec_reader_options ro = TFREC_READER_OPTIONS_INIT;
    ro.compression = o->compression;
    ro.skip_corrupt = o->skip_corrupt;
    ro.max_record_size = o->max_record_size;
    tfrec_reader *r;
    int rc = cli_reader_open(&r, path, &ro);
    if (rc) {
        report(o, res, tfrec_last_errmsg());
        res->status = cli_worst(cli_exit_for(rc), EXIT_IO);
        return;
    }
    res->compression = tfrec_reader_compression(r);
    void (*on_skip)(void *, const char *, uint64_t, uint64_t, const char *) =
        o->on_skip ? o->on_skip : warn_skip;

    /* A skipped region starts where the last good record ended (or at 0)
     * and is as long as the growth of the skipped-bytes counter; this does
     * not depend on how the reader words its messages. */
    uint64_t good_end = 0, seen_regions = 0, seen_bytes = 0, index = 0;
    for (;;) {
        if (cli_interrupted) {
            report(o, res, "interrupted");
            res->status = cli_worst(res->status, EXIT_INTERRUPTED);
            res->stopped = 1;
            break;
        }
        const uint8_t *data;
        size_t len;
        rc = tfrec_reader_next(r, &data, &len);

        tfrec_reader_stats st = TFREC_READER_STATS_INIT;
        tfrec_reader_stats_get(r, &st);
        if (st.skipped_regions > seen_regions) {
            on_skip(ctx, path, good_end, st.skipped_bytes - seen_bytes, tfrec_reader_errmsg(r));
            seen_regions = st.skipped_regions;
            seen_bytes = st.skipped_bytes;
        }
        if (rc == TFREC_END)
            break;
        if (rc < 0) {
            report(o, res, tfrec_reader_errmsg(r));
            res->status = cli_worst(res->status, cli_exit_for(rc));
            break;
        }
        cli_record rec = { path, index, tfrec_reader_offset(r), data, len };
        good_end = rec.offset + 16 + len;
        res->records++;
        res->bytes += len;
        index++;
        int cb = fn ? fn(ctx, &rec) : CLI_CONTINUE;
        if (cb == CLI_STOP) {
            res->stopped = 1;
            break;
        }
        if (cb != CLI_CONTINUE) {
            res->status = cli_worst(res->status, cb);
            res->stopped = 1;
            break;
        }
    }
    res->skipped_regions = seen_regions;
    res->skipped_bytes = seen_bytes;
    tfrec_reader_free(r);
}

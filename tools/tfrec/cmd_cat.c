/* tfrec cat, tfrec head: records to stdout as raw bytes, TFRecord frames or
 * JSON lines. */
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "cli.h"
#include "tfrec/fs.h"

enum { OUT_RAW, OUT_FRAMED, OUT_JSON };

typedef struct emit_state {
    int mode;
    int raw, framed; /* the flags, turned into mode once parsed */
    int object;      /* cat --raw: the files' bytes as stored, not as TFRecord */
    cli_read_opts o;
    dump_opts d;
    tfrec_writer *w; /* OUT_FRAMED: an uncompressed TFRecord stream on stdout */
    uint64_t limit;  /* records to emit; UINT64_MAX for all */
    uint64_t done;
} emit_state;

static int emit_one(void *ctx, const cli_record *rec)
{
    emit_state *s = ctx;
    switch (s->mode) {
    case OUT_RAW:
        if (rec->len && fwrite(rec->data, 1, rec->len, stdout) != rec->len)
            return EXIT_IO;
        break;
    case OUT_FRAMED: {
        int rc = tfrec_writer_write(s->w, rec->data, rec->len);
        if (rc) {
            cli_log("%s", tfrec_writer_errmsg(s->w));
            return EXIT_IO;
        }
        break;
    }
    default:
        dump_record_json(stdout, rec, &s->d);
        if (ferror(stdout))
            return EXIT_IO;
    }
    s->done++;
    return s->done >= s->limit ? CLI_STOP : CLI_CONTINUE;
}

/* cat --raw: one file or object's bytes as they are (a manifest.json, an
 * index), through the file system layer. */
static int copy_object(const char *name)
{
    tfrec_io io = TFREC_IO_INIT;
    int rc = tfrec_fs_open_source(NULL, name, &io);
    if (rc) {
        cli_log("%s", tfrec_last_errmsg());
        return cli_worst(cli_exit_for(rc), EXIT_IO);
    }
    char buf[1 << 16];
    ptrdiff_t n;
    int status = EXIT_OK;
    while ((n = io.read(io.ctx, buf, sizeof buf)) > 0 && !cli_interrupted)
        if (fwrite(buf, 1, (size_t)n, stdout) != (size_t)n) {
            status = EXIT_IO;
            break;
        }
    if (n < 0) {
        cli_log("%s: %s", name, io.errmsg ? io.errmsg(io.ctx) : tfrec_strerror((int)n));
        status = cli_worst(status, cli_worst(cli_exit_for((int)n), EXIT_IO));
    }
    io.close(io.ctx, 0);
    return cli_interrupted ? EXIT_INTERRUPTED : status;
}

/* Read the files in order into s; stops at the first error. */
static int run(void *ctx, const cli_files *files)
{
    emit_state *s = ctx;
    const cli_read_opts *o = &s->o;
    if (s->object) {
        int status = EXIT_OK;
        for (size_t i = 0; i < files->n && status == EXIT_OK; i++)
            status = copy_object(files->paths[i]);
        return cli_worst(status, cli_flush_stdout());
    }
    /* both: --framed (the stricter format) wins */
    if (s->raw || s->framed)
        s->mode = s->framed ? OUT_FRAMED : OUT_RAW;
    if (s->mode == OUT_FRAMED) {
        tfrec_writer_options wo = TFREC_WRITER_OPTIONS_INIT;
        wo.compression = TFREC_COMPRESSION_NONE;
        int rc = tfrec_writer_open(&s->w, "-", &wo);
        if (rc) {
            cli_log("%s", tfrec_last_errmsg());
            return EXIT_IO;
        }
    }
    int status = EXIT_OK;
    for (size_t i = 0; i < files->n && s->done < s->limit; i++) {
        cli_file_result res;
        cli_read_file(files->paths[i], o, emit_one, s, &res);
        status = cli_worst(status, res.status);
        if (res.status != EXIT_OK)
            break;
    }
    if (s->w) {
        /* Standard output cannot be taken back, so close (not abort) even
         * after an input error: what was written stays well-formed. */
        if (tfrec_writer_close(s->w)) {
            cli_log("%s", tfrec_writer_errmsg(s->w));
            status = cli_worst(status, EXIT_IO);
        }
        tfrec_writer_free(s->w);
    }
    return cli_worst(status, cli_flush_stdout());
}

static const char cat_help[] =
    "Usage: tfrec cat [FLAGS] FILE...\n"
    "Write the records of the files, in order, to standard output: by default\n"
    "the payload bytes back to back (no separators); with --framed as one\n"
    "uncompressed TFRecord stream (so 'tfrec cat --framed a.gz b > c' joins and\n"
    "decompresses files). With --raw the files' bytes as stored, whatever they\n"
    "hold (a manifest.json beside the shards, say), not read as TFRecord.\n";

static const char head_help[] =
    "Usage: tfrec head [-n N] [FLAGS] FILE...\n"
    "The first N records (default 10) of the files taken in order, as JSON lines\n"
    "like 'tfrec dump', or raw / framed like 'tfrec cat'.\n";

int cmd_cat(int argc, char **argv)
{
    emit_state s;
    memset(&s, 0, sizeof s);
    s.mode = OUT_RAW;
    s.limit = UINT64_MAX;
    cli_flag flags[] = { CLI_READ_FLAGS(&s.o),
                         CLI_SKIP_FLAG(&s.o),
                         { .name = "framed",
                           .type = CLI_BOOL,
                           .dest = &s.framed,
                           .help = "TFRecord framing (length, CRCs) around each record" },
                         { .name = "raw",
                           .type = CLI_BOOL,
                           .dest = &s.object,
                           .help = "the files' bytes as stored (any file or object,\n"
                                   "e.g. manifest.json), not read as TFRecord" },
                         { 0 } };
    return cli_cmd_run("tfrec cat", cat_help, flags, argc, argv, run, &s);
}

int cmd_head(int argc, char **argv)
{
    emit_state s;
    memset(&s, 0, sizeof s);
    s.mode = OUT_JSON;
    s.limit = 10;
    cli_flag flags[] = { { .name = "records",
                           .short_name = 'n',
                           .type = CLI_UINT64,
                           .dest = &s.limit,
                           .help = "how many records (default 10)" },
                         CLI_READ_FLAGS(&s.o),
                         CLI_SKIP_FLAG(&s.o),
                         { .name = "full",
                           .short_name = 'f',
                           .type = CLI_BOOL,
                           .dest = &s.d.full,
                           .help = "bytes values in full in the JSON" },
                         { .name = "raw",
                           .type = CLI_BOOL,
                           .dest = &s.raw,
                           .help = "payload bytes back to back instead of JSON" },
                         { .name = "framed",
                           .type = CLI_BOOL,
                           .dest = &s.framed,
                           .help = "an uncompressed TFRecord stream instead of JSON" },
                         { 0 } };
    return cli_cmd_run("tfrec head", head_help, flags, argc, argv, run, &s);
}

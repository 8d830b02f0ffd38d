/* tfrec dump: records as JSON lines, decoded as tf.Example when they parse.
 *
 *   {"file":"f","index":0,"offset":0,"length":27,"example":{
 *      "label":{"int64":[3]},"score":{"float":[0.5]},
 *      "name":{"bytes":[{"len":3,"b64":"Y2F0","text":"cat"}]}}}
 *
 * Bytes values longer than PREFIX_BYTES show "b64_prefix" (their first
 * PREFIX_BYTES bytes) instead of "b64" unless --full; "b64" is always the
 * complete value. A record that is not a valid Example shows "raw" with the
 * same fields instead of "example".
 */
#include <inttypes.h>
#include <string.h>

#include "cli.h"
#include "json.h"

#define PREFIX_BYTES 24
#define TEXT_MAX 80 /* longer values get no "text" unless --full */

static void bytes_value(FILE *out, const uint8_t *d, size_t len, int full)
{
    fprintf(out, "{\"len\":%zu,", len);
    if (full || len <= PREFIX_BYTES) {
        json_key(out, "b64");
        json_base64(out, d, len);
    } else {
        json_key(out, "b64_prefix");
        json_base64(out, d, PREFIX_BYTES);
    }
    if ((full || len <= TEXT_MAX) && json_is_text(d, len)) {
        putc(',', out);
        json_key(out, "text");
        json_string(out, (const char *)d, len);
    }
    putc('}', out);
}

static void feature_json(FILE *out, const tfrec_example *ex, const char *key, int full)
{
    size_t n = tfrec_example_value_count(ex, key);
    switch (tfrec_example_feature_type(ex, key)) {
    case TFREC_FEATURE_BYTES:
        fputs("{\"bytes\":[", out);
        for (size_t i = 0; i < n; i++) {
            const uint8_t *d;
            size_t len;
            tfrec_example_get_bytes(ex, key, i, &d, &len);
            if (i)
                putc(',', out);
            bytes_value(out, d, len, full);
        }
        fputs("]}", out);
        break;
    case TFREC_FEATURE_INT64: {
        const int64_t *v;
        tfrec_example_get_int64_list(ex, key, &v, &n);
        fputs("{\"int64\":[", out);
        for (size_t i = 0; i < n; i++)
            fprintf(out, i ? ",%" PRId64 : "%" PRId64, v[i]);
        fputs("]}", out);
        break;
    }
    case TFREC_FEATURE_FLOAT: {
        const float *v;
        tfrec_example_get_float_list(ex, key, &v, &n);
        fputs("{\"float\":[", out);
        for (size_t i = 0; i < n; i++) {
            if (i)
                putc(',', out);
            json_float(out, v[i]);
        }
        fputs("]}", out);
        break;
    }
    default:
        fputs("{}", out); /* a Feature with no list set */
    }
}

void dump_record_json(FILE *out, const cli_record *rec, const dump_opts *d)
{
    fputs("{\"file\":", out);
    json_cstr(out, rec->file);
    fprintf(out, ",\"index\":%" PRIu64 ",\"offset\":%" PRIu64 ",\"length\":%zu,", rec->index,
            rec->offset, rec->len);
    tfrec_example *ex = NULL;
    if (!d->raw && tfrec_example_parse(&ex, rec->data, rec->len) == TFREC_OK) {
        fputs("\"example\":{", out);
        for (size_t i = 0; i < tfrec_example_feature_count(ex); i++) {
            const char *key = tfrec_example_feature_key(ex, i);
            if (i)
                putc(',', out);
            json_key(out, key);
            feature_json(out, ex, key, d->full);
        }
        fputs("}}\n", out);
        tfrec_example_free(ex);
        return;
    }
    fputs("\"raw\":", out);
    bytes_value(out, rec->data, rec->len, d->full);
    fputs("}\n", out);
}

static const char dump_help[] =
    "Usage: tfrec dump [FLAGS] FILE...\n"
    "Print every record as one JSON object per line:\n"
    "  {\"file\":F,\"index\":I,\"offset\":O,\"length\":L,\"example\":{KEY:FEATURE,...}}\n"
    "FEATURE is {\"int64\":[...]}, {\"float\":[...]} or {\"bytes\":[VALUE,...]} with VALUE\n"
    "{\"len\":N,\"b64\":...} (complete) or {\"len\":N,\"b64_prefix\":...} (first 24\n"
    "bytes), plus \"text\" for short printable UTF-8. Non-finite floats are the\n"
    "strings \"NaN\", \"Infinity\", \"-Infinity\". A record that is not a tf.Example\n"
    "has \"raw\":VALUE instead of \"example\".\n";

typedef struct dump_state {
    dump_opts d;
    cli_read_opts o;
} dump_state;

static int dump_one(void *ctx, const cli_record *rec)
{
    dump_state *s = ctx;
    dump_record_json(stdout, rec, &s->d);
    return ferror(stdout) ? EXIT_IO : CLI_CONTINUE;
}

static int dump_files(void *ctx, const cli_files *files)
{
    dump_state *s = ctx;
    int status = EXIT_OK;
    for (size_t i = 0; i < files->n && status == EXIT_OK; i++) {
        cli_file_result res;
        cli_read_file(files->paths[i], &s->o, dump_one, s, &res);
        status = cli_worst(status, res.status);
    }
    return cli_worst(status, cli_flush_stdout());
}

int cmd_dump(int argc, char **argv)
{
    dump_state s;
    memset(&s, 0, sizeof s);
    cli_flag flags[] = {
        CLI_READ_FLAGS(&s.o), CLI_SKIP_FLAG(&s.o),
        { .name = "full", .short_name = 'f', .type = CLI_BOOL, .dest = &s.d.full,
          .help = "bytes values in full (b64 and text, any length)" },
        { .name = "raw", .short_name = 'r', .type = CLI_BOOL, .dest = &s.d.raw,
          .help = "do not decode records as tf.Example" },
        { 0 }
    };
    return cli_cmd_run("tfrec dump", dump_help, flags, argc, argv, dump_files, &s);
}

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
#include <string.h>

#include "cli.h"
#include "util/json_writer.h"

#define PREFIX_BYTES 24
#define TEXT_MAX 80 /* longer values get no "text" unless --full */

static void bytes_value(tfrec_json *j, const uint8_t *d, size_t len, int full)
{
    tfrec_json_object_begin(j);
    tfrec_json_field_uint(j, "len", len);
    tfrec_json_key(j, full || len <= PREFIX_BYTES ? "b64" : "b64_prefix");
    tfrec_json_base64(j, d, full || len <= PREFIX_BYTES ? len : PREFIX_BYTES);
    if ((full || len <= TEXT_MAX) && tfrec_json_is_text(d, len)) {
        tfrec_json_key(j, "text");
        tfrec_json_str_n(j, (const char *)d, len);
    }
    tfrec_json_object_end(j);
}

static void feature_json(tfrec_json *j, const tfrec_example *ex, const char *key, int full)
{
    size_t n = tfrec_example_value_count(ex, key);
    tfrec_json_object_begin(j); /* stays empty for a Feature with no list set */
    switch (tfrec_example_feature_type(ex, key)) {
    case TFREC_FEATURE_BYTES:
        tfrec_json_key(j, "bytes");
        tfrec_json_array_begin(j);
        for (size_t i = 0; i < n; i++) {
            const uint8_t *d;
            size_t len;
            tfrec_example_get_bytes(ex, key, i, &d, &len);
            bytes_value(j, d, len, full);
        }
        tfrec_json_array_end(j);
        break;
    case TFREC_FEATURE_INT64: {
        const int64_t *v;
        tfrec_example_get_int64_list(ex, key, &v, &n);
        tfrec_json_key(j, "int64");
        tfrec_json_array_begin(j);
        for (size_t i = 0; i < n; i++)
            tfrec_json_int(j, v[i]);
        tfrec_json_array_end(j);
        break;
    }
    case TFREC_FEATURE_FLOAT: {
        const float *v;
        tfrec_example_get_float_list(ex, key, &v, &n);
        tfrec_json_key(j, "float");
        tfrec_json_array_begin(j);
        for (size_t i = 0; i < n; i++)
            tfrec_json_float32(j, v[i]);
        tfrec_json_array_end(j);
        break;
    }
    default: break;
    }
    tfrec_json_object_end(j);
}

void dump_record_json(FILE *out, const cli_record *rec, const dump_opts *d)
{
    tfrec_json j;
    tfrec_json_init(&j, out);
    tfrec_json_object_begin(&j);
    tfrec_json_field_str(&j, "file", rec->file);
    tfrec_json_field_uint(&j, "index", rec->index);
    tfrec_json_field_uint(&j, "offset", rec->offset);
    tfrec_json_field_uint(&j, "length", rec->len);
    tfrec_example *ex = NULL;
    if (!d->raw && tfrec_example_parse(&ex, rec->data, rec->len) == TFREC_OK) {
        tfrec_json_key(&j, "example");
        tfrec_json_object_begin(&j);
        for (size_t i = 0; i < tfrec_example_feature_count(ex); i++) {
            const char *key = tfrec_example_feature_key(ex, i);
            tfrec_json_key(&j, key);
            feature_json(&j, ex, key, d->full);
        }
        tfrec_json_object_end(&j);
        tfrec_example_free(ex);
    } else {
        tfrec_json_key(&j, "raw");
        bytes_value(&j, rec->data, rec->len, d->full);
    }
    tfrec_json_object_end(&j);
    tfrec_json_newline(&j);
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
    cli_flag flags[] = { CLI_READ_FLAGS(&s.o),
                         CLI_SKIP_FLAG(&s.o),
                         { .name = "full",
                           .short_name = 'f',
                           .type = CLI_BOOL,
                           .dest = &s.d.full,
                           .help = "bytes values in full (b64 and text, any length)" },
                         { .name = "raw",
                           .short_name = 'r',
                           .type = CLI_BOOL,
                           .dest = &s.d.raw,
                           .help = "do not decode records as tf.Example" },
                         { 0 } };
    return cli_cmd_run("tfrec dump", dump_help, flags, argc, argv, dump_files, &s);
}

/* tfrec stats: record size distribution and a census of tf.Example features. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "util/json_writer.h"
#include "util/vec.h"

#define MAX_KEYS 100000 /* distinct feature keys tracked; more are counted only */

typedef struct key_stat {
    char *key;
    unsigned types;   /* bit (1 << TFREC_FEATURE_*) for every type seen */
    uint64_t records; /* records that have the key */
    uint64_t values;  /* values over all those records */
    uint64_t min_values, max_values;
} key_stat;

typedef struct stats_state {
    uint64_t *sizes;
    size_t n_sizes, cap_sizes;
    uint64_t examples, non_examples;
    key_stat *keys;
    size_t n_keys, cap_keys;
    size_t *table; /* open addressing: index + 1 into keys, 0 = empty */
    size_t table_cap;
    uint64_t untracked_keys;
    int oom;
} stats_state;

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return h;
}

static int table_grow(stats_state *s)
{
    size_t cap = s->table_cap ? s->table_cap * 2 : 64;
    size_t *t = calloc(cap, sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < s->n_keys; i++) {
        size_t h = (size_t)hash_str(s->keys[i].key) & (cap - 1);
        while (t[h])
            h = (h + 1) & (cap - 1);
        t[h] = i + 1;
    }
    free(s->table);
    s->table = t;
    s->table_cap = cap;
    return 0;
}

/* The stats slot for key, created on first sight; NULL when full or OOM. */
static key_stat *key_slot(stats_state *s, const char *key)
{
    if (s->n_keys * 2 >= s->table_cap && table_grow(s))
        return NULL;
    size_t h = (size_t)hash_str(key) & (s->table_cap - 1);
    while (s->table[h]) {
        key_stat *k = &s->keys[s->table[h] - 1];
        if (!strcmp(k->key, key))
            return k;
        h = (h + 1) & (s->table_cap - 1);
    }
    if (s->n_keys >= MAX_KEYS)
        return NULL;
    if (tfrec_vec_reserve(&s->keys, &s->cap_keys, s->n_keys + 1, 32))
        return NULL;
    key_stat *k = &s->keys[s->n_keys];
    memset(k, 0, sizeof *k);
    if (!(k->key = strdup(key)))
        return NULL;
    k->min_values = UINT64_MAX;
    s->table[h] = ++s->n_keys;
    return k;
}

static int stats_one(void *ctx, const cli_record *rec)
{
    stats_state *s = ctx;
    if (tfrec_vec_reserve(&s->sizes, &s->cap_sizes, s->n_sizes + 1, 1024)) {
        cli_log("out of memory");
        return EXIT_IO;
    }
    s->sizes[s->n_sizes++] = rec->len;

    tfrec_example *ex;
    if (tfrec_example_parse(&ex, rec->data, rec->len) != TFREC_OK) {
        s->non_examples++;
        return CLI_CONTINUE;
    }
    s->examples++;
    for (size_t i = 0; i < tfrec_example_feature_count(ex); i++) {
        const char *key = tfrec_example_feature_key(ex, i);
        key_stat *k = key_slot(s, key);
        if (!k) {
            s->untracked_keys++;
            continue;
        }
        uint64_t n = tfrec_example_value_count(ex, key);
        k->types |= 1u << tfrec_example_feature_type(ex, key);
        k->records++;
        k->values += n;
        if (n < k->min_values)
            k->min_values = n;
        if (n > k->max_values)
            k->max_values = n;
    }
    tfrec_example_free(ex);
    return CLI_CONTINUE;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_key(const void *a, const void *b)
{
    return strcmp(((const key_stat *)a)->key, ((const key_stat *)b)->key);
}

/* Nearest-rank percentile of the sorted sizes. */
static uint64_t percentile(const stats_state *s, unsigned p)
{
    size_t rank = (s->n_sizes * p + 99) / 100;
    return s->sizes[rank ? rank - 1 : 0];
}

static const char *const type_name[] = { "none", "bytes", "float", "int64" };

/* "int64", or "bytes|int64" when records disagree. */
static void type_names(char *buf, size_t cap, unsigned types)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int t = 0; t < 4; t++) {
        if (!(types & (1u << t)))
            continue;
        o += (size_t)snprintf(buf + o, cap - o, "%s%s", o ? "|" : "", type_name[t]);
    }
}

typedef struct totals {
    size_t files;
    uint64_t bytes, skipped_regions, skipped_bytes;
} totals;

static void print_text(const stats_state *s, const totals *t)
{
    printf("files:            %zu\n", t->files);
    printf("records:          %zu\n", s->n_sizes);
    printf("payload bytes:    %" PRIu64 "\n", t->bytes);
    if (s->n_sizes)
        printf("record size:      min %" PRIu64 ", mean %.1f, p50 %" PRIu64 ", p90 %" PRIu64
               ", p99 %" PRIu64 ", max %" PRIu64 "\n",
               s->sizes[0], (double)t->bytes / (double)s->n_sizes, percentile(s, 50),
               percentile(s, 90), percentile(s, 99), s->sizes[s->n_sizes - 1]);
    printf("tf.Example:       %" PRIu64 " records (%" PRIu64 " not tf.Example)\n", s->examples,
           s->non_examples);
    if (t->skipped_regions)
        printf("corrupt skipped:  %" PRIu64 " regions, %" PRIu64 " bytes\n", t->skipped_regions,
               t->skipped_bytes);
    if (!s->n_keys)
        return;
    size_t w = 7;
    for (size_t i = 0; i < s->n_keys; i++)
        if (strlen(s->keys[i].key) > w)
            w = strlen(s->keys[i].key);
    printf("features:\n  %-*s  %-6s %10s  %s\n", (int)w, "key", "type", "records",
           "values per record (min/mean/max)");
    for (size_t i = 0; i < s->n_keys; i++) {
        const key_stat *k = &s->keys[i];
        char types[64];
        type_names(types, sizeof types, k->types);
        printf("  %-*s  %-6s %10" PRIu64 "  %" PRIu64 "/%.2f/%" PRIu64 "\n", (int)w, k->key, types,
               k->records, k->min_values, (double)k->values / (double)k->records, k->max_values);
    }
    if (s->untracked_keys)
        printf("  (%" PRIu64 " occurrences of keys beyond the first %d not tracked)\n",
               s->untracked_keys, MAX_KEYS);
}

static void print_json(const stats_state *s, const totals *t)
{
    tfrec_json j;
    tfrec_json_init(&j, stdout);
    tfrec_json_object_begin(&j);
    tfrec_json_field_uint(&j, "files", t->files);
    tfrec_json_field_uint(&j, "records", s->n_sizes);
    tfrec_json_field_uint(&j, "bytes", t->bytes);
    if (s->n_sizes) {
        tfrec_json_key(&j, "size");
        tfrec_json_object_begin(&j);
        tfrec_json_field_uint(&j, "min", s->sizes[0]);
        tfrec_json_key(&j, "mean");
        tfrec_json_fixed(&j, (double)t->bytes / (double)s->n_sizes, 3);
        tfrec_json_field_uint(&j, "p50", percentile(s, 50));
        tfrec_json_field_uint(&j, "p90", percentile(s, 90));
        tfrec_json_field_uint(&j, "p99", percentile(s, 99));
        tfrec_json_field_uint(&j, "max", s->sizes[s->n_sizes - 1]);
        tfrec_json_object_end(&j);
    }
    tfrec_json_field_uint(&j, "examples", s->examples);
    tfrec_json_field_uint(&j, "non_examples", s->non_examples);
    tfrec_json_field_uint(&j, "skipped_regions", t->skipped_regions);
    tfrec_json_field_uint(&j, "skipped_bytes", t->skipped_bytes);
    tfrec_json_key(&j, "features");
    tfrec_json_array_begin(&j);
    for (size_t i = 0; i < s->n_keys; i++) {
        const key_stat *k = &s->keys[i];
        tfrec_json_object_begin(&j);
        tfrec_json_field_str(&j, "key", k->key);
        tfrec_json_key(&j, "types");
        tfrec_json_array_begin(&j);
        for (int ty = 0; ty < 4; ty++)
            if (k->types & (1u << ty))
                tfrec_json_str(&j, type_name[ty]);
        tfrec_json_array_end(&j);
        tfrec_json_field_uint(&j, "records", k->records);
        tfrec_json_field_uint(&j, "values", k->values);
        tfrec_json_field_uint(&j, "min_values", k->min_values);
        tfrec_json_field_uint(&j, "max_values", k->max_values);
        tfrec_json_object_end(&j);
    }
    tfrec_json_array_end(&j);
    tfrec_json_field_uint(&j, "untracked_keys", s->untracked_keys);
    tfrec_json_object_end(&j);
    tfrec_json_newline(&j);
}

static const char stats_help[] =
    "Usage: tfrec stats [FLAGS] FILE...\n"
    "Summarise the files together: record count, payload bytes, record size\n"
    "min/mean/p50/p90/p99/max (nearest rank), how many records are tf.Examples,\n"
    "and for every feature key its type(s), the number of records that have it\n"
    "and the number of values per record.\n";

typedef struct stats_cmd {
    cli_read_opts o;
    int as_json;
} stats_cmd;

static int stats_files(void *ctx, const cli_files *files)
{
    const stats_cmd *c = ctx;
    const cli_read_opts *o = &c->o;
    int as_json = c->as_json;
    int status = EXIT_OK;
    stats_state s = { 0 };
    totals t = { files->n, 0, 0, 0 };
    for (size_t i = 0; i < files->n && status != EXIT_INTERRUPTED; i++) {
        cli_file_result res;
        cli_read_file(files->paths[i], o, stats_one, &s, &res);
        status = cli_worst(status, res.status);
        t.bytes += res.bytes;
        t.skipped_regions += res.skipped_regions;
        t.skipped_bytes += res.skipped_bytes;
    }
    if (status == EXIT_OK) {
        if (s.n_sizes) /* qsort(NULL, 0, ...) is undefined */
            qsort(s.sizes, s.n_sizes, sizeof *s.sizes, cmp_u64);
        if (s.n_keys)
            qsort(s.keys, s.n_keys, sizeof *s.keys, cmp_key);
        if (as_json)
            print_json(&s, &t);
        else
            print_text(&s, &t);
    }
    for (size_t i = 0; i < s.n_keys; i++)
        free(s.keys[i].key);
    free(s.keys);
    free(s.table);
    free(s.sizes);
    return cli_worst(status, cli_flush_stdout());
}

int cmd_stats(int argc, char **argv)
{
    stats_cmd c = { { 0 }, 0 };
    cli_flag flags[] = { CLI_READ_FLAGS(&c.o),
                         CLI_SKIP_FLAG(&c.o),
                         { .name = "json",
                           .short_name = 'j',
                           .type = CLI_BOOL,
                           .dest = &c.as_json,
                           .help = "one JSON object instead of text" },
                         { 0 } };
    return cli_cmd_run("tfrec stats", stats_help, flags, argc, argv, stats_files, &c);
}

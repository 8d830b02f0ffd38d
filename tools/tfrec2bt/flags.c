/* Command-line flags: the reference's names and defaults, plus our own. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfrec2bt.h"

static void usage(FILE *out)
{
    fputs(
        "usage: tfrec2bt --source_glob=GLOB --bigtable_instance=I --bigtable_table=T [flags]\n"
        "\n"
        "Flags of tfrecords_to_bigtable.py (same meaning and defaults):\n"
        "  --source_glob=GLOB        TFRecord files to load (sorted, read in order)\n"
        "  --bigtable_instance=I     Cloud Bigtable instance\n"
        "  --bigtable_table=T        table to write to\n"
        "  --project=P               project (default: from the GCE metadata server)\n"
        "  --num_records=N           write at most N records; keys are zero-padded to\n"
        "                            the digits of N-1 (10 digits when unset)\n"
        "  --num_parallel_reads=N    accepted for compatibility (files are read in order)\n"
        "  --column_family=F         [tfexample]\n"
        "  --column=C                column qualifier [example]\n"
        "  --row_prefix=P            row key prefix [train_]\n"
        "\n"
        "Beyond the reference:\n"
        "  --start_index=N           skip the first N records (their keys keep their index)\n"
        "  --resume                  continue from the progress file's acknowledged index\n"
        "  --progress_file=PATH      [tfrec2bt-<instance>-<table>.progress]\n"
        "  --max_inflight=N          MutateRows calls in flight [2]\n"
        "  --batch_bytes=N           request size limit, suffix K/M allowed [8M]\n"
        "  --batch_rows=N            rows per request [5000]\n"
        "  --max_message_bytes=N     gRPC channel message limit [256M]\n"
        "  --retry_timeout=SECONDS   give up on a row this long after its first failure [600]\n"
        "  --rpc_timeout=SECONDS     deadline of each MutateRows attempt [120]\n"
        "  --max_rows_per_sec=N      throttle, to spare a cluster that is serving [unlimited]\n"
        "  --row_key_order=sequential|reversed\n"
        "                            reversed writes the padded digits backwards, spreading\n"
        "                            a sequential load over tablets (see docs/bigtable.md)\n"
        "  --create_table            create the table / column family if missing\n"
        "  --dry_run                 read the files and show the keys; write nothing\n"
        "  --quiet                   no progress display\n"
        "\n"
        "BIGTABLE_EMULATOR_HOST=host:port selects the emulator (no credentials).\n",
        out);
}

static int parse_u64(const char *name, const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    if (!s || !*s || *s == '-') goto bad;
    unsigned long long v = strtoull(s, &end, 10);
    uint64_t mul = 1;
    if (*end == 'K' || *end == 'k') mul = 1024, end++;
    else if (*end == 'M' || *end == 'm') mul = 1024 * 1024, end++;
    else if (*end == 'G' || *end == 'g') mul = 1024ull * 1024 * 1024, end++;
    if (errno || *end) goto bad;
    *out = (uint64_t)v * mul;
    return 0;
bad:
    fprintf(stderr, "tfrec2bt: --%s: '%s' is not a non-negative integer\n", name, s ? s : "");
    return -1;
}

enum {
    F_SOURCE = 1000, F_INSTANCE, F_TABLE, F_PROJECT, F_NUM_RECORDS, F_PARALLEL, F_FAMILY,
    F_COLUMN, F_PREFIX, F_START, F_RESUME, F_PROGRESS, F_INFLIGHT, F_BATCH_BYTES, F_BATCH_ROWS,
    F_MAX_MSG, F_RETRY, F_ORDER, F_CREATE, F_DRY, F_QUIET, F_HELP, F_RATE, F_RPC
};

int t2b_parse_flags(int argc, char **argv, t2b_flags *f)
{
    static const struct option opts[] = {
        {"source_glob", required_argument, 0, F_SOURCE},
        {"bigtable_instance", required_argument, 0, F_INSTANCE},
        {"bigtable_table", required_argument, 0, F_TABLE},
        {"project", required_argument, 0, F_PROJECT},
        {"num_records", required_argument, 0, F_NUM_RECORDS},
        {"num_parallel_reads", required_argument, 0, F_PARALLEL},
        {"column_family", required_argument, 0, F_FAMILY},
        {"column", required_argument, 0, F_COLUMN},
        {"row_prefix", required_argument, 0, F_PREFIX},
        {"start_index", required_argument, 0, F_START},
        {"resume", no_argument, 0, F_RESUME},
        {"progress_file", required_argument, 0, F_PROGRESS},
        {"max_inflight", required_argument, 0, F_INFLIGHT},
        {"batch_bytes", required_argument, 0, F_BATCH_BYTES},
        {"batch_rows", required_argument, 0, F_BATCH_ROWS},
        {"max_message_bytes", required_argument, 0, F_MAX_MSG},
        {"retry_timeout", required_argument, 0, F_RETRY},
        {"max_rows_per_sec", required_argument, 0, F_RATE},
        {"rpc_timeout", required_argument, 0, F_RPC},
        {"row_key_order", required_argument, 0, F_ORDER},
        {"create_table", no_argument, 0, F_CREATE},
        {"dry_run", no_argument, 0, F_DRY},
        {"quiet", no_argument, 0, F_QUIET},
        {"help", no_argument, 0, F_HELP},
        {0, 0, 0, 0}};
    memset(f, 0, sizeof *f);
    f->column_family = "tfexample";
    f->column = "example";
    f->row_prefix = "train_";
    f->retry_timeout_s = 600;
    f->max_failed_listed = 20;
    uint64_t v;
    int c;
    opterr = 0;
    while ((c = getopt_long_only(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case F_SOURCE: f->source_glob = optarg; break;
        case F_INSTANCE: f->instance = optarg; break;
        case F_TABLE: f->table = optarg; break;
        case F_PROJECT: f->project = optarg; break;
        case F_NUM_RECORDS:
            if (parse_u64("num_records", optarg, &f->num_records)) return 2;
            if (!f->num_records) {
                fprintf(stderr, "tfrec2bt: --num_records must be at least 1\n");
                return 2;
            }
            break;
        case F_PARALLEL:
            if (parse_u64("num_parallel_reads", optarg, &v)) return 2;
            f->num_parallel_reads = (int)v;
            break;
        case F_FAMILY: f->column_family = optarg; break;
        case F_COLUMN: f->column = optarg; break;
        case F_PREFIX: f->row_prefix = optarg; break;
        case F_START:
            if (parse_u64("start_index", optarg, &f->start_index)) return 2;
            break;
        case F_RESUME: f->resume = 1; break;
        case F_PROGRESS: f->progress_file = optarg; break;
        case F_INFLIGHT:
            if (parse_u64("max_inflight", optarg, &v)) return 2;
            if (v < 1 || v > 64) {
                fprintf(stderr, "tfrec2bt: --max_inflight must be 1..64\n");
                return 2;
            }
            f->max_inflight = (int)v;
            break;
        case F_BATCH_BYTES:
            if (parse_u64("batch_bytes", optarg, &v)) return 2;
            if (v < 1024) {
                fprintf(stderr, "tfrec2bt: --batch_bytes must be at least 1K\n");
                return 2;
            }
            f->batch_bytes = (size_t)v;
            break;
        case F_BATCH_ROWS:
            if (parse_u64("batch_rows", optarg, &v)) return 2;
            if (v < 1 || v > 99999) {
                fprintf(stderr, "tfrec2bt: --batch_rows must be 1..99999\n");
                return 2;
            }
            f->batch_rows = (size_t)v;
            break;
        case F_MAX_MSG:
            if (parse_u64("max_message_bytes", optarg, &v)) return 2;
            if (v < 1024 || v > 0x7fffffff) {
                fprintf(stderr, "tfrec2bt: --max_message_bytes must be 1K..2G\n");
                return 2;
            }
            f->max_message_bytes = (int64_t)v;
            break;
        case F_RETRY: {
            char *end;
            f->retry_timeout_s = strtod(optarg, &end);
            if (*end || f->retry_timeout_s < 0) {
                fprintf(stderr, "tfrec2bt: --retry_timeout: '%s' is not a number of seconds\n",
                        optarg);
                return 2;
            }
            break;
        }
        case F_RPC: {
            char *end;
            f->rpc_timeout_s = strtod(optarg, &end);
            if (*end || f->rpc_timeout_s <= 0) {
                fprintf(stderr, "tfrec2bt: --rpc_timeout: '%s' is not a number of seconds\n",
                        optarg);
                return 2;
            }
            break;
        }
        case F_RATE: {
            char *end;
            f->max_rows_per_sec = strtod(optarg, &end);
            if (*end || f->max_rows_per_sec < 0) {
                fprintf(stderr, "tfrec2bt: --max_rows_per_sec: '%s' is not a rate\n", optarg);
                return 2;
            }
            break;
        }
        case F_ORDER:
            if (!strcmp(optarg, "sequential")) f->reversed_keys = 0;
            else if (!strcmp(optarg, "reversed")) f->reversed_keys = 1;
            else {
                fprintf(stderr, "tfrec2bt: --row_key_order must be sequential or reversed, not '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case F_CREATE: f->create_table = 1; break;
        case F_DRY: f->dry_run = 1; break;
        case F_QUIET: f->quiet = 1; break;
        case F_HELP: usage(stdout); exit(0);
        default:
            fprintf(stderr, "tfrec2bt: unknown or incomplete flag '%s'\n", argv[optind - 1]);
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "tfrec2bt: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    const char *missing = !f->source_glob ? "--source_glob"
                          : (!f->dry_run && !f->instance) ? "--bigtable_instance"
                          : (!f->dry_run && !f->table) ? "--bigtable_table" : NULL;
    if (missing) {
        fprintf(stderr, "tfrec2bt: %s is required (see --help)\n", missing);
        return 2;
    }
    if (!*f->column_family || !*f->column) {
        fprintf(stderr, "tfrec2bt: --column_family and --column must not be empty\n");
        return 2;
    }
    if (f->resume && f->start_index) {
        fprintf(stderr, "tfrec2bt: use either --resume or --start_index, not both\n");
        return 2;
    }
    return 0;
}

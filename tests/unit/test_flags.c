/* The tools' shared flag parser (tools/common/flags.c): every absl form,
 * short options, typed values with range and overflow checks, flagfiles
 * (comments, nesting, the depth limit), unknown flags with suggestions,
 * and the help text. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../tools/common/flags.h"
#include "../../tools/common/task.h"
#include "harness.h"

typedef struct opts {
    int quiet, skip, create;
    const char *glob, *prefix;
    int inflight;
    int64_t offset;
    uint64_t records, batch_bytes;
    double rate;
    int order;
    int level; /* via the custom parser: 1..9 written as "L1".."L9" */
} opts;

static int parse_level(const char *v, void *dest, char *err, size_t errcap)
{
    if (v[0] == 'L' && v[1] >= '1' && v[1] <= '9' && !v[2]) {
        *(int *)dest = v[1] - '0';
        return 0;
    }
    snprintf(err, errcap, "'%s' is not L1..L9", v);
    return -1;
}

static const char *const orders[] = { "sequential", "reversed", NULL };

/* A fresh table each time: the parser counts what it has seen in it. */
static cli_flag table[16];
static opts o;

static void setup(cli_cmdline *cl, int max_args)
{
    memset(&o, 0, sizeof o);
    o.prefix = "train_";
    cli_flag t[] = {
        { .name = "quiet", .short_name = 'q', .type = CLI_BOOL, .dest = &o.quiet, .help = "quiet" },
        { .name = "skip-corrupt", .short_name = 'S', .type = CLI_BOOL, .dest = &o.skip },
        { .name = "create_table", .type = CLI_BOOL, .dest = &o.create },
        { .name = "source_glob",
          .type = CLI_STRING,
          .dest = &o.glob,
          .value_name = "GLOB",
          .help = "files to load\nsecond line" },
        { .name = "row_prefix", .type = CLI_STRING, .dest = &o.prefix },
        { .name = "max_inflight",
          .short_name = 'n',
          .type = CLI_INT,
          .dest = &o.inflight,
          .min = 1,
          .max = 64 },
        { .name = "offset", .type = CLI_INT64, .dest = &o.offset },
        { .name = "num_records", .type = CLI_UINT64, .dest = &o.records },
        { .name = "batch_bytes",
          .short_name = 'b',
          .type = CLI_SIZE,
          .dest = &o.batch_bytes,
          .umin = 1024,
          .umax = UINT64_MAX,
          .section = "Tuning:" },
        { .name = "max_rows_per_sec", .type = CLI_DOUBLE, .dest = &o.rate, .dmin = 0, .dmax = 1e9 },
        { .name = "row_key_order", .type = CLI_CHOICE, .dest = &o.order, .choices = orders },
        { .name = "level",
          .short_name = 'l',
          .type = CLI_CUSTOM,
          .dest = &o.level,
          .parse = parse_level },
        { 0 }
    };
    memcpy(table, t, sizeof t);
    memset(cl, 0, sizeof *cl);
    cl->prog = "tool";
    cl->usage = "usage: tool [flags] FILE...\n";
    cl->footer = "Footer text.\n";
    cl->flags = table;
    cl->max_args = max_args;
}

static char out[16384]; /* stdout and stderr of the last parse */

static int parse_v(cli_cmdline *cl, const char *first, va_list ap)
{
    char *argv[64];
    int argc = 0;
    argv[argc++] = "tool";
    for (const char *a = first; a && argc < 63; a = va_arg(ap, const char *))
        argv[argc++] = (char *)a;
    argv[argc] = NULL;
    fflush(stdout);
    fflush(stderr);
    int save_out = dup(1), save_err = dup(2);
    FILE *tmp = tmpfile();
    dup2(fileno(tmp), 1);
    dup2(fileno(tmp), 2);
    int rc = cli_parse(cl, argc, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(save_out, 1);
    dup2(save_err, 2);
    close(save_out);
    close(save_err);
    rewind(tmp);
    size_t n = fread(out, 1, sizeof out - 1, tmp);
    out[n] = '\0';
    fclose(tmp);
    return rc;
}

/* Parse a NULL-terminated argument list with a fresh table. */
static int parse(cli_cmdline *cl, int max_args, const char *first, ...)
{
    setup(cl, max_args);
    va_list ap;
    va_start(ap, first);
    int rc = parse_v(cl, first, ap);
    va_end(ap);
    return rc;
}

static const char *write_file(const char *name, const char *text)
{
    const char *path = harness_path(name);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    return path;
}

static void test_value_forms(void)
{
    cli_cmdline cl;
    CHECK_EQ(parse(&cl, -1, "--source_glob=a*", "--row_prefix", "v_", "-max_inflight=4",
                   "-num_records", "7", NULL),
             CLI_PARSED);
    CHECK(!strcmp(o.glob, "a*") && !strcmp(o.prefix, "v_"));
    CHECK_EQ(o.inflight, 4);
    CHECK_EQ(o.records, 7);
    CHECK_EQ(cl.nargs, 0);
    cli_cmdline_free(&cl);
    /* '-' and '_' are interchangeable; the last occurrence wins */
    CHECK_EQ(parse(&cl, -1, "--source-glob=x", "--row-prefix=", "--max-inflight=2",
                   "--max_inflight=3", NULL),
             CLI_PARSED);
    CHECK(!strcmp(o.glob, "x") && !strcmp(o.prefix, ""));
    CHECK_EQ(o.inflight, 3);
    CHECK_EQ(cli_flag_get(&cl, "max_inflight")->seen, 2);
    CHECK(cli_flag_seen(&cl, "source_glob") && !cli_flag_seen(&cl, "num_records"));
    cli_cmdline_free(&cl);
    /* a value that starts with '-' is still the value */
    CHECK_EQ(parse(&cl, -1, "--offset", "-5", "--row_prefix", "--x", NULL), CLI_PARSED);
    CHECK_EQ(o.offset, -5);
    CHECK(!strcmp(o.prefix, "--x"));
    cli_cmdline_free(&cl);
}

static void test_short_forms(void)
{
    cli_cmdline cl;
    CHECK_EQ(parse(&cl, -1, "-n", "5", "-bGARBAGE", NULL), EXIT_USAGE);
    CHECK(strstr(out, "tool: -b: 'GARBAGE' is not a size"));
    CHECK(strstr(out, "Try 'tool --help'"));
    cli_cmdline_free(&cl);
    CHECK_EQ(parse(&cl, -1, "-n", "5", "-b64K", "-Sq", "-lL7", "file", NULL), CLI_PARSED);
    CHECK_EQ(o.inflight, 5);
    CHECK_EQ(o.batch_bytes, 65536);
    CHECK(o.skip && o.quiet);
    CHECK_EQ(o.level, 7);
    CHECK_EQ(cl.nargs, 1);
    cli_cmdline_free(&cl);
    /* a bundle of booleans ending in a flag that takes a value */
    CHECK_EQ(parse(&cl, -1, "-qn9", "-q=false", NULL), CLI_PARSED);
    CHECK_EQ(o.inflight, 9);
    CHECK_EQ(o.quiet, 0);
    cli_cmdline_free(&cl);
    CHECK_EQ(parse(&cl, -1, "-qz", NULL), EXIT_USAGE);
    CHECK(strstr(out, "unknown flag -z (in -qz)"));
    cli_cmdline_free(&cl);
    CHECK_EQ(parse(&cl, -1, "-n", NULL), EXIT_USAGE);
    CHECK(strstr(out, "-n needs a value"));
    cli_cmdline_free(&cl);
}

static void test_booleans(void)
{
    static const char *const truths[] = { "true", "True", "t", "1", "yes", "Y", NULL };
    static const char *const lies[] = { "false", "FALSE", "f", "0", "no", "n", NULL };
    cli_cmdline cl;
    for (int i = 0; truths[i]; i++) {
        char a[64];
        snprintf(a, sizeof a, "--quiet=%s", truths[i]);
        CHECK_EQ(parse(&cl, -1, a, NULL), CLI_PARSED);
        CHECKF(o.quiet == 1, "%s", a);
        cli_cmdline_free(&cl);
        snprintf(a, sizeof a, "--quiet=%s", lies[i]);
        CHECK_EQ(parse(&cl, -1, "--quiet", a, NULL), CLI_PARSED);
        CHECKF(o.quiet == 0, "%s", a);
        cli_cmdline_free(&cl);
    }
    CHECK_EQ(
        parse(&cl, -1, "--quiet", "--create_table", "--nocreate_table", "--noskip-corrupt", NULL),
        CLI_PARSED);
    CHECK(o.quiet && !o.create && !o.skip);
    CHECK(cli_flag_seen(&cl, "create_table"));
    cli_cmdline_free(&cl);
    /* a boolean never takes the next argument: "false" is positional */
    CHECK_EQ(parse(&cl, -1, "--quiet", "false", NULL), CLI_PARSED);
    CHECK_EQ(o.quiet, 1);
    CHECK(cl.nargs == 1 && !strcmp(cl.args[0], "false"));
    cli_cmdline_free(&cl);
    CHECK_EQ(parse(&cl, -1, "--quiet=maybe", NULL), EXIT_USAGE);
    CHECK(strstr(out, "--quiet: 'maybe' is not a boolean"));
    cli_cmdline_free(&cl);
    CHECK_EQ(parse(&cl, -1, "--noquiet=true", NULL), EXIT_USAGE);
    CHECK(strstr(out, "--noquiet takes no value"));
    cli_cmdline_free(&cl);
    /* --no applies to booleans only */
    CHECK_EQ(parse(&cl, -1, "--nosource_glob", NULL), EXIT_USAGE);
    CHECK(strstr(out, "unknown flag --nosource_glob"));
    cli_cmdline_free(&cl);
}

static void test_numbers(void)
{
    cli_cmdline cl;
    CHECK_EQ(parse(&cl, -1, "--max_inflight=65", NULL), EXIT_USAGE);
    CHECK(strstr(out, "--max_inflight: 65 is out of range 1..64"));
    cli_cmdline_free(&cl);
    CHECK_EQ(parse(&cl, -1, "--max_inflight=0", NULL), EXIT_USAGE);
    cli_cmdline_free(&cl);
    CHECK_EQ(parse(&cl, -1, "--max_inflight=4x", NULL), EXIT_USAGE);
    CHECK(strstr(out, "'4x' is not an integer"));
    cli_cmdline_free(&cl);
    CHECK_EQ(parse(&cl, -1, "--offset=-9223372036854775808", NULL), CLI_PARSED);
    CHECK(o.offset == INT64_MIN);
    cli_cmdline_free(&cl);
    CHECK_EQ(parse(&cl, -1, "--offset=9223372036854775808", NULL), EXIT_USAGE);
    CHECK(strstr(out, "out of the 64-bit integer range"));
    cli_cmdline_free(&cl);
    CHECK_EQ(parse(&cl, -1, "--num_records=18446744073709551615", NULL), CLI_PARSED);
    CHECK(o.records == UINT64_MAX);
    cli_cmdline_free(&cl);
    CHECK_EQ(parse(&cl, -1, "--num_records=18446744073709551616", NULL), EXIT_USAGE);
    CHECK(strstr(out, "is too large"));
    cli_cmdline_free(&cl);
    CHECK_EQ(parse(&cl, -1, "--num_records=-1", NULL), EXIT_USAGE);
    CHECK(strstr(out, "'-1' is not a non-negative integer"));
    cli_cmdline_free(&cl);
    CHECK_EQ(parse(&cl, -1, "--num_records=", NULL), EXIT_USAGE);
    cli_cmdline_free(&cl);
    CHECK_EQ(parse(&cl, -1, "--num_records= 5", NULL), EXIT_USAGE);
    cli_cmdline_free(&cl);
    CHECK_EQ(parse(&cl, -1, "--max_rows_per_sec=2.5e3", NULL), CLI_PARSED);
    CHECK(o.rate == 2500.0);
    cli_cmdline_free(&cl);
    CHECK_EQ(parse(&cl, -1, "--max_rows_per_sec=-1", NULL), EXIT_USAGE);
    CHECK(strstr(out, "out of range"));
    cli_cmdline_free(&cl);
    CHECK_EQ(parse(&cl, -1, "--max_rows_per_sec=nan", NULL), EXIT_USAGE);
    cli_cmdline_free(&cl);
    CHECK_EQ(parse(&cl, -1, "--max_rows_per_sec=1e999", NULL), EXIT_USAGE);
    cli_cmdline_free(&cl);
}

static void test_sizes(void)
{
    static const struct {
        const char *s;
        uint64_t v;
    } good[] = {
        { "1024", 1024 },     { "64K", 65536 },
        { "64k", 65536 },     { "1M", 1 << 20 },
        { "1Mi", 1 << 20 },   { "1MiB", 1 << 20 },
        { "1MB", 1 << 20 },   { "2G", 2ull << 30 },
        { "3T", 3ull << 40 }, { "16777215T", 16777215ull << 40 },
    };
    static const char *const bad[] = { "",    "K",   "1.5M", "1X",    "1KK",
                                       "-1K", " 1K", "1 K",  "1Ki B", NULL };
    char err[256];
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        uint64_t v = 0;
        CHECKF(cli_parse_size(good[i].s, &v, err, sizeof err) == 0 && v == good[i].v, "%s: %s",
               good[i].s, err);
    }
    for (int i = 0; bad[i]; i++) {
        uint64_t v = 42;
        CHECKF(cli_parse_size(bad[i], &v, err, sizeof err) == -1 && v == 42, "'%s'", bad[i]);
        CHECK(strstr(err, "is not a size"));
    }
    uint64_t v = 42;
    CHECK_EQ(cli_parse_size("16777216T", &v, err, sizeof err), -1);
    CHECK(strstr(err, "too large") && v == 42);
    CHECK_EQ(cli_parse_size("99999999999999999999", &v, err, sizeof err), -1);
    CHECK(strstr(err, "too large"));

    cli_cmdline cl;
    CHECK_EQ(parse(&cl, -1, "--batch_bytes=20000000000G", NULL), EXIT_USAGE);
    CHECK(strstr(out, "--batch_bytes: '20000000000G' is too large"));
    cli_cmdline_free(&cl);
    CHECK_EQ(parse(&cl, -1, "--batch_bytes=1000", NULL), EXIT_USAGE);
    CHECK(strstr(out, "--batch_bytes: 1000 is out of range 1024.."));
    cli_cmdline_free(&cl);
    CHECK_EQ(parse(&cl, -1, "--batch_bytes", "8M", NULL), CLI_PARSED);
    CHECK_EQ(o.batch_bytes, 8 << 20);
    cli_cmdline_free(&cl);
}

static void test_choices_and_custom(void)
{
    cli_cmdline cl;
    CHECK_EQ(parse(&cl, -1, "--row_key_order=REVERSED", "--level=L3", NULL), CLI_PARSED);
    CHECK_EQ(o.order, 1);
    CHECK_EQ(o.level, 3);
    cli_cmdline_free(&cl);
    CHECK_EQ(parse(&cl, -1, "--row_key_order=random", NULL), EXIT_USAGE);
    CHECK(strstr(out, "--row_key_order: 'random' is not one of sequential, reversed"));
    cli_cmdline_free(&cl);
    CHECK_EQ(parse(&cl, -1, "--level=9", NULL), EXIT_USAGE);
    CHECK(strstr(out, "--level: '9' is not L1..L9"));
    cli_cmdline_free(&cl);
}

static void test_unknown_flags(void)
{
    cli_cmdline cl;
    CHECK_EQ(parse(&cl, -1, "--batch_byte=1M", NULL), EXIT_USAGE);
    CHECK(strstr(out, "tool: unknown flag --batch_byte (did you mean --batch_bytes?)"));
    cli_cmdline_free(&cl);
    CHECK_EQ(parse(&cl, -1, "--quite", NULL), EXIT_USAGE); /* a transposition */
    CHECK(strstr(out, "did you mean --quiet?"));
    cli_cmdline_free(&cl);
    CHECK_EQ(parse(&cl, -1, "--noquite", NULL), EXIT_USAGE);
    CHECK(strstr(out, "did you mean --noquiet?"));
    cli_cmdline_free(&cl);
    CHECK_EQ(parse(&cl, -1, "--frobnicate=1", NULL), EXIT_USAGE);
    CHECK(strstr(out, "unknown flag --frobnicate\n"));
    cli_cmdline_free(&cl);
    CHECK_EQ(parse(&cl, -1, "-frobnicate", NULL), EXIT_USAGE);
    CHECK(strstr(out, "unknown flag -frobnicate"));
    cli_cmdline_free(&cl);
    CHECK_EQ(parse(&cl, -1, "--source_glob", NULL), EXIT_USAGE);
    CHECK(strstr(out, "--source_glob needs a value"));
    cli_cmdline_free(&cl);
}

static void test_positional_and_double_dash(void)
{
    cli_cmdline cl;
    CHECK_EQ(parse(&cl, -1, "a", "--quiet", "-", "b", "--", "--num_records=5", "-q", NULL),
             CLI_PARSED);
    CHECK_EQ(cl.nargs, 5);
    CHECK(!strcmp(cl.args[0], "a") && !strcmp(cl.args[1], "-") && !strcmp(cl.args[2], "b"));
    CHECK(!strcmp(cl.args[3], "--num_records=5") && !strcmp(cl.args[4], "-q"));
    CHECK(o.quiet && o.records == 0);
    cli_cmdline_free(&cl);
    CHECK_EQ(parse(&cl, 0, "--quiet", "extra", NULL), EXIT_USAGE);
    CHECK(strstr(out, "unexpected argument 'extra'"));
    cli_cmdline_free(&cl);
    CHECK_EQ(parse(&cl, 1, "one", "two", NULL), EXIT_USAGE);
    cli_cmdline_free(&cl);
}

static void test_flagfile(void)
{
    const char *inner = write_file("inner.flags", "--max_inflight 6\n--noquiet\n");
    char text[512];
    snprintf(text, sizeof text,
             "# a comment\n"
             "\n"
             "   --source_glob=/data/train-*   \n"
             "// another comment\n"
             "--row_prefix validation_\n"
             "--quiet\n"
             "--flagfile=%s\n"
             "-batch_bytes=2M\n",
             inner);
    const char *outer = write_file("outer.flags", text);
    cli_cmdline cl;
    char ff[512];
    snprintf(ff, sizeof ff, "--flagfile=%s", outer);
    /* flags after the flagfile override it; the nested one overrode --quiet */
    CHECK_EQ(parse(&cl, -1, "--max_inflight=2", ff, "--num_records=9", NULL), CLI_PARSED);
    CHECK(o.glob && !strcmp(o.glob, "/data/train-*"));
    CHECK(!strcmp(o.prefix, "validation_"));
    CHECK_EQ(o.quiet, 0);
    CHECK_EQ(o.inflight, 6);
    CHECK_EQ(o.batch_bytes, 2 << 20);
    CHECK_EQ(o.records, 9);
    cli_cmdline_free(&cl);
    /* --flagfile FILE (value as the next argument) */
    CHECK_EQ(parse(&cl, -1, "--flagfile", inner, NULL), CLI_PARSED);
    CHECK_EQ(o.inflight, 6);
    cli_cmdline_free(&cl);

    /* errors name the file and line */
    const char *bad = write_file("bad.flags", "--quiet\n\nnot-a-flag\n");
    snprintf(ff, sizeof ff, "--flagfile=%s", bad);
    CHECK_EQ(parse(&cl, -1, ff, NULL), EXIT_USAGE);
    snprintf(text, sizeof text, "%s:3: 'not-a-flag' is not a flag", bad);
    CHECKF(strstr(out, text), "%s", out);
    cli_cmdline_free(&cl);
    const char *badval = write_file("badval.flags", "# x\n--max_inflight=100\n");
    snprintf(ff, sizeof ff, "--flagfile=%s", badval);
    CHECK_EQ(parse(&cl, -1, ff, NULL), EXIT_USAGE);
    snprintf(text, sizeof text, "%s:2: --max_inflight: 100 is out of range", badval);
    CHECKF(strstr(out, text), "%s", out);
    cli_cmdline_free(&cl);
    /* a flag that takes a value must have it on its own line */
    const char *novalue = write_file("novalue.flags", "--quiet\n--source_glob\n");
    snprintf(ff, sizeof ff, "--flagfile=%s", novalue);
    CHECK_EQ(parse(&cl, -1, ff, NULL), EXIT_USAGE);
    CHECK(strstr(out, ":2: --source_glob needs a value"));
    cli_cmdline_free(&cl);
    CHECK_EQ(parse(&cl, -1, "--flagfile=/nonexistent/flags", NULL), EXIT_USAGE);
    CHECK(strstr(out, "--flagfile=/nonexistent/flags: cannot open"));
    cli_cmdline_free(&cl);
    const char *unknown = write_file("unknown.flags", "--num_recods=5\n");
    snprintf(ff, sizeof ff, "--flagfile=%s", unknown);
    CHECK_EQ(parse(&cl, -1, ff, NULL), EXIT_USAGE);
    CHECK(strstr(out, "unknown flag --num_recods (did you mean --num_records?)"));
    cli_cmdline_free(&cl);
}

static void test_flagfile_nesting_limit(void)
{
    /* a chain of CLI_FLAGFILE_DEPTH files is fine, one more is not */
    char name[32], text[256], ff[512];
    for (int i = 0; i <= CLI_FLAGFILE_DEPTH; i++) {
        snprintf(name, sizeof name, "chain%d.flags", i);
        if (i == CLI_FLAGFILE_DEPTH) {
            write_file(name, "--num_records=42\n");
        } else {
            snprintf(text, sizeof text, "--flagfile=%s/chain%d.flags\n", harness_tmpdir(), i + 1);
            write_file(name, text);
        }
    }
    cli_cmdline cl;
    snprintf(ff, sizeof ff, "--flagfile=%s/chain1.flags", harness_tmpdir());
    CHECK_EQ(parse(&cl, -1, ff, NULL), CLI_PARSED);
    CHECK_EQ(o.records, 42);
    cli_cmdline_free(&cl);
    snprintf(ff, sizeof ff, "--flagfile=%s/chain0.flags", harness_tmpdir());
    CHECK_EQ(parse(&cl, -1, ff, NULL), EXIT_USAGE);
    CHECK(strstr(out, "nested more than"));
    cli_cmdline_free(&cl);
    /* a file that includes itself stops at the limit, with a message */
    const char *self = harness_path("self.flags");
    snprintf(text, sizeof text, "--quiet\n--flagfile=%s\n", self);
    write_file("self.flags", text);
    snprintf(ff, sizeof ff, "--flagfile=%s", self);
    CHECK_EQ(parse(&cl, -1, ff, NULL), EXIT_USAGE);
    CHECK(strstr(out, "does one include itself?"));
    cli_cmdline_free(&cl);
}

static void test_help_and_version(void)
{
    cli_cmdline cl;
    CHECK_EQ(parse(&cl, -1, "--num_records=1", "--help", NULL), EXIT_OK);
    CHECK(strstr(out, "usage: tool [flags] FILE...\n"));
    CHECK(strstr(out, "  -q, --[no]quiet"));
    char want[256];
    snprintf(want, sizeof want, "      --source_glob=GLOB%8sfiles to load\n%32ssecond line\n", "",
             "");
    CHECKF(strstr(out, want), "%s", out);
    CHECK(strstr(out, "      --row_key_order=sequential|reversed"));
    CHECK(strstr(out, "\nTuning:\n  -b, --batch_bytes=SIZE"));
    CHECK(strstr(out, "Footer text.\n"));
    CHECK(strstr(out, "Exit status: 0 success; 1 bad data"));
    CHECK(strstr(out, "130 interrupted"));
    CHECK(!strstr(out, "--flagfile=FILE "));
    cli_cmdline_free(&cl);
    CHECK_EQ(parse(&cl, -1, "-h", NULL), EXIT_OK);
    CHECK(strstr(out, "usage: tool"));
    cli_cmdline_free(&cl);
    CHECK_EQ(parse(&cl, -1, "-helpfull", NULL), EXIT_OK);
    CHECK(strstr(out, "      --flagfile=FILE"));
    CHECK(strstr(out, "      --helpfull"));
    cli_cmdline_free(&cl);
    CHECK_EQ(parse(&cl, -1, "--version", NULL), EXIT_OK);
    CHECK(!strncmp(out, "tool (libtfrec) ", 16));
    cli_cmdline_free(&cl);
}

static void test_edit_distance(void)
{
    CHECK_EQ(cli_edit_distance("quiet", "quiet"), 0);
    CHECK_EQ(cli_edit_distance("quite", "quiet"), 1);
    CHECK_EQ(cli_edit_distance("batch_byte", "batch_bytes"), 1);
    CHECK_EQ(cli_edit_distance("", "abc"), 3);
    CHECK_EQ(cli_edit_distance("kitten", "sitting"), 3);
}

/* --task_index/--num_tasks resolved against JOB_COMPLETION_INDEX and
 * TFREC_NUM_TASKS: a flag wins over its variable, one by one. Returns the
 * status (CLI_PARSED or EXIT_USAGE); messages land in out. */
static int resolve_task(const char *env_index, const char *env_count, const char *a1,
                        const char *a2, cli_task *t)
{
    env_index ? setenv("JOB_COMPLETION_INDEX", env_index, 1) : unsetenv("JOB_COMPLETION_INDEX");
    env_count ? setenv("TFREC_NUM_TASKS", env_count, 1) : unsetenv("TFREC_NUM_TASKS");
    static cli_flag task_flags[3];
    *t = (cli_task){ 0, 1 };
    cli_flag flags[] = { CLI_TASK_FLAGS(t), { 0 } };
    memcpy(task_flags, flags, sizeof flags);
    cli_cmdline cl = { .prog = "tool", .usage = "usage: tool\n", .flags = task_flags };
    char *argv[] = { "tool", (char *)a1, (char *)a2, NULL };
    int argc = a1 ? (a2 ? 3 : 2) : 1;
    fflush(stderr);
    int save_err = dup(2);
    FILE *tmp = tmpfile();
    dup2(fileno(tmp), 2);
    int rc = cli_parse(&cl, argc, argv);
    if (rc == CLI_PARSED)
        rc = cli_task_resolve(&cl, t);
    fflush(stderr);
    dup2(save_err, 2);
    close(save_err);
    rewind(tmp);
    size_t n = fread(out, 1, sizeof out - 1, tmp);
    out[n] = '\0';
    fclose(tmp);
    cli_cmdline_free(&cl);
    unsetenv("JOB_COMPLETION_INDEX");
    unsetenv("TFREC_NUM_TASKS");
    return rc;
}

static void test_task_flags_and_environment(void)
{
    cli_task t;
    CHECK_EQ(resolve_task(NULL, NULL, NULL, NULL, &t), CLI_PARSED);
    CHECK(t.index == 0 && t.count == 1);
    CHECK_EQ(resolve_task("2", "4", NULL, NULL, &t), CLI_PARSED);
    CHECK(t.index == 2 && t.count == 4);
    /* Kubernetes: the count on the command line, the index from the pod. */
    CHECK_EQ(resolve_task("5", NULL, "--num_tasks=8", NULL, &t), CLI_PARSED);
    CHECK(t.index == 5 && t.count == 8);
    /* Flags win over the environment. */
    CHECK_EQ(resolve_task("5", "8", "--task_index=1", "--num_tasks=2", &t), CLI_PARSED);
    CHECK(t.index == 1 && t.count == 2);
    CHECK_EQ(resolve_task("3", NULL, NULL, NULL, &t), EXIT_USAGE);
    CHECK(strstr(out, "neither --num_tasks nor TFREC_NUM_TASKS"));
    CHECK_EQ(resolve_task("4", "4", NULL, NULL, &t), EXIT_USAGE);
    CHECK(strstr(out, "JOB_COMPLETION_INDEX=4 is not below TFREC_NUM_TASKS=4"));
    CHECK_EQ(resolve_task(NULL, "4", "--task_index=4", NULL, &t), EXIT_USAGE);
    CHECK(strstr(out, "--task_index=4 is not below TFREC_NUM_TASKS=4"));
    CHECK_EQ(resolve_task("x", "4", NULL, NULL, &t), EXIT_USAGE);
    CHECK(strstr(out, "JOB_COMPLETION_INDEX=\"x\": not a number"));
    CHECK_EQ(resolve_task(NULL, "0", NULL, NULL, &t), EXIT_USAGE);
    CHECK(strstr(out, "TFREC_NUM_TASKS=\"0\""));
}

TESTS(TEST(test_value_forms), TEST(test_short_forms), TEST(test_booleans), TEST(test_numbers),
      TEST(test_sizes), TEST(test_choices_and_custom), TEST(test_unknown_flags),
      TEST(test_positional_and_double_dash), TEST(test_flagfile), TEST(test_flagfile_nesting_limit),
      TEST(test_help_and_version), TEST(test_edit_distance), TEST(test_task_flags_and_environment))

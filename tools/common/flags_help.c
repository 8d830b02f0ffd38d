/* --help and --helpfull text, generated from the flag table so that what
 * is documented is exactly what is parsed. */
#include <string.h>

#include "flags.h"

#define HELP_COLUMN 32

static void value_name(const cli_flag *f, char *buf, size_t cap)
{
    if (f->value_name) {
        snprintf(buf, cap, "%s", f->value_name);
        return;
    }
    switch (f->type) {
    case CLI_INT:
    case CLI_INT64:
    case CLI_UINT64: snprintf(buf, cap, "N"); break;
    case CLI_SIZE: snprintf(buf, cap, "SIZE"); break;
    case CLI_DOUBLE: snprintf(buf, cap, "X"); break;
    case CLI_PATH:
    case CLI_LOCAL_PATH: snprintf(buf, cap, "PATH"); break;
    case CLI_CHOICE: {
        size_t o = 0;
        buf[0] = '\0';
        for (int i = 0; f->choices[i] && o < cap; i++)
            o += (size_t)snprintf(buf + o, cap - o, "%s%s", i ? "|" : "", f->choices[i]);
        break;
    }
    default: snprintf(buf, cap, "VALUE"); break;
    }
}

/* "  -c, --name=VALUE" padded to the help column, then the help text with
 * its continuation lines indented to that column. */
static void print_entry(FILE *out, const char *left, const char *help)
{
    int w = fprintf(out, "%s", left);
    if (w >= HELP_COLUMN - 1) {
        fputc('\n', out);
        w = 0;
    }
    fprintf(out, "%*s", HELP_COLUMN - w, "");
    for (const char *h = help ? help : ""; *h;) {
        size_t n = strcspn(h, "\n");
        fprintf(out, "%.*s\n", (int)n, h);
        h += n;
        if (*h == '\n' && *++h)
            fprintf(out, "%*s", HELP_COLUMN, "");
    }
    if (!help || !*help)
        fputc('\n', out);
}

static void print_flag(FILE *out, const cli_flag *f)
{
    char left[160], val[96];
    int o = 0;
    if (f->short_name)
        o = snprintf(left, sizeof left, "  -%c, ", f->short_name);
    else
        o = snprintf(left, sizeof left, "      ");
    if (f->type == CLI_BOOL) {
        snprintf(left + o, sizeof left - (size_t)o, "--[no]%s", f->name);
    } else {
        value_name(f, val, sizeof val);
        snprintf(left + o, sizeof left - (size_t)o, "--%s=%s", f->name, val);
    }
    print_entry(out, left, f->help);
}

void cli_print_help(const cli_cmdline *cl, FILE *out, int full)
{
    if (cl->usage)
        fputs(cl->usage, out);
    const cli_flag *f = cl->flags;
    if (f && f->name) {
        if (!f->section)
            fputs("\nFlags:\n", out);
        for (; f->name; f++) {
            if (f->section)
                fprintf(out, "\n%s\n", f->section);
            if (!f->hidden)
                print_flag(out, f);
        }
    }
    if (full) {
        fputs("\nCommon flags (every tool):\n", out);
        print_entry(out, "      --flagfile=FILE",
                    "read flags from FILE: one per line (--name=value or --name value),\n"
                    "# and // comments, blank lines, nested --flagfile allowed");
        print_entry(out, "  -h, --help", "this tool's flags (also --helpshort)");
        print_entry(out, "      --helpfull", "all flags, these common ones included");
        print_entry(out, "      --version", "print the version and exit");
        print_entry(out, "      --", "end of flags: later arguments are not flags");
    } else {
        fputs("\n--helpfull also lists the common flags (--flagfile=FILE, --version).\n", out);
    }
    fputs("Flags are written --name=value or --name value (a single dash works too);\n"
          "booleans as --name, --noname or --name=true|false.\n",
          out);
    if (cl->footer)
        fprintf(out, "\n%s", cl->footer);
    fprintf(out, "\n%s", EXIT_STATUS_HELP);
}

/* CSV input, TFRecorder style: one "path,label[,split]" line per image.
 * The label is a class name (mapped to 1..K like synsets); the split
 * defaults to "train" and is lower-cased (TRAIN, VALIDATION, TEST). Fields
 * may be wrapped in double quotes; commas inside fields are not supported.
 * A first line whose first field is "path", "image_uri" or "filename" is a
 * header. Every listed file must exist: checked before any conversion. */
#include "imagenet/plan.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#define CSV_MAX_FIELDS 3

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    if (e - s >= 2 && *s == '"' && e[-1] == '"') {
        e[-1] = '\0';
        s++;
    }
    return s;
}

static int split_fields(char *line, char **f)
{
    int n = 0;
    char *s = line;
    for (;;) {
        char *c = strchr(s, ',');
        if (n == CSV_MAX_FIELDS)
            return -1;
        if (c)
            *c = '\0';
        f[n++] = trim(s);
        if (!c)
            return n;
        s = c + 1;
    }
}

static char *resolve(const char *base, const char *path)
{
    return path[0] == '/' || !base ? strdup(path) : tfrec_in_join(base, path);
}

int tfrec_in_scan_csv(in_plan *p, const in_opts *o, tfrec_err *err)
{
    const char *csv = o->o.csv_path;
    tfrec_strlist lines = { 0 };
    int rc = tfrec_in_read_lines(NULL, csv, 0, &lines, err);
    if (rc)
        return rc;
    char *base = o->o.raw_data_dir ? strdup(o->o.raw_data_dir) : tfrec_in_dirname(csv);
    for (size_t i = 0; i < lines.n && !rc; i++) {
        char *f[CSV_MAX_FIELDS];
        int nf = split_fields(lines.v[i], f);
        if (i == 0 && nf >= 1 &&
            (!strcasecmp(f[0], "path") || !strcasecmp(f[0], "image_uri") ||
             !strcasecmp(f[0], "filename")))
            continue;
        if (nf < 2 || !*f[0] || !*f[1]) {
            rc = tfrec_fail(err, TFREC_E_INVALID, "%s line %zu: expected path,label[,split]", csv,
                            i + 1);
            break;
        }
        char split[IN_SPLIT_NAME_MAX] = "train";
        if (nf == 3 && *f[2]) {
            size_t k = 0;
            for (; f[2][k] && k + 1 < sizeof split; k++)
                split[k] = (char)tolower((unsigned char)f[2][k]);
            split[k] = '\0';
        }
        in_split *sp = tfrec_in_plan_split(p, split, err);
        if (!sp) {
            rc = err->code;
            break;
        }
        in_item it = { 0 };
        it.path = tfrec_in_plan_own(p, resolve(base, f[0]));
        it.synset = tfrec_in_plan_strdup(p, f[1]);
        if (!it.path || !it.synset) {
            rc = tfrec_fail(err, TFREC_E_NOMEM, "out of memory");
            break;
        }
        it.name = tfrec_in_basename(it.path);
        struct stat st;
        if (stat(it.path, &st) != 0 || !S_ISREG(st.st_mode)) {
            rc = tfrec_fail(err, TFREC_E_NOT_FOUND, "%s line %zu: %s is not a readable file", csv,
                            i + 1, it.path);
            break;
        }
        it.size = (uint64_t)st.st_size;
        rc = tfrec_in_list_push(&sp->items, &it);
    }
    if (!rc && p->nsplits == 0)
        rc = tfrec_fail(err, TFREC_E_NOT_FOUND, "%s lists no images", csv);
    tfrec_strlist_free(&lines);
    free(base);
    return rc;
}

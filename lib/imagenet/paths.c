/* The converter's names (paths.h). */
#include "imagenet/paths.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "imagenet/plan.h"

char *tfrec_in_join(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char *s = malloc(la + lb + 2);
    if (!s)
        return NULL;
    memcpy(s, a, la);
    size_t p = la;
    if (la && a[la - 1] != '/')
        s[p++] = '/';
    memcpy(s + p, b, lb + 1);
    return s;
}

const char *tfrec_in_basename(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

char *tfrec_in_dirname(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    return strndup(path, slash == path ? 1 : (size_t)(slash - path));
}

char *tfrec_in_pattern_under(const char *dir, const char *suffix)
{
    size_t dl = strlen(dir);
    while (dl > 1 && dir[dl - 1] == '/')
        dl--;
    char *pat = malloc(2 * dl + strlen(suffix) + 2);
    if (!pat)
        return NULL;
    size_t n = 0;
    for (size_t i = 0; i < dl; i++) {
        if (strchr("*?[]\\", dir[i]))
            pat[n++] = '\\';
        pat[n++] = dir[i];
    }
    pat[n++] = '/';
    strcpy(pat + n, suffix);
    return pat;
}

int tfrec_in_ext_ok(const char *name, const in_opts *o)
{
    const char *dot = strrchr(name, '.');
    if (!dot)
        return 0;
    for (size_t i = 0; i < o->nexts; i++)
        if (!strcasecmp(dot + 1, o->exts[i]))
            return 1;
    return 0;
}

void tfrec_in_staging_prefix(char *buf, size_t cap, long task)
{
    if (task < 0)
        snprintf(buf, cap, IN_STAGING_PREFIX);
    else
        snprintf(buf, cap, IN_STAGING_PREFIX "task-%05ld-", task);
}

void tfrec_in_part_name(char buf[IN_PART_NAME_MAX], uint64_t index, uint64_t count)
{
    snprintf(buf, IN_PART_NAME_MAX, IN_PART_PREFIX "%05llu-of-%05llu.json",
             (unsigned long long)index, (unsigned long long)count);
}

char *tfrec_in_part_path(const char *out, uint64_t index, uint64_t count)
{
    char name[IN_PART_NAME_MAX];
    tfrec_in_part_name(name, index, count);
    return tfrec_in_join(out, name);
}

#include "files.h"

#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tfrec/error.h"

static int push(cli_files *f, const char *p)
{
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 16;
        char **np = realloc(f->paths, cap * sizeof *np);
        if (!np)
            return TFREC_E_NOMEM;
        f->paths = np;
        f->cap = cap;
    }
    if (!(f->paths[f->n] = strdup(p)))
        return TFREC_E_NOMEM;
    f->n++;
    return TFREC_OK;
}

static int cmp_bytes(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int cli_files_expand(cli_files *out, char *const *args, size_t n, const char **unmatched)
{
    for (size_t i = 0; i < n; i++) {
        const char *a = args[i];
        struct stat st;
        /* The shell normally expands patterns; quoted ones (or too many
         * files for one command line) arrive here. A name that exists is
         * taken literally even if it has a '*'. */
        if (!strpbrk(a, "*?[") || stat(a, &st) == 0) {
            if (push(out, a))
                return TFREC_E_NOMEM;
            continue;
        }
        glob_t g;
        int rc = glob(a, GLOB_NOSORT, NULL, &g);
        if (rc == GLOB_NOMATCH) {
            if (unmatched)
                *unmatched = a;
            return TFREC_E_NOT_FOUND;
        }
        if (rc != 0)
            return rc == GLOB_NOSPACE ? TFREC_E_NOMEM : TFREC_E_IO;
        qsort(g.gl_pathv, g.gl_pathc, sizeof *g.gl_pathv, cmp_bytes);
        for (size_t k = 0; k < g.gl_pathc; k++) {
            if (push(out, g.gl_pathv[k])) {
                globfree(&g);
                return TFREC_E_NOMEM;
            }
        }
        globfree(&g);
    }
    return TFREC_OK;
}

void cli_files_free(cli_files *f)
{
    for (size_t i = 0; i < f->n; i++)
        free(f->paths[i]);
    free(f->paths);
    memset(f, 0, sizeof *f);
}

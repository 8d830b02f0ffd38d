#include "files.h"

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "exit_codes.h"
#include "tfrec/error.h"
#include "util/strlist.h"
#include "util/vec.h"

static int push(cli_files *f, const char *p)
{
    if (tfrec_vec_reserve(&f->paths, &f->cap, f->n + 1, 16))
        return TFREC_E_NOMEM;
    if (!(f->paths[f->n] = strdup(p)))
        return TFREC_E_NOMEM;
    f->n++;
    return TFREC_OK;
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
        tfrec_strv_sort(g.gl_pathv, g.gl_pathc);
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

int cli_path_check(const char *path, char *err, size_t errcap)
{
    if (path && strncasecmp(path, "gs://", 5) == 0) {
        snprintf(err, errcap, "%s: " CLI_GS_UNSUPPORTED " (copy the files with gsutil)", path);
        return -1;
    }
    return 0;
}

int cli_require_local(const char *prog, const char *what, const char *path)
{
    char err[512];
    if (cli_path_check(path, err, sizeof err) == 0)
        return EXIT_OK;
    fprintf(stderr, "%s: %s: %s\n", prog, what, err);
    return EXIT_USAGE;
}

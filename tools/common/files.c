#include "files.h"

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "exit_codes.h"
#include "tfrec/error.h"
#include "tfrec/fs.h"
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

static int push_listed(void *ctx, const char *name, const tfrec_fs_info *info)
{
    (void)info;
    return push(ctx, name); /* TFREC_E_NOMEM stops the listing, returned */
}

/* A name with a scheme (gs://, mem://, ...): a pattern is listed through
 * the file system layer (sorted bytewise, as the local matches are), a
 * plain name is taken as it is (a missing object is found out when it is
 * opened). */
static int expand_remote(cli_files *out, const char *a)
{
    if (!strpbrk(a + tfrec_fs_scheme_length(a) + 3, "*?["))
        return push(out, a);
    cli_fs_setup();
    return tfrec_fs_list(NULL, a, push_listed, out);
}

int cli_files_expand(cli_files *out, char *const *args, size_t n, const char **unmatched)
{
    for (size_t i = 0; i < n; i++) {
        const char *a = args[i];
        struct stat st;
        if (cli_is_remote(a)) {
            int rc = expand_remote(out, a);
            if (rc && unmatched)
                *unmatched = a;
            if (rc)
                return rc;
            continue;
        }
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
        if (rc != 0) {
            if (unmatched)
                *unmatched = a;
            return rc == GLOB_NOSPACE ? TFREC_E_NOMEM : TFREC_E_IO;
        }
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

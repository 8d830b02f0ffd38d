#include "files.h"

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "exit_codes.h"
#include "tfrec/dataset.h"
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

/* A pattern's matches m[0..n) (sorted bytewise): data lists leave out the
 * index beside a matched file ("train-*" also matches train-0.idx). */
static int push_matches(cli_files *out, char *const *m, size_t n, int data)
{
    for (size_t k = 0; k < n; k++) {
        if (data && tfrec_index_beside_match(m[k], (const char *const *)m, n))
            continue;
        if (push(out, m[k]))
            return TFREC_E_NOMEM;
    }
    return TFREC_OK;
}

/* A name with a scheme (gs://, mem://, ...): a pattern is listed through
 * the file system layer (sorted bytewise, as the local matches are), a
 * plain name is taken as it is (a missing object is found out when it is
 * opened). */
static int expand_remote(cli_files *out, const char *a, int data)
{
    if (!strpbrk(a + tfrec_fs_scheme_length(a) + 3, "*?["))
        return push(out, a);
    cli_fs_setup();
    cli_files m = { 0 };
    int rc = tfrec_fs_list(NULL, a, push_listed, &m);
    if (!rc) {
        tfrec_strv_sort(m.paths, m.n); /* already so from the layer's own lists */
        rc = push_matches(out, m.paths, m.n, data);
    }
    cli_files_free(&m);
    return rc;
}

static int expand_args(cli_files *out, char *const *args, size_t n, const char **unmatched,
                       int data, const char *const *lits, size_t nlits)
{
    for (size_t i = 0; i < n; i++) {
        const char *a = args[i];
        struct stat st;
        if (cli_is_remote(a)) {
            int rc = expand_remote(out, a, data);
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
            if (data && tfrec_index_beside_match(a, lits, nlits))
                continue;
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
        rc = push_matches(out, g.gl_pathv, g.gl_pathc, data);
        globfree(&g);
        if (rc)
            return rc;
    }
    return TFREC_OK;
}

/* The local names given literally, sorted bytewise: the shell may have
 * expanded a pattern into them before the tool ran, and X.idx given with
 * X is X's index there as among a pattern's matches. */
static int literal_names(char *const *args, size_t n, const char ***out, size_t *nout)
{
    const char **v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return TFREC_E_NOMEM;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!cli_is_remote(args[i]))
            v[k++] = args[i];
    tfrec_strv_sort((char **)v, k);
    *out = v;
    *nout = k;
    return TFREC_OK;
}

static int expand(cli_files *out, char *const *args, size_t n, const char **unmatched, int data)
{
    const char **lits = NULL;
    size_t nlits = 0;
    if (data && literal_names(args, n, &lits, &nlits))
        return TFREC_E_NOMEM;
    int rc = expand_args(out, args, n, unmatched, data, lits, nlits);
    free(lits);
    return rc;
}

int cli_files_expand(cli_files *out, char *const *args, size_t n, const char **unmatched)
{
    return expand(out, args, n, unmatched, 1);
}

int cli_files_list(cli_files *out, char *const *args, size_t n, const char **unmatched)
{
    return expand(out, args, n, unmatched, 0);
}

void cli_files_free(cli_files *f)
{
    for (size_t i = 0; i < f->n; i++)
        free(f->paths[i]);
    free(f->paths);
    memset(f, 0, sizeof *f);
}

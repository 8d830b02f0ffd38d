/* Which names a tool can take: any name the file system layer can route
 * (include/tfrec/fs.h: a local path, "-", file://, or a registered scheme),
 * never one with a scheme for what must be a local file. Kept apart from
 * files.c and open.c so that the flag parser (and the programs that use
 * only it) do not pull in the optional parts. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "exit_codes.h"
#include "files.h"
#include "log.h"
#include "tfrec/error.h"
#include "tfrec/fs.h"

int cli_is_remote(const char *name)
{
    size_t n = name ? tfrec_fs_scheme_length(name) : 0;
    return n && !(n == 4 && strncasecmp(name, "file", 4) == 0);
}

/* The layer's message names the path first: drop that "PATH: ". */
static const char *without_name(const char *msg, const char *path)
{
    size_t n = strlen(path);
    return strncmp(msg, path, n) == 0 && msg[n] == ':' && msg[n + 1] == ' ' ? msg + n + 2 : msg;
}

int cli_path_check(const char *path, int local_only, char *err, size_t errcap)
{
    if (!cli_is_remote(path))
        return 0;
    int n = (int)tfrec_fs_scheme_length(path);
    if (local_only)
        snprintf(err, errcap, "%s: must be a local path (%.*s:// is not accepted here)", path, n,
                 path);
    else if (!tfrec_fs_for(path)) /* the layer names the part to link */
        snprintf(err, errcap, "%s: this build cannot open %.*s:// names (%s)", path, n, path,
                 without_name(tfrec_last_errmsg(), path));
    else
        return 0;
    return -1;
}

int cli_require_local(const char *prog, const char *what, const char *path)
{
    char err[512];
    if (cli_path_check(path, 0, err, sizeof err) == 0)
        return EXIT_OK;
    cli_log_as(prog, "%s: %s", what, err);
    return EXIT_USAGE;
}

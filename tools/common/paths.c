/* Which names a tool can take: gs:// ones only with the storage part, and
 * never for what must be a local file. Kept apart from files.c so that the
 * flag parser (and the programs that use only it) do not pull in the
 * storage client. */
#include <stdio.h>
#include <strings.h>

#include "exit_codes.h"
#include "files.h"

int cli_is_remote(const char *name)
{
    return name && strncasecmp(name, "gs://", 5) == 0;
}

int cli_have_storage(void)
{
#ifdef TFREC_CLI_HAVE_STORAGE
    return 1;
#else
    return 0;
#endif
}

int cli_path_check(const char *path, int local_only, char *err, size_t errcap)
{
    if (!cli_is_remote(path))
        return 0;
    if (local_only)
        snprintf(err, errcap, "%s: " CLI_GS_LOCAL_ONLY, path);
    else if (!cli_have_storage())
        snprintf(err, errcap,
                 "%s: " CLI_GS_UNSUPPORTED " (the tools were built without the storage part, "
                 "make WITH_STORAGE=1; or copy the files with gsutil)",
                 path);
    else
        return 0;
    return -1;
}

int cli_require_local(const char *prog, const char *what, const char *path)
{
    char err[512];
    if (cli_path_check(path, 0, err, sizeof err) == 0)
        return EXIT_OK;
    fprintf(stderr, "%s: %s: %s\n", prog, what, err);
    return EXIT_USAGE;
}

/* Exit statuses shared by every tool (tfrec, imagenet2tfrec, tfrec2bt,
 * bt2tfrec), printed by each tool's --help and documented in docs/.
 * When several problems occur a tool returns the highest status. */
#ifndef TFREC_TOOLS_EXIT_CODES_H
#define TFREC_TOOLS_EXIT_CODES_H

enum {
    EXIT_OK = 0,
    EXIT_DATA = 1,         /* bad data: corrupt input; a record, row or image failed */
    EXIT_USAGE = 2,        /* bad flags or arguments */
    EXIT_IO = 3,           /* I/O or network: cannot open or write a file, server unreachable */
    EXIT_INTERRUPTED = 130 /* stopped by SIGINT or SIGTERM (128 + SIGINT, as a shell reports) */
};

#define EXIT_STATUS_HELP                                                              \
    "Exit status: 0 success; 1 bad data (corrupt input; a record, row or image\n"     \
    "failed); 2 usage error (bad flags or arguments); 3 I/O or network error\n"       \
    "(cannot open or write a file, server unreachable); 130 interrupted (SIGINT or\n" \
    "SIGTERM). With several problems the highest status is returned.\n"

/* The exit status for a library status code (TFREC_OK, TFREC_E_*): data
 * errors are EXIT_DATA, TFREC_E_INVALID is EXIT_USAGE, everything else
 * (I/O, network, not found, out of memory) EXIT_IO. A cancelled run
 * (TFREC_E_STATE after an interrupt) is the caller's to map to
 * EXIT_INTERRUPTED. */
int cli_exit_for(int rc);

static inline int cli_worst(int a, int b)
{
    return a > b ? a : b;
}

#endif

/* Message lines on stderr, the same in every tool.
 *
 * On a terminal a line reads "TOOL: message". When stderr is not a terminal
 * (a log file, a pipe, a job's output) every line starts with the UTC time,
 * "2026-11-23T14:25:01Z TOOL: message", so a long run's log says when each
 * thing happened. A message holding newlines gets the prefix on every line.
 * Each call writes its lines with one write, so the lines of processes
 * sharing stderr (tfrec2bt --processes) do not interleave. */
#ifndef TFREC_TOOLS_LOG_H
#define TFREC_TOOLS_LOG_H

#include <stdarg.h>

/* The tool's name in log lines ("imagenet2tfrec", "tfrec"); set by
 * cli_parse from the command line's prog (tfrec keeps "tfrec"). */
extern const char *cli_log_name;

#if defined(__GNUC__)
#define CLI_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define CLI_PRINTF(a, b)
#endif

/* "TOOL: message". fmt has no final newline. */
void cli_log(const char *fmt, ...) CLI_PRINTF(1, 2);
/* "TOOL: warning: message": something the user should know, the run goes on. */
void cli_warn(const char *fmt, ...) CLI_PRINTF(1, 2);
/* The same line under another name ("tfrec count" for a subcommand's usage
 * error). */
void cli_log_as(const char *name, const char *fmt, ...) CLI_PRINTF(2, 3);
void cli_vlog_as(const char *name, const char *fmt, va_list ap) CLI_PRINTF(2, 0);

/* The prefix alone ("TIME TOOL: " or "TOOL: ") into buf, for lines written
 * piecewise (the progress line); returns its length. */
int cli_log_prefix(char *buf, int size, const char *name, int tty);

#endif

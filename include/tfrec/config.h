/* libtfrec: process-wide settings.
 *
 * Every setting the library takes from the environment is a named entry in
 * one table (docs/config.md lists them; tfrec_config_name() enumerates
 * them), and each can be set here instead. Names are the environment
 * variables' names ("TFREC_BT_POLLERS", "GOOGLE_APPLICATION_CREDENTIALS",
 * "BIGTABLE_EMULATOR_HOST", ...). A value is looked up as:
 *
 *   1. the value given to tfrec_config_set() (an empty string counts: it
 *      means "unset", even if the environment has one);
 *   2. the environment variable, unless tfrec_config_use_environment(0);
 *   3. the setting's default.
 *
 * Options structs win over both where a setting has a field (e.g.
 * tfrec_bt_client_options.endpoint over BIGTABLE_EMULATOR_HOST). Settings
 * are read when a handle is opened (or, for the process-wide ones such as
 * TFREC_CRC32C, on first use): set them before. The functions are
 * thread-safe.
 */
#ifndef TFREC_CONFIG_H
#define TFREC_CONFIG_H

#include "common.h"

#include <stddef.h>

#include "error.h"

TFREC_BEGIN_DECLS

/* Set `name` to `value` for this process; value NULL forgets an earlier
 * set (the environment counts again). TFREC_E_INVALID for a name the table
 * does not hold (message names it); TFREC_E_NOMEM. */
int tfrec_config_set(const char *name, const char *value);

/* The value in effect for `name` into buf (cap bytes, NUL-terminated):
 * TFREC_OK; TFREC_E_NOT_FOUND when unset (buf ""); TFREC_E_INVALID for an
 * unknown name or a value longer than cap - 1. */
int tfrec_config_get(const char *name, char *buf, size_t cap);

/* on = 0: the library stops reading the environment altogether (only
 * tfrec_config_set values count), for programs that configure everything
 * themselves; on != 0 (the default): it reads it again. */
void tfrec_config_use_environment(int on);

/* The i-th setting's name (0-based), NULL past the end; *doc (may be NULL)
 * gets a one-line description with its API equivalent. */
const char *tfrec_config_name(size_t i, const char **doc);

TFREC_END_DECLS
#endif

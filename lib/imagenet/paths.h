/* Internal: the names the converter makes and takes apart, in one place:
 * joined paths, base and directory names, the extension filter, and the
 * names of the staging directories and of a task's manifest part. */
#ifndef TFREC_IMAGENET_PATHS_H
#define TFREC_IMAGENET_PATHS_H

#include <stddef.h>
#include <stdint.h>

struct in_opts;

/* "a/b" (no doubled '/'; "" joins nothing), malloc'ed; NULL when out of
 * memory. */
char *tfrec_in_join(const char *a, const char *b);
/* What follows path's last '/' (all of path without one). */
const char *tfrec_in_basename(const char *path);
/* What precedes path's last '/' ("/" for a name in the root, "." without
 * one), malloc'ed; NULL when out of memory. */
char *tfrec_in_dirname(const char *path);
/* The pattern of suffix (a glob pattern) below directory dir: dir without
 * its trailing '/'s, its wildcard characters quoted (a name, not a
 * pattern), then "/suffix"; malloc'ed, NULL when out of memory. */
char *tfrec_in_pattern_under(const char *dir, const char *suffix);
/* Whether name's extension is one the run accepts (case-insensitive). */
int tfrec_in_ext_ok(const char *name, const struct in_opts *o);

/* The name prefix of the staging directories of one kind (the pid
 * follows): ".tfrec-staging-" (task < 0) or ".tfrec-staging-task-00003-". */
#define IN_STAGING_PREFIX ".tfrec-staging-"
void tfrec_in_staging_prefix(char *buf, size_t cap, long task);

/* A task's manifest part: "manifest-task-IIIII-of-NNNNN.json". */
#define IN_PART_PREFIX "manifest-task-"
#define IN_PART_NAME_MAX 64
void tfrec_in_part_name(char buf[IN_PART_NAME_MAX], uint64_t index, uint64_t count);
/* OUT/<that name>, malloc'ed. */
char *tfrec_in_part_path(const char *out, uint64_t index, uint64_t count);

#endif

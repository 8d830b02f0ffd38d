/* The resume point: one small text file, replaced atomically. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tfrec2bt.h"

int t2b_progress_write(const char *path, uint64_t next_index, int64_t timestamp, const t2b_flags *f)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp-%d", path, (int)getpid());
    FILE *fp = fopen(tmp, "w");
    if (!fp)
        return -1;
    fprintf(fp, "next_index %llu\n", (unsigned long long)next_index);
    if (timestamp > 0)
        fprintf(fp, "timestamp_micros %lld\n", (long long)timestamp);
    fprintf(fp, "# every record below next_index is acknowledged by Bigtable\n");
    fprintf(fp, "# source_glob %s\n# table %s/%s\n# row_prefix %s\n", f->source_glob,
            f->instance ? f->instance : "", f->table ? f->table : "", f->row_prefix);
    fprintf(fp, "# task %lld of %lld\n", (long long)f->task.index, (long long)f->task.count);
    int bad = ferror(fp);
    bad |= fflush(fp) != 0 || fsync(fileno(fp)) != 0;
    int err = errno;
    bad |= fclose(fp) != 0;
    if (bad || rename(tmp, path) != 0) {
        if (!bad)
            err = errno;
        unlink(tmp);
        errno = err ? err : EIO;
        return -1;
    }
    return 0;
}

void t2b_default_progress_path(char *buf, size_t cap, const t2b_flags *f)
{
    /* The prefix is part of the name: a train_ load and a validation_ load
     * into one table keep separate resume points. */
    char task[64] = "";
    if (f->task.count > 1) /* the task's place in the name: every task resumes alone */
        snprintf(task, sizeof task, "-task-%05lld-of-%05lld", (long long)f->task.index,
                 (long long)f->task.count);
    snprintf(buf, cap, "tfrec2bt-%s-%s-%s%s.progress", f->instance ? f->instance : "dry",
             f->table ? f->table : "run", f->row_prefix, task);
    for (char *p = buf + strlen("tfrec2bt-"); *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '.' && *p != '_' && *p != '-')
            *p = '_';
}

/* A resume point only means something for the same table, keys and files. */
static int check_line(const char *line, const char *tag, const char *want, const char *path,
                      char *err, size_t errcap)
{
    size_t n = strlen(tag);
    if (strncmp(line, tag, n) != 0)
        return 0;
    const char *have = line + n;
    size_t len = strcspn(have, "\n");
    if (len == strlen(want) && !memcmp(have, want, len))
        return 0;
    snprintf(err, errcap, "progress file %s was written for %s%.*s, not %s%s", path, tag + 2,
             (int)len, have, tag + 2, want);
    return -1;
}

int t2b_progress_read(const char *path, const t2b_flags *f, uint64_t *next_index,
                      int64_t *timestamp, char *err, size_t errcap)
{
    *timestamp = 0;
    FILE *fp = fopen(path, "r");
    if (!fp) {
        int missing = errno == ENOENT;
        snprintf(err, errcap, "cannot read progress file %s: %s", path, strerror(errno));
        return missing ? T2B_PROGRESS_MISSING : T2B_PROGRESS_UNREADABLE;
    }
    unsigned long long v;
    int ok = fscanf(fp, "next_index %llu\n", &v) == 1, bad = 0;
    char line[4096], table[1024], task[64];
    snprintf(task, sizeof task, "%lld of %lld", (long long)f->task.index,
             (long long)f->task.count);
    snprintf(table, sizeof table, "%s/%s", f->instance ? f->instance : "",
             f->table ? f->table : "");
    while (ok && !bad && fgets(line, sizeof line, fp)) {
        long long ts;
        if (sscanf(line, "timestamp_micros %lld", &ts) == 1 && ts > 0)
            *timestamp = ts;
        bad |= check_line(line, "# table ", table, path, err, errcap);
        bad |= check_line(line, "# row_prefix ", f->row_prefix, path, err, errcap);
        bad |= check_line(line, "# source_glob ", f->source_glob, path, err, errcap);
        bad |= check_line(line, "# task ", task, path, err, errcap);
    }
    int rerr = ferror(fp);
    fclose(fp);
    if (bad)
        return T2B_PROGRESS_MISMATCH;
    if (rerr) {
        snprintf(err, errcap, "cannot read progress file %s", path);
        return T2B_PROGRESS_UNREADABLE;
    }
    if (!ok) {
        snprintf(err, errcap, "progress file %s has no 'next_index N' line", path);
        return T2B_PROGRESS_MISMATCH;
    }
    *next_index = v;
    return 0;
}

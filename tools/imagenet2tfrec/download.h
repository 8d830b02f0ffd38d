/* Downloading the ImageNet tarballs (imagenet2tfrec --imagenet_username /
 * --download_url): libcurl with progress, retries, resume of a partial file
 * with Range, and an MD5 check of the whole file (libcrypto's EVP). */
#ifndef TFREC_TOOLS_IMAGENET_DOWNLOAD_H
#define TFREC_TOOLS_IMAGENET_DOWNLOAD_H

#include <stddef.h>

/* The published MD5s of the official archives. */
#define IN_TRAIN_MD5 "1d675b47d978889d74fa0da5fadfb00e"
#define IN_VAL_MD5 "29b22e2961454d5413ddabcf34fc5622"

typedef struct dl_request {
    const char *url;
    const char *dest; /* final name; the download grows in dest.part */
    const char *md5;  /* expected lowercase hex, NULL: not checked */
    /* A check of the finished download's content before it takes its final
     * name (NULL: none); returns an exit status with the message in msg. */
    int (*check)(const char *path, char *msg, size_t cap);
    const char *user, *password; /* HTTP basic auth when user is set, ... */
    const char *auth_url;        /* ... sent only to this URL's scheme, host and port */
    int retries;                 /* attempts after the first */
    int quiet;
} dl_request;

/* Fetch r->url into r->dest. An existing dest whose MD5 matches is kept;
 * dest.part is resumed with Range (restarted when the server ignores it).
 * A checksum mismatch leaves the file as dest.bad-md5. Returns an exit
 * status (tools/common/exit_codes.h) with the message in msg. */
int dl_fetch(const dl_request *r, char *msg, size_t cap);

/* A synset_labels.txt as the reference publishes it: one synset ID
 * ("n" and 8 digits) a line, every line ended, at most
 * DL_LABELS_MAX_LINES lines. A file cut short mid-line or holding
 * anything else (an HTML error page, a redirect's body) fails. */
#define DL_LABELS_MAX_LINES 50000
int dl_check_synset_labels(const char *path, char *msg, size_t cap);

#endif

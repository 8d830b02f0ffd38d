/* Flag values that are library names, for cli_flag tables (CLI_CUSTOM,
 * dest an int): compressions and image verification levels. */
#ifndef TFREC_TOOLS_FLAG_TYPES_H
#define TFREC_TOOLS_FLAG_TYPES_H

#include <stddef.h>
#include <stdio.h>

/* AUTO, NONE, ZLIB or GZIP (any case) -> TFREC_COMPRESSION_* */
int cli_parse_compression(const char *v, void *dest, char *err, size_t errcap);
/* the same without AUTO: what a writer can produce */
int cli_parse_output_compression(const char *v, void *dest, char *err, size_t errcap);
/* Always fails: --compression is ambiguous where a tool has both an input
 * and an output compression (tfrec's -c and -C). */
int cli_refuse_compression(const char *v, void *dest, char *err, size_t errcap);
/* header, fast or full -> TFREC_VERIFY_* */
int cli_parse_verify_level(const char *v, void *dest, char *err, size_t errcap);

#endif

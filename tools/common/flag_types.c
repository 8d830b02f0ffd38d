/* CLI_CUSTOM parsers for the library's named values, shared by the tools
 * so each name is spelled and checked the same way everywhere. The image
 * part's names are in flag_types_image.c: an archive member of their own,
 * so tools of the core part link without libtfrec-image. */
#include "flag_types.h"

#include "tfrec/record.h"

int cli_parse_compression(const char *v, void *dest, char *err, size_t errcap)
{
    int c = tfrec_compression_from_name(v);
    if (c < 0 || !*v) {
        snprintf(err, errcap, "unknown compression '%s' (AUTO, NONE, ZLIB or GZIP)", v);
        return -1;
    }
    *(int *)dest = c;
    return 0;
}

int cli_parse_output_compression(const char *v, void *dest, char *err, size_t errcap)
{
    int c = tfrec_compression_from_name(v);
    if (c < 0 || !*v || c == TFREC_COMPRESSION_AUTO) {
        snprintf(err, errcap, "output compression must be NONE, ZLIB or GZIP, not '%s'", v);
        return -1;
    }
    *(int *)dest = c;
    return 0;
}

int cli_refuse_compression(const char *v, void *dest, char *err, size_t errcap)
{
    (void)v;
    (void)dest;
    snprintf(err, errcap,
             "ambiguous: use -c/--input-compression for how the input is compressed, "
             "-C/--output-compression for convert's output");
    return -1;
}

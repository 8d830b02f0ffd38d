/* CLI_CUSTOM parsers for names of the image part (libtfrec-image): kept
 * apart from flag_types.c so only the tools that use them pull it in. */
#include "flag_types.h"

#include "tfrec/image.h"

int cli_parse_verify_level(const char *v, void *dest, char *err, size_t errcap)
{
    int lv = tfrec_verify_level_from_name(v);
    if (lv <= 0) {
        snprintf(err, errcap, "'%s' is not one of header, fast, full", v);
        return -1;
    }
    *(int *)dest = lv;
    return 0;
}

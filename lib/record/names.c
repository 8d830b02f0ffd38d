/* Compression names, as TensorFlow's TFRecordOptions spells them. */
#include <strings.h>

#include "tfrec/record.h"

int tfrec_compression_from_name(const char *name)
{
    if (!name)
        return -1;
    /* TensorFlow uses "" for no compression. */
    if (!*name || !strcasecmp(name, "NONE"))
        return TFREC_COMPRESSION_NONE;
    if (!strcasecmp(name, "AUTO"))
        return TFREC_COMPRESSION_AUTO;
    if (!strcasecmp(name, "ZLIB"))
        return TFREC_COMPRESSION_ZLIB;
    if (!strcasecmp(name, "GZIP"))
        return TFREC_COMPRESSION_GZIP;
    return -1;
}

const char *tfrec_compression_name(int compression)
{
    switch (compression) {
    case TFREC_COMPRESSION_AUTO: return "AUTO";
    case TFREC_COMPRESSION_NONE: return "NONE";
    case TFREC_COMPRESSION_ZLIB: return "ZLIB";
    case TFREC_COMPRESSION_GZIP: return "GZIP";
    }
    return "UNKNOWN";
}

/* Which deflate backend the streams use. */
#include <stdlib.h>
#include <string.h>

#include "record/codec.h"
#include "tfrec/record.h"

const codec *tfrec_codec_default(void)
{
#ifdef TFREC_HAVE_ISAL
    const char *want = getenv("TFREC_DEFLATE");
    if (!want || strcmp(want, "zlib") != 0)
        return &tfrec_codec_isal;
#endif
    return &tfrec_codec_zlib;
}

const char *tfrec_deflate_backend(void)
{
    return tfrec_codec_default()->name;
}

/* Which deflate backend the streams use.
 *
 * The choice is the build's best (ISA-L when built with it), unless
 * TFREC_DEFLATE in the environment names another; the environment is read
 * once, at the first stream of the process, and tfrec_set_deflate_backend()
 * changes the choice later. It is published through an atomic pointer: a
 * stream takes the backend in force when it is opened. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "record/codec.h"
#include "tfrec/record.h"
#include "util/errors.h"
#include "util/config.h"

static _Atomic(const codec *) active;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

static const codec *builtin_default(void)
{
#ifdef TFREC_HAVE_ISAL
    return &tfrec_codec_isal;
#else
    return &tfrec_codec_zlib;
#endif
}

/* NULL for a name this build does not have. */
static const codec *by_name(const char *name)
{
    if (!name || !*name || strcmp(name, "auto") == 0)
        return builtin_default();
    if (strcmp(name, "zlib") == 0)
        return &tfrec_codec_zlib;
#ifdef TFREC_HAVE_ISAL
    if (strcmp(name, "isal") == 0)
        return &tfrec_codec_isal;
#endif
    return NULL;
}

/* An unknown or unavailable TFREC_DEFLATE keeps the default: the library
 * never prints, and streams are standard whichever backend writes them. */
static void read_env(void)
{
    char name[32];
    const codec *c = tfrec_cfg(TFREC_CFG_DEFLATE, name, sizeof name) > 0 ? by_name(name) : NULL;
    atomic_store(&active, c ? c : builtin_default());
}

const codec *tfrec_codec_default(void)
{
    pthread_once(&env_once, read_env);
    return atomic_load(&active);
}

const char *tfrec_deflate_backend(void)
{
    return tfrec_codec_default()->name;
}

int tfrec_set_deflate_backend(const char *name)
{
    pthread_once(&env_once, read_env);
    const codec *c = by_name(name);
    if (!c && strcmp(name, "isal") == 0)
        return tfrec_fail(NULL, TFREC_E_UNSUPPORTED,
                          "deflate backend 'isal': this libtfrec was built without ISA-L");
    if (!c)
        return tfrec_fail(NULL, TFREC_E_INVALID,
                          "unknown deflate backend '%s' (zlib, isal or auto)", name);
    atomic_store(&active, c);
    return TFREC_OK;
}

/* Opening the tools' inputs and outputs by name: every call goes through
 * the core's file system layer (include/tfrec/fs.h) with the default file
 * system, so a name is local, "-", or of any registered scheme. This is
 * the one place that knows the optional parts: with the storage part
 * built (TFREC_CLI_HAVE_STORAGE) gs:// is registered before the first
 * call (the tools link libtfrec-storage.a, whose load-time registration
 * only the shared library gets). */
#include "files.h"

#include <pthread.h>

#include "tfrec/error.h"
#include "tfrec/fs.h"
#ifdef TFREC_CLI_HAVE_STORAGE
#include "tfrec/storage.h"
#endif

static pthread_once_t fs_once = PTHREAD_ONCE_INIT;

static void register_schemes(void)
{
#ifdef TFREC_CLI_HAVE_STORAGE
    (void)tfrec_storage_register();
#endif
}

int cli_have_storage(void)
{
#ifdef TFREC_CLI_HAVE_STORAGE
    return 1;
#else
    return 0;
#endif
}

void cli_fs_setup(void)
{
    pthread_once(&fs_once, register_schemes);
}

/* Before main: a tool that opens names only through the library (a
 * dataset, an imagenet conversion) finds gs:// registered too. */
__attribute__((constructor)) static void setup_at_start(void)
{
    cli_fs_setup();
}

int cli_reader_open(tfrec_reader **out, const char *name, const tfrec_reader_options *o)
{
    cli_fs_setup();
    return tfrec_fs_reader_open(NULL, out, name, o);
}

int cli_writer_open(tfrec_writer **out, const char *name, const tfrec_writer_options *o)
{
    cli_fs_setup();
    return tfrec_fs_writer_open(NULL, out, name, o);
}

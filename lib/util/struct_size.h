/* Internal: the growable-struct convention of the public API in one place.
 *
 * Every public options, stats, info and I/O struct starts with
 * `size_t struct_size`, the sizeof the caller was compiled with. Structs only
 * grow at their end, so the library reads or writes exactly the prefix both
 * sides know:
 *   - input (options, callbacks): a shorter caller struct gets the missing
 *     tail zero-filled, which means "default"; a longer one is accepted only
 *     when its extra bytes are all zero (a newer program asking for nothing
 *     this library lacks), otherwise TFREC_E_UNSUPPORTED;
 *   - output (stats, info, counts): at most min(caller's struct_size,
 *     library's size) bytes are written. Members of a longer caller struct
 *     that this library does not know keep what the caller put there (zero,
 *     after its INIT macro); not touching them also means a caller that
 *     forgot INIT, leaving garbage in struct_size, is never written past the
 *     end of the struct it was compiled with.
 * struct_size 0 (a struct not set up with its INIT macro or _init function)
 * is TFREC_E_INVALID, as is a size too large to be any layout.
 *
 * Maintainers: a new member goes at the end, after any tail padding of the
 * previous layout, so that sizeof grows and no old caller's padding bytes
 * are ever read as a field. In 1.0 two structs end in 4 bytes of padding
 * (tfrec_image_info: 36 of 40 bytes used, tfrec_image_normalize_options: 20
 * of 24): their next member must start at offset 40 / 24, e.g. an int after
 * an explicit `int reserved;`. tests/unit/test_abi.c freezes older layouts
 * with this rule checked by _Static_assert. */
#ifndef TFREC_UTIL_STRUCT_SIZE_H
#define TFREC_UTIL_STRUCT_SIZE_H

#include <stddef.h>

#include "util/errors.h"
#include "util/private_api.h"

/* Larger than any struct will ever be: a bigger struct_size is garbage
 * (an uninitialised struct), not a future layout, and must not make the
 * library read far past the caller's object. */
#define TFREC_STRUCT_SIZE_MAX 4096

/* Copy caller struct src into dst, the library's own layout of lib_size
 * bytes. src NULL: dst becomes all defaults. type names the struct in
 * messages ("tfrec_reader_options"). The failure goes to err (may be NULL:
 * thread slot only). */
TFREC_PRIVATE_API int tfrec_struct_in(void *dst, size_t lib_size, const void *src, const char *type,
                                      tfrec_err *err);

/* Check a caller's output struct before doing work for it. */
TFREC_PRIVATE_API int tfrec_struct_check_out(const void *dst, const char *type, tfrec_err *err);

/* Copy the library's src (lib_size bytes) into the caller's dst, bounded by
 * dst->struct_size; dst's struct_size is left as the caller set it. */
TFREC_PRIVATE_API int tfrec_struct_out(void *dst, const void *src, size_t lib_size,
                                       const char *type, tfrec_err *err);

/* Zero s and set its struct_size: the body of every public _init(). */
TFREC_PRIVATE_API void tfrec_struct_init(void *s, size_t size);

#define TFREC_STRUCT_IN(type, dst, src, err) \
    tfrec_struct_in((dst), sizeof(type), (src), #type, (err))
#define TFREC_STRUCT_OUT(type, dst, src, err) \
    tfrec_struct_out((dst), (src), sizeof(type), #type, (err))
#define TFREC_STRUCT_CHECK_OUT(type, dst, err) tfrec_struct_check_out((dst), #type, (err))

/* Defines the public `void <type>_init(<type> *)`. */
#define TFREC_DEFINE_STRUCT_INIT(type)      \
    void type##_init(type *s)               \
    {                                       \
        tfrec_struct_init(s, sizeof(type)); \
    }

#endif

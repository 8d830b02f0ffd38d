/* libtfrec: declarations shared by every public header.
 *
 * TFREC_BEGIN_DECLS / TFREC_END_DECLS wrap each header's declarations: C
 * linkage for C++ callers, and default symbol visibility, because the
 * library is compiled with -fvisibility=hidden and exports exactly what its
 * public headers declare (internal functions stay local to the .so even
 * though they carry the tfrec_ prefix too).
 *
 * Growable structs. Every options, stats, info and I/O-callback struct has
 * `size_t struct_size` as its first member and grows only at its end, so a
 * program and a newer (or older) library agree on the part both know.
 * Initialise each one with its TFREC_<NAME>_INIT macro or its
 * tfrec_<name>_init() function:
 *
 *     tfrec_reader_options o = TFREC_READER_OPTIONS_INIT;
 *     o.skip_corrupt = 1;
 *
 * Everything else zero means "default", and a NULL options pointer means all
 * defaults. The library treats struct_size as follows:
 *   - struct_size 0 (a struct not initialised as above) is TFREC_E_INVALID;
 *   - options from an older program (smaller struct_size) get defaults for
 *     the fields they lack;
 *   - options from a newer program (larger struct_size) are accepted when
 *     the fields this library does not know are zero, otherwise they are
 *     TFREC_E_UNSUPPORTED (the program asks for something this version
 *     cannot do);
 *   - outputs (stats, info, counts) are written up to the caller's
 *     struct_size and never beyond (members a newer program knows and this
 *     library does not are left as they were: zero after INIT); getters
 *     return TFREC_OK or TFREC_E_INVALID.
 */
#ifndef TFREC_COMMON_H
#define TFREC_COMMON_H

#if defined(__GNUC__) || defined(__clang__)
#define TFREC_VISIBILITY_PUSH _Pragma("GCC visibility push(default)")
#define TFREC_VISIBILITY_POP _Pragma("GCC visibility pop")
#else
#define TFREC_VISIBILITY_PUSH
#define TFREC_VISIBILITY_POP
#endif

#ifdef __cplusplus
#define TFREC_BEGIN_DECLS \
    extern "C" {          \
    TFREC_VISIBILITY_PUSH
#define TFREC_END_DECLS  \
    TFREC_VISIBILITY_POP \
    }
#else
#define TFREC_BEGIN_DECLS TFREC_VISIBILITY_PUSH
#define TFREC_END_DECLS TFREC_VISIBILITY_POP
#endif

/* The INIT macros: struct_size set, every other member zero. C uses a
 * designated initialiser and C++ a value-initialised copy, so neither trips
 * -Wmissing-field-initializers. */
#ifdef __cplusplus
template <typename T> static inline T tfrec_struct_init_value_()
{
    T v = T();
    v.struct_size = sizeof(T);
    return v;
}
#define TFREC_STRUCT_INIT(type) tfrec_struct_init_value_<type>()
#else
#define TFREC_STRUCT_INIT(type)     \
    {                               \
        .struct_size = sizeof(type) \
    }
#endif

#endif

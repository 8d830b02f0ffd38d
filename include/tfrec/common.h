/* libtfrec: declarations shared by every public header.
 *
 * TFREC_BEGIN_DECLS / TFREC_END_DECLS wrap each header's declarations: C
 * linkage for C++ callers, and default symbol visibility, because the
 * library is compiled with -fvisibility=hidden and exports exactly what its
 * public headers declare (internal functions stay local to the .so even
 * though they carry the tfrec_ prefix too).
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
#define TFREC_BEGIN_DECLS extern "C" { TFREC_VISIBILITY_PUSH
#define TFREC_END_DECLS TFREC_VISIBILITY_POP }
#else
#define TFREC_BEGIN_DECLS TFREC_VISIBILITY_PUSH
#define TFREC_END_DECLS TFREC_VISIBILITY_POP
#endif

#endif

/** @file lv_export.h
 *  LV_API: the mark of a public livens function.
 *
 *  The library is compiled with -fvisibility=hidden, so a function leaves
 *  liblivens.so only if its declaration in an installed header (include/livens)
 *  starts with LV_API.  Everything else, including non-static functions shared
 *  between the library's own files, stays inside.  tests/test_symbols.sh fails
 *  when the exported set and the LV_API declarations differ.
 *
 *  Tools that parse the headers without a C compiler's attributes (cffi's
 *  cdef, for instance) preprocess them with both marks defined empty:
 *  `cc -E -DLV_API= '-DLV_DEPRECATED(m)=' ...`.
 */
#ifndef LIVENS_LV_EXPORT_H
#define LIVENS_LV_EXPORT_H

#ifndef LV_API
#if defined(__GNUC__) && __GNUC__ >= 4
#define LV_API __attribute__((visibility("default")))
#else
#define LV_API
#endif
#endif

/* LV_DEPRECATED("use X instead"): a public function kept for existing
 * callers; the compiler warns where it is still used. */
#ifndef LV_DEPRECATED
#if defined(__GNUC__) && (__GNUC__ > 4 || (__GNUC__ == 4 && __GNUC_MINOR__ >= 5))
#define LV_DEPRECATED(msg) __attribute__((deprecated(msg)))
#else
#define LV_DEPRECATED(msg)
#endif
#endif

#endif

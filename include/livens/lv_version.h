/** @file lv_version.h
 *  The version of livens, written here and nowhere else: configure's AC_INIT
 *  reads these three numbers (so PACKAGE_VERSION, livens.pc and the libtool
 *  library version -version-number MAJOR:MINOR:PATCH follow), lv_version()
 *  returns LIVENS_VERSION_STRING and `livens --version` prints it.
 *  Semantic versioning: MAJOR changes when the ABI breaks (the soname is
 *  liblivens.so.MAJOR).  After editing, run `autoreconf -fi` (autoconf
 *  reads the numbers; check_core and test_version.sh fail until it has).
 */
#ifndef LIVENS_LV_VERSION_H
#define LIVENS_LV_VERSION_H

/** Major version: changes when the ABI breaks (soname liblivens.so.MAJOR). */
#define LIVENS_VERSION_MAJOR 0
/** Minor version: compatible additions. */
#define LIVENS_VERSION_MINOR 1
/** Patch version: fixes without interface changes. */
#define LIVENS_VERSION_PATCH 0

/** Helper of LIVENS_VERSION_STRING: stringifies its argument as written. */
#define LIVENS_VERSION_STR_(x) #x
/** Helper of LIVENS_VERSION_STRING: stringifies its argument after macro expansion. */
#define LIVENS_VERSION_XSTR_(x) LIVENS_VERSION_STR_(x)
/** "MAJOR.MINOR.PATCH", e.g. "0.1.0": the value lv_version() returns. */
#define LIVENS_VERSION_STRING                                        \
  LIVENS_VERSION_XSTR_(LIVENS_VERSION_MAJOR) "." LIVENS_VERSION_XSTR_( \
      LIVENS_VERSION_MINOR) "." LIVENS_VERSION_XSTR_(LIVENS_VERSION_PATCH)

#endif

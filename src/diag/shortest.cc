/* The shortest decimal digits of a double that read back to the same
 * double, from Google's double-conversion library (Debian:
 * libdouble-conversion-dev), for the CSV rows (csv.c lays them out).  The
 * only C++ in livens: built when configure finds the library, otherwise
 * csv.c prints %.17g (the same values on reading, more digits). */
#include <double-conversion/double-to-string.h>

#include "diag/shortest.h"

extern "C" int lv_shortest_digits(double x, char *digits, int *point, int *negative) {
  bool sign = false;
  int length = 0;
  double_conversion::DoubleToStringConverter::DoubleToAscii(
      x, double_conversion::DoubleToStringConverter::SHORTEST, 0, digits, LV_SHORTEST_BUF, &sign, &length, point);
  *negative = sign ? 1 : 0;
  return length;
}

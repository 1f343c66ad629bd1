/* Shortest round-trip digits of a double (shortest.cc, C++ over
 * double-conversion; only where configure found it: LV_HAVE_DCONV), and
 * the CSV rows' number format built on them (csv.c). */
#ifndef LV_DIAG_SHORTEST_H
#define LV_DIAG_SHORTEST_H
#ifdef __cplusplus
extern "C" {
#endif
/* room for the digits and a terminating null (at most 17 digits) */
#define LV_SHORTEST_BUF 18
/* For a finite x: its shortest digits d1..dn (n returned, 1 <= n <= 17,
 * null-terminated) such that 0.d1..dn * 10^point, with the sign, reads back
 * to x; "0" with point 1 for a zero. */
int lv_shortest_digits(double x, char *digits, int *point, int *negative);

/* room for lv_csv_number's text and its null */
#define LV_CSV_NUMBER_BUF 32
/* x as the CSV rows write it (csv.c): the shortest digits that read back
 * to x, laid out as printf's %.17g lays out its own (fixed point for a
 * decimal exponent from -4 to 16, else d.ddde+XX); %.17g itself where
 * double-conversion is not built in, and for inf and nan.  Returns the
 * length. */
int lv_csv_number(char *buf, double x);
#ifdef __cplusplus
}
#endif
#endif

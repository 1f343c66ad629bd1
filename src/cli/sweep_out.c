/* Small writers for the sweep summary (issue 21): shortest round-trip
 * numbers, JSON strings with correct escaping, RFC 4180 CSV fields. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "sweep.h"

void sw_fmt_double(char *buf, size_t n, double x) {
  if (isnan(x)) {
    snprintf(buf, n, "nan");
    return;
  }
  if (isinf(x)) {
    snprintf(buf, n, x > 0 ? "inf" : "-inf");
    return;
  }
  for (int p = 15; p <= 17; p++) {
    snprintf(buf, n, "%.*g", p, x);
    if (strtod(buf, NULL) == x) return;
  }
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if invalid. */
static int utf8_len(const unsigned char *s) {
  unsigned char c = s[0];
  int len;
  unsigned min;
  unsigned cp;
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) len = 2, cp = c & 0x1F, min = 0x80;
  else if (c >= 0xE0 && c <= 0xEF) len = 3, cp = c & 0x0F, min = 0x800;
  else if (c >= 0xF0 && c <= 0xF4) len = 4, cp = c & 0x07, min = 0x10000;
  else return 0;
  for (int i = 1; i < len; i++) {
    if ((s[i] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (s[i] & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

void sw_json_string(FILE *f, const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  fputc('"', f);
  while (*p) {
    unsigned char c = *p;
    if (c == '"' || c == '\\') {
      fputc('\\', f);
      fputc(c, f);
      p++;
    } else if (c < 0x20) {
      switch (c) {
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        case '\b': fputs("\\b", f); break;
        case '\f': fputs("\\f", f); break;
        default: fprintf(f, "\\u%04x", c);
      }
      p++;
    } else if (c < 0x80) {
      fputc(c, f);
      p++;
    } else {
      int len = utf8_len(p);
      if (len == 0) {
        fputs("\\ufffd", f);
        p++;
      } else {
        fwrite(p, 1, (size_t)len, f);
        p += len;
      }
    }
  }
  fputc('"', f);
}

void sw_json_number(FILE *f, double x) {
  if (!isfinite(x)) {
    fputs("null", f);
    return;
  }
  char b[40];
  sw_fmt_double(b, sizeof b, x);
  fputs(b, f);
}

void sw_csv_field(FILE *f, const char *s) {
  if (!strpbrk(s, ",\"\r\n")) {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

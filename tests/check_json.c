/* The JSON and CSV-metadata writers of the livens program (issue 17): user
 * text is escaped so the output always parses and a metadata value never
 * ends its comment line.  Exact expected bytes, written by hand from RFC
 * 8259 and the escape rules in src/cli/meta.c. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "testutil.h"

/* The output of fn(f, arg) as a string (caller frees). */
static char *capture_json(const char *arg) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  cli_json_string(f, arg);
  fclose(f);
  return buf;
}

START_TEST(test_json_string_escapes) {
  static const struct {
    const char *in, *out;
  } c[] = {
      {"plain", "\"plain\""},
      {"q\"b\\s", "\"q\\\"b\\\\s\""},
      {"a\nb\tc\rd", "\"a\\nb\\tc\\rd\""},
      {"\x01\x1f\x7f", "\"\\u0001\\u001f\\u007f\""},
      {"caf\xc3\xa9 \xe2\x82\xac", "\"caf\xc3\xa9 \xe2\x82\xac\""},  /* valid UTF-8 kept */
      {"x\xff" "y\xc3", "\"x\\ufffdy\\ufffd\""},                       /* malformed: U+FFFD */
      {"\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\""},                   /* a surrogate is malformed */
      {"\xc0\xaf", "\"\\ufffd\\ufffd\""},                              /* overlong '/' */
      {"'); system('x", "\"'); system('x\""},
      {"", "\"\""},
  };
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
    char *s = capture_json(c[i].in);
    ck_assert_str_eq(s, c[i].out);
    free(s);
  }
}
END_TEST

START_TEST(test_json_numbers) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  cli_json_number(f, 0.1);
  fputc(' ', f);
  cli_json_number(f, 1.0 / 0.0);
  fputc(' ', f);
  cli_json_number(f, 0.0 / 0.0);
  fclose(f);
  ck_assert_str_eq(buf, "0.10000000000000001 null null");
  free(buf);
}
END_TEST

START_TEST(test_meta_escapes) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  cli_meta_put(f, "param.s", "a\nt,q1\r\\x\x01 'q' `c` @m");
  fclose(f);
  ck_assert_str_eq(buf, "# param.s = a\\nt,q1\\r\\\\x\\x01 'q' `c` @m\n");
  /* one line: the value cannot start a row */
  ck_assert_ptr_eq(strchr(buf, '\n'), buf + len - 1);
  free(buf);
}
END_TEST

START_TEST(test_summary_object) {
  cli_run r;
  cli_run_defaults(&r);
  strcpy(r.model, "pendulum3d");
  strcpy(r.scheme, "rattle");
  r.h = 0.01;
  r.t_end = 1;
  ck_assert_int_eq(cli_kv_set(&r.params, "l", "2"), CLI_OK);
  cli_result res;
  memset(&res, 0, sizeof res);
  res.status = 0;
  res.sum.max_rel_energy_error = 1.5e-3;
  res.st.steps = 100;
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  ck_assert_int_eq(cli_json_summary(f, &r, &res), CLI_OK);
  fclose(f);
  ck_assert_ptr_nonnull(strstr(buf, "\"model\": \"pendulum3d\""));
  ck_assert_ptr_nonnull(strstr(buf, "\"l\": \"2\""));
  ck_assert_ptr_nonnull(strstr(buf, "\"m\": \"1\"")); /* a default parameter */
  ck_assert_ptr_nonnull(strstr(buf, "\"status\": \"ok\""));
  ck_assert_ptr_nonnull(strstr(buf, "\"max_rel_energy_error\": 0.0015"));
  ck_assert_ptr_nonnull(strstr(buf, "\"steps\": 100"));
  free(buf);
  cli_kv_free(&r.params);
}
END_TEST

int main(void) {
  Suite *s = suite_create("json");
  TCase *tc = tu_tcase(s, "core", 0.1);
  tcase_add_test(tc, test_json_string_escapes);
  tcase_add_test(tc, test_json_numbers);
  tcase_add_test(tc, test_meta_escapes);
  tcase_add_test(tc, test_summary_object);
  return tu_run_suite(s);
}

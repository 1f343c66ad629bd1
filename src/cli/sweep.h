/* Parameter sweeps of the livens program (issue 21): the study, its cases,
 * the result files, and the MPI hand-out (sweep_mpi.c, the only file built
 * with MPI flags). */
#ifndef LIVENS_CLI_SWEEP_H
#define LIVENS_CLI_SWEEP_H

#include <stdint.h>
#include <stdio.h>
#include "cli.h"

typedef struct sweep_study sweep_study;

/* Run case @p idx of the study.  Returns the case's result text (malloc'd;
 * the content of its result file), or NULL when the case did not finish:
 * *interrupted is set after SIGINT/SIGTERM, *fatal when the case's CSV
 * could not be written (message printed). */
char *sweep_run_case(const sweep_study *s, long idx, int *interrupted, int *fatal);
/* Write the result text of case @p idx atomically (temporary file,
 * fsync, rename) into the output directory, and print its progress line
 * (ending in "(WHO RANK)" when @p who is not NULL: the MPI rank or local
 * job that ran it).  CLI_OK or CLI_FAILED (message printed). */
int sweep_commit(const sweep_study *s, long idx, const char *text, const char *who, int rank);

/* A local pool (sweep_pool.c): @p jobs forked processes run the @p n
 * pending cases, each asking for the next when it is free; this process
 * commits their results.  Sets *run; CLI_OK, or CLI_FAILED after an
 * interrupted or failed job (the committed cases stay). */
int sweep_pool_serve(const sweep_study *s, const long *pending, long n, int jobs, long *run);

/* MPI (sweep_mpi.c).  Without MPI in the build, or when the program was
 * not started by mpirun, these act as a single rank. */
/* Initialise MPI if the program was started by an MPI launcher; sets the
 * rank and the number of ranks (0 and 1 otherwise; size -1 when a build
 * without MPI was started as several MPI processes). */
void sweep_mpi_start(int *rank, int *size);
/* 1 if every rank passes ok = 1 (a collective: every rank calls it). */
int sweep_mpi_agree(int ok);
/* Broadcast a 64-bit value from rank 0. */
void sweep_mpi_bcast_u64(uint64_t *x);
/* Rank 0: hand out the @p n pending cases one at a time to the ranks that
 * ask, commit the results they send back.  Sets *run to the number of
 * results committed; returns CLI_OK, or CLI_FAILED after an interrupted
 * or failed rank (the committed cases stay). */
int sweep_mpi_serve(const sweep_study *s, const long *pending, long n, long *run);
/* Ranks > 0: ask rank 0 for cases and run them until told to stop. */
int sweep_mpi_work(const sweep_study *s);
void sweep_mpi_stop(void);

/* Output helpers (sweep_out.c).  Shortest decimal form that reads back to
 * the same double ("nan", "inf", "-inf" when not finite); @p buf of at
 * least 32 bytes. */
void sw_fmt_double(char *buf, size_t n, double x);
/* A JSON string literal: quotes, backslashes and control characters
 * escaped, invalid UTF-8 bytes replaced by U+FFFD. */
void sw_json_string(FILE *f, const char *s);
/* A JSON number, or null when @p x is not finite. */
void sw_json_number(FILE *f, double x);
/* A CSV field (RFC 4180): quoted when it holds a comma, quote, CR or LF. */
void sw_csv_field(FILE *f, const char *s);

#endif

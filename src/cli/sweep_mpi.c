/* The MPI hand-out of a sweep (issue 21).  The only file of the program
 * built with MPI's flags (configure --with-mpi, on when mpicc is found);
 * without them, or when the program was not started by an MPI launcher,
 * the functions act as a single rank and the sweep runs its cases one
 * after another.
 *
 * Protocol: rank 0 serves, ranks 1..N-1 work, and so does a second thread
 * of rank 0 (MPI_THREAD_FUNNELED: only rank 0's main thread calls MPI; the
 * thread takes its cases from the same list under a mutex and commits its
 * own results), so N ranks run N cases at a time.  A worker sends one message
 * (tag SW_TAG_WORK, chars) "IDX\nRESULT" holding the result text of the
 * case it ran ("-1\n" on its first request, "-2\n" when interrupted, "-3\n"
 * when it could not write); rank 0 commits the result (atomic file) and
 * answers with the next pending case index (tag SW_TAG_CASE, one long) or
 * -1 when none is left.  Cases differ in cost by orders of magnitude, so
 * each rank asks when it is free: no static split.  Rank 0 polls with
 * MPI_Iprobe and sleeps 1 ms between polls, so it does not take a core
 * from the workers. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "sweep.h"

#ifdef LIVENS_MPI
#include <mpi.h>
#include <pthread.h>

enum { SW_TAG_WORK = 21, SW_TAG_CASE = 22 };

static int sw_mpi_on = 0;
static int sw_funneled = 0; /* rank 0 may run cases in a second thread */

/* The pending list, shared by the server loop and rank 0's own worker. */
typedef struct {
  const sweep_study *s;
  const long *pending;
  long n, next, run;
  int rc;
  pthread_mutex_t lock;
} hand_out;

/* The next pending case, or -1 (none left, or stopping). */
static long take(hand_out *h) {
  pthread_mutex_lock(&h->lock);
  if (cli_interrupted) h->rc = CLI_FAILED; /* SIGINT/SIGTERM: no new case */
  long give = h->rc == CLI_OK && h->next < h->n ? h->pending[h->next++] : -1;
  pthread_mutex_unlock(&h->lock);
  return give;
}

static void account(hand_out *h, int ok) {
  pthread_mutex_lock(&h->lock);
  if (ok) h->run++;
  else h->rc = CLI_FAILED;
  pthread_mutex_unlock(&h->lock);
}

/* Rank 0's worker thread: no MPI calls. */
static void *local_worker(void *arg) {
  hand_out *h = arg;
  long idx;
  while ((idx = take(h)) >= 0) {
    int interrupted, fatal;
    char *text = sweep_run_case(h->s, idx, &interrupted, &fatal);
    account(h, text && sweep_commit(h->s, idx, text, "rank", 0) == CLI_OK);
    free(text);
  }
  return NULL;
}

/* Started by mpirun/mpiexec (Open MPI, MPICH/Hydra, PMIx, Slurm)? */
static int launched(void) {
  const char *vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "MPI_LOCALNRANKS"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
    if (getenv(vars[i])) return 1;
  return 0;
}

void sweep_mpi_start(int *rank, int *size) {
  *rank = 0;
  *size = 1;
  int provided = MPI_THREAD_SINGLE;
  if (!launched() || MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) return;
  sw_mpi_on = 1;
  sw_funneled = provided >= MPI_THREAD_FUNNELED;
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
}

int sweep_mpi_agree(int ok) {
  if (!sw_mpi_on) return ok;
  int all = ok;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all;
}

void sweep_mpi_bcast_u64(uint64_t *x) {
  if (!sw_mpi_on) return;
  unsigned long long v = *x;
  MPI_Bcast(&v, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  *x = v;
}

int sweep_mpi_serve(const sweep_study *s, const long *pending, long n, long *run) {
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int active = size - 1;
  hand_out h = {s, pending, n, 0, 0, CLI_OK, PTHREAD_MUTEX_INITIALIZER};
  pthread_t th;
  int threaded = sw_funneled && pthread_create(&th, NULL, local_worker, &h) == 0;
  while (active > 0) {
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, SW_TAG_WORK, MPI_COMM_WORLD, &flag, &st);
    if (!flag) {
      struct timespec ts = {0, 1000000};
      nanosleep(&ts, NULL);
      continue;
    }
    int len = 0;
    MPI_Get_count(&st, MPI_CHAR, &len);
    char *msg = malloc((size_t)len + 1);
    if (!msg) {
      cli_error("out of memory.");
      MPI_Abort(MPI_COMM_WORLD, CLI_FAILED);
    }
    MPI_Recv(msg, len, MPI_CHAR, st.MPI_SOURCE, SW_TAG_WORK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    msg[len] = '\0';
    long idx = strtol(msg, NULL, 10);
    const char *text = strchr(msg, '\n');
    if (idx >= 0 && text) account(&h, sweep_commit(s, idx, text + 1, "rank", st.MPI_SOURCE) == CLI_OK);
    free(msg);
    if (idx < -1) {
      /* the worker stopped (interrupted, or it could not write) */
      account(&h, 0);
      active--;
      continue;
    }
    long give = take(&h);
    MPI_Send(&give, 1, MPI_LONG, st.MPI_SOURCE, SW_TAG_CASE, MPI_COMM_WORLD);
    if (give < 0) active--;
  }
  if (threaded) pthread_join(th, NULL);
  *run = h.run;
  return h.rc;
}

int sweep_mpi_work(const sweep_study *s) {
  char *msg = NULL, first[] = "-1\n";
  const char *out = first;
  int rc = CLI_OK;
  for (;;) {
    MPI_Send(out, (int)strlen(out), MPI_CHAR, 0, SW_TAG_WORK, MPI_COMM_WORLD);
    free(msg);
    msg = NULL;
    if (rc) break;
    long idx;
    MPI_Recv(&idx, 1, MPI_LONG, 0, SW_TAG_CASE, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (idx < 0) break;
    if (cli_interrupted) {
      rc = CLI_FAILED;
      out = "-2\n";
      continue;
    }
    int interrupted, fatal;
    char *text = sweep_run_case(s, idx, &interrupted, &fatal);
    if (!text) {
      rc = CLI_FAILED;
      out = interrupted ? "-2\n" : "-3\n";
      continue;
    }
    size_t n = strlen(text) + 32;
    msg = malloc(n);
    if (!msg) {
      cli_error("out of memory.");
      free(text);
      rc = CLI_FAILED;
      out = "-3\n";
      continue;
    }
    snprintf(msg, n, "%ld\n%s", idx, text);
    free(text);
    out = msg;
  }
  return rc;
}

void sweep_mpi_stop(void) {
  if (sw_mpi_on) MPI_Finalize();
  sw_mpi_on = 0;
}

#else /* no MPI in this build: one rank */

/* Started by mpirun with several processes: each would run the whole
 * sweep, so *size = -1 (the caller refuses). */
void sweep_mpi_start(int *rank, int *size) {
  *rank = 0;
  *size = 1;
  const char *vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MPI_LOCALNRANKS"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
    if (getenv(vars[i]) && atoi(getenv(vars[i])) > 1) *size = -1;
}
int sweep_mpi_agree(int ok) { return ok; }
void sweep_mpi_bcast_u64(uint64_t *x) { (void)x; }
int sweep_mpi_serve(const sweep_study *s, const long *pending, long n, long *run) {
  (void)s, (void)pending, (void)n;
  *run = 0;
  return CLI_FAILED;
}
int sweep_mpi_work(const sweep_study *s) {
  (void)s;
  return CLI_FAILED;
}
void sweep_mpi_stop(void) {}

#endif

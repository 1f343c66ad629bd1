/* A local pool for `livens sweep --jobs N` (issue 21): the same dynamic
 * hand-out as the MPI ranks, with forked processes and pipes, for one
 * machine without MPI.  The parent writes the next case index (a long, or
 * -1: stop) to a job's pipe; the job runs the case and writes back a
 * header {idx, len} and len bytes of result text (idx -2: interrupted,
 * -3: it could not write).  The parent commits each result (atomic file)
 * as it arrives; a job that dies takes only its case in flight. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include "sweep.h"

static int write_all(int fd, const void *buf, size_t n) {
  const char *p = buf;
  while (n > 0) {
    ssize_t k = write(fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return -1;
    p += k;
    n -= (size_t)k;
  }
  return 0;
}

/* 0 on success, 1 at end of file before any byte, -1 on error/short read. */
static int read_all(int fd, void *buf, size_t n) {
  char *p = buf;
  size_t got = 0;
  while (got < n) {
    ssize_t k = read(fd, p + got, n - got);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) return -1;
    if (k == 0) return got == 0 ? 1 : -1;
    got += (size_t)k;
  }
  return 0;
}

/* The job: run the cases it is given until told to stop. */
static void job(const sweep_study *s, int in, int out) {
  long idx;
  while (read_all(in, &idx, sizeof idx) == 0 && idx >= 0) {
    int interrupted = 0, fatal = 0;
    char *text = cli_interrupted ? NULL : sweep_run_case(s, idx, &interrupted, &fatal);
    long head[2] = {text ? idx : fatal ? -3 : -2, text ? (long)strlen(text) : 0};
    int bad = write_all(out, head, sizeof head) || (text && write_all(out, text, (size_t)head[1]));
    free(text);
    if (bad || head[0] < 0) break;
  }
  _exit(0);
}

int sweep_pool_serve(const sweep_study *s, const long *pending, long n, int jobs, long *run) {
  *run = 0;
  if (jobs > n) jobs = (int)(n > 0 ? n : 1);
  pid_t *pid = calloc((size_t)jobs, sizeof *pid);
  int *to = calloc((size_t)jobs, sizeof *to), *from = calloc((size_t)jobs, sizeof *from);
  struct pollfd *pf = calloc((size_t)jobs, sizeof *pf);
  if (!pid || !to || !from || !pf) {
    free(pid), free(to), free(from), free(pf);
    cli_error("out of memory.");
    return CLI_FAILED;
  }
  /* a job that died must not kill the parent through SIGPIPE */
  struct sigaction ign, oldpipe;
  memset(&ign, 0, sizeof ign);
  ign.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ign, &oldpipe);
  fflush(stdout); /* the jobs must not write the parent's buffer again */
  fflush(stderr);
  int rc = CLI_OK, started = 0;
  long next = 0;
  for (int j = 0; j < jobs; j++) {
    int a[2], b[2];
    if (pipe(a) != 0) {
      cli_error("cannot start job %d: %s.", j + 1, strerror(errno));
      rc = CLI_FAILED;
      break;
    }
    if (pipe(b) != 0) {
      cli_error("cannot start job %d: %s.", j + 1, strerror(errno));
      close(a[0]), close(a[1]);
      rc = CLI_FAILED;
      break;
    }
    pid[j] = fork();
    if (pid[j] < 0) {
      cli_error("cannot start job %d: %s.", j + 1, strerror(errno));
      close(a[0]), close(a[1]), close(b[0]), close(b[1]);
      rc = CLI_FAILED;
      break;
    }
    if (pid[j] == 0) {
      for (int k = 0; k < j; k++) close(to[k]), close(from[k]);
      close(a[1]);
      close(b[0]);
      sigaction(SIGPIPE, &oldpipe, NULL);
      job(s, a[0], b[1]);
    }
    close(a[0]);
    close(b[1]);
    to[j] = a[1];
    from[j] = b[0];
    started++;
  }
  int active = 0;
  for (int j = 0; j < started; j++) {
    long give = rc == CLI_OK && next < n ? pending[next++] : -1;
    if (write_all(to[j], &give, sizeof give) != 0 || give < 0) {
      close(to[j]);
      to[j] = -1;
      pf[j].fd = -1;
      continue;
    }
    pf[j].fd = from[j];
    pf[j].events = POLLIN;
    active++;
  }
  while (active > 0) {
    int k = poll(pf, (nfds_t)started, -1);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) {
      cli_error("waiting for the jobs failed: %s.", strerror(errno));
      rc = CLI_FAILED;
      break;
    }
    for (int j = 0; j < started; j++) {
      if (pf[j].fd < 0 || !pf[j].revents) continue;
      long head[2];
      char *text = NULL;
      int r = read_all(from[j], head, sizeof head);
      if (r == 0 && head[0] >= 0 && head[1] >= 0 && head[1] < (1L << 24) && (text = malloc((size_t)head[1] + 1)) &&
          read_all(from[j], text, (size_t)head[1]) == 0) {
        text[head[1]] = '\0';
        if (sweep_commit(s, head[0], text, "job", j + 1)) rc = CLI_FAILED;
        else (*run)++;
      } else {
        if (!(r == 0 && head[0] < 0)) cli_error("job %d ended without its result.", j + 1);
        rc = CLI_FAILED;
        head[0] = -2;
      }
      free(text);
      if (cli_interrupted) rc = CLI_FAILED; /* SIGINT/SIGTERM: no new case */
      long give = head[0] >= 0 && rc == CLI_OK && next < n ? pending[next++] : -1;
      if (head[0] < 0 || write_all(to[j], &give, sizeof give) != 0 || give < 0) {
        close(to[j]);
        to[j] = -1;
        pf[j].fd = -1;
        active--;
      }
    }
  }
  for (int j = 0; j < started; j++) {
    if (to[j] >= 0) close(to[j]);
    close(from[j]);
    while (waitpid(pid[j], NULL, 0) < 0 && errno == EINTR) {
    }
  }
  sigaction(SIGPIPE, &oldpipe, NULL);
  free(pid), free(to), free(from), free(pf);
  return rc;
}

/* Whole rows even under SIGKILL: the CSV goes through a row keeper.
 *
 * The library hands every CSV line to the kernel in one write(2), and a
 * signal the program handles (SIGINT, SIGTERM) stops it at a step boundary.
 * SIGKILL is different: Linux checks for a fatal signal between the pages of
 * one write to a regular file (generic_perform_write), so a run killed while
 * it writes a row longer than a page (the chain at N = 3000: 400 kB per row)
 * left the first pages of that row in the file.
 *
 * So the program does not write the file itself.  It forks a row keeper that
 * owns the file: the run writes its lines into a pipe, the keeper writes to
 * the file only what ends with a newline and, when the pipe closes, drops an
 * unfinished tail (the run was killed inside a row).  The keeper ignores
 * SIGINT, SIGTERM and SIGHUP, which reach it with the run's process group,
 * and drains the pipe to the end; killing the run by its pid cannot cut a row.
 * A write the keeper cannot make (full disk) ends the keeper; the run then
 * meets a closed pipe (EPIPE, SIGPIPE ignored while a keeper is open) and
 * cli_rows_errno gives the keeper's errno, so the message names the real
 * cause.  Killing the keeper itself (kill -9 on the process group) can still
 * cut the row it is writing: nothing in user space can prevent that. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cli.h"

enum { MAX_KEEPERS = 8 };

typedef struct {
  FILE *f;       /* the run's end of the pipe */
  pid_t pid;     /* the keeper */
  int status_fd; /* the keeper's errno, if its write failed */
  int err;       /* that errno once read; 0 until then */
} keeper;

static keeper keepers[MAX_KEEPERS];
static int nopen;
static struct sigaction old_pipe;

static int write_all(int fd, const char *s, size_t n) {
  while (n > 0) {
    ssize_t k = write(fd, s, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) {
      if (k == 0) errno = ENOSPC;
      return -1;
    }
    s += k;
    n -= (size_t)k;
  }
  return 0;
}

/* The keeper: copies whole lines from the pipe to the file, drops the
 * unfinished tail at the end.  Only async-signal-safe calls and malloc
 * (glibc's is safe after fork). */
static void keep_rows(int in, int out, int status) {
  struct sigaction ign;
  memset(&ign, 0, sizeof ign);
  ign.sa_handler = SIG_IGN;
  sigaction(SIGINT, &ign, NULL);
  sigaction(SIGTERM, &ign, NULL);
  sigaction(SIGHUP, &ign, NULL);
  sigaction(SIGPIPE, &ign, NULL);
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  int err = buf ? 0 : ENOMEM;
  while (!err) {
    if (n == cap) {
      char *t = cap > (size_t)-1 / 2 ? NULL : realloc(buf, 2 * cap);
      if (!t) {
        err = ENOMEM;
        break;
      }
      buf = t;
      cap *= 2;
    }
    ssize_t k = read(in, buf + n, cap - n);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) err = errno;
    if (k <= 0) break; /* end of the pipe: the tail after the last newline is dropped */
    size_t start = n;
    n += (size_t)k;
    size_t end = n;
    while (end > start && buf[end - 1] != '\n') end--;
    if (end == start) continue; /* no line finished in this piece */
    if (write_all(out, buf, end) != 0) {
      err = errno;
      break;
    }
    memmove(buf, buf + end, n - end);
    n -= end;
  }
  if (err) (void)!write(status, &err, sizeof err);
  _exit(err ? 1 : 0);
}

int cli_rows_open(const char *path, FILE **f) {
  *f = NULL;
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) return -1;
  /* Without a pipe or a process the run writes the file itself, as it
   * did before the keeper: every row whole unless SIGKILL lands inside one
   * (said once on stderr). */
  int p[2] = {-1, -1}, s[2] = {-1, -1};
  pid_t pid = -1;
  errno = EMFILE; /* no slot left for a keeper */
  if (nopen < MAX_KEEPERS && pipe(p) == 0 && pipe(s) == 0) {
    fflush(NULL); /* nothing buffered is written twice */
    pid = fork();
  }
  if (pid < 0) {
    int e = errno;
    for (int i = 0; i < 2; i++) {
      if (p[i] >= 0) close(p[i]);
      if (s[i] >= 0) close(s[i]);
    }
    FILE *direct = fdopen(fd, "w");
    if (!direct) {
      e = errno;
      close(fd);
      errno = e;
      return -1;
    }
    cli_error("note: no row keeper for %s (%s): the run writes it directly, and a SIGKILL inside a row "
              "longer than a page would leave that row cut.", path, strerror(e));
    *f = direct;
    return 0;
  }
  if (pid == 0) {
    close(p[1]);
    close(s[0]);
    /* the pipes of keepers still open belong to the run, not to this one */
    for (int i = 0; i < nopen; i++) {
      close(fileno(keepers[i].f));
      close(keepers[i].status_fd);
    }
    keep_rows(p[0], fd, s[1]);
  }
  close(fd);
  close(p[0]);
  close(s[1]);
  fcntl(p[1], F_SETFD, FD_CLOEXEC);
  fcntl(s[0], F_SETFD, FD_CLOEXEC);
  FILE *w = fdopen(p[1], "w");
  if (!w) {
    int e = errno;
    close(p[1]);
    close(s[0]);
    waitpid(pid, NULL, 0);
    errno = e;
    return -1;
  }
  if (nopen == 0) {
    struct sigaction ign;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ign, &old_pipe);
  }
  keepers[nopen++] = (keeper){w, pid, s[0], 0};
  *f = w;
  return 0;
}

static keeper *find(FILE *f) {
  for (int i = 0; f && i < nopen; i++)
    if (keepers[i].f == f) return &keepers[i];
  return NULL;
}

/* The keeper's errno, read once (blocks until the keeper exits); 0 when it
 * reported none. */
static int keeper_errno(keeper *k) {
  if (k->err || k->status_fd < 0) return k->err;
  int e = 0;
  ssize_t got;
  do got = read(k->status_fd, &e, sizeof e);
  while (got < 0 && errno == EINTR);
  if (got == (ssize_t)sizeof e && e) k->err = e;
  return k->err;
}

int cli_rows_errno(FILE *f, int err) {
  keeper *k = find(f);
  if (!k || (err != EPIPE && err != 0)) return err;
  /* the keeper writes its errno, then exits: the pipe closed after it */
  int e = keeper_errno(k);
  return e ? e : err;
}

int cli_rows_close(FILE *f) {
  keeper *k = find(f);
  if (!k) return fclose(f);
  int bad = ferror(f), e = errno;
  if (fclose(f) != 0 && !bad) {
    bad = 1;
    e = errno;
  }
  int st = 0;
  while (waitpid(k->pid, &st, 0) < 0 && errno == EINTR) {
  }
  int kerr = keeper_errno(k);
  close(k->status_fd);
  if (kerr) {
    bad = 1;
    e = kerr;
  } else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    bad = 1;
    if (!e || e == EPIPE) e = EIO;
  }
  *k = keepers[--nopen];
  if (nopen == 0) sigaction(SIGPIPE, &old_pipe, NULL);
  if (bad) {
    errno = e ? e : EIO;
    return EOF;
  }
  return 0;
}

/* probe: one attempt per invocation, for the matrix checks (scripts/matrix/check.sh).
 *
 * Why: the checks must try each attack (and its legitimate neighbour) from inside the sandboxed
 * child, on guests that have nothing but busybox; a small static program gives the same answer
 * everywhere and names the errno. Every command prints one line, `OK …` or `DENIED errno=NAME …`,
 * and exits 0 for OK, 1 for DENIED, 2 for a usage error.
 *
 *   probe read PATH NEEDLE        OK found | OK absent (read, NEEDLE not in it) | DENIED errno=…
 *   probe write PATH              creates/truncates PATH and writes a line
 *   probe tcp IPV4 PORT           connects (3 s bound)
 *   probe abstract NAME           connects to the abstract unix socket NAME
 *   probe unix PATH               connects to the named unix socket PATH
 *   probe kill PID                kill(PID, 0)
 *   probe fork N                  holds N children at once; DENIED when fork fails first
 *   probe listen-tcp IPV4 PORT SECS / probe listen-abstract NAME SECS / probe listen-unix PATH SECS
 *                                 host-side listeners: accept and close for SECS seconds
 *   probe runas UID GID CMD…      drops to UID:GID (no supplementary groups) and execs CMD
 *   probe setxattr PATH NAME VALUE sets an extended attribute (the guest marks a delegated
 *                                 cgroup with trusted.delegate, as systemd does)
 *
 * Build: musl-gcc -static -O2 -o probe probe.c (any C compiler; static for the guests).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

static const char *ename(int e) {
  static const struct { int e; const char *n; } t[] = {
    {EPERM, "EPERM"}, {EACCES, "EACCES"}, {ENOENT, "ENOENT"}, {EROFS, "EROFS"},
    {ECONNREFUSED, "ECONNREFUSED"}, {ENETUNREACH, "ENETUNREACH"}, {EHOSTUNREACH, "EHOSTUNREACH"},
    {ETIMEDOUT, "ETIMEDOUT"}, {ESRCH, "ESRCH"}, {EINVAL, "EINVAL"}, {ENOSYS, "ENOSYS"},
    {EAGAIN, "EAGAIN"}, {EAFNOSUPPORT, "EAFNOSUPPORT"}, {EXDEV, "EXDEV"}, {ENOTDIR, "ENOTDIR"},
    {ENOMEM, "ENOMEM"}, {ENOSPC, "ENOSPC"}};
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
    if (t[i].e == e) return t[i].n;
  static char buf[16];
  snprintf(buf, sizeof buf, "%d", e);
  return buf;
}

static int denied(const char *what, int e) {
  printf("DENIED errno=%s%s%s\n", ename(e), what ? " " : "", what ? what : "");
  return 1;
}

static int do_read(const char *path, const char *needle) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) return denied("open", errno);
  char buf[65536];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  if (n < 0) return denied("read", errno);
  buf[n] = 0;
  /* memmem: /proc/PID/environ separates its entries with NUL bytes */
  printf("OK %s n=%zd\n", memmem(buf, (size_t)n, needle, strlen(needle)) ? "found" : "absent", n);
  return 0;
}

static int do_write(const char *path) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return denied("open", errno);
  if (write(fd, "probe\n", 6) != 6) return denied("write", errno);
  if (close(fd)) return denied("close", errno);
  printf("OK\n");
  return 0;
}

static int do_tcp(const char *ip, const char *port) {
  int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  if (s < 0) return denied("socket", errno);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(atoi(port))};
  if (inet_pton(AF_INET, ip, &a.sin_addr) != 1) return 2;
  if (connect(s, (struct sockaddr *)&a, sizeof a) && errno != EINPROGRESS) return denied("connect", errno);
  struct pollfd p = {s, POLLOUT, 0};
  if (poll(&p, 1, 3000) <= 0) return denied("connect", ETIMEDOUT);
  int e = 0;
  socklen_t l = sizeof e;
  getsockopt(s, SOL_SOCKET, SO_ERROR, &e, &l);
  if (e) return denied("connect", e);
  printf("OK\n");
  return 0;
}

static socklen_t abstract_addr(struct sockaddr_un *a, const char *name) {
  memset(a, 0, sizeof *a);
  a->sun_family = AF_UNIX;
  size_t n = strlen(name);
  if (n > sizeof a->sun_path - 1) n = sizeof a->sun_path - 1;
  memcpy(a->sun_path + 1, name, n);
  return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

static int do_abstract(const char *name) {
  int s = socket(AF_UNIX, SOCK_STREAM, 0);
  if (s < 0) return denied("socket", errno);
  struct sockaddr_un a;
  socklen_t l = abstract_addr(&a, name);
  if (connect(s, (struct sockaddr *)&a, l)) return denied("connect", errno);
  printf("OK\n");
  return 0;
}

static socklen_t named_addr(struct sockaddr_un *a, const char *path) {
  memset(a, 0, sizeof *a);
  a->sun_family = AF_UNIX;
  strncpy(a->sun_path, path, sizeof a->sun_path - 1);
  return (socklen_t)sizeof *a;
}

static int do_unix(const char *path) {
  int s = socket(AF_UNIX, SOCK_STREAM, 0);
  if (s < 0) return denied("socket", errno);
  struct sockaddr_un a;
  socklen_t l = named_addr(&a, path);
  if (connect(s, (struct sockaddr *)&a, l)) return denied("connect", errno);
  printf("OK\n");
  return 0;
}

static int do_kill(const char *pid) {
  if (kill(atoi(pid), 0)) return denied("kill", errno);
  printf("OK\n");
  return 0;
}

static int do_fork(const char *count) {
  int n = atoi(count), made = 0, err = 0;
  pid_t kids[4096];
  if (n < 0 || n > 4096) return 2;
  for (; made < n; made++) {
    pid_t p = fork();
    if (p == 0) { pause(); _exit(0); }
    if (p < 0) { err = errno; break; }
    kids[made] = p;
  }
  for (int i = 0; i < made; i++) kill(kids[i], SIGKILL);
  for (int i = 0; i < made; i++) waitpid(kids[i], NULL, 0);
  if (err) {
    char what[32];
    snprintf(what, sizeof what, "held=%d", made);
    return denied(what, err);
  }
  printf("OK held=%d\n", made);
  return 0;
}

static void serve(int s, const char *secs) {
  time_t end = time(NULL) + atoi(secs);
  while (time(NULL) < end) {
    struct pollfd p = {s, POLLIN, 0};
    if (poll(&p, 1, 500) > 0) {
      int c = accept(s, NULL, NULL);
      if (c >= 0) close(c);
    }
  }
}

static int listen_tcp(const char *ip, const char *port, const char *secs) {
  int s = socket(AF_INET, SOCK_STREAM, 0), one = 1;
  setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(atoi(port))};
  if (inet_pton(AF_INET, ip, &a.sin_addr) != 1) return 2;
  if (bind(s, (struct sockaddr *)&a, sizeof a) || listen(s, 64)) { perror("listen-tcp"); return 1; }
  serve(s, secs);
  return 0;
}

static int listen_abstract(const char *name, const char *secs) {
  int s = socket(AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un a;
  socklen_t l = abstract_addr(&a, name);
  if (bind(s, (struct sockaddr *)&a, l) || listen(s, 64)) { perror("listen-abstract"); return 1; }
  serve(s, secs);
  return 0;
}

/* The socket is world-writable, so that only the sandbox can refuse a connection to it. */
static int listen_unix(const char *path, const char *secs) {
  int s = socket(AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un a;
  socklen_t l = named_addr(&a, path);
  unlink(path);
  if (bind(s, (struct sockaddr *)&a, l) || chmod(path, 0777) || listen(s, 64)) { perror("listen-unix"); return 1; }
  serve(s, secs);
  return 0;
}

static int do_setxattr(const char *path, const char *name, const char *value) {
  if (setxattr(path, name, value, strlen(value), 0)) return denied("setxattr", errno);
  printf("OK\n");
  return 0;
}

static int runas(char **argv) {
  if (setgroups(0, NULL) || setgid((gid_t)atoi(argv[1])) || setuid((uid_t)atoi(argv[0]))) {
    perror("probe runas");
    return 125;
  }
  execvp(argv[2], argv + 2);
  perror("probe runas: exec");
  return 127;
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  const char *c = argc > 1 ? argv[1] : "";
  if (!strcmp(c, "read") && argc == 4) return do_read(argv[2], argv[3]);
  if (!strcmp(c, "write") && argc == 3) return do_write(argv[2]);
  if (!strcmp(c, "tcp") && argc == 4) return do_tcp(argv[2], argv[3]);
  if (!strcmp(c, "abstract") && argc == 3) return do_abstract(argv[2]);
  if (!strcmp(c, "unix") && argc == 3) return do_unix(argv[2]);
  if (!strcmp(c, "kill") && argc == 3) return do_kill(argv[2]);
  if (!strcmp(c, "fork") && argc == 3) return do_fork(argv[2]);
  if (!strcmp(c, "listen-tcp") && argc == 5) return listen_tcp(argv[2], argv[3], argv[4]);
  if (!strcmp(c, "listen-abstract") && argc == 4) return listen_abstract(argv[2], argv[3]);
  if (!strcmp(c, "listen-unix") && argc == 4) return listen_unix(argv[2], argv[3]);
  if (!strcmp(c, "runas") && argc >= 5) return runas(argv + 2);
  if (!strcmp(c, "setxattr") && argc == 5) return do_setxattr(argv[2], argv[3], argv[4]);
  fprintf(stderr, "probe: usage: see the comment at the top of scripts/matrix/probe.c\n");
  return 2;
}

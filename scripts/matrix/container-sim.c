/* container-sim: run a command confined the way a default Docker/containerd container confines
 * its process, on the host kernel and without a container runtime (must start as root).
 *
 * Why: most CI jobs and agent hosts run hullward inside such a container; the container tier of
 * scripts/matrix runs the same checks under this confinement. It reproduces what matters to a
 * sandbox started inside: the capability set, the namespace-relevant part of the default seccomp
 * profile, the masked /proc and the read-only cgroup tree.
 *
 * Order (each step optional): a private mount namespace; /proc masked like Docker's masked and
 * read-only paths (after which the kernel refuses a fresh procfs mount: mount_too_revealing);
 * /sys/fs/cgroup read-only; the bounding/permitted/effective capabilities cut to Docker's default
 * 14; the user switched; the seccomp filter; exec.
 *
 *   container-sim [--mask-proc] [--ro-cgroup] [--caps docker|keep] [--seccomp docker|none]
 *                 [--user UID:GID] -- CMD ARGS…
 *
 * --seccomp docker: clone with any namespace flag, unshare, setns, mount, umount2, pivot_root,
 * the new mount API, keyctl, bpf, perf_event_open … → EPERM; clone3 → ENOSYS (moby's profile
 * answers clone3 with ENOSYS so that libcs fall back to clone, whose flags it can inspect).
 * Build: cc -O2 -o container-sim container-sim.c (it runs on the host only)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static void fail(const char *what) {
  fprintf(stderr, "container-sim: %s: %s\n", what, strerror(errno));
  exit(125);
}

/* Docker's default capabilities (moby oci/caps/defaults.go). */
static const int docker_caps[] = {CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_FSETID, CAP_FOWNER, CAP_MKNOD,
  CAP_NET_RAW, CAP_SETGID, CAP_SETUID, CAP_SETFCAP, CAP_SETPCAP, CAP_NET_BIND_SERVICE,
  CAP_SYS_CHROOT, CAP_KILL, CAP_AUDIT_WRITE};

static void mask_proc(void) {
  const char *to_null[] = {"/proc/kcore", "/proc/keys", "/proc/timer_list", "/proc/sched_debug",
    "/proc/latency_stats"};
  const char *to_tmpfs[] = {"/proc/acpi", "/proc/scsi", "/sys/firmware"};
  const char *read_only[] = {"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"};
  for (size_t i = 0; i < sizeof to_null / sizeof *to_null; i++)
    if (!access(to_null[i], F_OK) && mount("/dev/null", to_null[i], NULL, MS_BIND, NULL)) fail(to_null[i]);
  for (size_t i = 0; i < sizeof to_tmpfs / sizeof *to_tmpfs; i++)
    if (!access(to_tmpfs[i], F_OK) && mount("tmpfs", to_tmpfs[i], "tmpfs", MS_RDONLY, NULL)) fail(to_tmpfs[i]);
  for (size_t i = 0; i < sizeof read_only / sizeof *read_only; i++) {
    if (access(read_only[i], F_OK)) continue;
    if (mount(read_only[i], read_only[i], NULL, MS_BIND | MS_REC, NULL) ||
        mount(NULL, read_only[i], NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL))
      fail(read_only[i]);
  }
}

static void ro_cgroup(void) {
  if (mount("/sys/fs/cgroup", "/sys/fs/cgroup", NULL, MS_BIND | MS_REC, NULL)) fail("bind /sys/fs/cgroup");
  FILE *m = fopen("/proc/self/mounts", "r");
  char line[1024], dev[256], dir[512];
  while (m && fgets(line, sizeof line, m))
    if (sscanf(line, "%255s %511s", dev, dir) == 2 && !strncmp(dir, "/sys/fs/cgroup", 14) &&
        mount(NULL, dir, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY, NULL))
      fail(dir);
  if (m) fclose(m);
}

static void docker_capabilities(void) {
  unsigned long long keep = 0;
  for (size_t i = 0; i < sizeof docker_caps / sizeof *docker_caps; i++) keep |= 1ULL << docker_caps[i];
  for (int c = 0; c < 64; c++)
    if (!(keep & (1ULL << c)) && prctl(PR_CAPBSET_DROP, c, 0, 0, 0) && errno != EINVAL) fail("PR_CAPBSET_DROP");
  struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct d[2] = {{(unsigned)keep, (unsigned)keep, 0},
                                        {(unsigned)(keep >> 32), (unsigned)(keep >> 32), 0}};
  if (syscall(SYS_capset, &h, d)) fail("capset");
}

#define STMT(c, k) ((struct sock_filter)BPF_STMT((c), (k)))
#define JUMP(c, k, t, f) ((struct sock_filter)BPF_JUMP((c), (k), (t), (f)))
#define RET_ERRNO(e) STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (e))
#define RET_ALLOW STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
#define LOAD(field) STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, field))

static void docker_seccomp(void) {
  static const long eperm[] = {SYS_unshare, SYS_setns, SYS_mount, SYS_umount2, SYS_pivot_root,
    428 /* open_tree */, 429 /* move_mount */, 430 /* fsopen */, 431 /* fsconfig */, 432 /* fsmount */,
    433 /* fspick */, 442 /* mount_setattr */, SYS_keyctl, SYS_add_key, SYS_request_key, SYS_bpf,
    SYS_perf_event_open, SYS_kexec_load, SYS_init_module, SYS_finit_module, SYS_delete_module,
    SYS_swapon, SYS_swapoff, SYS_syslog, SYS_sethostname, SYS_setdomainname};
  const unsigned ns_flags = CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER |
                            CLONE_NEWPID | CLONE_NEWNET;
  struct sock_filter f[96];
  size_t k = 0;
  f[k++] = LOAD(arch);
  f[k++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
  f[k++] = RET_ERRNO(EPERM);
  f[k++] = LOAD(nr);
  f[k++] = JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1); /* x32 */
  f[k++] = RET_ERRNO(EPERM);
  f[k++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, 435 /* clone3 */, 0, 1);
  f[k++] = RET_ERRNO(ENOSYS);
  f[k++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 4);
  f[k++] = LOAD(args[0]);
  f[k++] = JUMP(BPF_JMP | BPF_JSET | BPF_K, ns_flags, 0, 1);
  f[k++] = RET_ERRNO(EPERM);
  f[k++] = RET_ALLOW;
  for (size_t i = 0; i < sizeof eperm / sizeof *eperm; i++) {
    f[k++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)eperm[i], 0, 1);
    f[k++] = RET_ERRNO(EPERM);
  }
  f[k++] = RET_ALLOW;
  struct sock_fprog prog = {(unsigned short)k, f};
  /* runc installs the filter while it still holds CAP_SYS_ADMIN; here the capabilities are
   * already cut, so the kernel wants no_new_privs. Docker's --security-opt no-new-privileges
   * gives the same; hullward sets it in its child anyway. */
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) fail("no_new_privs");
  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog)) fail("seccomp");
}

int main(int argc, char **argv) {
  int masked = 0, rocg = 0, caps = 1, seccomp = 1, i = 1;
  unsigned uid = 0, gid = 0, as_user = 0;
  for (; i < argc && strcmp(argv[i], "--"); i++) {
    if (!strcmp(argv[i], "--mask-proc")) masked = 1;
    else if (!strcmp(argv[i], "--ro-cgroup")) rocg = 1;
    else if (!strcmp(argv[i], "--caps") && i + 1 < argc) caps = strcmp(argv[++i], "keep") != 0;
    else if (!strcmp(argv[i], "--seccomp") && i + 1 < argc) seccomp = strcmp(argv[++i], "none") != 0;
    else if (!strcmp(argv[i], "--user") && i + 1 < argc && sscanf(argv[i + 1], "%u:%u", &uid, &gid) == 2) {
      as_user = 1;
      i++;
    } else {
      fprintf(stderr, "container-sim: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  if (i + 1 >= argc) {
    fprintf(stderr, "usage: container-sim [options] -- CMD ARGS...\n");
    return 2;
  }
  if (masked || rocg) {
    if (unshare(CLONE_NEWNS)) fail("unshare(CLONE_NEWNS)");
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) fail("make / private");
  }
  if (masked) mask_proc();
  if (rocg) ro_cgroup();
  if (caps) docker_capabilities();
  if (as_user && (setgroups(0, NULL) || setgid(gid) || setuid(uid))) fail("setuid");
  if (seccomp) docker_seccomp();
  execvp(argv[i + 1], argv + i + 1);
  fail("exec");
}

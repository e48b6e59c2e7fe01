/*
 * The C floor of `hullward run`: the same isolation as hullward's child, in the least code, so
 * that scripts/bench-spawn.sh can tell how much of a call's time is the kernel's and how much is
 * hullward's own.
 *
 *   floor [-r PATH]... [-w PATH]... [-t PATH]... -- PROGRAM [ARGS...]
 *
 * -r PATH: bound read-only (read+exec in Landlock); -w PATH: bound read-write; -t PATH: a private
 * tmpfs (hullward's private home). The bench passes
 * the paths of `hullward explain --json`'s plan. Order, as hullward's child: clone into a new PID
 * namespace → setsid, parent-death signal, rlimits → unshare mount, IPC, cgroup and network
 * namespaces → loopback up → a fresh tmpfs root with /tmp /run and the homes as tmpfs, each path bound
 * (and remounted read-only), /dev/shm as tmpfs, a read-only procfs, a minimal /dev, the merged-/usr symlinks →
 * pivot_root → capabilities dropped (bounding, ambient, all sets; securebits locked) →
 * no_new_privs → Landlock (every filesystem right handled; TCP bind/connect and scopes where the
 * ABI has them) → two seccomp filters (the deny list, socket families, TIOCSTI; clone3 → ENOSYS)
 * → an init (pid 1) forks the program and reaps until it exits, with its status.
 *
 * Not a sandbox to use: no error is recoverable, each one exits 125 with the failing step.
 * Built by the bench with `gcc -O2`. Needs root (CAP_SYS_ADMIN).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef LANDLOCK_ACCESS_FS_TRUNCATE /* older kernel headers */
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif

#define NEWROOT "/tmp"
#define MAXPATHS 256

static const char *ro[MAXPATHS], *rw[MAXPATHS], *tmp[MAXPATHS];
static int nro, nrw, ntmp;

static void die(const char *what) {
    fprintf(stderr, "floor: %s: %s\n", what, strerror(errno));
    _exit(125);
}

/* mkdir -p of NEWROOT/path's parents, then the path itself as a directory or an empty file. */
static void make_target(const char *path, int dir, char *out) {
    snprintf(out, 4096, NEWROOT "%s", path);
    for (char *p = out + strlen(NEWROOT) + 1; *p; p++) {
        if (*p == '/') {
            *p = 0;
            if (mkdir(out, 0755) && errno != EEXIST) die("mkdir");
            *p = '/';
        }
    }
    if (dir) {
        if (mkdir(out, 0755) && errno != EEXIST) die("mkdir");
    } else {
        int fd = open(out, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
        if (fd < 0) die("create mount point");
        close(fd);
    }
}

/* The sources are opened before the new root hides them (it may cover the working directory's
 * parent) and bound through /proc/self/fd. */
static int src_fd[2 * MAXPATHS];

static void open_sources(void) {
    for (int i = 0; i < nro + nrw; i++) src_fd[i] = open(i < nro ? ro[i] : rw[i - nro], O_PATH | O_CLOEXEC);
}

static void bind_path(int i) {
    const char *path = i < nro ? ro[i] : rw[i - nro];
    struct stat st;
    char target[4096], src[64];
    if (src_fd[i] < 0 || fstat(src_fd[i], &st)) return; /* hullward skips missing system paths too */
    make_target(path, S_ISDIR(st.st_mode), target);
    snprintf(src, sizeof src, "/proc/self/fd/%d", src_fd[i]);
    if (mount(src, target, NULL, MS_BIND | MS_REC, NULL)) die("bind");
    unsigned long flags = MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV | (i < nro ? MS_RDONLY : 0);
    if (mount(NULL, target, NULL, flags, NULL)) die("remount");
    close(src_fd[i]);
}

static void tmpfs(const char *path) {
    char target[4096];
    make_target(path, 1, target);
    if (mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777")) die("tmpfs");
}

static void view(void) {
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) die("make-rprivate");
    open_sources();
    if (mount("tmpfs", NEWROOT, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755")) die("root tmpfs");
    tmpfs("/tmp");
    tmpfs("/run");
    for (int i = 0; i < ntmp; i++) tmpfs(tmp[i]);
    for (int i = 0; i < nro + nrw; i++) bind_path(i);
    const char *links[][2] = {{"usr/bin", "/bin"}, {"usr/lib", "/lib"}, {"usr/lib64", "/lib64"},
                              {"usr/sbin", "/sbin"}};
    for (unsigned i = 0; i < sizeof links / sizeof *links; i++) {
        char l[4096];
        snprintf(l, sizeof l, NEWROOT "%s", links[i][1]);
        if (symlink(links[i][0], l) && errno != EEXIST) die("symlink");
    }
    char target[4096];
    make_target("/proc", 1, target);
    if (mount("proc", target, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL)) die("proc");
    if (mount(NULL, target, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL))
        die("proc ro");
    make_target("/dev", 1, target);
    if (mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755")) die("dev tmpfs");
    const char *devs[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"};
    for (unsigned i = 0; i < sizeof devs / sizeof *devs; i++) {
        make_target(devs[i], 0, target);
        if (mount(devs[i], target, NULL, MS_BIND, NULL)) die("dev bind");
    }
    const char *fdlinks[][2] = {{"/proc/self/fd", "/dev/fd"}, {"/proc/self/fd/0", "/dev/stdin"},
                                {"/proc/self/fd/1", "/dev/stdout"}, {"/proc/self/fd/2", "/dev/stderr"}};
    for (unsigned i = 0; i < sizeof fdlinks / sizeof *fdlinks; i++) {
        snprintf(target, sizeof target, NEWROOT "%s", fdlinks[i][1]);
        if (symlink(fdlinks[i][0], target)) die("dev symlink");
    }
    tmpfs("/dev/shm");
    if (mount(NULL, NEWROOT, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL))
        die("root ro");
    if (chdir(NEWROOT)) die("chdir new root");
    if (syscall(SYS_pivot_root, ".", ".")) die("pivot_root");
    if (umount2(".", MNT_DETACH)) die("umount old root");
}

static void loopback_up(void) {
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct ifreq ifr = {0};
    strcpy(ifr.ifr_name, "lo");
    if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr)) die("lo flags");
    ifr.ifr_flags |= IFF_UP;
    if (ioctl(s, SIOCSIFFLAGS, &ifr)) die("lo up");
    close(s);
}

static void drop_caps(void) {
    for (int c = 0; c <= CAP_LAST_CAP; c++)
        if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) && errno != EINVAL) die("capbset");
    /* SECBIT_NOROOT, NO_SETUID_FIXUP, KEEP_CAPS_LOCKED and their locks. */
    if (prctl(PR_SET_SECUREBITS, 0x2f, 0, 0, 0)) die("securebits");
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)) die("ambient");
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct d[2] = {{0}};
    if (syscall(SYS_capset, &h, d)) die("capset");
}

static void landlock(void) {
    int abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    if (abi < 1) die("landlock abi");
    __u64 fs = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1;
    if (abi >= 2) fs |= LANDLOCK_ACCESS_FS_REFER;
    if (abi >= 3) fs |= LANDLOCK_ACCESS_FS_TRUNCATE;
    if (abi >= 5) fs |= 1ULL << 15; /* LANDLOCK_ACCESS_FS_IOCTL_DEV */
    struct {
        __u64 fs, net, scoped;
    } attr = {fs, abi >= 4 ? 3 : 0, abi >= 6 ? 3 : 0};
    size_t size = abi >= 6 ? 24 : abi >= 4 ? 16 : 8;
    int rs = syscall(SYS_landlock_create_ruleset, &attr, size, 0);
    if (rs < 0) die("landlock ruleset");
    __u64 rx = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
    struct {
        const char *path;
        __u64 access;
    } rules[3 * MAXPATHS + 16];
    int n = 0;
    for (int i = 0; i < nro; i++) rules[n++] = (typeof(rules[0])){ro[i], rx};
    for (int i = 0; i < nrw; i++) rules[n++] = (typeof(rules[0])){rw[i], fs};
    for (int i = 0; i < ntmp; i++) rules[n++] = (typeof(rules[0])){tmp[i], fs};
    const char *scratch[] = {"/tmp", "/run", "/dev/shm", "/dev/null", "/dev/zero", "/dev/full", "/dev/tty"};
    for (unsigned i = 0; i < sizeof scratch / sizeof *scratch; i++) rules[n++] = (typeof(rules[0])){scratch[i], fs};
    rules[n++] = (typeof(rules[0])){"/proc", rx};
    rules[n++] = (typeof(rules[0])){"/dev", rx};
    for (int i = 0; i < n; i++) {
        int fd = open(rules[i].path, O_PATH | O_CLOEXEC);
        if (fd < 0) continue;
        struct stat st;
        fstat(fd, &st);
        struct landlock_path_beneath_attr pb = {
            .allowed_access = S_ISDIR(st.st_mode) ? rules[i].access : rules[i].access & ((LANDLOCK_ACCESS_FS_READ_FILE << 1) - 1),
            .parent_fd = fd,
        };
        if (abi >= 3 && !S_ISDIR(st.st_mode) && (rules[i].access & LANDLOCK_ACCESS_FS_TRUNCATE))
            pb.allowed_access |= LANDLOCK_ACCESS_FS_TRUNCATE;
        if (syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0)) die("landlock rule");
        close(fd);
    }
    if (syscall(SYS_landlock_restrict_self, rs, 0)) die("landlock restrict");
    close(rs);
}

#define ALLOW BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
#define EPERM_ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM)
#define NR BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))
#define ARG(n) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[n]))

static void install(struct sock_filter *f, unsigned short len) {
    struct sock_fprog prog = {len, f};
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog)) die("seccomp");
}

static void seccomp(void) {
    static const int denied[] = {
        SYS_ptrace, SYS_process_vm_readv, SYS_process_vm_writev, SYS_kcmp, SYS_pidfd_getfd,
        SYS_io_uring_setup, SYS_io_uring_enter, SYS_io_uring_register, SYS_kexec_load,
        SYS_kexec_file_load, SYS_bpf, SYS_perf_event_open, SYS_userfaultfd, SYS_keyctl, SYS_add_key,
        SYS_request_key, SYS_mount, SYS_umount2, SYS_pivot_root, SYS_move_mount, SYS_open_tree,
        SYS_fsopen, SYS_fsconfig, SYS_fsmount, SYS_fspick, SYS_mount_setattr, SYS_setns, SYS_chroot,
        SYS_open_by_handle_at, SYS_init_module, SYS_finit_module, SYS_delete_module, SYS_swapon,
        SYS_swapoff, SYS_reboot, SYS_acct, SYS_iopl, SYS_ioperm, SYS_unshare};
    enum { N = sizeof denied / sizeof *denied };
    struct sock_filter f[2 * N + 32];
    int i = 0;
    f[i++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
    f[i++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
    f[i++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
    f[i++] = (struct sock_filter)NR;
    f[i++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1);
    f[i++] = (struct sock_filter)EPERM_;
    for (int k = 0; k < N; k++) {
        f[i++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, denied[k], 0, 1);
        f[i++] = (struct sock_filter)EPERM_;
    }
    /* socket(family): AF_UNIX and AF_NETLINK only; clone with a namespace flag; ioctl TIOCSTI. */
    f[i++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_socket, 0, 5);
    f[i++] = (struct sock_filter)ARG(0);
    f[i++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 2, 0);
    f[i++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_NETLINK, 1, 0);
    f[i++] = (struct sock_filter)EPERM_;
    f[i++] = (struct sock_filter)ALLOW;
    f[i++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 4);
    f[i++] = (struct sock_filter)ARG(0);
    f[i++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K,
                                          CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC |
                                              CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET,
                                          0, 1);
    f[i++] = (struct sock_filter)EPERM_;
    f[i++] = (struct sock_filter)ALLOW;
    f[i++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ioctl, 0, 4);
    f[i++] = (struct sock_filter)ARG(1);
    f[i++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TIOCSTI, 1, 0);
    f[i++] = (struct sock_filter)ALLOW;
    f[i++] = (struct sock_filter)EPERM_;
    f[i++] = (struct sock_filter)ALLOW;
    install(f, i);
    struct sock_filter g[] = {
        NR,
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
        ALLOW,
    };
    install(g, sizeof g / sizeof *g);
}

/* pid 1 of the call: forks the program and reaps every child until the program has exited. */
static int init(char **argv) {
    pid_t prog = fork();
    if (prog < 0) die("fork");
    if (prog == 0) {
        execvp(argv[0], argv);
        die("exec");
    }
    for (;;) {
        int status;
        pid_t p = wait(&status);
        if (p < 0) die("wait");
        if (p == prog) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
}

static int child(char **argv) {
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd)) die("getcwd");
    if (setsid() < 0) die("setsid");
    if (prctl(PR_SET_PDEATHSIG, SIGKILL)) die("pdeathsig");
    struct rlimit files = {1024, 1024}, procs = {512, 512};
    if (setrlimit(RLIMIT_NOFILE, &files) || setrlimit(RLIMIT_NPROC, &procs)) die("rlimit");
    if (unshare(CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWCGROUP | CLONE_NEWNET)) die("unshare");
    loopback_up();
    view();
    if (chdir(cwd)) die("chdir");
    drop_caps();
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) die("no_new_privs");
    landlock();
    seccomp();
    return init(argv);
}

int main(int argc, char **argv) {
    int i = 1;
    for (; i < argc && strcmp(argv[i], "--"); i += 2) {
        if (i + 1 >= argc || nro >= MAXPATHS || nrw >= MAXPATHS || ntmp >= MAXPATHS) break;
        if (!strcmp(argv[i], "-r")) ro[nro++] = argv[i + 1];
        else if (!strcmp(argv[i], "-w")) rw[nrw++] = argv[i + 1];
        else if (!strcmp(argv[i], "-t")) tmp[ntmp++] = argv[i + 1];
        else break;
    }
    if (i >= argc - 1 || strcmp(argv[i], "--")) {
        fprintf(stderr, "usage: floor [-r PATH]... [-w PATH]... [-t PATH]... -- PROGRAM [ARGS...]\n");
        return 2;
    }
    pid_t pid = syscall(SYS_clone, CLONE_NEWPID | SIGCHLD, NULL, NULL, NULL, NULL);
    if (pid < 0) die("clone");
    if (pid == 0) _exit(child(argv + i + 1));
    int status;
    if (waitpid(pid, &status, 0) < 0) die("waitpid");
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

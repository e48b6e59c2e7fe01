/* The sandbox battery's probe: one raw system call per subcommand, so that a test sees exactly
 * which call the kernel refused and with which errno (a shell tool would hide it).
 *
 * Output: "OK <what> <result>" (exit 0) or "ERR <ERRNONAME> <what>" (exit 1). Usage errors exit 2.
 * Compiled at test time by tests/support/sandbox.rs (gcc, no extra packages). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#define X32_SYSCALL_BIT 0x40000000L

static int report(long r, const char *what) {
    if (r < 0) {
        const char *name = strerrorname_np(errno);
        printf("ERR %s %s\n", name ? name : "E?", what);
        fflush(stdout);
        return 1;
    }
    printf("OK %s %ld\n", what, r);
    fflush(stdout);
    return 0;
}

static long num(const char *s) { return strtol(s, NULL, 0); }

static int need(int argc, int n) {
    if (argc < n) {
        fprintf(stderr, "probe: missing argument\n");
        exit(2);
    }
    return 0;
}

static int unshare_flags(const char *name) {
    if (!strcmp(name, "user")) return CLONE_NEWUSER;
    if (!strcmp(name, "mount")) return CLONE_NEWNS;
    if (!strcmp(name, "net")) return CLONE_NEWNET;
    if (!strcmp(name, "pid")) return CLONE_NEWPID;
    if (!strcmp(name, "uts")) return CLONE_NEWUTS;
    if (!strcmp(name, "ipc")) return CLONE_NEWIPC;
    if (!strcmp(name, "cgroup")) return CLONE_NEWCGROUP;
    if (!strcmp(name, "files")) return CLONE_FILES;
    fprintf(stderr, "probe: unknown namespace %s\n", name);
    exit(2);
}

int main(int argc, char **argv) {
    need(argc, 2);
    const char *cmd = argv[1];

    if (!strcmp(cmd, "getpid")) return report(syscall(SYS_getpid), "getpid");
    if (!strcmp(cmd, "x32-getpid")) return report(syscall(X32_SYSCALL_BIT | SYS_getpid), "x32-getpid");

    if (!strcmp(cmd, "int80-getpid")) { /* the i386 ABI: getpid is 20 there */
        long r;
        __asm__ volatile("int $0x80" : "=a"(r) : "a"(20L) : "memory");
        if (r < 0) {
            errno = (int)-r;
            r = -1;
        }
        return report(r, "int80-getpid");
    }
    if (!strcmp(cmd, "io_uring")) {
        unsigned char params[120];
        memset(params, 0, sizeof params);
        return report(syscall(SYS_io_uring_setup, 8, params), "io_uring_setup");
    }
    if (!strcmp(cmd, "keyctl")) /* KEYCTL_GET_KEYRING_ID of KEY_SPEC_SESSION_KEYRING */
        return report(syscall(SYS_keyctl, 0, -3, 0), "keyctl");
    if (!strcmp(cmd, "add_key"))
        return report(syscall(SYS_add_key, "user", "hullward-probe", "x", 1, -3), "add_key");
    if (!strcmp(cmd, "bpf")) {
        union bpf_attr attr;
        memset(&attr, 0, sizeof attr);
        attr.map_type = BPF_MAP_TYPE_ARRAY;
        attr.key_size = 4;
        attr.value_size = 4;
        attr.max_entries = 1;
        return report(syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof attr), "bpf");
    }
    if (!strcmp(cmd, "perf")) {
        struct perf_event_attr a;
        memset(&a, 0, sizeof a);
        a.type = PERF_TYPE_SOFTWARE;
        a.size = sizeof a;
        a.config = PERF_COUNT_SW_CPU_CLOCK;
        a.exclude_kernel = 1;
        return report(syscall(SYS_perf_event_open, &a, 0, -1, -1, 0), "perf_event_open");
    }
    if (!strcmp(cmd, "userfaultfd")) return report(syscall(SYS_userfaultfd, O_CLOEXEC), "userfaultfd");

    if (!strcmp(cmd, "ptrace")) {
        need(argc, 3);
        pid_t pid = (pid_t)num(argv[2]);
        long r = ptrace(PTRACE_ATTACH, pid, 0, 0);
        int saved = errno;
        if (r == 0) {
            waitpid(pid, NULL, __WALL);
            ptrace(PTRACE_DETACH, pid, 0, 0);
        }
        errno = saved;
        return report(r, "ptrace-attach");
    }
    if (!strcmp(cmd, "vmread")) {
        need(argc, 3);
        char buf[8];
        static char target[8] = "probe!!";
        struct iovec local = {buf, sizeof buf}, remote = {target, sizeof target};
        return report(syscall(SYS_process_vm_readv, (pid_t)num(argv[2]), &local, 1, &remote, 1, 0),
                      "process_vm_readv");
    }
    if (!strcmp(cmd, "memread")) {
        need(argc, 3);
        char path[64];
        snprintf(path, sizeof path, "/proc/%s/mem", argv[2]);
        return report(open(path, O_RDONLY), "open-proc-mem");
    }
    if (!strcmp(cmd, "selfmem")) {
        static char secret[16] = "own-memory-ok";
        char buf[16] = {0};
        int fd = open("/proc/self/mem", O_RDONLY);
        if (fd < 0) return report(-1, "open-self-mem");
        long r = pread(fd, buf, sizeof buf, (off_t)(uintptr_t)secret);
        if (r < 0) return report(r, "pread-self-mem");
        printf("OK selfmem %s\n", buf);
        return 0;
    }

    if (!strcmp(cmd, "handle-get")) { /* prints the file handle of PATH as hex */
        need(argc, 3);
        struct file_handle *fh = malloc(sizeof *fh + MAX_HANDLE_SZ);
        fh->handle_bytes = MAX_HANDLE_SZ;
        int mount_id;
        if (name_to_handle_at(AT_FDCWD, argv[2], fh, &mount_id, 0) < 0)
            return report(-1, "name_to_handle_at");
        printf("%d:", fh->handle_type);
        for (unsigned i = 0; i < fh->handle_bytes; i++) printf("%02x", fh->f_handle[i]);
        printf("\n");
        return 0;
    }
    if (!strcmp(cmd, "handle-open")) { /* handle-open DIR-ON-SAME-FS TYPE:HEX -> prints the file */
        need(argc, 4);
        struct file_handle *fh = malloc(sizeof *fh + MAX_HANDLE_SZ);
        char *hex = strchr(argv[3], ':');
        if (!hex) return 2;
        fh->handle_type = (int)strtol(argv[3], NULL, 10);
        hex++;
        fh->handle_bytes = strlen(hex) / 2;
        for (unsigned i = 0; i < fh->handle_bytes; i++) sscanf(hex + 2 * i, "%2hhx", &fh->f_handle[i]);
        int mfd = open(argv[2], O_RDONLY | O_DIRECTORY);
        if (mfd < 0) return report(-1, "open-mount-dir");
        int fd = open_by_handle_at(mfd, fh, O_RDONLY);
        if (fd < 0) return report(-1, "open_by_handle_at");
        char buf[256] = {0};
        long n = read(fd, buf, sizeof buf - 1);
        if (n < 0) return report(n, "read-by-handle");
        printf("OK open_by_handle_at %s\n", buf);
        return 0;
    }

    if (!strcmp(cmd, "chroot")) { need(argc, 3); return report(chroot(argv[2]), "chroot"); }
    if (!strcmp(cmd, "mknod")) {
        need(argc, 3);
        return report(mknod(argv[2], S_IFCHR | 0666, makedev(1, 3)), "mknod-char");
    }
    if (!strcmp(cmd, "finit_module")) {
        need(argc, 3);
        int fd = open(argv[2], O_RDONLY | O_CLOEXEC);
        if (fd < 0) return report(-1, "open-module");
        return report(syscall(SYS_finit_module, fd, "", 0), "finit_module");
    }
    if (!strcmp(cmd, "init_module")) {
        static char image[64];
        return report(syscall(SYS_init_module, image, sizeof image, ""), "init_module");
    }
    if (!strcmp(cmd, "mount-tmpfs")) {
        need(argc, 3);
        return report(mount("none", argv[2], "tmpfs", 0, NULL), "mount");
    }
    if (!strcmp(cmd, "bind")) {
        need(argc, 4);
        return report(mount(argv[2], argv[3], NULL, MS_BIND, NULL), "mount-bind");
    }
    if (!strcmp(cmd, "umount")) { need(argc, 3); return report(umount2(argv[2], MNT_DETACH), "umount2"); }
    if (!strcmp(cmd, "unshare")) {
        need(argc, 3);
        return report(unshare(unshare_flags(argv[2])), "unshare");
    }
    if (!strcmp(cmd, "clone-ns")) { /* raw clone(2) with a namespace flag */
        need(argc, 3);
        long r = syscall(SYS_clone, (long)unshare_flags(argv[2]) | SIGCHLD, 0, 0, 0, 0);
        if (r == 0) _exit(0);
        if (r > 0) waitpid((pid_t)r, NULL, 0);
        return report(r, "clone");
    }
    if (!strcmp(cmd, "fork")) { /* plain clone(2) without namespace flags */
        long r = syscall(SYS_clone, (long)SIGCHLD, 0, 0, 0, 0);
        if (r == 0) _exit(0);
        if (r > 0) waitpid((pid_t)r, NULL, 0);
        return report(r, "clone");
    }
    if (!strcmp(cmd, "tiocsti")) {
        need(argc, 3);
        char c = '#';
        return report(ioctl((int)num(argv[2]), TIOCSTI, &c), "TIOCSTI");
    }
    if (!strcmp(cmd, "kill")) {
        need(argc, 4);
        return report(kill((pid_t)num(argv[2]), (int)num(argv[3])), "kill");
    }
    if (!strcmp(cmd, "pidfd-kill")) {
        need(argc, 3);
        long fd = syscall(SYS_pidfd_open, (pid_t)num(argv[2]), 0);
        if (fd < 0) return report(fd, "pidfd_open");
        return report(syscall(SYS_pidfd_send_signal, (int)fd, SIGTERM, NULL, 0), "pidfd_send_signal");
    }
    if (!strcmp(cmd, "socket")) {
        need(argc, 5);
        return report(socket((int)num(argv[2]), (int)num(argv[3]), (int)num(argv[4])), "socket");
    }
    if (!strcmp(cmd, "personality")) {
        need(argc, 3);
        return report(syscall(SYS_personality, (unsigned long)num(argv[2])), "personality");
    }
    if (!strcmp(cmd, "caps")) { /* euid and the capability sets, as the kernel reports them */
        printf("euid=%d\n", (int)geteuid());
        FILE *f = fopen("/proc/self/status", "r");
        if (!f) return report(-1, "open-status");
        char line[256];
        while (fgets(line, sizeof line, f))
            if (!strncmp(line, "Cap", 3) || !strncmp(line, "NoNewPrivs", 10)) fputs(line, stdout);
        return 0;
    }
    fprintf(stderr, "probe: unknown command %s\n", cmd);
    return 2;
}

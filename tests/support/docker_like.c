/* docker-like MODE PROGRAM ARGS…: installs part of Docker's default seccomp profile, then execs
 * PROGRAM. MODE enosys answers clone3 with ENOSYS; nons also refuses unshare and clone with
 * namespace flags with EPERM (a container without CAP_SYS_ADMIN). Compiled by the tests. */

#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#define NS (CLONE_NEWNS|CLONE_NEWUTS|CLONE_NEWIPC|CLONE_NEWUSER|CLONE_NEWPID|CLONE_NEWNET|CLONE_NEWCGROUP)
#define RET(v) BPF_STMT(BPF_RET | BPF_K, (v))
int main(int argc, char **argv) {
    if (argc < 3) return 2;
    struct sock_filter enosys[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone3, 0, 1),
        RET(SECCOMP_RET_ERRNO | ENOSYS),
        RET(SECCOMP_RET_ALLOW),
    };
    struct sock_filter nons[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone3, 0, 1),
        RET(SECCOMP_RET_ERRNO | ENOSYS),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_unshare, 0, 1),
        RET(SECCOMP_RET_ERRNO | EPERM),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, NS, 0, 1),
        RET(SECCOMP_RET_ERRNO | EPERM),
        RET(SECCOMP_RET_ALLOW),
    };
    int ns = strcmp(argv[1], "nons") == 0;
    struct sock_fprog prog = ns ? (struct sock_fprog){ sizeof nons / sizeof nons[0], nons }
                                : (struct sock_fprog){ sizeof enosys / sizeof enosys[0], enosys };
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) { perror("seccomp"); return 2; }
    execv(argv[2], argv + 2);
    perror("execv");
    return 2;
}

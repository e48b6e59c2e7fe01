/*
 * hullward's PID 1: the init of a call's PID namespace, as a program of its own.
 *
 * Why it exists: the call's child is a copy of hullward (a large, multi-threaded process). Were
 * it to stay behind as the namespace's init, the copy would live for the whole call — every page
 * the supervisor then writes is a copy-on-write fault with a TLB shootdown — and forking the
 * program from it would copy hullward's page tables once more. Instead the child, once every
 * step of its plan is applied (view, Landlock, seccomp: all inherited across exec), executes this
 * program from a sealed memfd (src/sandbox/pid1.rs), which is a few pages of memory.
 *
 * Invocation: argv = { "hullward-pid1", ERROR_FD, PROGRAM, ARGV0, ARGS..., NULL }; the
 * environment is the program's. It makes itself undumpable (no process of the call may trace it
 * or write its memory through /proc) and forks; the child marks ERROR_FD close-on-exec and executes
 * PROGRAM with ARGV0... and the environment; the parent lets go of ERROR_FD and of 0, 1 and 2 (so
 * that the supervisor sees the program's exec and end of output as if there were no init),
 * reaps every process of the namespace and exits with the program's status (128 + signal when it
 * was killed) as soon as the program ends — the kernel then kills whatever is left.
 *
 * A failure is reported on ERROR_FD as the supervisor's 12-byte step record (stage, index,
 * errno; little-endian u32 each; stage numbers as in child.rs's `Stage`) and ends with 125.
 *
 * Freestanding: no libc, raw system calls, nothing allocated; built by build.rs with
 * `-nostdlib -static` for x86_64 and aarch64.
 */

#include <asm/unistd.h>

#define STAGE_EXEC 20
#define STAGE_INIT 23
#define F_SETFD 2
#define FD_CLOEXEC 1
#define SIGCHLD 17
#define EINTR 4
#define WALL 0x40000000
#define PR_SET_DUMPABLE 4

#if defined(__x86_64__)
__asm__(".text\n"
        ".global _start\n"
        "_start:\n"
        "  xor %ebp, %ebp\n"
        "  mov %rsp, %rdi\n"
        "  and $-16, %rsp\n"
        "  call pid1_main\n"
        "  hlt\n");

static long sys4(long n, long a, long b, long c, long d) {
    long ret;
    register long r10 __asm__("r10") = d;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10)
                     : "rcx", "r11", "memory");
    return ret;
}
#elif defined(__aarch64__)
__asm__(".text\n"
        ".global _start\n"
        "_start:\n"
        "  mov x29, #0\n"
        "  mov x30, #0\n"
        "  mov x0, sp\n"
        "  bl pid1_main\n");

static long sys4(long n, long a, long b, long c, long d) {
    register long x8 __asm__("x8") = n;
    register long x0 __asm__("x0") = a;
    register long x1 __asm__("x1") = b;
    register long x2 __asm__("x2") = c;
    register long x3 __asm__("x3") = d;
    __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3) : "memory");
    return x0;
}
#else
#error "pid1 is written for x86_64 and aarch64"
#endif

static void __attribute__((noreturn)) leave(long code) {
    for (;;) {
        sys4(__NR_exit_group, code, 0, 0, 0);
    }
}

static void put_le(unsigned char *out, unsigned long v) {
    for (int i = 0; i < 4; i++) {
        out[i] = (unsigned char)(v >> (8 * i));
    }
}

/* Reports the failed step on the error pipe and ends with 125. */
static void __attribute__((noreturn)) fail(long fd, unsigned long stage, unsigned long index, long ret) {
    unsigned char record[12];
    put_le(record, stage);
    put_le(record + 4, index);
    put_le(record + 8, (unsigned long)-ret);
    sys4(__NR_write, fd, (long)record, sizeof record, 0);
    leave(125);
}

/* The error descriptor's number; -1 unless it is all decimal digits. */
static long parse_fd(const char *s) {
    long v = 0;
    if (!*s) {
        return -1;
    }
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > 1000000) {
            return -1;
        }
        v = v * 10 + (*s - '0');
    }
    return v;
}

void __attribute__((noreturn, used)) pid1_main(long *sp) {
    long argc = sp[0];
    char **argv = (char **)(sp + 1);
    char **envp = argv + argc + 1;
    if (argc < 4) {
        leave(125);
    }
    long err = parse_fd(argv[1]);
    if (err < 0) {
        leave(125);
    }
    /* Neither the program nor anything it starts may trace PID 1 or rewrite its memory through
     * /proc; the program's own exec makes it dumpable again. */
    long ret = sys4(__NR_prctl, PR_SET_DUMPABLE, 0, 0, 0);
    if (ret < 0) {
        fail(err, STAGE_INIT, 1, ret);
    }
    long program = sys4(__NR_clone, SIGCHLD, 0, 0, 0);
    if (program < 0) {
        fail(err, STAGE_INIT, 0, program);
    }
    if (program == 0) {
        ret = sys4(__NR_fcntl, err, F_SETFD, FD_CLOEXEC, 0);
        if (ret == 0) {
            ret = sys4(__NR_execve, (long)argv[2], (long)(argv + 3), (long)envp, 0);
        }
        fail(err, STAGE_EXEC, 0, ret);
    }
    sys4(__NR_close, err, 0, 0, 0);
    for (long fd = 0; fd < 3; fd++) {
        sys4(__NR_close, fd, 0, 0, 0);
    }
    for (;;) {
        int status = 0;
        long pid = sys4(__NR_wait4, -1, (long)&status, WALL, 0);
        if (pid == program) {
            leave((status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f));
        }
        if (pid < 0 && pid != -EINTR) {
            leave(125);
        }
    }
}

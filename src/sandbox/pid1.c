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
 * Prepared ahead (`serve`): argv = { "hullward-pid1", ERROR_FD, LAUNCH_FD }. The sandbox is
 * complete before any request names a program, its process included: the init forks at once,
 * and the child writes an all-zero record on ERROR_FD ("ready") and blocks reading the launch
 * from LAUNCH_FD (so that a launch costs no fork), which the supervisor writes and closes:
 *   a header of three little-endian u32 — the byte length of what follows, the number of
 *   arguments (at least 1), the number of environment entries — then that many bytes, all
 *   NUL-terminated strings: the working directory, the program's path, its arguments, its
 *   environment.
 * Anything else (a short read, a size over LAUNCH_MAX, a string count that does not match) is a
 * failure of the launch. The program's child then enters the working directory and goes on as
 * above. Whatever is ready waits confined: Landlock, seccomp and the dropped capabilities were
 * applied before this program ran, so the launch cannot widen them.
 *
 * A failure is reported on ERROR_FD as the supervisor's 12-byte step record (stage, index,
 * errno; little-endian u32 each; stage numbers as in child.rs's `Stage`) and ends with 125.
 *
 * Not an init at all, the "userns" mode (`sys::identity_userns`): argv = { "hullward-userns",
 * "userns", PATH, VALUE, ... }, stdin and stdout pipes to the supervisor. It enters a user
 * namespace of its own, says so with one byte on stdout, waits for one byte on stdin (the
 * supervisor has written its id maps; end of file: it gave up), writes each VALUE into its PATH
 * (the namespace's own per-user limits, which its owner may set) and exits with 0, or with the
 * errno of the step that failed (255: the supervisor gave up). Being a few pages, it is started
 * with vfork + exec, where a fork of hullward would copy all of hullward's page tables.
 *
 * Freestanding: no libc, raw system calls, nothing allocated; built by build.rs with
 * `-nostdlib -static` for x86_64 and aarch64.
 */

#include <asm/unistd.h>

#define STAGE_CHDIR 10
#define STAGE_EXEC 20
#define STAGE_INIT 23
/* STAGE_INIT indices: 0 fork, 1 undumpable (2 and 3 are the child's, in child.rs), 4 reading the
 * launch, 5 its memory. */
#define LAUNCH_READ 4
#define LAUNCH_MEMORY 5
#define LAUNCH_MAX (16L << 20)
#define EINVAL 22
#define PROT_READ 1
#define PROT_WRITE 2
#define MAP_PRIVATE 2
#define MAP_ANONYMOUS 0x20
#define F_SETFD 2
#define FD_CLOEXEC 1
#define SIGCHLD 17
#define EINTR 4
#define WALL 0x40000000
#define PR_SET_DUMPABLE 4
#define CLONE_NEWUSER 0x10000000
#define AT_FDCWD -100
#define O_WRONLY 1
#define O_CLOEXEC 02000000

#if defined(__x86_64__)
__asm__(".text\n"
        ".global _start\n"
        "_start:\n"
        "  xor %ebp, %ebp\n"
        "  mov %rsp, %rdi\n"
        "  and $-16, %rsp\n"
        "  call pid1_main\n"
        "  hlt\n");

static long sys6(long n, long a, long b, long c, long d, long e, long f) {
    long ret;
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
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

static long sys6(long n, long a, long b, long c, long d, long e, long f) {
    register long x8 __asm__("x8") = n;
    register long x0 __asm__("x0") = a;
    register long x1 __asm__("x1") = b;
    register long x2 __asm__("x2") = c;
    register long x3 __asm__("x3") = d;
    register long x4 __asm__("x4") = e;
    register long x5 __asm__("x5") = f;
    __asm__ volatile("svc 0"
                     : "+r"(x0)
                     : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
                     : "memory");
    return x0;
}
#else
#error "pid1 is written for x86_64 and aarch64"
#endif

static long sys4(long n, long a, long b, long c, long d) {
    return sys6(n, a, b, c, d, 0, 0);
}

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

static unsigned long get_le(const unsigned char *in) {
    unsigned long v = 0;
    for (int i = 0; i < 4; i++) {
        v |= (unsigned long)in[i] << (8 * i);
    }
    return v;
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

/* Reads exactly `len` bytes; 0, or the negative errno (-EINVAL for an early end of file). */
static long read_full(long fd, unsigned char *out, long len) {
    while (len > 0) {
        long n = sys4(__NR_read, fd, (long)out, len, 0);
        if (n == -EINTR) {
            continue;
        }
        if (n <= 0) {
            return n < 0 ? n : -EINVAL;
        }
        out += n;
        len -= n;
    }
    return 0;
}

/* What the program is started with. */
struct launch {
    const char *cwd;
    const char *program;
    char **argv;
    char **envp;
};

/* Reads the launch from `fd` (see the top of this file) into memory of its own. */
static void read_launch(long err, long fd, struct launch *out) {
    unsigned char header[12];
    long ret = read_full(fd, header, sizeof header);
    if (ret < 0) {
        fail(err, STAGE_INIT, LAUNCH_READ, ret);
    }
    long len = (long)get_le(header);
    long argc = (long)get_le(header + 4);
    long envc = (long)get_le(header + 8);
    if (len < 1 || len > LAUNCH_MAX || argc < 1 || argc > len || envc > len) {
        fail(err, STAGE_INIT, LAUNCH_READ, -EINVAL);
    }
    long strings = 2 + argc + envc;
    long pointers = (argc + 1 + envc + 1) * (long)sizeof(char *);
    long mem = sys6(__NR_mmap, 0, pointers + len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem < 0 && mem > -4096) {
        fail(err, STAGE_INIT, LAUNCH_MEMORY, mem);
    }
    char **ptrs = (char **)mem;
    char *text = (char *)(mem + pointers);
    ret = read_full(fd, (unsigned char *)text, len);
    if (ret < 0) {
        fail(err, STAGE_INIT, LAUNCH_READ, ret);
    }
    if (text[len - 1] != 0) {
        fail(err, STAGE_INIT, LAUNCH_READ, -EINVAL);
    }
    /* The strings in order: cwd, program, argv..., envp...; the two arrays NULL-terminated. */
    long n = 0;
    char *start = text;
    for (long i = 0; i < len; i++) {
        if (text[i] != 0) {
            continue;
        }
        if (n == 0) {
            out->cwd = start;
        } else if (n == 1) {
            out->program = start;
        } else if (n < strings) {
            long slot = n - 2 < argc ? n - 2 : n - 2 + 1;
            ptrs[slot] = start;
        }
        n++;
        start = text + i + 1;
    }
    if (n != strings) {
        fail(err, STAGE_INIT, LAUNCH_READ, -EINVAL);
    }
    ptrs[argc] = 0;
    ptrs[argc + 1 + envc] = 0;
    out->argv = ptrs;
    out->envp = ptrs + argc + 1;
    sys4(__NR_close, fd, 0, 0, 0);
}

static int same(const char *a, const char *b) {
    for (; *a && *a == *b; a++, b++) {
    }
    return *a == *b;
}

/* The "userns" mode (see the top of this file), for the `n` strings of `pairs`. */
static void __attribute__((noreturn)) hold_userns(long n, char **pairs) {
    long ret = sys4(__NR_unshare, CLONE_NEWUSER, 0, 0, 0);
    if (ret < 0) {
        leave(-ret);
    }
    unsigned char byte = 'r';
    if (sys4(__NR_write, 1, (long)&byte, 1, 0) != 1 || sys4(__NR_read, 0, (long)&byte, 1, 0) != 1) {
        leave(255);
    }
    for (long i = 0; i + 1 < n; i += 2) {
        long fd = sys4(__NR_openat, AT_FDCWD, (long)pairs[i], O_WRONLY | O_CLOEXEC, 0);
        if (fd < 0) {
            leave(-fd);
        }
        long len = 0;
        while (pairs[i + 1][len]) {
            len++;
        }
        ret = sys4(__NR_write, fd, (long)pairs[i + 1], len, 0);
        if (ret < 0) {
            leave(-ret);
        }
        sys4(__NR_close, fd, 0, 0, 0);
    }
    leave(0);
}

void __attribute__((noreturn, used)) pid1_main(long *sp) {
    long argc = sp[0];
    char **argv = (char **)(sp + 1);
    char **envp = argv + argc + 1;
    if (argc >= 2 && same(argv[1], "userns")) {
        hold_userns(argc - 2, argv + 2);
    }
    if (argc < 3) {
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
    struct launch launch = {0, argv[2], argv + 3, envp};
    long launch_fd = -1;
    if (argc == 3) {
        launch_fd = parse_fd(argv[2]);
        if (launch_fd < 0) {
            leave(125);
        }
    }
    long program = sys4(__NR_clone, SIGCHLD, 0, 0, 0);
    if (program < 0) {
        fail(err, STAGE_INIT, 0, program);
    }
    if (program == 0) {
        if (launch_fd >= 0) {
            unsigned char ready[12] = {0};
            sys4(__NR_write, err, (long)ready, sizeof ready, 0);
            read_launch(err, launch_fd, &launch);
        }
        ret = launch.cwd ? sys4(__NR_chdir, (long)launch.cwd, 0, 0, 0) : 0;
        if (ret < 0) {
            fail(err, STAGE_CHDIR, 0, ret);
        }
        ret = sys4(__NR_fcntl, err, F_SETFD, FD_CLOEXEC, 0);
        if (ret == 0) {
            ret = sys4(__NR_execve, (long)launch.program, (long)launch.argv, (long)launch.envp, 0);
        }
        fail(err, STAGE_EXEC, 0, ret);
    }
    sys4(__NR_close, err, 0, 0, 0);
    if (launch_fd >= 0) {
        sys4(__NR_close, launch_fd, 0, 0, 0);
    }
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

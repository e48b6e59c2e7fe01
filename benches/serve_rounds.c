/* Per-call latency as an agent runtime sees it: one connection to a running `hullward serve`
 * kept open, a `run PROGRAM` request, the wait for its exit event; interleaved, round by round,
 * with a plain fork + exec + wait of the same program (bare) and of bubblewrap running it, all
 * timed the same way by this one process, with a pause before each (an agent's calls come
 * seconds apart, and the server makes the next call's sandbox meanwhile). For
 * scripts/bench-spawn.sh, which prints the table; hyperfine cannot time a call inside a
 * connection, and a client process of its own per call adds its own exec to the served row.
 *
 *   serve_rounds SOCKET PROGRAM ROUNDS PAUSE_MS [BEFORE_SOCKET]
 *
 * With BEFORE_SOCKET (a server of another build), a "before" row is timed in the same rounds,
 * next to "served" (the two take turns at going first): two builds compared on a noisy machine
 * without one stretch of noise falling on one build only. Prints one line per row: name, then
 * every round's time in microseconds.
 */
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>

#include "serve_call.h"

extern char **environ;

static long now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000L + t.tv_nsec / 1000;
}

static void pause_ms(long ms) {
    struct timespec t = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* fork + exec + wait of argv; the time in microseconds, or -1 when it did not exit 0. */
static long spawned(char *const argv[]) {
    long start = now_us();
    pid_t pid;
    int status;
    if (posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ) != 0 || waitpid(pid, &status, 0) != pid ||
        !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        return -1;
    }
    return now_us() - start;
}

/* One call on `c`, timed from its request to its exit event; -1 unless it exited 0. */
static long served(struct conn *c, const char *program, int id) {
    long start = now_us();
    return serve_call(c, program, id) == 0 ? now_us() - start : -1;
}

int main(int argc, char **argv) {
    if ((argc != 5 && argc != 6) || strpbrk(argv[2], "\"\\") != NULL) {
        fprintf(stderr, "usage: serve_rounds SOCKET PROGRAM ROUNDS PAUSE_MS [BEFORE_SOCKET]\n");
        return 2;
    }
    int rounds = atoi(argv[3]);
    long pause = atol(argv[4]);
    static struct conn now, then;
    then.fd = -1;
    if (rounds <= 0 || serve_connect(&now, argv[1]) != 0 || (argc == 6 && serve_connect(&then, argv[5]) != 0)) {
        perror("serve_rounds: connect");
        return 2;
    }
    char *bare[] = {argv[2], NULL};
    char *bwrap[] = {"bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-net",
                     "--die-with-parent", argv[2], NULL};
    const char *names[] = {"bare", "served", "bwrap", "before"};
    int nrows = then.fd < 0 ? 3 : 4;
    long *t = calloc((size_t)rounds * 4, sizeof *t);
    if (t == NULL) {
        return 2;
    }
    for (int r = 0; r < rounds; r++) {
        pause_ms(pause);
        t[r] = spawned(bare);
        /* The two servers take turns at going first (even rounds this build's, odd rounds the
         * other's): neither always follows bare. */
        for (int turn = 0; turn < 2; turn++) {
            if (turn == r % 2) {
                pause_ms(pause);
                t[rounds + r] = served(&now, argv[2], r + 1);
            } else if (then.fd >= 0) {
                pause_ms(pause);
                t[3 * rounds + r] = served(&then, argv[2], r + 1);
            }
        }
        pause_ms(pause);
        t[2 * rounds + r] = spawned(bwrap);
        for (int row = 0; row < nrows; row++) {
            if (t[row * rounds + r] < 0) {
                fprintf(stderr, "serve_rounds: round %d failed (%s)\n", r, names[row]);
                return 1;
            }
        }
    }
    for (int row = 0; row < nrows; row++) {
        printf("%s", names[row]);
        for (int r = 0; r < rounds; r++) {
            printf(" %ld", t[row * rounds + r]);
        }
        printf("\n");
    }
    free(t);
    return 0;
}

/* One `run` call through a running `hullward serve`, for scripts/bench-spawn.sh and
 * scripts/bench-serve.sh: connects to SOCKET, sends {"id":1,"method":"run","argv":[PROGRAM]}
 * and waits for the call's exit event; exits with the call's code (2 on a usage or socket
 * error). Small on purpose: the row measures the server, not a client runtime's start-up.
 *
 *   serve_client SOCKET PROGRAM
 */
#include <stdio.h>

#include "serve_call.h"

int main(int argc, char **argv) {
    if (argc != 3 || strpbrk(argv[2], "\"\\") != NULL) {
        fprintf(stderr, "usage: serve_client SOCKET PROGRAM (no quote or backslash in PROGRAM)\n");
        return 2;
    }
    static struct conn c;
    if (serve_connect(&c, argv[1]) != 0) {
        perror("serve_client: connect");
        return 2;
    }
    int code = serve_call(&c, argv[2], 1);
    if (code < 0) {
        fprintf(stderr, "serve_client: the request failed or the connection ended before the exit event\n");
        return 2;
    }
    return code;
}

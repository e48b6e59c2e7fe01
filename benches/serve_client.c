/* One `run` call through a running `hullward serve`, for scripts/bench-spawn.sh and
 * scripts/bench-serve.sh: connects to SOCKET, sends {"id":1,"method":"run","argv":[PROGRAM]}
 * and waits for the call's exit event; exits with the call's code (2 on a usage or socket
 * error). Small on purpose: the row measures the server, not a client runtime's start-up.
 *
 *   serve_client SOCKET PROGRAM
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc != 3 || strlen(argv[1]) >= sizeof(((struct sockaddr_un *)0)->sun_path) ||
        strpbrk(argv[2], "\"\\") != NULL) {
        fprintf(stderr, "usage: serve_client SOCKET PROGRAM (no quote or backslash in PROGRAM)\n");
        return 2;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    strcpy(addr.sun_path, argv[1]);
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
        perror("serve_client: connect");
        return 2;
    }
    char req[4200];
    int n = snprintf(req, sizeof req, "{\"id\":1,\"method\":\"run\",\"argv\":[\"%s\"]}\n", argv[2]);
    if (n <= 0 || (size_t)n >= sizeof req || write(fd, req, (size_t)n) != n) {
        perror("serve_client: write");
        return 2;
    }
    static char buf[1 << 16];
    size_t have = 0;
    for (;;) {
        ssize_t got = read(fd, buf + have, sizeof buf - 1 - have);
        if (got <= 0) {
            fprintf(stderr, "serve_client: the server closed the connection before the exit event\n");
            return 2;
        }
        have += (size_t)got;
        char *nl;
        while ((nl = memchr(buf, '\n', have)) != NULL) {
            *nl = '\0';
            if (strstr(buf, "\"event\":\"exit\"") != NULL) {
                const char *code = strstr(buf, "\"code\":");
                return code ? atoi(code + 7) : 2;
            }
            size_t used = (size_t)(nl + 1 - buf);
            memmove(buf, nl + 1, have - used);
            have -= used;
        }
        if (have == sizeof buf - 1) {
            have = 0; /* one over-long event line (output): not the exit event */
        }
    }
}

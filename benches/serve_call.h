/* One `run` call on a connection to a running `hullward serve`, for the bench clients
 * (serve_client.c: one call per process; serve_rounds.c: many on one connection): the request
 * {"id":ID,"method":"run","argv":[PROGRAM]}, then the events read up to the call's exit event.
 * PROGRAM must hold no quote or backslash (the callers check). */
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* One connection and what was read on it past the last event line used. */
struct conn {
    int fd;
    size_t have;
    char buf[1 << 16];
};

/* Connects `c` to the server at `path`; 0, or -1 with errno set. */
static int serve_connect(struct conn *c, const char *path) {
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    c->have = 0;
    c->fd = -1;
    if (strlen(path) >= sizeof addr.sun_path) {
        return -1;
    }
    strcpy(addr.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return -1;
    }
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
        close(fd);
        return -1;
    }
    c->fd = fd;
    return 0;
}

/* Sends the request and waits for its exit event: the call's exit code, or -1 when the request
 * could not be sent or the connection ended first. */
static int serve_call(struct conn *c, const char *program, int id) {
    char req[4200];
    int n = snprintf(req, sizeof req, "{\"id\":%d,\"method\":\"run\",\"argv\":[\"%s\"]}\n", id, program);
    if (n <= 0 || (size_t)n >= sizeof req || write(c->fd, req, (size_t)n) != n) {
        return -1;
    }
    for (;;) {
        char *nl;
        while ((nl = memchr(c->buf, '\n', c->have)) != NULL) {
            *nl = '\0';
            int exit_event = strstr(c->buf, "\"event\":\"exit\"") != NULL;
            const char *code = strstr(c->buf, "\"code\":");
            size_t used = (size_t)(nl + 1 - c->buf);
            memmove(c->buf, nl + 1, c->have - used);
            c->have -= used;
            if (exit_event) {
                return code ? atoi(code + 7) : -1;
            }
        }
        if (c->have == sizeof c->buf - 1) {
            c->have = 0; /* one over-long event line (output): not the exit event */
        }
        ssize_t got = read(c->fd, c->buf + c->have, sizeof c->buf - 1 - c->have);
        if (got <= 0) {
            return -1;
        }
        c->have += (size_t)got;
    }
}

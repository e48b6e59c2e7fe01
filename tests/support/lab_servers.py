"""The network lab's "internet": HTTP, HTTPS and DNS servers, run inside the lab's inet namespace.

Started by tests/support/netlab.rs with one argument, a JSON file:
  {"http": [[addr, port], ...], "https": [[addr, port], ...], "cert": PATH, "key": PATH,
   "big": PATH, "dns": [addr, port], "zone": {name: [ipv4, ...]}, "rebind": {name: [ip, ip]},
   "log": PATH}
It prints "ready" once every socket is bound. Every request and DNS query is appended to the log
as one JSON line, so that tests can see exactly what reached the internet.

HTTP paths: /big sends the file "big" (sendfile); /bytes/N sends N bytes; /chunked/N sends N
bytes chunked; anything else answers JSON describing the request as received (method, path,
Host, headers, body length and SHA-256) with the server's own address.
"""

import hashlib
import json
import os
import socket
import socketserver
import ssl
import struct
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CONFIG = json.load(open(sys.argv[1]))
LOG_LOCK = threading.Lock()


def log(entry):
    with LOG_LOCK, open(CONFIG["log"], "a") as f:
        f.write(json.dumps(entry) + "\n")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            body = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return body
                body += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length", "0")))

    def answer(self):
        body = self.read_body()
        here = "%s:%d" % self.connection.getsockname()[:2]
        log({"server": here, "method": self.command, "path": self.path, "host": self.headers.get("Host")})
        if self.path == "/big":
            with open(CONFIG["big"], "rb") as f:
                size = os.fstat(f.fileno()).st_size
                self.send_response(200)
                self.send_header("Content-Length", str(size))
                self.end_headers()
                self.wfile.flush()
                if self.command != "HEAD":
                    self.connection.sendfile(f)
            return
        if self.path.startswith("/bytes/") or self.path.startswith("/chunked/"):
            size = int(self.path.rsplit("/", 1)[1])
            chunked = self.path.startswith("/chunked/")
            self.send_response(200)
            self.send_header("Transfer-Encoding" if chunked else "Content-Length", "chunked" if chunked else str(size))
            self.end_headers()
            block = b"x" * 65536
            while size > 0 and self.command != "HEAD":
                piece = block[: min(size, len(block))]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
                size -= len(piece)
            if chunked and self.command != "HEAD":
                self.wfile.write(b"0\r\n\r\n")
            return
        reply = json.dumps({
            "server": here,
            "method": self.command,
            "path": self.path,
            "host": self.headers.get("Host"),
            "headers": [[k, v] for k, v in self.headers.items()],
            "body_length": len(body),
            "body_sha256": hashlib.sha256(body).hexdigest(),
        }).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(reply)

    do_GET = do_POST = do_PUT = do_HEAD = do_DELETE = answer


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128


class TlsServer(Server):
    def get_request(self):
        sock, addr = super().get_request()
        return TLS.wrap_socket(sock, server_side=True, do_handshake_on_connect=False), addr

    def finish_request(self, request, client_address):
        try:
            super().finish_request(request, client_address)
        except (ssl.SSLError, OSError):
            pass


TLS = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
TLS.load_cert_chain(CONFIG["cert"], CONFIG["key"])


class Dns(socketserver.BaseRequestHandler):
    """A minimal authoritative server: A records from the zone, alternating answers for the
    rebind names, NOERROR without answers for other types, NXDOMAIN for unknown names."""

    counts = {}

    def handle(self):
        data, sock = self.request
        if len(data) < 12:
            return
        qid, _flags, qdcount = struct.unpack("!HHH", data[:6])
        pos, labels = 12, []
        while pos < len(data) and data[pos] != 0:
            labels.append(data[pos + 1 : pos + 1 + data[pos]].decode("ascii", "replace"))
            pos += 1 + data[pos]
        name = ".".join(labels).lower()
        qtype = struct.unpack("!H", data[pos + 1 : pos + 3])[0]
        question = data[12 : pos + 5]
        log({"dns": name, "type": qtype})
        answers = []
        if name in CONFIG["rebind"]:
            if qtype == 1:
                n = Dns.counts.get(name, 0)
                Dns.counts[name] = n + 1
                answers = [CONFIG["rebind"][name][n % 2]]
        elif name in CONFIG["zone"]:
            answers = CONFIG["zone"][name] if qtype == 1 else []
        else:
            sock.sendto(struct.pack("!HHHHHH", qid, 0x8183, qdcount, 0, 0, 0) + question, self.client_address)
            return
        rr = b"".join(
            b"\xc0\x0c" + struct.pack("!HHIH", 1, 1, 0, 4) + socket.inet_aton(ip) for ip in answers
        )
        sock.sendto(struct.pack("!HHHHHH", qid, 0x8580, qdcount, len(answers), 0, 0) + question + rr, self.client_address)


def main():
    servers = [Server((a, p), Handler) for a, p in CONFIG["http"]]
    servers += [TlsServer((a, p), Handler) for a, p in CONFIG["https"]]
    servers.append(socketserver.ThreadingUDPServer(tuple(CONFIG["dns"]), Dns))
    for s in servers:
        threading.Thread(target=s.serve_forever, daemon=True).start()
    print("ready", flush=True)
    sys.stdin.read()


main()

"""An HTTP server on the host's 127.0.0.1 that serves one file, /blob,
for guests on a user-mode network (which reach it as 10.0.2.2), and
keeps the paths asked for."""
import http.server
import socket
import threading


class HttpBlob:
    def __init__(self, blob):
        outer = self
        self.requests = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                outer.requests.append(self.path)
                if self.path != "/blob":
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(blob)))
                self.end_headers()
                self.wfile.write(blob)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                                      Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever,
                         daemon=True).start()

    @staticmethod
    def free_port():
        """A TCP port free on 127.0.0.1 now."""
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            return s.getsockname()[1]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

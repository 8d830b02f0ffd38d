#!/usr/bin/env python3
"""A TCP proxy for network fault tests: it listens on loopback, forwards
each connection to a target, and cuts connections after a chosen number of
bytes in one direction, following a schedule given per connection.

Schedule entries, one per accepted connection in order (after the list,
--then applies to every further connection):
  none          forward untouched
  down:N        cut after N bytes from the target to the client
  up:N          cut after N bytes from the client to the target
  refuse        close the connection at once, before any byte
A cut resets both sides (RST) unless the entry ends in "/fin" (orderly
close), or "/stall" (stop forwarding, keep both sockets open until the
client gives up or the proxy stops: for timeout tests; the other
direction keeps flowing).

--max-cuts K makes at most K cuts in all: a connection that reaches its
limit after that is forwarded untouched. With --then down:N it cuts the
first K connections that carry N bytes, however many others come and go
(a client that resumes then gets its data). --status-file PATH is
rewritten with the number of cuts made so far.

Command line (prints "cut_proxy port=P control=C" once it listens):
  cut_proxy.py --target 127.0.0.1:PORT [--port 0] [--cuts down:1000,none]
               [--then none] [--max-cuts K] [--status-file PATH]
               [--max-seconds 300]
The control port (loopback HTTP) changes the schedule while it runs:
  POST /cuts   body "up:5,none"   replaces the entries not used yet
  GET  /stats                     JSON: connections, cuts, bytes each way
From Python: `with CutProxy(("127.0.0.1", port), ["down:1000"]) as p:`
then connect to p.port.

Only loopback addresses are accepted as target and listen address, and the
proxy stops by itself after --max-seconds.
"""
import argparse
import http.server
import ipaddress
import json
import os
import socket
import struct
import sys
import threading
import time

CHUNK = 1 << 16


def parse_entry(text):
    """'down:100/fin' -> ('down', 100, 'fin'); 'none' -> ('none', 0, 'rst')."""
    text = text.strip()
    mode = "rst"
    if "/" in text:
        text, mode = text.split("/", 1)
        if mode not in ("rst", "fin", "stall"):
            raise ValueError(f"unknown cut mode {mode!r}")
    if text in ("none", "refuse"):
        return (text, 0, mode)
    way, _, n = text.partition(":")
    if way not in ("up", "down") or not n.isdigit():
        raise ValueError(f"bad cut entry {text!r} (none, refuse, up:N, down:N)")
    return (way, int(n), mode)


def parse_schedule(text):
    if isinstance(text, (list, tuple)):
        return [parse_entry(t) for t in text]
    return [parse_entry(t) for t in text.split(",") if t.strip()]


def require_loopback(host):
    try:
        addr = ipaddress.ip_address(socket.gethostbyname(host))
    except (OSError, ValueError) as e:
        raise ValueError(f"{host}: {e}") from e
    if not addr.is_loopback:
        raise ValueError(f"{host} is not a loopback address")


def hard_close(sock):
    """Close with RST (SO_LINGER on, zero timeout). The read side is shut
    first: that wakes a thread blocked reading it, which close alone does not."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.shutdown(socket.SHUT_RD)
    except OSError:
        pass
    sock.close()


class CutProxy:
    def __init__(self, target, cuts=(), then="none", port=0, max_seconds=300, max_cuts=None,
                 status_file=None):
        require_loopback(target[0])
        self.target = target
        self.max_cuts = max_cuts
        self.status_file = status_file
        self.schedule = parse_schedule(cuts)
        self.then = parse_entry(then)
        self.deadline = time.monotonic() + max_seconds
        self.lock = threading.Lock()
        self.stats = {"connections": 0, "cuts": 0, "bytes_up": 0, "bytes_down": 0, "refused": 0}
        self.stopping = threading.Event()
        self.socks = set()
        self.listener = socket.create_server(("127.0.0.1", port))
        self.port = self.listener.getsockname()[1]
        self.listener.settimeout(0.2)
        self.thread = threading.Thread(target=self._accept_loop, daemon=True)
        self._write_status()

    # -- schedule
    def set_cuts(self, cuts):
        entries = parse_schedule(cuts)
        with self.lock:
            self.schedule = entries

    def _next_entry(self):
        with self.lock:
            self.stats["connections"] += 1
            return self.schedule.pop(0) if self.schedule else self.then

    def _claim_cut(self):
        """True (and counted) when one more cut is allowed."""
        with self.lock:
            if self.max_cuts is not None and self.stats["cuts"] >= self.max_cuts:
                return False
            self.stats["cuts"] += 1
            self._write_status()
            return True

    def _write_status(self):
        # Replaced whole, so a reader never sees a half-written number.
        if self.status_file:
            with open(self.status_file + ".tmp", "w") as f:
                f.write("%d\n" % self.stats["cuts"])
            os.replace(self.status_file + ".tmp", self.status_file)

    def snapshot(self):
        with self.lock:
            return dict(self.stats, pending=len(self.schedule))

    # -- running
    def start(self):
        self.thread.start()
        return self

    def stop(self):
        self.stopping.set()
        self.thread.join(5)
        with self.lock:
            socks = list(self.socks)
        for s in socks:
            try:
                s.close()
            except OSError:
                pass

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def _accept_loop(self):
        try:
            while not self.stopping.is_set() and time.monotonic() < self.deadline:
                try:
                    client, _ = self.listener.accept()
                except socket.timeout:
                    continue
                except OSError:
                    break
                entry = self._next_entry()
                threading.Thread(target=self._serve, args=(client, entry), daemon=True).start()
        finally:
            self.listener.close()
            self.stopping.set()

    def _track(self, sock, add):
        with self.lock:
            (self.socks.add if add else self.socks.discard)(sock)

    def _serve(self, client, entry):
        way, limit, mode = entry
        if way == "refuse":
            with self.lock:
                self.stats["refused"] += 1
            hard_close(client)
            return
        try:
            upstream = socket.create_connection(self.target, timeout=10)
            upstream.settimeout(None)
        except OSError:
            hard_close(client)
            return
        for s in (client, upstream):
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._track(s, True)
        state = {"cut": False}
        cut_done = threading.Event()

        def cut():
            with self.lock:
                if state["cut"]:
                    return
                state["cut"] = True
            if mode == "stall":
                # Until the client gives up (the other direction ends) or the proxy stops.
                while not cut_done.wait(0.2) and not self.stopping.is_set() and time.monotonic() < self.deadline:
                    pass
            if mode == "fin":
                for s in (client, upstream):
                    try:
                        s.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                    s.close()
            else:
                hard_close(client)
                hard_close(upstream)
            cut_done.set()

        def pump(src, dst, key, budget):
            sent = 0
            try:
                while True:
                    data = src.recv(CHUNK)
                    if not data:
                        if state["cut"]:
                            cut_done.set()
                        else:
                            try:
                                dst.shutdown(socket.SHUT_WR)
                            except OSError:
                                pass
                        return
                    if budget is not None and sent + len(data) >= budget and not self._claim_cut():
                        budget = None  # no cuts left: forward the rest untouched
                    if budget is not None and sent + len(data) >= budget:
                        keep = budget - sent
                        if keep:
                            dst.sendall(data[:keep])
                        with self.lock:
                            self.stats[key] += keep
                        cut()
                        return
                    dst.sendall(data)
                    sent += len(data)
                    with self.lock:
                        self.stats[key] += len(data)
            except OSError:
                if not state["cut"]:
                    # One side failed on its own: pass the failure on.
                    hard_close(client)
                    hard_close(upstream)
                    cut_done.set()

        up = threading.Thread(target=pump, args=(client, upstream, "bytes_up", limit if way == "up" else None), daemon=True)
        up.start()
        pump(upstream, client, "bytes_down", limit if way == "down" else None)
        up.join()
        for s in (client, upstream):
            self._track(s, False)
            try:
                s.close()
            except OSError:
                pass


def control_server(proxy):
    class Handler(http.server.BaseHTTPRequestHandler):
        def _reply(self, status, obj):
            body = (json.dumps(obj) + "\n").encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            if self.path == "/stats":
                self._reply(200, proxy.snapshot())
            else:
                self._reply(404, {"error": "GET /stats"})

        def do_POST(self):
            n = int(self.headers.get("Content-Length") or 0)
            text = self.rfile.read(n).decode()
            if self.path != "/cuts":
                self._reply(404, {"error": "POST /cuts"})
                return
            try:
                proxy.set_cuts(text)
            except ValueError as e:
                self._reply(400, {"error": str(e)})
                return
            self._reply(200, proxy.snapshot())

        def log_message(self, *args):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--target", required=True, help="HOST:PORT on loopback")
    ap.add_argument("--port", type=int, default=0, help="listen port (default: a free one)")
    ap.add_argument("--cuts", default="", help="comma-separated schedule, one entry per connection")
    ap.add_argument("--then", default="none", help="entry for connections after the schedule")
    ap.add_argument("--max-seconds", type=float, default=300, help="stop after this long (default 300)")
    ap.add_argument("--max-cuts", type=int, default=None, help="cut at most this many times in all")
    ap.add_argument("--status-file", default=None, help="rewritten with the number of cuts so far")
    a = ap.parse_args()
    host, _, port = a.target.rpartition(":")
    try:
        proxy = CutProxy((host or "127.0.0.1", int(port)), a.cuts, a.then, a.port, a.max_seconds,
                         a.max_cuts, a.status_file)
    except ValueError as e:
        print(f"cut_proxy: {e}", file=sys.stderr)
        return 2
    ctl = control_server(proxy)
    proxy.start()
    print(f"cut_proxy port={proxy.port} control={ctl.server_address[1]}", flush=True)
    try:
        while proxy.thread.is_alive():
            proxy.thread.join(0.5)
    except KeyboardInterrupt:
        pass
    proxy.stop()
    ctl.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())

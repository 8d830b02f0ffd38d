#!/usr/bin/python3
"""A TCP proxy that breaks connections mid-stream, for fault tests.

    bt_cut_proxy.py TARGET_HOST:PORT CUT_AFTER_BYTES CUTS [STATUS_FILE]

Listens on a free loopback port and prints it on the first line of stdout.
Every connection is forwarded to TARGET; the first CUTS connections that
carry CUT_AFTER_BYTES from the server to the client are reset right there
(SO_LINGER 0, so the client sees a reset, as when a load balancer or a
server's tablet move drops it). Later connections pass untouched, so a
client that resumes gets its data. The server behind stays up throughout:
an emulator keeps its rows only in memory, killing it would lose them.
STATUS_FILE (if given) is rewritten with the number of cuts made so far.
Runs until killed.
"""
import os
import socket
import struct
import sys
import threading

lock = threading.Lock()
state = {"cuts": 0}


def write_status(path):
    if path:
        with open(path + ".tmp", "w") as f:
            f.write("%d\n" % state["cuts"])
        os.replace(path + ".tmp", path)


def reset(sock):
    """A reset the peer sees at once. shutdown() first: close() alone does
    not release a socket that the other direction's thread is blocked in
    recv() on, and the peer would wait on a silent connection."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()


def pump(src, dst, conn, downstream, cut_after, cuts, status):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            if downstream and not conn["cut"]:
                conn["bytes"] += len(data)
                if conn["bytes"] >= cut_after:
                    with lock:
                        do_cut = state["cuts"] < cuts
                        if do_cut:
                            state["cuts"] += 1
                            write_status(status)
                    if do_cut:
                        keep = len(data) - (conn["bytes"] - cut_after)
                        dst.sendall(data[:keep])  # a message cut in the middle
                        conn["cut"] = True
                        reset(src)
                        reset(dst)
                        return
            dst.sendall(data)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def serve(client, target, cut_after, cuts, status):
    try:
        upstream = socket.create_connection(target)
    except OSError:
        client.close()
        return
    conn = {"bytes": 0, "cut": False}
    threading.Thread(target=pump, args=(client, upstream, conn, False, cut_after, cuts, status),
                     daemon=True).start()
    pump(upstream, client, conn, True, cut_after, cuts, status)


def main():
    host, port = sys.argv[1].rsplit(":", 1)
    cut_after, cuts = int(sys.argv[2]), int(sys.argv[3])
    status = sys.argv[4] if len(sys.argv) > 4 else None
    write_status(status)
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", 0))
    ls.listen(64)
    print(ls.getsockname()[1], flush=True)
    while True:
        client, _ = ls.accept()
        threading.Thread(target=serve, args=(client, (host, int(port)), cut_after, cuts, status),
                         daemon=True).start()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The floor of a remote read on this machine: one TCP connection on loopback carrying FILE
from a sender (os.sendfile, or read/sendall of 4 MiB pieces) to a receiver (recv_into a
4 MiB buffer), timed by the receiver. Prints bytes, seconds and GB/s per mode.

    scripts/loopback-floor.py FILE [REPS]
"""
import os
import socket
import sys
import threading
import time

PIECE = 4 << 20


def send(listener, path, mode):
    connection, _ = listener.accept()
    size = os.path.getsize(path)
    with connection, open(path, "rb") as f:
        if mode == "sendfile":
            sent = 0
            while sent < size:
                sent += os.sendfile(connection.fileno(), f.fileno(), sent, size - sent)
        else:
            buffer = bytearray(PIECE)
            view = memoryview(buffer)
            while n := f.readinto(buffer):
                connection.sendall(view[:n])


def receive(path, mode):
    listener = socket.create_server(("127.0.0.1", 0))
    sender = threading.Thread(target=send, args=(listener, path, mode))
    sender.start()
    buffer = bytearray(PIECE)
    received = 0
    with socket.create_connection(listener.getsockname()) as connection:
        started = time.perf_counter()
        while n := connection.recv_into(buffer):
            received += n
        seconds = time.perf_counter() - started
    sender.join()
    listener.close()
    return received, seconds


def main():
    path = sys.argv[1]
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    for mode in ("sendfile", "copy"):
        best = min((receive(path, mode) for _ in range(reps)), key=lambda r: r[1])
        print(f"loopback {mode}: {best[0]} bytes in {best[1]:.3f} s, {best[0] / best[1] / 1e9:.2f} GB/s")


if __name__ == "__main__":
    main()

"""A stand-in for iorelayd that follows its command-line and ready-file contract.

Used to test LocalDaemons before (and independently of) the C++ daemon. FAKE_IORELAYD_MODE:
"ok" (default), "crash" (exit 3 with a message), "hang" (never ready), "stubborn" (ignores
SIGTERM).
"""

import argparse
import os
import signal
import socket
import sys
import time


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--listen", action="append", required=True)
    p.add_argument("--export", action="append", required=True)
    p.add_argument("--credential", action="append", required=True)
    p.add_argument("--ready-file", required=True)
    p.add_argument("--scheduler", default="fifo")
    p.add_argument("--backend", default="posix")
    args = p.parse_args()
    mode = os.environ.get("FAKE_IORELAYD_MODE", "ok")
    if mode == "crash":
        print("iorelayd: cannot export: bad root", file=sys.stderr)
        return 3
    if mode == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    else:
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    socks, addresses = [], []
    for spec in args.listen:
        kind, _, where = spec.partition(":")
        if kind == "tcp":
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            host, _, port = where.rpartition(":")
            s.bind((host, int(port)))
            addresses.append(f"tcp:{host}:{s.getsockname()[1]}")
        else:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.bind(where)
            addresses.append(f"unix:{where}")
        s.listen()
        socks.append(s)
    if mode != "hang":
        tmp = args.ready_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("\n".join(addresses) + "\n")
        os.rename(tmp, args.ready_file)
    while True:
        time.sleep(0.05)


if __name__ == "__main__":
    sys.exit(main())

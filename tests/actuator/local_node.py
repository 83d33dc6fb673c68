"""A stand-in node process for the local driver tests: records what it was started with,
optionally listens on its port (readiness), optionally ignores SIGTERM (to test SIGKILL)."""
import json
import os
import signal
import socket
import sys
import time

args = dict(a.split("=", 1) for a in sys.argv[1:])
with open("seen.json", "w") as fh:
    json.dump({"argv": sys.argv[1:], "cwd": os.getcwd(), "env": {k: v for k, v in os.environ.items()
                                                               if k.startswith("METCTL_NODE_")},
               "env_keys": sorted(os.environ)}, fh)
if args.get("ignore_term") == "1":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
else:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
sock = None
if args.get("listen") == "1":
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", int(args["port"])))
    sock.listen(5)
while True:
    time.sleep(0.2)

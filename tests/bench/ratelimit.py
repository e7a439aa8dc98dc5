#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Copies stdin to stdout at most BYTES_PER_SECOND, as a network link of that speed would:
# put after a command on the host (run_remote_bench.sh), it stands in for a real network.
#   COMMAND | ratelimit.py BYTES_PER_SECOND
import os
import sys
import time


def main():
    rate = float(sys.argv[1])
    began = time.monotonic()
    sent = 0
    while True:
        chunk = os.read(0, 256 * 1024)
        if not chunk:
            return 0
        # Not ahead of the link: wait until these bytes could have gone.
        due = began + (sent + len(chunk)) / rate
        now = time.monotonic()
        if due > now:
            time.sleep(due - now)
        view = memoryview(chunk)
        while view:
            try:
                written = os.write(1, view)
            except BrokenPipeError:
                return 0
            view = view[written:]
        sent += len(chunk)


if __name__ == "__main__":
    sys.exit(main())

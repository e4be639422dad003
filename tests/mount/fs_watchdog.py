"""The hang guard the mount test tools share (python3 stdlib).

A blocked system call on a hung FUSE mount cannot be interrupted, so a tool reports a hang
from a watchdog thread: when one step takes longer than its limit, the thread prints the
FAIL line, calls `on_hang` (which prints the tool's closing line, counting the hung step as
failed), and ends the process with exit code 1.
"""

import os
import sys
import threading
import time


class Watchdog:
    def __init__(self, limit, on_hang):
        self.limit = limit
        self.on_hang = on_hang
        self.current = None
        self.started = 0.0
        self.lock = threading.Lock()
        if limit > 0:
            threading.Thread(target=self.run, daemon=True).start()

    def begin(self, what):
        with self.lock:
            self.current, self.started = what, time.monotonic()

    def end(self):
        with self.lock:
            self.current = None

    def run(self):
        while True:
            time.sleep(1)
            with self.lock:
                if self.current is None or time.monotonic() - self.started <= self.limit:
                    continue
                print("FAIL %s: no answer within %d s (hung file system?); stopping"
                      % (self.current, self.limit), flush=True)
                try:
                    self.on_hang()
                finally:
                    sys.stdout.flush()
                    os._exit(1)

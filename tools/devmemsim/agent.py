"""Host side of the guest agent protocol (guest/tools/dms-agent).

Newline-delimited JSON over the node's virtio-serial port, reached through
QEMU's chardev UNIX socket RUN/NODE.ctl (docs/agent-protocol.md)."""

import base64
import json
import random
import socket
import sys
import time

from .errors import Failure

# A watched exec (exec(watch=...)): how often the caller looks at the nodes
# while the command runs; after how long without a word the agent is asked
# whether it is still there (a hello, which it answers at once even while a
# command runs); after how long without any answer the node is given up.
LOOK_EVERY = 0.5
PING_AFTER = 10.0
SILENT_LIMIT = 120.0
# The status dms-agent gives a command it killed at its timeout (timeout(1)'s).
TIMED_OUT = 124


class Silent(Failure):
    """The agent answered nothing, not even a hello, for SILENT_LIMIT s."""


class Agent:
    def __init__(self, path, timeout: float = 300.0):
        self.path = str(path)
        self.timeout = timeout
        self.sock = None
        self.buf = b""
        self.greeted = False  # the agent answered our hello
        self.running = False  # an exec of ours has not exited (yet)
        # Ids never used on this port before: the port has no connection
        # boundaries, so replies to an earlier client's requests may arrive.
        self.next_id = random.getrandbits(40) + 1

    def connect(self, deadline: float, alive=lambda: True) -> dict:
        """Connect and greet the agent; retry until deadline.

        alive() is polled while waiting; returning False aborts (the QEMU
        process died). Returns the agent's hello (node, kernel)."""
        hids, sent_at = set(), 0.0
        while True:
            if not alive():
                raise Failure("QEMU exited while waiting for the guest agent")
            try:
                if self.sock is None:
                    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                    s.connect(self.path)
                    self.sock = s
                    hids = set()
                    # End whatever partial line an earlier client left.
                    s.sendall(b"\n")
                # Until the guest opens its port QEMU reads nothing from the
                # socket, so hellos queue up: one per connection is enough (the
                # agent answers it once up), another only after a long silence.
                if not hids or time.monotonic() - sent_at > 10.0:
                    self.sock.settimeout(5.0)
                    hids.add(self._send("hello"))
                    sent_at = time.monotonic()
                reply = self._wait(lambda m: m.get("op") == "hello" and m.get("id") in hids, 1.0)
                if reply:
                    self.greeted = True
                    return reply
            except (FileNotFoundError, ConnectionRefusedError, ConnectionResetError,
                    BrokenPipeError, TimeoutError):
                self.close()
            if time.monotonic() > deadline:
                raise Failure(f"the guest agent did not answer on {self.path}")
            time.sleep(0.2)

    def close(self):
        """Say bye, then close. The bye tells the agent that the hang-up
        which follows is ours alone, so that it spares what the next
        client sends before the guest sees it (docs/agent-protocol.md).
        Not while an exec of ours runs: leaving then hangs it up."""
        if self.sock and self.greeted and not self.running:
            try:
                self.sock.settimeout(5.0)
                mid = self._send("bye")
                self._wait(lambda m: m.get("id") == mid and m.get("op") in ("bye", "error"), 5.0)
            except (OSError, Failure):
                pass
        if self.sock:
            self.sock.close()
        self.sock = None
        self.buf = b""
        self.greeted = False

    def _send(self, op: str, **fields) -> int:
        mid = self.next_id
        self.next_id += 1
        msg = {"op": op, "id": mid, **fields}
        self.sock.sendall(json.dumps(msg).encode() + b"\n")
        return mid

    def _read_msg(self, timeout: float):
        """One message, or None if none arrived within timeout."""
        end = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = end - time.monotonic()
            if left <= 0:
                return None
            self.sock.settimeout(left)
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                return None
            if not data:
                raise Failure("the node closed the agent connection")
            self.buf += data
        line, self.buf = self.buf.split(b"\n", 1)
        try:
            return json.loads(line)
        except ValueError:
            return {"op": "garbage", "line": line[:200].decode(errors="replace")}

    def _wait(self, pred, timeout: float):
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return None
            msg = self._read_msg(left)
            if msg is None:
                return None
            if pred(msg):
                return msg

    def exec(self, argv, out=None, err=None, timeout: float = 0, watch=None) -> int:
        """Run argv in the guest, streaming its output; returns its status.
        watch(), if given, is called every LOOK_EVERY s while the command
        runs and may raise to stop waiting (the caller's look at the
        nodes); an agent silent for SILENT_LIMIT s then raises Silent."""
        out = out or sys.stdout.buffer
        err = err or sys.stderr.buffer
        fields = {"argv": list(argv)}
        if timeout:
            fields["timeout"] = timeout
        mid = self._send("exec", **fields)
        self.running = True
        heard = looked = pinged = time.monotonic()
        while True:
            msg = self._read_msg(LOOK_EVERY if watch else 3600.0)
            now = time.monotonic()
            if msg is None and not watch:
                raise Failure("no answer from the guest agent for an hour")
            heard = now if msg is not None else heard
            if watch and now - looked >= LOOK_EVERY:
                looked = now
                watch()
                if now - heard >= SILENT_LIMIT:
                    raise Silent(f"its agent answered nothing for {now - heard:.0f} s")
                if now - heard >= PING_AFTER and now - pinged >= PING_AFTER:
                    pinged = now
                    self.sock.settimeout(5.0)
                    self._send("hello")
            if msg is None or msg.get("id") != mid:
                continue
            op = msg.get("op")
            if op == "out":
                stream = out if msg.get("fd") == 1 else err
                stream.write(base64.b64decode(msg.get("data", "")))
                stream.flush()
            elif op == "exit":
                self.running = False
                return int(msg.get("status", 255))
            elif op == "error":
                self.running = False
                raise Failure(f"guest agent: {msg.get('message')}")

    def poweroff(self):
        self.greeted = False  # no bye: the agent is going down
        mid = self._send("poweroff")
        self._wait(lambda m: m.get("id") == mid, 10.0)


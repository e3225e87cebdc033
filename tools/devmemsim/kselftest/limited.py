"""Commands on a node with a host-side limit, their output taken line by
line as it comes."""

import socket
import threading

from ..agent import Agent
from ..errors import Failure

# ---- running commands with a host-side limit ------------------------------

class Lines:
    """A stream the agent writes bytes to, handed on a line at a time."""

    def __init__(self, on_line):
        self.on_line = on_line
        self.buf = b""

    def write(self, data: bytes):
        self.buf += data
        while b"\n" in self.buf:
            line, self.buf = self.buf.split(b"\n", 1)
            self.on_line(line.decode(errors="replace"))

    def flush(self):
        pass

    def close(self):
        if self.buf:
            self.on_line(self.buf.decode(errors="replace"))
        self.buf = b""


def exec_limited(agent: Agent, argv: list, out, err, limit: float):
    """Run argv through agent, giving up after limit seconds: (status, why);
    status None when the node did not answer (why says how)."""
    result = {}

    def target():
        try:
            result["status"] = agent.exec(argv, out=out, err=err)
        except (Failure, OSError) as e:
            result["why"] = str(e)

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(limit)
    if t.is_alive():
        try:  # wakes the reader up: it sees the connection end
            agent.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        t.join(10.0)
        return None, f"no answer from the node for {limit:.0f} s"
    return result.get("status"), result.get("why", "")

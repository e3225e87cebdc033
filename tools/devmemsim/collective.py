"""Collective transfers (`devmemsim demo --pattern`): every GPU of a data
network sends N MiB from its memory to another's, all transfers of a step at
the same time, each verified by both GPUs' CRC engines (transfer.py).

The participants are the NIC/GPU pairs on each data network that joins two
NICs or more (clusterfile.Network.members, in node order); a pattern says
who sends to whom on each network, step by step:
  ring        one step: member i -> member i+1 (mod n);
  pairs       one step: 0 <-> 1, 2 <-> 3, ... (an even number of members);
  all-to-all  n-1 steps: step k (1..n-1) is the ring shifted by k,
              member i -> member i+k (mod n), so every member sends to
              every other once.
Step k of the collective is step k of every network at once (networks of
fewer steps are done early). In a step every pair receives at most once and
sends at most once, so each NIC runs one dms-devmem server and one client.
schedule() is the plan, pure; run() moves the data on a booted cluster.

Each node's counters are zeroed once every transfer of a step is set up,
and read when all are done: a node's row holds what it sent and received in
that step together (payload_bytes is their sum).
"""

import time
from dataclasses import dataclass

from . import stats, topology
from .errors import UsageError
from .transfer import COUNTER_COLUMNS, VERIFIED_COLUMN, Transfer, fabric_counters, text_table

PATTERNS = ("ring", "pairs", "all-to-all")
BASE_PORT = 5201  # transfer j of a step listens on BASE_PORT + j


@dataclass(frozen=True)
class Move:
    """One transfer of a step: the sender's pair spair to the receiver's
    pair rpair over data network `network`."""

    step: int
    network: str
    sender: str
    spair: int
    receiver: str
    rpair: int
    port: int

    def to_json(self) -> dict:
        return {"step": self.step, "network": self.network, "sender": self.sender, "sender_pair": self.spair,
                "receiver": self.receiver, "receiver_pair": self.rpair, "port": self.port}


def pattern_steps(pattern: str, n: int) -> list:
    """The steps of a pattern among n members: per step a list of
    (sender index, receiver index)."""
    if pattern not in PATTERNS:
        raise UsageError(f"--pattern {pattern}: expected " + ", ".join(PATTERNS))
    if n < 2:
        raise UsageError(f"--pattern {pattern}: needs two members or more, not {n}")
    if pattern == "ring":
        return [[(i, (i + 1) % n) for i in range(n)]]
    if pattern == "pairs":
        if n % 2:
            raise UsageError(f"--pattern pairs: needs an even number of members, not {n}")
        return [[(i, i ^ 1) for i in range(n)]]
    return [[(i, (i + k) % n) for i in range(n)] for k in range(1, n)]


def networks(plan) -> list:
    """The networks a collective runs on: those that join two NICs or more."""
    nets = [w for w in plan.networks.values() if len(w.members) >= 2]
    if not nets:
        raise UsageError(f"{plan.source}: no data network joins two NICs: nobody to send to")
    return nets


def schedule(plan, pattern: str) -> list:
    """The collective on a clusterfile.Plan: per step, its Moves."""
    steps = []
    for net in networks(plan):
        try:
            per_net = pattern_steps(pattern, len(net.members))
        except UsageError as e:
            raise UsageError(f"{e} (the NICs on network {net.name!r})") from None
        for k, pairs in enumerate(per_net):
            if k == len(steps):
                steps.append([])
            for i, j in pairs:
                (sender, spair), (receiver, rpair) = net.members[i], net.members[j]
                steps[k].append(Move(k + 1, net.name, sender, spair, receiver, rpair,
                                     BASE_PORT + len(steps[k])))
    return steps


def nics(steps: list) -> list:
    """(node, pair) of every NIC the collective uses, each once, in order."""
    out = []
    for step in steps:
        for m in step:
            for nic in ((m.sender, m.spair), (m.receiver, m.rpair)):
                if nic not in out:
                    out.append(nic)
    return out


def describe(steps: list) -> str:
    """One line per step: who sends to whom over which network."""
    return "\n".join(f"step {k + 1}: " + ", ".join(
        f"{m.sender}.gpu{m.spair} -> {m.receiver}.gpu{m.rpair} ({m.network})" for m in step)
        for k, step in enumerate(steps))


def _nodes(cl, moves: list) -> list:
    """The nodes a step's moves touch, in the cluster's order."""
    touched = {n for m in moves for n in (m.sender, m.receiver)}
    return [n for n in cl.node_names() if n in touched]


def run_step(cl, mode: str, nbytes: int, moves: list, timeout: float = 1800.0) -> tuple:
    """The moves of one step at the same time: (transfer rows, node rows).
    Every receiver is set up before any sender (a server changes its NIC's
    header split and steering; its node's client starts after)."""
    transfers = [Transfer(cl, mode, nbytes, m.sender, m.receiver, m.port, m.spair, m.rpair) for m in moves]
    for phase in ("start_server", "wait_server", "start_client", "wait_client"):
        for t in transfers:
            getattr(t, phase)()
    nodes = _nodes(cl, moves)
    for n in nodes:
        cl.reset_stats(n)
    for t in transfers:
        t.go()
    deadline = time.monotonic() + timeout
    for t in transfers:
        t.wait_done(deadline)
    counters = {n: cl.stats(n) for n in nodes}
    done = [(m, *t.results()) for m, t in zip(moves, transfers)]
    rows = [{**m.to_json(), "mode": mode, "bytes": sres["bytes"], "crc32c": sres.get("crc32c"),
             "throughput_bps": sres.get("throughput_bps", 0), "seconds": sres.get("seconds"),
             "verified": verified} for m, cres, sres, verified in done]
    return rows, [node_row(cl, mode, n, counters[n], rows) for n in nodes]


def node_row(cl, mode: str, node: str, st: dict, transfers: list) -> dict:
    """A node's counters over one step, against what it sent and received."""
    sent = [t for t in transfers if t["sender"] == node]
    got = [t for t in transfers if t["receiver"] == node]
    layout = topology.load(cl.dir / f"{node}.toml")
    payload = sum(t["bytes"] for t in sent + got)
    used = sorted({t["sender_pair"] for t in sent} | {t["receiver_pair"] for t in got})
    return {
        "mode": mode,
        "step": transfers[0]["step"],
        "node": node,
        "sent_bytes": sum(t["bytes"] for t in sent),
        "received_bytes": sum(t["bytes"] for t in got),
        **fabric_counters(st, layout.root_links(), payload),
        "links": {name: stats.link_payload_bytes(st, name)
                  for p in used for name in (layout.nics[p].name, layout.gpus[p].name)},
        "dma_faults": stats.dma_faults(st),
        "rx_throughput_bps": sum(t["throughput_bps"] for t in got),
        "verified": all(t["verified"] for t in sent + got),
    }


def run(cl, mode: str, nbytes: int, steps: list) -> tuple:
    """Every step in turn: (transfer rows, node rows) of them all."""
    transfers, nodes = [], []
    for k, moves in enumerate(steps):
        print(f"== {mode} step {k + 1}/{len(steps)}: {len(moves)} transfers of {nbytes >> 20} MiB at once",
              flush=True)
        t, n = run_step(cl, mode, nbytes, moves)
        transfers += t
        nodes += n
    return transfers, nodes


COLUMNS = (
    ("mode", "{:<8}", lambda r: r["mode"]),
    ("step", "{:>4} ", lambda r: str(r["step"])),
    ("node", "{:<9}", lambda r: r["node"]),
    ("sent B", "{:>11}", lambda r: str(r["sent_bytes"])),
    ("received B", "{:>12}", lambda r: str(r["received_bytes"])),
    *COUNTER_COLUMNS,
    ("rx Mbit/s", "{:>11}", lambda r: f"{r['rx_throughput_bps'] / 1e6:.1f}"),
    VERIFIED_COLUMN,
)


def table(rows: list) -> str:
    """The node rows: per mode and step, each node's counters."""
    return text_table(COLUMNS, rows)

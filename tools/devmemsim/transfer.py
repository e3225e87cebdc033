"""TCP transfers between two nodes with guest/tools/dms-devmem, measured by
the PCIe counters of both nodes (the demo and the tests use this).

One transfer sends N bytes from the sender's GPU memory to the receiver's GPU
memory, both sides in the same mode: "devmem" (TX from a bind-tx dma-buf, RX
into a bind-rx dma-buf) or "bounce" (copy engine through host memory, plain
send/recv). Setup (allocation, filling the source, binding) happens first;
the counters of both nodes are zeroed only then, so they hold the transfer
alone. Each transfer gives two runs: the sender's ("tx") and the receiver's
("rx"), each with the counters of its own node. The receiver checks what
arrived with its GPU's CRC engine, the sender checks its source the same
way; a run is verified when both CRCs and the byte counts agree.

On nodes of several NIC/GPU pairs, transfer() uses one pair on both sides
(pair=i): NIC i, with the addresses the cluster's plan gives it
(Cluster.nic(); both NICs must be on one data network), and GPU i (/dev/dmsgpuI: the guest numbers its
GPUs in PCI order, topology.py). Transfer, the same in phases, takes the
sender's and the receiver's pair apart, and lets several transfers be set
up, started and awaited together (collective.py).
"""

import json
import shlex
import time

from . import stats, topology
from .errors import Failure, UsageError

TOOL = "/opt/devmemsim/bin/dms-devmem"
MODES = ("devmem", "bounce")


def _wait_files(cl, node: str, paths, fail_paths, timeout: float) -> None:
    """Wait in the guest until every path exists, or one of fail_paths does."""
    want = " ".join(f"[ -e {p} ] &&" for p in paths)
    fail = " || ".join(f"[ -e {p} ]" for p in fail_paths) or "false"
    cl.sh(node, f"""
end=$(( $(date +%s) + {int(timeout)} ))
until {want} true; do
  if {fail}; then exit 3; fi
  [ $(date +%s) -ge $end ] && exit 4
  sleep 0.1
done""", check=False)


def _result(cl, node: str, path: str, log: str) -> dict:
    text = cl.sh(node, f"cat {path} 2>/dev/null || true")
    if text.strip():
        return json.loads(text)
    tail = cl.sh(node, f"tail -n 20 {log} 2>/dev/null || true").strip()
    return {"error": f"no result from dms-devmem on {node}" + (f": {tail}" if tail else "")}


def fabric_counters(st: dict, root_links, payload: int) -> dict:
    """Where a node's payload went, from its stats: the bytes on the links
    to the root complex (and their share of payload), through the switches
    peer to peer, and the host's memory reads and writes."""
    rc = sum(stats.link_payload_bytes(st, name) for name in root_links)
    return {
        "payload_bytes": payload,
        "root_complex_bytes": rc,
        "root_complex_per_payload_byte": rc / payload if payload else None,
        "p2p_bytes": stats.p2p_bytes(st),
        "host_write_bytes": stats.root_complex(st)["host_write_bytes"],
        "host_read_bytes": stats.root_complex(st)["host_read_bytes"],
    }


def _run_row(mode, direction, node, res, st, payload, verified, links):
    nic, gpu, root_links = links
    return {
        "mode": mode,
        "direction": direction,
        "node": node,
        **fabric_counters(st, root_links, payload),
        "nic_link_bytes": stats.link_payload_bytes(st, nic),
        "gpu_link_bytes": stats.link_payload_bytes(st, gpu),
        "dma_faults": stats.dma_faults(st),
        "throughput_bps": res.get("throughput_bps", 0),
        "seconds": res.get("seconds"),
        "crc32c": res.get("crc32c"),
        "verified": verified,
    }


def _pair_links(cl, node: str, pair: int) -> tuple:
    """(NIC link, GPU link, links into root ports) of a node's pair, as its
    counters name them."""
    layout = topology.load(cl.dir / f"{node}.toml")
    if pair >= layout.pairs:
        raise UsageError(f"{node} has {layout.pairs} NIC/GPU pair(s): no pair {pair}")
    return layout.nics[pair].name, layout.gpus[pair].name, layout.root_links()


def _pair_options(cl, node: str, pair: int) -> list:
    """dms-devmem's --ifname and --device for the node's pair (pair 0: its
    defaults, the first NIC and GPU)."""
    if not pair:
        return []
    mac = cl.nic(node, pair)["mac"]
    found = cl.sh(node, f"grep -l '^{mac}$' /sys/class/net/*/address || true").split()
    if len(found) != 1:
        raise Failure(f"{node}: no single interface with pair {pair}'s MAC {mac}")
    return ["--ifname", found[0].split("/")[-2], "--device", f"/dev/dmsgpu{pair}"]


class Transfer:
    """One transfer in phases, so that several can run at the same time
    (collective.py): start_server(), wait_server(), start_client(),
    wait_client() set it up; go() starts the stream, wait_done() waits for
    both results, results() reads and checks them. The receiver's NIC
    rpair and the sender's NIC spair must be on one data network."""

    def __init__(self, cl, mode: str, nbytes: int, sender: str, receiver: str, port: int = 5201,
                 spair: int = 0, rpair: int = 0):
        if mode not in MODES:
            raise Failure(f"unknown transfer mode {mode!r} ({', '.join(MODES)})")
        self.cl, self.mode, self.nbytes = cl, mode, nbytes
        self.sender, self.receiver = sender, receiver
        base = f"/tmp/dms-devmem-{mode}-{port}"
        self.s_ready, self.s_res, self.s_log = f"{base}.sready", f"{base}.sres", f"{base}.slog"
        self.c_ready, self.c_res, self.c_log, self.go_file = (f"{base}.cready", f"{base}.cres", f"{base}.clog",
                                                             f"{base}.go")
        snic, cnic = cl.nic(receiver, rpair), cl.nic(sender, spair)
        if snic["network"] != cnic["network"]:
            raise UsageError(f"{sender}'s NIC {spair} is on network {cnic['network']!r}, "
                             f"{receiver}'s NIC {rpair} on {snic['network']!r}: no transfer between them")
        saddr, caddr = (nic["ipv4"].split("/")[0] for nic in (snic, cnic))
        self.links = {sender: _pair_links(cl, sender, spair), receiver: _pair_links(cl, receiver, rpair)}
        self.server = [TOOL, "server", "--mode", mode, "--addr", saddr, "--peer", caddr, "--port", str(port),
                       "--expect-bytes", str(nbytes), "--ready-file", self.s_ready, "--result", self.s_res,
                       *_pair_options(cl, receiver, rpair)]
        self.client = [TOOL, "client", "--mode", mode, "--addr", saddr, "--port", str(port),
                       "--bytes", str(nbytes), "--start-file", self.go_file, "--start-timeout", "600",
                       "--ready-file", self.c_ready, "--result", self.c_res, *_pair_options(cl, sender, spair)]

    def start_server(self) -> None:
        self.cl.sh(self.receiver, f"rm -f {self.s_ready} {self.s_res} {self.s_log}")
        self.cl.sh(self.receiver, f"nohup {shlex.join(self.server)} >{self.s_log} 2>&1 &")

    def wait_server(self) -> None:
        _wait_files(self.cl, self.receiver, [self.s_ready], [self.s_res], 120)
        self._check_ready(self.receiver, self.s_ready, self.s_res, self.s_log)

    def start_client(self) -> None:
        self.cl.sh(self.sender, f"rm -f {self.c_ready} {self.c_res} {self.c_log} {self.go_file}")
        self.cl.sh(self.sender, f"nohup {shlex.join(self.client)} >{self.c_log} 2>&1 &")

    def wait_client(self) -> None:
        _wait_files(self.cl, self.sender, [self.c_ready], [self.c_res], 300)
        self._check_ready(self.sender, self.c_ready, self.c_res, self.c_log)

    def _check_ready(self, node: str, ready: str, res: str, log: str) -> None:
        if not self.cl.sh(node, f"[ -e {ready} ] && echo yes || true").strip():
            got = _result(self.cl, node, res, log)
            raise Failure(f"{self.mode} transfer: dms-devmem on {node} did not get ready: "
                          f"{got.get('error', got)}")

    def go(self) -> None:
        self.cl.sh(self.sender, f"touch {self.go_file}")

    def wait_done(self, deadline: float) -> None:
        """Wait for both results until time.monotonic() reaches deadline."""
        for node, res in ((self.receiver, self.s_res), (self.sender, self.c_res)):
            _wait_files(self.cl, node, [res], [], max(deadline - time.monotonic(), 1))

    def results(self) -> tuple:
        """(sender's result, receiver's result, verified): Failure when
        either side reported an error."""
        sres = _result(self.cl, self.receiver, self.s_res, self.s_log)
        cres = _result(self.cl, self.sender, self.c_res, self.c_log)
        errors = [f"{n}: {r['error']}" for n, r in ((self.sender, cres), (self.receiver, sres)) if "error" in r]
        if errors:
            raise Failure(f"{self.mode} transfer of {self.nbytes} bytes from {self.sender} to {self.receiver} "
                          f"failed: " + "; ".join(errors))
        verified = (sres.get("bytes") == self.nbytes and cres.get("bytes") == self.nbytes
                    and sres.get("crc32c") is not None and sres.get("crc32c") == cres.get("crc32c"))
        return cres, sres, verified

    def setup(self) -> None:
        """Every setup phase, one after the other."""
        self.start_server()
        self.wait_server()
        self.start_client()
        self.wait_client()


def transfer(cl, mode: str, nbytes: int, sender: str = "node0", receiver: str = "node1",
             port: int = 5201, timeout: float = 1800.0, pair: int = 0) -> list:
    """One transfer; returns [tx run of the sender, rx run of the receiver]."""
    t = Transfer(cl, mode, nbytes, sender, receiver, port, pair, pair)
    t.setup()
    for node in (sender, receiver):
        cl.reset_stats(node)
    t.go()
    t.wait_done(time.monotonic() + timeout)
    counters = {n: cl.stats(n) for n in (sender, receiver)}
    cres, sres, verified = t.results()
    return [_run_row(mode, "tx", sender, cres, counters[sender], cres["bytes"], verified, t.links[sender]),
            _run_row(mode, "rx", receiver, sres, counters[receiver], sres["bytes"], verified,
                     t.links[receiver])]


def text_table(columns, rows: list) -> str:
    """Rows (dicts) under a heading and a rule. A column is (heading,
    template, cell): the template (str.format, one field) lays out both the
    heading and cell(row), a string."""
    head = "".join(template.format(heading) for heading, template, _ in columns)
    lines = ["".join(template.format(cell(r)) for _, template, cell in columns) for r in rows]
    return "\n".join([head, "-" * len(head), *lines])


def _ratio(r) -> str:
    ratio = r["root_complex_per_payload_byte"]
    return f"{ratio:.3f}" if ratio is not None else "-"


# The columns of every transfer table: the node's fabric counters, and at
# the end whether the receiving GPU's CRC matched.
COUNTER_COLUMNS = (
    ("root complex B", "{:>16}", lambda r: str(r["root_complex_bytes"])),
    ("P2P switch B", "{:>14}", lambda r: str(r["p2p_bytes"])),
    ("RC/payload", "{:>12}", _ratio),
)
VERIFIED_COLUMN = ("verified", "  {}", lambda r: "yes" if r["verified"] else "NO")

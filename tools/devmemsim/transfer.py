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

On nodes of several NIC/GPU pairs, a transfer uses one pair on both sides
(pair=i): NIC i on data link i (addressing.data_link(i)), whose addresses
the caller gave the NICs, and GPU i (/dev/dmsgpuI: the guest numbers its
GPUs in PCI order, topology.py).
"""

import json
import shlex
import time

from . import stats, topology
from .addressing import data_link, node_index
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


def _run_row(mode, direction, node, res, st, payload, verified, links):
    nic, gpu, root_links = links
    rc = sum(stats.link_payload_bytes(st, name) for name in root_links)
    return {
        "mode": mode,
        "direction": direction,
        "node": node,
        "payload_bytes": payload,
        "root_complex_bytes": rc,
        "root_complex_per_payload_byte": rc / payload if payload else None,
        "p2p_bytes": stats.p2p_bytes(st),
        "host_write_bytes": stats.root_complex(st)["host_write_bytes"],
        "host_read_bytes": stats.root_complex(st)["host_read_bytes"],
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
    mac = data_link(pair).mac(node_index(node))
    found = cl.sh(node, f"grep -l '^{mac}$' /sys/class/net/*/address || true").split()
    if len(found) != 1:
        raise Failure(f"{node}: no single interface with pair {pair}'s MAC {mac}")
    return ["--ifname", found[0].split("/")[-2], "--device", f"/dev/dmsgpu{pair}"]


def transfer(cl, mode: str, nbytes: int, sender: str = "node0", receiver: str = "node1",
             port: int = 5201, timeout: float = 1800.0, pair: int = 0) -> list:
    """One transfer; returns [tx run of the sender, rx run of the receiver]."""
    if mode not in MODES:
        raise Failure(f"unknown transfer mode {mode!r} ({', '.join(MODES)})")
    base = f"/tmp/dms-devmem-{mode}-{port}"
    s_ready, s_res, s_log = f"{base}.sready", f"{base}.sres", f"{base}.slog"
    c_ready, c_res, c_log, go = f"{base}.cready", f"{base}.cres", f"{base}.clog", f"{base}.go"
    link = data_link(pair)
    saddr, caddr = link.addr(node_index(receiver)), link.addr(node_index(sender))
    links = {n: _pair_links(cl, n, pair) for n in (sender, receiver)}
    server = [TOOL, "server", "--mode", mode, "--addr", saddr, "--peer", caddr, "--port", str(port),
              "--expect-bytes", str(nbytes), "--ready-file", s_ready, "--result", s_res,
              *_pair_options(cl, receiver, pair)]
    client = [TOOL, "client", "--mode", mode, "--addr", saddr, "--port", str(port),
              "--bytes", str(nbytes), "--start-file", go, "--start-timeout", "600",
              "--ready-file", c_ready, "--result", c_res, *_pair_options(cl, sender, pair)]
    for node, files in ((receiver, (s_ready, s_res, s_log)), (sender, (c_ready, c_res, c_log, go))):
        cl.sh(node, "rm -f " + " ".join(files))
    cl.sh(receiver, f"nohup {shlex.join(server)} >{s_log} 2>&1 &")
    _wait_files(cl, receiver, [s_ready], [s_res], 120)
    cl.sh(sender, f"nohup {shlex.join(client)} >{c_log} 2>&1 &")
    _wait_files(cl, sender, [c_ready], [c_res], 300)
    for node, ready, res, log in ((receiver, s_ready, s_res, s_log), (sender, c_ready, c_res, c_log)):
        if not cl.sh(node, f"[ -e {ready} ] && echo yes || true").strip():
            got = _result(cl, node, res, log)
            raise Failure(f"{mode} transfer: dms-devmem on {node} did not get ready: "
                          f"{got.get('error', got)}")

    for node in (sender, receiver):
        cl.reset_stats(node)
    cl.sh(sender, f"touch {go}")
    deadline = time.monotonic() + timeout
    for node, res in ((receiver, s_res), (sender, c_res)):
        _wait_files(cl, node, [res], [], max(deadline - time.monotonic(), 1))
    counters = {n: cl.stats(n) for n in (sender, receiver)}
    sres = _result(cl, receiver, s_res, s_log)
    cres = _result(cl, sender, c_res, c_log)
    errors = [f"{n}: {r['error']}" for n, r in ((sender, cres), (receiver, sres)) if "error" in r]
    if errors:
        raise Failure(f"{mode} transfer of {nbytes} bytes failed: " + "; ".join(errors))

    verified = (sres.get("bytes") == nbytes and cres.get("bytes") == nbytes
                and sres.get("crc32c") is not None and sres.get("crc32c") == cres.get("crc32c"))
    return [_run_row(mode, "tx", sender, cres, counters[sender], cres["bytes"], verified, links[sender]),
            _run_row(mode, "rx", receiver, sres, counters[receiver], sres["bytes"], verified,
                     links[receiver])]

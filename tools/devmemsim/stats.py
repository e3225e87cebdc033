"""A node's counters as the model reports them (docs/stats.md): the one walk
through their JSON, the table `devmemsim stats` prints, JSON output."""

import json

from . import options
from .errors import Failure

DIRECTIONS = ("up", "down")


def link(st: dict, name: str, direction: str) -> dict:
    """Counters of one direction of one PCIe link (tlps, payload_bytes, ...)."""
    return st["pcie"]["links"][name][direction]


def link_payload_bytes(st: dict, name: str) -> int:
    """Payload bytes over one PCIe link, both directions."""
    return sum(link(st, name, d)["payload_bytes"] for d in DIRECTIONS)


def root_complex(st: dict) -> dict:
    return st["pcie"]["root_complex"]


def p2p_bytes(st: dict) -> int:
    """Bytes that went peer to peer through the switch."""
    return st["pcie"]["switch"]["p2p_bytes"]


def dma_faults(st: dict) -> int:
    return st["pcie"]["dma_faults"]


def gpus(st: dict) -> dict:
    """Every GPU's counters by name: {"gpu": ...} with one pair, else the
    topology's names ({"gpu0": ..., "gpu1": ...})."""
    return {"gpu": st["gpu"]} if "gpu" in st else st["gpus"]


def table(node: str, st: dict) -> str:
    p = st["pcie"]
    # PCIe links: the devices', then the switches' (one pair: nic, gpu, upstream).
    names = [n for n, c in p["links"].items() if "up" in c]
    up = p["links"].get("upstream")
    gen = f"PCIe Gen{up['gen']} x{up['width']}, " if up else ""
    rows = [f"{node}: {gen}MPS {p['mps']}, MRRS {p['mrrs']}, {p['mode']} mode, t={st['time_ns'] / 1e9:.3f} s"]
    w = max(9, max(len(n) + 1 for n in names))
    rows.append(f"  {'link':<{w}}{'dir':<5}{'TLPs':>12}{'payload B':>16}{'wire B':>16}{'busy us':>12}")
    for name in names:
        for d in DIRECTIONS:
            c = link(st, name, d)
            rows.append(f"  {name:<{w}}{d:<5}{c['tlps']:>12}{c['payload_bytes']:>16}{c['wire_bytes']:>16}"
                        f"{c['busy_ns'] / 1000:>12.1f}")
    rc = root_complex(st)
    switches = p.get("switches", {})
    # Several switches: each one's share too.
    each = ", ".join(f"{n} {c['p2p_bytes']} B" for n, c in switches.items())
    each = f" ({each})" if len(switches) > 1 else ""
    rows.append(f"  switch: p2p {p2p_bytes(st)} B{each}   root complex: to host {rc['host_write_bytes']} B, "
                f"from host {rc['host_read_bytes']} B, p2p {rc['p2p_bytes']} B   DMA faults {dma_faults(st)}")
    for name, g in gpus(st).items():
        rows.append(f"  {name}: copy {g['copy_jobs']} jobs ({g['copy_to_dev_bytes']} B in, "
                    f"{g['copy_to_host_bytes']} B out), crc {g['crc_jobs']} jobs ({g['crc_bytes']} B), "
                    f"p2p in {g['p2p_in_bytes']} B, out {g['p2p_out_bytes']} B, errors {g['errors']}")
    return "\n".join(rows)


def dumps(obj) -> str:
    return json.dumps(obj, indent=2)


def write_json(path: str, obj) -> None:
    """obj to path ('-': stdout, options.json_file())."""
    try:
        with options.json_file(path) as f:
            f.write(dumps(obj) + "\n")
    except OSError as e:
        raise Failure(f"cannot write {path}: {e.strerror}") from None

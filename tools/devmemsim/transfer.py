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
"""

import io
import json
import shlex
import time

from .errors import Failure

TOOL = "/opt/devmemsim/bin/dms-devmem"
MODES = ("devmem", "bounce")


def guest_addr(node: str) -> str:
    """The data-link address devmemsim-init gives node i: 10.10.0.(i+1)."""
    return f"10.10.0.{int(node[len('node'):]) + 1}"


def sh(cl, node: str, script: str, check: bool = True) -> str:
    out, err = io.BytesIO(), io.BytesIO()
    ag = cl.agent(node)
    try:
        status = ag.exec(["sh", "-c", script], out=out, err=err)
    finally:
        ag.close()
    if check and status:
        raise Failure(f"{node}: `{script.strip()}` exited {status}: "
                      f"{(err.getvalue() or out.getvalue()).decode(errors='replace').strip()}")
    return out.getvalue().decode(errors="replace")


def set_mtu(cl, nodes, mtu: int) -> None:
    for n in nodes:
        sh(cl, n, f"IF=$(ls /sys/bus/pci/drivers/dmsnic/*/net/ | head -n1) && ip link set \"$IF\" mtu {mtu}")


def _wait_files(cl, node: str, paths, fail_paths, timeout: float) -> None:
    """Wait in the guest until every path exists, or one of fail_paths does."""
    want = " ".join(f"[ -e {p} ] &&" for p in paths)
    fail = " || ".join(f"[ -e {p} ]" for p in fail_paths) or "false"
    sh(cl, node, f"""
end=$(( $(date +%s) + {int(timeout)} ))
until {want} true; do
  if {fail}; then exit 3; fi
  [ $(date +%s) -ge $end ] && exit 4
  sleep 0.1
done""", check=False)


def _result(cl, node: str, path: str, log: str) -> dict:
    text = sh(cl, node, f"cat {path} 2>/dev/null || true")
    if text.strip():
        return json.loads(text)
    tail = sh(cl, node, f"tail -n 20 {log} 2>/dev/null || true").strip()
    return {"error": f"no result from dms-devmem on {node}" + (f": {tail}" if tail else "")}


def _reset_stats(cl, node: str) -> None:
    cl.qmp(node, "qom-set", path="/objects/dms", property="reset-stats", value=True)


def _run_row(mode, direction, node, res, stats, payload, verified):
    p = stats["pcie"]
    up = p["links"]["upstream"]
    rc = up["up"]["payload_bytes"] + up["down"]["payload_bytes"]
    nic, gpu = p["links"]["nic"], p["links"]["gpu"]
    return {
        "mode": mode,
        "direction": direction,
        "node": node,
        "payload_bytes": payload,
        "root_complex_bytes": rc,
        "root_complex_per_payload_byte": rc / payload if payload else None,
        "p2p_bytes": p["switch"]["p2p_bytes"],
        "host_write_bytes": p["root_complex"]["host_write_bytes"],
        "host_read_bytes": p["root_complex"]["host_read_bytes"],
        "nic_link_bytes": nic["up"]["payload_bytes"] + nic["down"]["payload_bytes"],
        "gpu_link_bytes": gpu["up"]["payload_bytes"] + gpu["down"]["payload_bytes"],
        "dma_faults": p["dma_faults"],
        "throughput_bps": res.get("throughput_bps", 0),
        "seconds": res.get("seconds"),
        "crc32c": res.get("crc32c"),
        "verified": verified,
    }


def transfer(cl, mode: str, nbytes: int, sender: str = "node0", receiver: str = "node1",
             port: int = 5201, timeout: float = 1800.0) -> list:
    """One transfer; returns [tx run of the sender, rx run of the receiver]."""
    if mode not in MODES:
        raise Failure(f"unknown transfer mode {mode!r} ({', '.join(MODES)})")
    base = f"/tmp/dms-devmem-{mode}-{port}"
    s_ready, s_res, s_log = f"{base}.sready", f"{base}.sres", f"{base}.slog"
    c_ready, c_res, c_log, go = f"{base}.cready", f"{base}.cres", f"{base}.clog", f"{base}.go"
    saddr, caddr = guest_addr(receiver), guest_addr(sender)
    server = [TOOL, "server", "--mode", mode, "--addr", saddr, "--peer", caddr, "--port", str(port),
              "--expect-bytes", str(nbytes), "--ready-file", s_ready, "--result", s_res]
    client = [TOOL, "client", "--mode", mode, "--addr", saddr, "--port", str(port),
              "--bytes", str(nbytes), "--start-file", go, "--start-timeout", "600",
              "--ready-file", c_ready, "--result", c_res]
    for node, files in ((receiver, (s_ready, s_res, s_log)), (sender, (c_ready, c_res, c_log, go))):
        sh(cl, node, "rm -f " + " ".join(files))
    sh(cl, receiver, f"nohup {shlex.join(server)} >{s_log} 2>&1 &")
    _wait_files(cl, receiver, [s_ready], [s_res], 120)
    sh(cl, sender, f"nohup {shlex.join(client)} >{c_log} 2>&1 &")
    _wait_files(cl, sender, [c_ready], [c_res], 300)
    for node, ready, res, log in ((receiver, s_ready, s_res, s_log), (sender, c_ready, c_res, c_log)):
        if not sh(cl, node, f"[ -e {ready} ] && echo yes || true").strip():
            got = _result(cl, node, res, log)
            raise Failure(f"{mode} transfer: dms-devmem on {node} did not get ready: "
                          f"{got.get('error', got)}")

    for node in (sender, receiver):
        _reset_stats(cl, node)
    sh(cl, sender, f"touch {go}")
    deadline = time.monotonic() + timeout
    for node, res in ((receiver, s_res), (sender, c_res)):
        _wait_files(cl, node, [res], [], max(deadline - time.monotonic(), 1))
    stats = {n: cl.stats(n) for n in (sender, receiver)}
    sres = _result(cl, receiver, s_res, s_log)
    cres = _result(cl, sender, c_res, c_log)
    errors = [f"{n}: {r['error']}" for n, r in ((sender, cres), (receiver, sres)) if "error" in r]
    if errors:
        raise Failure(f"{mode} transfer of {nbytes} bytes failed: " + "; ".join(errors))

    verified = (sres.get("bytes") == nbytes and cres.get("bytes") == nbytes
                and sres.get("crc32c") is not None and sres.get("crc32c") == cres.get("crc32c"))
    return [_run_row(mode, "tx", sender, cres, stats[sender], cres["bytes"], verified),
            _run_row(mode, "rx", receiver, sres, stats[receiver], sres["bytes"], verified)]


def table(runs: list) -> str:
    head = (f"{'mode':<8}{'dir':<4}{'node':<7}{'payload B':>12}{'root complex B':>16}"
            f"{'P2P switch B':>14}{'RC/payload':>12}{'Mbit/s':>9}  verified")
    rows = [head, "-" * len(head)]
    for r in runs:
        ratio = r["root_complex_per_payload_byte"]
        rows.append(f"{r['mode']:<8}{r['direction']:<4}{r['node']:<7}{r['payload_bytes']:>12}"
                    f"{r['root_complex_bytes']:>16}{r['p2p_bytes']:>14}"
                    f"{(f'{ratio:.3f}' if ratio is not None else '-'):>12}"
                    f"{r['throughput_bps'] / 1e6:>9.1f}  {'yes' if r['verified'] else 'NO'}")
    return "\n".join(rows)

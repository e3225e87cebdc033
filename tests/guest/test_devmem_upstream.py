"""The kernel's own devmem TCP tests against dmsnic between two nodes (one
boot for the whole class), udmabuf dma-bufs, header split on, MTU 1500:

  - ncdevmem -f IF: ncdevmem's built-in control-plane checks (bind with no
    queues fails, bind with header split off fails, bind succeeds, shrinking
    channels under a bound queue fails);
  - RX: node1 runs 'ncdevmem -l ... -v 7', node0 sends 8 MiB of ncdevmem's
    pattern with socat exactly as devmem_lib.py run_rx does; every byte
    arrives in the dma-buf (SCM_DEVMEM_DMABUF) and validates, on the bound
    queue, split;
  - TX: node0 runs 'ncdevmem -f IF -s PEER -p PORT' (with and without -z 3,
    as run_tx / run_tx_chunks) into 'socat -U - TCP4-LISTEN' on node1: the
    selftests' "hello\\nworld" and larger known patterns (8 MiB in 64 KiB
    lines, 48 KiB in 3 KiB lines with -z 3), compared by sha256 on both nodes
    and against the pattern computed here;
  - tools/testing/selftests/drivers/net/hw/devmem.py with node0 local and
    node1 its ssh remote over the data link; per-case results as documented
    in guest/kernel/dmsnic/README.md ("devmem selftests");
  - bind-rx with rx-page-size: 16384 binds (dmsnic advertises
    QCFG_RX_PAGE_SIZE), 128 KiB (above the device's largest payload
    buffer) is refused with dmsnic's extended-ack message.

ncdevmem and the selftest come from the guest kernel's source (payload,
tools/devmemsim/build.py). About 1 min under TCG."""

import hashlib
import os
import random
import re
import time

from guestlib import TwoNodes, data_addr, kernel_complaints, main, run
from devmemsim.kselftest import REMOTE_NO_TIME_WAIT

NAME = f"devmem-upstream-{os.getpid()}"
IF = "eth1"  # the dmsnic data interface (devmemsim-init)
ADDR = {n: data_addr(n) for n in (0, 1)}
NCDEVMEM = "/opt/devmemsim/bin/ncdevmem"
HW = "/opt/devmemsim/selftests/tools/testing/selftests/drivers/net/hw"
MiB = 1 << 20
RX_BYTES = 8 * MiB
MSS = 1448  # MTU 1500, TCP timestamps

# devmem_lib.py run_rx's sender: ncdevmem -v 7 expects 1..6, '\n' repeated.
PATTERN_SENDER = ("yes $(echo -e \"\\x01\\x02\\x03\\x04\\x05\\x06\") | head -c {size} | "
                  "socat -u - TCP4:{server}:{port},bind={client}:{port}")

# A TX payload: LINES lines of LEN bytes, the last one '\n' and no other
# (ncdevmem sends stdin one getline() per sendmsg). Runs here and in the guest.
GEN = r"""
import random, sys
seed, lines, n = map(int, sys.argv[1:])
r = random.Random(seed)
out = bytearray()
for _ in range(lines):
    out += r.randbytes(n - 1).replace(b"\n", b"\0") + b"\n"
sys.stdout.buffer.write(out)
"""

# Per-case results of devmem.py on dmsnic (guest/kernel/dmsnic/README.md).
DEVMEM_PY_EXPECTED = {
    "check_rx": ("ok", None),
    "check_tx": ("ok", None),
    "check_tx_chunks": ("ok", None),
    "check_rx_hds": ("ok", None),
    # rx-page-size 16384: dmsnic advertises QCFG_RX_PAGE_SIZE.
    "check_rx_large_niov": ("ok", None),
}

# bind-rx of a 2 MiB-aligned dmsgpu dma-buf with and without rx-page-size,
# through the kernel's YNL Python library.
BIND_RX_PAGE_SIZE = r"""
import socket, sys
sys.path.insert(0, "/opt/devmemsim/bin")
sys.path.insert(0, "/opt/devmemsim/selftests/tools/net/ynl")
import dmslib
from pyynl.lib import YnlFamily, NlError
spec = "/opt/devmemsim/selftests/Documentation/netlink/specs/netdev.yaml"
buf = dmslib.Gpu("/dev/dmsgpu0").alloc(32 << 20, align=2 << 20)  # 1023 x 16 KiB buffers fit
ifindex = socket.if_nametoindex(sys.argv[1])
for size in (0, 16384, 131072):
    nl = YnlFamily(spec, schema="")
    req = {"ifindex": ifindex, "fd": buf.fd, "queues": [{"id": int(sys.argv[2]), "type": "rx"}]}
    if size:
        req["rx-page-size"] = size
    try:
        print("rx-page-size=%d: bound id=%d" % (size, nl.bind_rx(req)["id"]))
    except NlError as e:
        print("rx-page-size=%d: %s" % (size, e))
    nl.close()  # unbinds
"""


def pattern_sha256(seed, lines, n):
    r = random.Random(seed)
    h = hashlib.sha256()
    for _ in range(lines):
        h.update(r.randbytes(n - 1).replace(b"\n", b"\0") + b"\n")
    return h.hexdigest()


class DevmemUpstream(TwoNodes):
    NAME = NAME

    @classmethod
    def setup_nodes(cls):
        for n in (0, 1):
            out = cls.sh(n, f"ethtool -i {IF}; ip -4 -br addr show dev {IF}")
            if "driver: dmsnic" not in out or f"{ADDR[n]}/24" not in out:
                raise AssertionError(f"node{n}: {IF} is not dmsnic at {ADDR[n]}:\n{out}")

    # ---- helpers ---------------------------------------------------------

    def start(self, node, tag, command):
        """Run command in the background on node; wait_done(tag) collects it."""
        self.sh(node, f"rm -f /tmp/{tag}.*; ({command}; echo $? >/tmp/{tag}.rc) "
                      f"</dev/null >/tmp/{tag}.out 2>/tmp/{tag}.err &")

    def wait_listen(self, node, port):
        """As the selftests' wait_port_listen(): a TCP socket in LISTEN on port."""
        self.sh(node, f"for i in $(seq 200); do grep -q ':{port:04X} .* 0A' /proc/net/tcp /proc/net/tcp6 && exit 0; "
                      f"sleep 0.05; done; echo 'nothing listens on port {port}' >&2; exit 1")

    def wait_done(self, node, tag, timeout=180, text_out=True):
        """(exit status, stdout or None, stderr) of a start()ed command; its
        stdout stays in /tmp/TAG.out."""
        self.sh(node, f"for i in $(seq {timeout * 10}); do [ -s /tmp/{tag}.rc ] && exit 0; sleep 0.1; done; exit 1",
                timeout=timeout + 60)
        rc = int(self.sh(node, f"cat /tmp/{tag}.rc"))
        out = self.sh(node, f"cat /tmp/{tag}.out") if text_out else None
        return rc, out, self.sh(node, f"cat /tmp/{tag}.err")

    def assert_in_log(self, needle, log, present=True):
        """assertIn/assertNotIn that shows only the log's end."""
        if (needle in log) != present:
            self.fail(f"{needle!r} {'not ' if present else ''}in the output; its end:\n{log[-3000:]}")

    def stats(self, node):
        out = self.sh(node, f"ethtool -S {IF}")
        return {k: int(v) for k, v in re.findall(r"^\s*(\S+):\s*(\d+)\s*$", out, re.M)}

    def assert_nic_restored(self, node):
        """ncdevmem and devmem.py put RSS and ntuple back as they found them."""
        self.assertIn("Total 0 rules", self.sh(node, f"ethtool -n {IF}"))
        table = self.sh(node, f"ethtool -x {IF}")
        used = {int(v) for row in re.findall(r"^\s*\d+:\s+(.*)$", table, re.M) for v in row.split()}
        self.assertEqual(used, {0, 1, 2, 3}, table)

    def tx(self, port, payload, chunk=0):
        """ncdevmem on node0 sends /tmp/PAYLOAD to socat on node1; returns
        (ncdevmem's stderr, sha256 on node0, sha256 of what node1 received)."""
        tag = f"tx{port}"
        self.start(1, tag, f"socat -U - TCP4-LISTEN:{port}")
        self.wait_listen(1, port)
        z = f" -z {chunk}" if chunk else ""
        res = run(NAME, 0, f"{NCDEVMEM} -f {IF} -s {ADDR[1]} -p {port}{z} </tmp/{payload}", timeout=300)
        self.assertEqual(res.returncode, 0, f"ncdevmem TX exit {res.returncode}:\n{res.stderr[-3000:]}")
        self.assert_in_log("ncdevmem: tx ok", res.stderr)
        rc, _, err = self.wait_done(1, tag, text_out=False)
        self.assertEqual(rc, 0, f"socat: {err}")
        sent = self.sh(0, f"sha256sum </tmp/{payload}").split()[0]
        got = self.sh(1, f"sha256sum </tmp/{tag}.out").split()[0]
        return res.stderr, sent, got

    # ---- tests (run in name order on one cluster) ------------------------

    def test_01_ncdevmem_probe(self):
        for n in (0, 1):
            res = run(NAME, n, f"{NCDEVMEM} -f {IF}")
            self.assertEqual(res.returncode, 0, f"node{n}: ncdevmem -f {IF}: exit {res.returncode}\n{res.stderr}")
            # Its checks got the kernel's refusals, not some other error.
            self.assertIn("missing attribute: .queues.id", res.stderr)
            self.assertIn("'tcp-data-split is disabled'", res.stderr)
            self.assertRegex(res.stderr, r"got dmabuf id=\d+")
            self.assertIn("requested channel counts are too low for existing memory provider", res.stderr)
            self.assert_nic_restored(n)

    def test_10_ncdevmem_rx(self):
        port = 5401
        before = self.stats(1)
        self.start(1, "rx", f"{NCDEVMEM} -l -f {IF} -s {ADDR[1]} -c {ADDR[0]} -p {port} -v 7")
        self.wait_listen(1, port)
        send = PATTERN_SENDER.format(size=RX_BYTES, server=ADDR[1], client=ADDR[0], port=port)
        self.sh(0, f"bash -c '{send}'", timeout=300)
        rc, out, err = self.wait_done(1, "rx")
        after = self.stats(1)
        self.assertEqual(rc, 0, f"ncdevmem RX exit {rc}:\n{err[-3000:]}")
        self.assert_in_log("ncdevmem: client exited", err)  # at the sender's EOF
        self.assert_in_log("Failed validation", err, present=False)  # ncdevmem itself tolerates 20
        self.assert_in_log("SCM_DEVMEM_LINEAR", err, present=False)
        frags = re.findall(r"^received frag_page=.*frag_size=(\d+),.*total_received=(\d+)", err, re.M)
        # Every byte came as a dma-buf frag and each frag was validated.
        self.assertEqual(sum(int(size) for size, _ in frags), RX_BYTES)
        self.assertEqual(int(frags[-1][1]), RX_BYTES)
        self.assertEqual(out.count("Validated buffer"), len(frags))
        first, end = map(int, re.search(r"using queues (\d+)\.\.(\d+)", err).groups())
        delta = {k: after[k] - before.get(k, 0) for k in after}
        bound = range(first, end)
        self.assertGreaterEqual(sum(delta.get(f"rx{q}_split", 0) for q in bound), RX_BYTES // MSS)
        self.assertEqual(sum(v for k, v in delta.items() if re.fullmatch(r"rx\d+_hdr_unreadable", k)), 0)
        self.assert_nic_restored(1)
        print(f"\nRX: {len(frags)} dma-buf frags, {RX_BYTES} bytes validated on queue(s) {first}..{end - 1}")

    def test_20_ncdevmem_tx_hello(self):
        # run_tx / run_tx_chunks verbatim (bash: echo -e).
        for port, z in ((5402, ""), (5403, " -z 3")):
            self.start(1, f"hello{port}", f"socat -U - TCP4-LISTEN:{port}")
            self.wait_listen(1, port)
            self.sh(0, f"bash -c 'echo -e \"hello\\nworld\" | {NCDEVMEM} -f {IF} -s {ADDR[1]} -p {port}{z}'")
            rc, out, err = self.wait_done(1, f"hello{port}")
            self.assertEqual(rc, 0, err)
            self.assertEqual(out.strip(), "hello\nworld", f"-z 3: {bool(z)}")

    def test_21_ncdevmem_tx_8mib(self):
        seed, lines, n = 1, 128, 64 * 1024  # 8 MiB, one 64 KiB sendmsg per line
        self.sh(0, f"python3 - {seed} {lines} {n} >/tmp/big.bin <<'EOF'\n{GEN}\nEOF")
        before = self.stats(0)
        err, sent, got = self.tx(5404, "big.bin")
        after = self.stats(0)
        self.assertEqual(sent, pattern_sha256(seed, lines, n))
        self.assertEqual(got, sent, "node1 received other bytes than node0 sent")
        self.assertEqual(err.count("tx complete"), lines)
        tx_bytes = sum(after[k] - before.get(k, 0) for k in after if re.fullmatch(r"tx\d+_bytes", k))
        self.assertGreater(tx_bytes, lines * n)
        print(f"\nTX: {lines * n} bytes from the dma-buf, sha256 {got[:16]}... on both nodes")

    def test_22_ncdevmem_tx_chunks(self):
        seed, lines, n = 2, 16, 3072  # -z 3: 1024 iovecs of 3 bytes per line (MAX_IOV)
        self.sh(0, f"python3 - {seed} {lines} {n} >/tmp/chunks.bin <<'EOF'\n{GEN}\nEOF")
        err, sent, got = self.tx(5405, "chunks.bin", chunk=3)
        self.assertEqual(sent, pattern_sha256(seed, lines, n))
        self.assertEqual(got, sent)
        self.assertEqual(err.count("tx complete"), lines)

    def test_30_devmem_py(self):
        # node0 runs it; node1 is its ssh remote (payload key and client
        # config, sshd on every node: devmemsim-init).
        self.sh(0, f"for i in $(seq 30); do ssh {ADDR[1]} true && exit 0; sleep 1; done; exit 1", timeout=120)
        self.sh(1, REMOTE_NO_TIME_WAIT)
        env = (f"NETIF={IF} LOCAL_V4={ADDR[0]} REMOTE_V4={ADDR[1]} REMOTE_TYPE=ssh REMOTE_ARGS={ADDR[1]} "
               "PYTHONPYCACHEPREFIX=/tmp/pycache")
        started = time.monotonic()
        res = run(NAME, 0, f"cd /tmp && {env} python3 {HW}/devmem.py 2>&1", timeout=900)
        out = res.stdout
        results = {}
        for status, name, directive, reason in re.findall(
                r"^(ok|not ok) \d+ devmem\.(\w+)(?: # (SKIP|XFAIL) ?(.*))?$", out, re.M):
            results[name] = (directive.lower() or status, reason.strip() or None)
        print(f"\ndevmem.py ({time.monotonic() - started:.0f} s):")
        for name, (kind, reason) in results.items():
            print(f"  {name}: {kind}{' (' + reason + ')' if reason else ''}")
        self.assertEqual(results, DEVMEM_PY_EXPECTED, out[-6000:])
        self.assertEqual(res.returncode, 0, out[-6000:])
        self.assertRegex(out, r"# Totals: pass:5 fail:0 xfail:0 xpass:0 skip:0 error:0")
        self.assert_nic_restored(0)

    def test_31_rx_page_size(self):
        """bind-rx takes rx-page-size 16384 (QCFG_RX_PAGE_SIZE); one above the
        device's largest payload buffer is refused with dmsnic's message."""
        self.sh(1, f"ethtool -G {IF} tcp-data-split on")
        out = self.sh(1, f"python3 - {IF} 3 <<'EOF'\n{BIND_RX_PAGE_SIZE}\nEOF")
        self.assertRegex(out, r"rx-page-size=0: bound id=\d+")
        self.assertRegex(out, r"rx-page-size=16384: bound id=\d+")
        self.assertIn("rx-page-size=131072: Netlink error: dmsnic: rx-page-size 131072: must be "
                      "a power of two from 4096 to 65536: Numerical result out of range", out)

    def test_90_no_kernel_warnings(self):
        for n in (0, 1):
            self.assertEqual(kernel_complaints(NAME, n), [], f"node{n}")


if __name__ == "__main__":
    main()

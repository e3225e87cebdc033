"""Seeded stress between two nodes, made for the debug kernel (KASAN,
lockdep, kmemleak): tests/meson.build's guest-stress runs this file through
test_debug_kernel.py, which then checks every node's console.

One boot. iperf3 runs both ways all along (restarted, and counted, when an
operation ends it). Each round then:

1. starts two checked transfers: devmem TCP node0 -> node1 (dms-devmem: a
   seeded pattern in node0's GPU memory, CRC32C'd by the GPU at both ends)
   and a TCP stream of seeded random bytes through host memory (socat), in
   a direction the seed picks;
2. runs 2-4 operations the seed picks, on nodes the seed picks, with the
   seed's pauses between them:
     rings          ethtool -G rx N tx N (64..4096)
     split          ethtool -G tcp-data-split on|off
     channels       ethtool -L combined N
     offload        ethtool -K FEATURE on|off (rx-gro-hw, tso, rx, tx, gso,
                    gro, sg, rxhash: those the NIC lets switch)
     rss            ethtool -X equal N | weight ... 0 | hkey KEY (never onto
                    the last queue, which a memory provider may hold)
     xdp            attach a program of dms_xdp.bpf.c (DROP, PASS_MB, TX_MB,
                    REDIRECT: all pass TCP; the peer bounces datagrams off
                    the last two) or detach the one attached
     xsk            (node0) an AF_XDP zero-copy socket (dms_xsk.py) bound to
                    a queue: a TCP stream of full-size frames steered to that
                    queue passes the program (the driver copies each frame out
                    of its zero-copy buffer), datagrams in and out through the
                    socket, then unbound
     zcrx           (node0) io_uring zcrx (the kernel's iou-zcrx) bound to
                    the last queue: a transfer into it, then unbound
     devmem-unbind  (node1) the devmem receiver killed mid-transfer: its
                    binding goes while traffic flows
     mtu            both nodes to 1500, 4000 or 9000, one after the other
     flap           ip link set down, a pause, up
     gpu-rebind     dmsgpu unbound and bound again under a live devmem binding
   Each step writes "dms-stress: seed S round R step K: ..." to /dev/kmsg
   first, so that a report in a console follows the step that caused it;
3. settles: XDP off, link up, channels, rings, header split, offloads and
   MTU back to what the nodes booted with;
4. waits for both transfers, judges them, removes ntuple rules, RSS default.

Asserted:
- every transfer that completes verifies (devmem: the receiver's CRC32C is
  the one computed here of the client's seeded source; TCP: sha256);
- a transfer an operation broke (a reset, its receiver killed, its GPU
  gone) is counted "interrupted", and what it delivered before it broke
  must still verify (sha256 of the stream's prefix; the CRC32C of the
  prefix when the devmem receiver saw the stream end);
- every transfer ends within TRANSFER_DEADLINE s of the settle (a devmem
  transfer whose GPU was unbound under it is ended after GPU_GONE_WAIT s
  and counted as interrupted);
- zcrx: iou-zcrx checks each byte ("payload mismatch" fails the test, a
  broken or timed-out transfer is interrupted); xsk: every datagram that
  arrives, either way, is one that was sent, intact (losses are counted);
- an operation either works and reads back as asked (ethtool -g/-l/-x,
  the MTU, the carrier back after a flap, /dev/dmsgpu0 back after a
  rebind) or is refused with an error, printed with its reason and
  counted (e.g. XDP while a memory provider is bound); flap and gpu-rebind
  must work;
- the settle restores the boot configuration;
- no kernel complaint (guestlib.complaints: KASAN, lockdep, WARN, BUG...)
  in a round's dmesg; the failure names the step before it;
- afterwards (test_2): a devmem transfer and a TCP stream verify, iperf3
  moves data both ways, no page pool or binding lingers, every GPU buffer
  is back, device qstats agree with the rtnl totals, and the error counters
  nothing here excuses are 0 (checksum errors, bad completions, ring and
  TSO errors, refused HW-GRO metadata; DMA errors unless that node's GPU
  was unbound).

Parameters (environment):
  DEVMEMSIM_STRESS_SEED     the seed (default 1), printed at the start.
                            Round R draws from Random("SEED/R"): a failure
                            in round R replays with the same seed and at
                            least R rounds.
  DEVMEMSIM_STRESS_ROUNDS   the number of rounds
  DEVMEMSIM_STRESS_MINUTES  no round starts after this many minutes
With neither set, 4 rounds within 2 minutes (the suite's bounded run);
with one set, the other is unbounded. A long run:
  DEVMEMSIM_STRESS_MINUTES=30 ./devmemsim test -- --setup stress guest-stress
(meson gives it an hour; --timeout-multiplier N for longer runs).

Operations the guest cannot do (no clang here, no BPF syscall or bpftool,
no xsk-zerocopy, no iou-zcrx in the payload, fixed offloads...) are found
at the start and left out, each with one line saying why.
"""

import hashlib
import json
import os
import random
import re
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from guestlib import TwoNodes, complaints, data_addr, main, run
from devmemsim.console import report
from test_devmem import TOOL
from test_devmem_upstream import HW
from test_nic import QSTATS
from test_xdp import ECHO, NETDEV, PORT as XDP_PORT, PROGRAMS, RECEIVE, SEND, XSK_TOOL, compile_programs

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "guest" / "tools"))
from dmslib import crc32c  # noqa: E402


def _param(name, kind, low):
    text = os.environ.get(name, "")
    if not text:
        return None
    try:
        value = kind(text)
    except ValueError:
        value = None
    if value is None or not value >= low:
        sys.exit(f"{name}={text!r}: want a number >= {low}")
    return value


SEED = _param("DEVMEMSIM_STRESS_SEED", int, 0)
SEED = 1 if SEED is None else SEED
ROUNDS = _param("DEVMEMSIM_STRESS_ROUNDS", int, 1)
MINUTES = _param("DEVMEMSIM_STRESS_MINUTES", float, 0.1)
if ROUNDS is None and MINUTES is None:
    ROUNDS, MINUTES = 4, 2.0
ROUNDS = ROUNDS or sys.maxsize
MINUTES = MINUTES or float("inf")

NAME = f"stress-test-{os.getpid()}"
ADDR = {n: data_addr(n) for n in (0, 1)}
MiB = 1 << 20
DEBUG = os.environ.get("DEVMEMSIM_KERNEL") == "debug"
# Per round; the debug kernel moves a few Mbit/s under TCG.
DEVMEM_BYTES = (2 if DEBUG else 16) * MiB
TCP_BYTES = (1 if DEBUG else 8) * MiB
# iperf3's rate each way: load, not a flood that starves the debug
# kernel's two vCPUs (unlimited, it took 28 s for one ethtool -L there).
IPERF_RATE = "2M" if DEBUG else "0"
# A TCP stream through the zero-copy queue's XDP_PASS while the socket is bound.
XSK_PASS_BYTES = (256 << 10) if DEBUG else 2 * MiB
XSK_PASS_PORT = 9997
ZCRX_BYTES = 256 << 10  # iou-zcrx's receiver gives up 5 s after it listens
# Seconds a sender may still run after the settle, and a receiver after its
# sender ended (TCP's retransmission backoff after a flap included).
TRANSFER_DEADLINE = 240 if DEBUG else 120
RECEIVER_GRACE = 120
# A devmem transfer whose GPU was unbound under its binding may stall for
# good (its stream's bytes can no longer be read or written): it is ended
# after this many seconds and counted as interrupted.
GPU_GONE_WAIT = 60
WORK = "/tmp/stress"  # in the guests
ZCRX = f"{HW}/iou-zcrx"
IPERF_PORT = 5201
RING_SIZES = (64, 128, 256, 512, 1024, 2048, 4096)  # dmsnic's minimum is 64
MTUS = (1500, 4000, 9000)
# ethtool -K name: its ethtool -k line.
OFFLOADS = {"rx-gro-hw": "rx-gro-hw", "tso": "tcp-segmentation-offload", "rx": "rx-checksumming",
            "tx": "tx-checksumming", "gso": "generic-segmentation-offload",
            "gro": "generic-receive-offload", "sg": "scatter-gather", "rxhash": "receive-hashing"}
XDP_PROGRAMS = ("DROP", "PASS_MB", "TX_MB", "REDIRECT")
# Operations and their weights in the draw.
OPS = {"rings": 3, "split": 2, "channels": 2, "offload": 3, "rss": 2, "xdp": 2, "xsk": 1, "zcrx": 1,
       "devmem-unbind": 1, "mtu": 2, "flap": 2, "gpu-rebind": 1}
# ethtool -S counters nothing in this test excuses, and the DMA errors a
# GPU unbound under a binding may cause.
MUST_BE_ZERO = re.compile(r"rx\d+_(csum_bad|bad_cmpl|hw_gro_bad)|tx\d+_bad_cmpl"
                          r"|hw_(ring_err|ring_dma_err|tso_err|tx_desc_err)")
DMA_ERRORS = re.compile(r"hw_(rx|tx)_dma_err")


def say(text):
    print(f"[stress seed {SEED}] {text}", file=sys.stderr, flush=True)


def kmsg(text):
    """Shell: text into the kernel log (and the console) as a marker."""
    return f'echo "dms-stress: {text}" >/dev/kmsg'


def bg(name, command):
    """Shell: command in the background; its pid in WORK/NAME.pid, its
    output in WORK/NAME.out and, once it ended, its exit status in
    WORK/NAME.rc (a wrapper waits for it: no zombie passes for alive).
    command may use the calling shell's variables, not double quotes."""
    w = f"{WORK}/{name}"
    return (f'rm -f {w}.*; nohup sh -c "{command} >{w}.out 2>&1 & echo \\$! >{w}.pid; wait \\$!; '
            f'echo \\$? >{w}.rc" >/dev/null 2>&1 &')


def poll(seconds, done):
    """Shell: every 0.1 s until the shell test done holds, for at most
    seconds of the guest's clock. Timed by /proc/uptime, not by a count of
    rounds: each round forks, and on the debug kernel under load 1200
    rounds of "0.1 s" took over 420 s."""
    return (f"read up _ </proc/uptime; end=$((${{up%.*}} + {seconds}))\n"
            f"until {done}; do\n"
            f"  read up _ </proc/uptime; [ ${{up%.*}} -ge $end ] && break; sleep 0.1\n"
            f"done\n")


def wait_ended(names, seconds):
    """Shell: wait up to seconds until every bg() process in names ended."""
    if not names:
        return ""
    return poll(seconds, " && ".join(f"[ -e {WORK}/{n}.rc ]" for n in names))


def still_running(names):
    """Shell: '@running-NAME' for each bg() process in names still running."""
    return "".join(f"[ -e {WORK}/{n}.rc ] || echo '@running-{n}'\n" for n in names)


def kill_left(names):
    """Shell: kill the bg() processes in names that still run."""
    return "".join(f"[ -e {WORK}/{n}.rc ] || kill -9 $(cat {WORK}/{n}.pid) 2>/dev/null || true\n" for n in names)


def channels_var(ifname):
    """Shell: $c, the interface's current channel count."""
    return f"c=$(ethtool -l {ifname} | awk '/Combined/ {{c = $2}} END {{print c}}')\n"


def sections(out):
    """'@name' lines split the output: {name: text}; '@name rest' lines
    without a body are kept as {name: rest}."""
    res, cur = {}, None
    for line in out.splitlines():
        if line.startswith("@"):
            cur, _, rest = line[1:].partition(" ")
            res[cur] = rest
        elif cur is not None:
            res[cur] = (res[cur] + "\n" if res[cur] else "") + line
    return res


def current(ethtool_out, key):
    """A value of ethtool -g/-l's "Current hardware settings" (or None)."""
    part = ethtool_out.split("Current hardware settings:")[-1]
    m = re.search(rf"^{re.escape(key)}:\s*(\S+)", part, re.M)
    return m and m.group(1)


def preset(ethtool_out, key):
    part = ethtool_out.split("Pre-set maximums:")[-1].split("Current hardware settings:")[0]
    m = re.search(rf"^{re.escape(key)}:\s*(\d+)", part, re.M)
    return int(m.group(1)) if m else 0


def features(ethtool_k):
    """ethtool -k: {name: (value, fixed)}."""
    return {name: (value, bool(fixed)) for name, value, fixed in
            re.findall(r"^\s*([\w-]+): (on|off)( \[fixed\])?", ethtool_k, re.M)}


def outcome(res):
    if res.returncode == 0:
        return "ok"
    lines = [line for line in (res.stderr + res.stdout).splitlines() if line.strip()]
    return "refused: " + (lines[-1].strip() if lines else f"exit {res.returncode}")


def subsequence(part, whole):
    it = iter(whole)
    return all(x in it for x in part)


def stream(seed, size):
    """The bytes a transfer of this round sends: dms-devmem's source
    pattern (random.Random(seed).randbytes) and the TCP stream's alike."""
    return random.Random(seed).randbytes(size)


class Transfers:
    """A round's two transfers: their ports, seeds and direction."""

    def __init__(self, tag, rng, index):
        self.tag = tag
        self.devmem_port, self.tcp_port = 5600 + index % 300, 6000 + index % 300
        self.devmem_seed, self.tcp_seed = rng.randrange(1, 1 << 30), rng.randrange(1, 1 << 30)
        self.tcp_from = rng.choice((0, 1))
        self.killed = False  # devmem-unbind killed the receiver
        self.gpu_gone = False  # a GPU was unbound under the devmem binding


class Stress(TwoNodes):
    NAME = NAME
    CHECK_DMESG = True

    @classmethod
    def setUpClass(cls):
        say(f"{'unbounded' if ROUNDS == sys.maxsize else ROUNDS} rounds, "
            f"{'no time limit' if MINUTES == float('inf') else f'{MINUTES:g} min'} "
            "(DEVMEMSIM_STRESS_SEED, _ROUNDS, _MINUTES)")
        cls.objects = {}
        if shutil.which("clang"):
            with tempfile.TemporaryDirectory() as tmp:
                cls.objects = compile_programs(Path(tmp))
        cls.tally = Counter()
        cls.xdp = {0: None, 1: None}
        cls.gpu_unbound = set()
        started = time.monotonic()
        super().setUpClass()
        say(f"nodes booted, probed and set up in {time.monotonic() - started:.0f} s")

    @classmethod
    def setup_nodes(cls):
        """Each node probed (what the ops need) and its files installed in
        one command (on the debug kernel each costs seconds), node1 first:
        node0 starts iperf3 against node1's server."""
        cls.ifname = {n: cls.nic_up(n) for n in (1, 0)}
        probes = {n: sections(cls.sh(n, cls.probe_script(n) + cls.install_script(n))) for n in (1, 0)}
        cls.base = {n: cls.configuration(probes[n]) for n in (0, 1)}
        cls.mac = {n: probes[n]["mac"].strip() for n in (0, 1)}
        cls.ops = cls.supported(probes[0])

    # ---- what the nodes can do ---------------------------------------------

    @classmethod
    def probe_script(cls, node):
        i = cls.ifname[node]
        return f"""
mkdir -p {WORK}
echo @rings; ethtool -g {i}
echo @channels; ethtool -l {i}
echo @features; ethtool -k {i}
echo @rss; ethtool -x {i}
echo @link; ip -d -j link show dev {i}
echo @mac; cat /sys/class/net/{i}/address
echo @bpf; [ -e /proc/sys/kernel/unprivileged_bpf_disabled ] && echo syscall; command -v bpftool
echo @netdev; python3 - {i} 2>&1 <<'EOF'
{NETDEV}
EOF
echo @zcrx  # a memory provider binds only once tcp-data-split was set (not just on)
if [ -x {ZCRX} ]; then
  {channels_var(i)}ethtool -G {i} tcp-data-split on; {ZCRX} -s -p 5999 -i {i} -q $((c - 1)) -d 2>&1; echo "rc=$?"
else echo "no {ZCRX} in the payload"; fi
echo @gpu; ls -d /sys/bus/pci/drivers/dmsgpu/0000:* 2>/dev/null
echo @tools; command -v iperf3; command -v socat
"""

    @classmethod
    def configuration(cls, probe):
        """What settle() restores: the boot configuration."""
        feats = features(probe["features"])
        return {"rx": int(current(probe["rings"], "RX")), "tx": int(current(probe["rings"], "TX")),
                "channels": int(current(probe["channels"], "Combined")),
                "mtu": json.loads(probe["link"])[0]["mtu"],
                "features": {k: feats[v][0] for k, v in OFFLOADS.items() if v in feats and not feats[v][1]}}

    @classmethod
    def supported(cls, probe):
        """The operations node0's probe allows; one line for each left out."""
        for tool in ("iperf3", "socat"):
            assert f"/{tool}" in probe["tools"], f"no {tool} in the guest"
        link = json.loads(probe["link"])[0]
        cls.max_channels = preset(probe["channels"], "Combined")
        cls.ring_sizes = {d: [s for s in RING_SIZES if s <= preset(probe["rings"], d)] for d in ("RX", "TX")}
        cls.mtus = [m for m in MTUS if m <= link.get("max_mtu", 1500)]
        cls.offloads = sorted(cls.base[0]["features"])
        key = re.search(r"RSS hash key:\s*\n(\S+)", probe["rss"])
        cls.hkey_len = len(key.group(1).split(":")) if key and ":" in key.group(1) else 0
        try:
            xdp_features = json.loads(probe["netdev"])["dev"].get("xdp-features", [])
        except ValueError:
            xdp_features = []
        why = {
            "rings": not cls.ring_sizes["RX"] and "ethtool -g shows no ring maximum",
            "split": current(probe["rings"], "TCP data split") is None and "no tcp-data-split in ethtool -g",
            "channels": cls.max_channels < 2 and f"at most {cls.max_channels} channel",
            "offload": not cls.offloads and "ethtool -k shows no switchable offload of " + ", ".join(OFFLOADS),
            "rss": "indirection table" not in probe["rss"] and "ethtool -x shows no indirection table",
            "xdp": (not cls.objects and "no clang here to build dms_xdp.bpf.c")
                   or ("syscall" not in probe["bpf"] and "the guest kernel has no BPF syscall"),
            "mtu": len(cls.mtus) < 2 and f"max_mtu {link.get('max_mtu')}",
            "gpu-rebind": not probe["gpu"].strip() and "no device bound to dmsgpu",
        }
        why["xsk"] = (why["xdp"] or ("bpftool" not in probe["bpf"] and "no bpftool in the guest")
                      or ("xsk-zerocopy" not in xdp_features and f"xdp-features {xdp_features}: no xsk-zerocopy"))
        if "rc=0" not in probe["zcrx"]:
            why["zcrx"] = f"iou-zcrx cannot bind: {' '.join(probe['zcrx'].split())}"
        offs = [k for k in OFFLOADS if k not in cls.offloads]
        if offs and cls.offloads:
            say(f"offload: leaving out {', '.join(offs)} (fixed or not shown by ethtool -k)")
        for op, reason in why.items():
            if reason:
                say(f"left out {op}: {reason}")
        ops = {op: w for op, w in OPS.items() if not why.get(op)}
        say(f"operations: {' '.join(ops)}")
        return ops

    @classmethod
    def install_script(cls, node):
        """The node's files (node0: the XDP objects, dms_xsk.py; node1: the
        XDP objects, test_xdp's receiver) and its end of iperf3. One
        argument: it stays below 128 KiB."""
        objs = [f"base64 -d >/tmp/{p}.o <<'EOF'\n{cls.objects[p]}\nEOF"
                for p in (*XDP_PROGRAMS, "XSK") if p in cls.objects]
        if node == 0:
            files = f"cat >/tmp/dms_xsk.py <<'EOF'\n{XSK_TOOL.read_text()}\nEOF"
        else:
            files = f"cat >/tmp/xdp-rx.py <<'EOF'\n{RECEIVE}\nEOF"
        return "\n".join([*objs, files, cls.iperf_script(node)]) + "\n"

    @staticmethod
    def iperf_script(node):
        """(Re)start node's end of the long iperf3: node1 its server, node0
        its client (both ways), the server first."""
        if node == 1:
            return (f"kill $(cat {WORK}/iperfd.pid 2>/dev/null) 2>/dev/null; sleep 0.3\n"
                    f"iperf3 -s -D -p {IPERF_PORT} -I {WORK}/iperfd.pid; sleep 0.5")
        return kill_left(["iperf"]) + bg("iperf", f"iperf3 -c {ADDR[1]} -p {IPERF_PORT} -t 86400 --bidir "
                                                  f"-b {IPERF_RATE}")

    # ---- the rounds ---------------------------------------------------------

    def test_1_rounds(self):
        started, done = time.monotonic(), 0
        try:
            for rnd in range(1, ROUNDS + 1):
                if time.monotonic() - started > MINUTES * 60:
                    say(f"time limit ({MINUTES:g} min) reached")
                    break
                self.round(rnd)
                done += 1
        finally:
            say(f"{done} round(s) in {time.monotonic() - started:.0f} s: "
                + ", ".join(f"{k} {v}" for k, v in sorted(self.tally.items())))
        self.assertGreater(done, 0)

    def round(self, rnd):
        """Transfers, the seed's operations, settle, judge."""
        rng = random.Random(f"{SEED}/{rnd}")
        names = sorted(self.ops)
        ops = rng.choices(names, [self.ops[n] for n in names], k=rng.randint(2, 4))
        tag, times = f"round {rnd}", [time.monotonic()]
        say(f"{tag}: {' '.join(ops)}")
        t = self.start_transfers(tag, rng, rnd)
        times.append(time.monotonic())
        for k, op in enumerate(ops, 1):
            time.sleep(rng.uniform(0, 1.5))
            self.step(f"{tag} step {k}", op, rng, t)
        times.append(time.monotonic())
        try:
            result = self.collect(t)
            times.append(time.monotonic())
        except Exception:
            self.show_console(f"{tag} start")
            raise
        for kind, verdict in result.items():
            self.tally[f"{kind} {verdict.split(':')[0].split()[0]}"] += 1
        spans = " ".join(f"{what} {b - a:.0f}" for what, a, b in zip(("start", "ops", "settle and collect"),
                                                                      times, times[1:]))
        say(f"{tag}: {result} ({times[-1] - times[0]:.0f} s: {spans})")

    def step(self, label, op, rng, t):
        started = time.monotonic()
        try:
            result = getattr(self, "op_" + op.replace("-", "_"))(label, rng, t)
        except Exception as e:
            self.show_console(label)
            raise AssertionError(f"seed {SEED} {label} ({op}): {e}") from e
        self.tally[f"{op} {result.split(':')[0].split()[0]}"] += 1
        say(f"{label}: -> {result} ({time.monotonic() - started:.1f} s)")

    def do(self, label, node, what, script, timeout=300):
        """An operation's script on node, after its marker in the kernel log."""
        say(f"{label}: node{node}: {what}")
        return run(NAME, node, f"{kmsg(f'seed {SEED} {label}: node{node} {what}')}\n{script}", timeout)

    def show_console(self, label):
        """Both nodes' kernel logs from label's marker on (for the report)."""
        for n in (0, 1):
            try:
                log = run(NAME, n, f"dmesg | sed -n '/dms-stress: seed {SEED} {label}/,$p' | head -n 120", 60).stdout
            except Exception as e:  # the node died
                log = f"(no dmesg: {e})"
            say(f"node{n}'s kernel log from '{label}' on:\n{log}")

    # ---- transfers ------------------------------------------------------------

    def start_transfers(self, tag, rng, index):
        """The round's devmem transfer (node0 -> node1) and TCP stream, and
        iperf3 running again if it ended."""
        t = Transfers(tag, rng, index)
        tcp_to = 1 - t.tcp_from
        mark = kmsg(f"seed {SEED} {tag} start") + f"\nmkdir -p {WORK}\n"
        listen = (f"rm -f {WORK}/tcp-received\n"
                  + bg("tcprx", f"socat -u TCP4-LISTEN:{t.tcp_port},reuseaddr OPEN:{WORK}/tcp-received,creat,trunc")
                  + f"\nfor j in $(seq 100); do grep -qi ':{t.tcp_port:04X} .* 0A' /proc/net/tcp && break; "
                  "sleep 0.1; done\n")
        # The sender retries its connect for 30 s: its receiver may start
        # after it, on the other node.
        send = (f'python3 -c "import random, sys; sys.stdout.buffer.write(random.Random({t.tcp_seed})'
                f'.randbytes({TCP_BYTES}))" >{WORK}/tcp-sent\n'
                + bg("tcptx", f"socat -u OPEN:{WORK}/tcp-sent TCP4:{ADDR[tcp_to]}:{t.tcp_port},retry=300,interval=0.1")
                + "\n")
        server = (bg("dms", f"{TOOL} server --addr {ADDR[1]} --peer {ADDR[0]} --port {t.devmem_port} "
                            f"--ready-file {WORK}/dms.ready --result {WORK}/dms.json")
                  + f"\nfor j in $(seq 600); do [ -e {WORK}/dms.ready ] || [ -e {WORK}/dms.rc ] && break; "
                  f"sleep 0.1; done\n[ -e {WORK}/dms.ready ] || {{ cat {WORK}/dms.out; exit 1; }}\n")
        client = bg("dmc", f"{TOOL} client --addr {ADDR[1]} --port {t.devmem_port} --bytes {DEVMEM_BYTES} "
                           f"--source-size {DEVMEM_BYTES} --seed {t.devmem_seed} --result {WORK}/dmc.json") + "\n"
        tcp = {tcp_to: listen, t.tcp_from: send}
        res = run(NAME, 1, mark + server + tcp[1], 300)
        self.assertEqual(res.returncode, 0, f"{tag}: the devmem receiver did not start:\n{res.stdout}{res.stderr}")
        iperf = f"if [ -e {WORK}/iperf.rc ]; then echo @iperf-ended; tail -n 2 {WORK}/iperf.out; fi\n"
        out = sections(self.sh(0, mark + client + tcp[0] + iperf))
        say(f"{tag}: devmem node0 -> node1 {DEVMEM_BYTES} B (seed {t.devmem_seed}), "
            f"TCP node{t.tcp_from} -> node{tcp_to} {TCP_BYTES} B (seed {t.tcp_seed})")
        if "iperf-ended" in out:
            say(f"{tag}: iperf3 had ended ({out['iperf-ended'].strip().splitlines()[-1:]}): restarted")
            self.tally["iperf3 restarted"] += 1
            for node in (1, 0):
                self.sh(node, self.iperf_script(node))
        return t

    def collect(self, t):
        """Settle both nodes, wait for t's transfers (senders first), clean
        up, judge them: {"devmem": verdict, "tcp": verdict}. Four commands:
        node1 settles; node0 settles and waits for its senders; node1 waits
        for its senders, then its receivers; node0 for its receivers."""
        tcp_to = 1 - t.tcp_from
        senders, receivers = {0: ["dmc"], 1: []}, {0: [], 1: ["dms"]}
        senders[t.tcp_from].append("tcptx")
        receivers[tcp_to].append("tcprx")
        found, logs = {}, {}
        self.check_settled(1, t.tag, sections(self.sh(1, self.settle_script(1, t.tag), check=False)))
        out = sections(self.sh(0, self.settle_script(0, t.tag) + self.senders_script(t, senders[0]),
                               timeout=TRANSFER_DEADLINE + 120, check=False))
        self.check_settled(0, t.tag, out)
        found.update(out)
        for node in (1, 0):
            script = (self.senders_script(t, senders[node]) if node == 1 else "") \
                + self.receivers_script(t, node, receivers[node], senders[node])
            out = sections(self.sh(node, script, timeout=TRANSFER_DEADLINE + RECEIVER_GRACE + 60))
            logs[node] = out.pop("dmesg", "")
            found.update(out)
        self.check_logs(t.tag, logs)
        running = [k[len("running-"):] for k in found if k.startswith("running-")]
        hung = [n for n in running if (n not in ("dms", "tcprx") or f"connected-{n}" in found)
                and not (t.gpu_gone and n in ("dms", "dmc"))]
        if hung:
            self.fail(f"{t.tag}: {hung} did not end: {TRANSFER_DEADLINE} s for a sender after the settle, "
                      f"{RECEIVER_GRACE} s for a receiver after its sender\n{self.stuck(t, found)}")
        return {"devmem": self.judge_devmem(t, found), "tcp": self.judge_tcp(t, found)}

    def stuck(self, t, found):
        """What a hung transfer left: both ends' sockets, the qdiscs'
        backlogs, the TX queues' counters, the TCP resets and aborts each
        node counted."""
        ports = f"( sport = :{t.devmem_port} or dport = :{t.devmem_port} or sport = :{t.tcp_port} " \
                f"or dport = :{t.tcp_port} )"
        said = [f"{k}: {v}" for k, v in found.items() if not k.startswith("dmesg")]
        for node in (0, 1):
            i = self.ifname[node]
            said.append(f"--- node{node}\n" + self.sh(node, f"""ss -tnoi '{ports}'
tc -s qdisc show dev {i} | grep -B2 'backlog [1-9]'
ethtool -S {i} | grep -E '(tx[0-9]+_(stops|wakes|errors|drops)|q[0-9]+_fault_restarts): *[1-9]'
nstat -az | grep -E '^Tcp(OutRsts|InErrs|ExtTCPAbort|ExtTCPChallengeACK|ExtTCPACKSkipped)' | grep -v ' 0 '
true""", check=False))
        return "\n".join(said)

    @staticmethod
    def senders_script(t, names):
        """Wait for the senders on a node; their exit status, last line of
        output and (dmc) result."""
        wait = wait_ended(names, TRANSFER_DEADLINE)
        if t.gpu_gone and "dmc" in names:
            others = [n for n in names if n != "dmc"]
            wait = wait_ended(names, GPU_GONE_WAIT) + wait_ended(others, TRANSFER_DEADLINE - GPU_GONE_WAIT)
        wait += still_running(names)
        show = "".join(f'echo "@{n}.rc $(cat {WORK}/{n}.rc 2>/dev/null) $(tail -n 1 {WORK}/{n}.out)"\n'
                       for n in names)
        return wait + show + (f"echo @dmc.json; cat {WORK}/dmc.json 2>/dev/null\n" if "dmc" in names else "") + "true\n"

    def receivers_script(self, t, node, names, senders):
        """Wait for the receivers on a node (their senders ended): until
        each ended, or holds no connection (its sender never got through),
        or its time is up; then what arrived, the node cleaned up (ntuple
        rules, RSS), and its kernel log of this round."""
        ports = {"dms": t.devmem_port, "tcprx": t.tcp_port}
        grace = GPU_GONE_WAIT if t.gpu_gone else RECEIVER_GRACE
        i = self.ifname[node]
        pending = " ".join(f"{n}:{ports[n]:04X}" for n in names)
        show = [f"echo @dms.json; cat {WORK}/dms.json 2>/dev/null"] if "dms" in names else []
        if "tcprx" in names:
            got = f"{WORK}/tcp-received"
            show.append(f'echo "@tcprx $(stat -c %s {got} 2>/dev/null || echo 0) '
                        f'$(cat {WORK}/tcprx.rc 2>/dev/null || echo -) $(sha256sum <{got} 2>/dev/null)"')
        return f"""
conn() {{ awk -v p=":$1$" '$2 ~ p && $4 != "0A" && $4 != "06" {{f = 1}} END {{exit !f}}' /proc/net/tcp; }}
settled() {{ for x in {pending}; do [ -e {WORK}/${{x%:*}}.rc ] || ! conn ${{x#*:}} || return 1; done; }}
{poll(grace, "settled")}for x in {pending}; do
  [ -e {WORK}/${{x%:*}}.rc ] || echo "@running-${{x%:*}}"; conn ${{x#*:}} || continue
  echo "@connected-${{x%:*}}"; ss -tnoi "( sport = :$((0x${{x#*:}})) )"
done
{chr(10).join(show)}
{kill_left(senders + names)}
for r in $(ethtool -n {i} | awk '/^Filter:/ {{print $2}}'); do ethtool -N {i} delete $r; done
ethtool -X {i} default
echo @dmesg; dmesg | sed -n '/dms-stress: seed {SEED} {t.tag} start/,$p'
"""

    def judge_devmem(self, t, found):
        def result(name):
            try:
                return json.loads(found.get(f"{name}.json", "").strip() or "null")
            except ValueError:
                return None
        srv, cli = result("dms"), result("dmc")
        if srv and "error" not in srv:
            n = srv["bytes"]
            want = f"0x{crc32c(stream(t.devmem_seed, DEVMEM_BYTES)[:n]) ^ 0xFFFFFFFF:08x}"
            self.assertEqual(srv["crc32c"], want, f"{t.tag}: CORRUPT devmem transfer: the {n} bytes "
                                                  f"node1 received are not the ones sent ({srv}, {cli})")
            if n == DEVMEM_BYTES:
                return f"verified ({srv['devmem_bytes']} B into the dma-buf, {srv['linear_bytes']} B linear)"
            return f"interrupted: after {n} B, which verify (client: {cli and cli.get('error')})"
        if srv:
            return f"interrupted: receiver: {srv['error']}"
        if t.killed:
            return "interrupted: receiver killed"
        if t.gpu_gone:
            return f"interrupted: a GPU went under the binding (client: {cli})"
        return f"interrupted: no result (client: {cli})"

    def judge_tcp(self, t, found):
        size, rc, *sha = found["tcprx"].split()
        size = int(size)
        if not size:
            return f"interrupted: nothing arrived (receiver exit {rc}, sender exit {found.get('tcptx.rc')})"
        want = hashlib.sha256(stream(t.tcp_seed, TCP_BYTES)[:size]).hexdigest()
        self.assertEqual(sha[:1], [want], f"{t.tag}: CORRUPT TCP stream: the {size} bytes received "
                                          "are not the ones sent")
        if size == TCP_BYTES and rc == "0":
            return "verified"
        return f"interrupted: after {size} B, which verify (receiver exit {rc}, sender exit {found.get('tcptx.rc')})"

    def check_logs(self, tag, logs):
        """No kernel complaint in a node's log of this round: else fail,
        naming the step whose marker precedes it."""
        for node, log in logs.items():
            bad = complaints(log)
            if not bad:
                continue
            lines = log.splitlines()
            before = lines[:lines.index(bad[0])]
            step = next((x.split("dms-stress: ", 1)[1] for x in reversed(before) if "dms-stress: " in x), tag)
            self.fail(f"node{node}: kernel complaint after step '{step}':\n{report(log)}")

    # ---- back to the boot configuration ------------------------------------

    def settle_script(self, node, tag):
        """Shell: node back to its boot configuration (each command a no-op
        where nothing changed), then what it reads."""
        b, i = self.base[node], self.ifname[node]
        feats = " ".join(f"{k} {v}" for k, v in b["features"].items())
        self.xdp[node] = None
        return f"""{kmsg(f'seed {SEED} {tag} settle node{node}')}
ip link set dev {i} xdpdrv off 2>/dev/null
ip link set dev {i} up
ethtool -L {i} combined {b['channels']} 2>/dev/null
ethtool -G {i} rx {b['rx']} tx {b['tx']} 2>/dev/null
ethtool -G {i} tcp-data-split on 2>/dev/null
{f'ethtool -K {i} {feats} 2>/dev/null' if feats else ''}
ip link set dev {i} mtu {b['mtu']}
for j in $(seq 150); do [ "$(cat /sys/class/net/{i}/carrier)" = 1 ] && break; sleep 0.1; done
echo @rings; ethtool -g {i}; echo @channels; ethtool -l {i}; echo @features; ethtool -k {i}
echo @link; ip -j link show dev {i}
"""

    def check_settled(self, node, tag, out):
        b = self.base[node]
        link, feats_now = json.loads(out["link"])[0], features(out["features"])
        now = {"rx": int(current(out["rings"], "RX")), "tx": int(current(out["rings"], "TX")),
               "channels": int(current(out["channels"], "Combined")), "mtu": link["mtu"],
               "features": {k: feats_now[OFFLOADS[k]][0] for k in b["features"]}}
        left = [f"{k} {now[k]} (boot: {b[k]})" for k in b if now[k] != b[k]]
        left += [] if current(out["rings"], "TCP data split") == "on" else ["tcp-data-split off"]
        left += [] if "LOWER_UP" in link["flags"] else ["no carrier"]
        left += ["XDP attached"] if "xdp" in link else []
        self.assertFalse(left, f"{tag}: the settle left node{node} with {left}")

    # ---- operations: each returns its outcome, "ok..." or "refused: why" -----

    def setting(self, label, node, command, show, want):
        """An ethtool setting; if accepted, `show`'s current values of the
        keys in want must read back as asked."""
        res = self.do(label, node, command, f"{command}; rc=$?; {show}; exit $rc")
        if res.returncode == 0:
            got = {k: current(res.stdout, k) for k in want}
            self.assertEqual(got, {k: str(v) for k, v in want.items()}, f"{command} accepted; {show}:")
        return outcome(res)

    def op_rings(self, label, rng, t):
        node, rx, tx = rng.choice((0, 1)), rng.choice(self.ring_sizes["RX"]), rng.choice(self.ring_sizes["TX"])
        i = self.ifname[node]
        return self.setting(label, node, f"ethtool -G {i} rx {rx} tx {tx}", f"ethtool -g {i}", {"RX": rx, "TX": tx})

    def op_split(self, label, rng, t):
        node, value = rng.choice((0, 1)), rng.choice(("on", "off"))
        i = self.ifname[node]
        return self.setting(label, node, f"ethtool -G {i} tcp-data-split {value}", f"ethtool -g {i}",
                            {"TCP data split": value})

    def op_channels(self, label, rng, t):
        node, count = rng.choice((0, 1)), rng.randint(1, self.max_channels)
        i = self.ifname[node]
        return self.setting(label, node, f"ethtool -L {i} combined {count}", f"ethtool -l {i}", {"Combined": count})

    def op_offload(self, label, rng, t):
        node, feat, value = rng.choice((0, 1)), rng.choice(self.offloads), rng.choice(("on", "off"))
        i = self.ifname[node]
        res = self.do(label, node, f"ethtool -K {i} {feat} {value}",
                      f"ethtool -K {i} {feat} {value}; rc=$?; ethtool -k {i}; exit $rc")
        now = features(res.stdout).get(OFFLOADS[feat], ("?",))[0]
        return f"{outcome(res)} ({OFFLOADS[feat]} now {now})"

    def op_rss(self, label, rng, t):
        """ethtool -X over queues 0..c-2 of c (the last one may carry a
        memory provider: a plain socket cannot read what lands there), or a
        new hash key; the table must read back so."""
        node, kind = rng.choice((0, 1)), rng.choice(("equal", "weight", "hkey"))
        permille, weights = rng.randrange(1001), " ".join(str(rng.randint(1, 4)) for _ in range(self.max_channels))
        key = ":".join(f"{rng.randrange(256):02x}" for _ in range(self.hkey_len))
        if kind == "hkey" and not key:
            kind = "equal"
        i = self.ifname[node]
        arg = {"equal": "equal $k", "weight": "weight $w 0", "hkey": f"hkey {key}"}[kind]
        res = self.do(label, node, f"ethtool -X {i} {arg}", f"""{channels_var(i)}
k=$(( (c - 1) * {permille} / 1000 )); [ $k -ge 1 ] || k=1
w=$(echo {weights} | cut -d' ' -f1-$((c > 2 ? c - 1 : 1)))
echo "@c $c"; echo "@k $k"; echo "@w $w"
ethtool -X {i} {arg}; rc=$?; echo @x; ethtool -x {i}; exit $rc""")
        s = sections(res.stdout)
        what = {"equal": f"equal {s['k']}", "weight": f"weight {s['w']} 0", "hkey": "hkey"}[kind]
        if res.returncode == 0:
            used = {int(v) for row in re.findall(r"^\s*\d+:\s+(.*)$", s["x"], re.M) for v in row.split()}
            allowed = set(range(int(s["k"]))) if kind == "equal" else set(range(max(int(s["c"]) - 1, 1)))
            if kind == "hkey":
                self.assertIn(key, s["x"], "the new hash key does not read back")
            else:
                self.assertTrue(used and used <= allowed, f"{what}: the table uses queues {sorted(used)}")
        return f"{outcome(res)} ({what} of {s['c']} queues)"

    def op_xdp(self, label, rng, t):
        node, prog = rng.choice((0, 1)), rng.choice(XDP_PROGRAMS)
        i = self.ifname[node]
        if self.xdp[node]:
            res = self.do(label, node, f"ip link set dev {i} xdpdrv off ({self.xdp[node]})",
                          f"ip link set dev {i} xdpdrv off")
            self.xdp[node] = None if res.returncode == 0 else self.xdp[node]
            return outcome(res)
        cmd = f"ip -force link set dev {i} xdpdrv obj /tmp/{prog}.o sec {PROGRAMS[prog]}"
        res = self.do(label, node, cmd, cmd)
        if res.returncode:
            return outcome(res)
        self.xdp[node] = prog
        if prog not in ("TX_MB", "REDIRECT"):
            return f"ok ({prog})"
        back = self.sh(1 - node, f"python3 - {ADDR[node]} 8 1000 <<'EOF'\n{ECHO}\nEOF", timeout=120).strip()
        return f"ok ({prog}: {back} of 8 datagrams came back intact)"

    def op_xsk(self, label, rng, t):
        """An AF_XDP zero-copy socket on node0's queue 1 (0 with one
        channel): a TCP stream from node1 steered to that queue passes the
        program (xsk_pass()), then node1's datagrams in, as many out to
        node1's receiver."""
        n, size = rng.randint(8, 24), rng.choice((64, 700, 1400))
        i, xsk_map = self.ifname[0], "/sys/fs/bpf/dms_xsk_maps/dms_xsks"
        self.xdp[0] = None
        steer = "| sed -n 's/.*ID \\([0-9]*\\).*/\\1/p' >>" + f"{WORK}/xskrule"
        setup = f"""{channels_var(i)}q=$((c > 1 ? 1 : 0)); rm -f {WORK}/xskrule
ip link set dev {i} xdpdrv off; rm -rf /sys/fs/bpf/dms_xsk*
ethtool -N {i} flow-type udp4 dst-port {XDP_PORT} action $q {steer}
ethtool -N {i} flow-type tcp4 dst-port {XSK_PASS_PORT} action $q {steer}
[ $(wc -l <{WORK}/xskrule) = 2 ] || exit 1
bpftool prog load /tmp/XSK.o /sys/fs/bpf/dms_xsk type xdp pinmaps /sys/fs/bpf/dms_xsk_maps || exit 1
bpftool net attach xdpdrv pinned /sys/fs/bpf/dms_xsk dev {i} || exit 1
{bg("xsk", f"python3 /tmp/dms_xsk.py {i} $q {xsk_map} {n} {n} {ADDR[0]} {ADDR[1]} {self.mac[1]} {XDP_PORT} {size}")}
for j in $(seq 300); do
  grep -q ready {WORK}/xsk.out 2>/dev/null && exit 0; [ -e {WORK}/xsk.rc ] && break; sleep 0.1
done
cat {WORK}/xsk.out >&2; exit 1"""
        try:
            res = self.do(label, 0, f"AF_XDP zero-copy socket: {n} datagrams of {size} B in and out", setup)
            if res.returncode:
                return outcome(res)
            passed = self.xsk_pass()
            sent = self.sh(1, "rm -f /tmp/xdp-rx-ready /tmp/xdp-rx; nohup sh -c 'python3 /tmp/xdp-rx.py 15 "
                              ">/tmp/xdp-rx.tmp; mv /tmp/xdp-rx.tmp /tmp/xdp-rx' >/dev/null 2>&1 &\n"
                              "for j in $(seq 100); do [ -e /tmp/xdp-rx-ready ] && break; sleep 0.1; done\n"
                              f"python3 - {ADDR[0]} {n} {size} <<'EOF'\n{SEND}\nEOF", timeout=300).split()
            out = self.sh(0, f"for j in $(seq 900); do grep -q '^tx' {WORK}/xsk.out && break; "
                             f"[ -e {WORK}/xsk.rc ] && break; sleep 0.1; done; cat {WORK}/xsk.out", timeout=300)
            got = self.sh(1, "for j in $(seq 300); do [ -e /tmp/xdp-rx ] && break; sleep 0.1; done; "
                             "cat /tmp/xdp-rx || true", timeout=120).split()[1:]
        finally:
            self.sh(0, wait_ended(["xsk"], 5) + kill_left(["xsk"]) + f"ip link set dev {i} xdpdrv off; "
                       f"rm -rf /sys/fs/bpf/dms_xsk*; for r in $(cat {WORK}/xskrule); do ethtool -N {i} delete $r; done",
                    check=False)
        lines = {x.split()[0]: x.split()[1:] for x in out.splitlines() if x.split()}
        if "rx" not in lines:
            return f"interrupted: dms_xsk.py: {out.strip().splitlines()[-1:]}"
        rx, tx = lines["rx"], lines.get("tx", ["0"])
        self.assertTrue(subsequence(rx, sent), f"CORRUPT: AF_XDP got datagrams node1 did not send:\n{sent}\n{rx}")
        self.assertTrue(subsequence(got, tx[1:]), f"CORRUPT: node1 got datagrams AF_XDP did not send:\n{tx}\n{got}")
        return f"ok ({passed}; {len(rx)} of {n} in, {len(got)} of {tx[0]} sent out arrived, all intact)"

    def xsk_pass(self):
        """XSK_PASS_BYTES of random bytes over TCP node1 -> node0 to
        XSK_PASS_PORT, which op_xsk steered to its zero-copy queue: full-size
        frames that the program passes, each copied out of its XSK buffer
        into an skb. Every byte must arrive unchanged."""
        w = f"{WORK}/xskpass"
        self.sh(0, bg("xskpass", f"socat -u TCP4-LISTEN:{XSK_PASS_PORT},reuseaddr OPEN:{w},creat,trunc")
                + f"\nfor j in $(seq 100); do grep -qi ':{XSK_PASS_PORT:04X} .* 0A' /proc/net/tcp && break; "
                  "sleep 0.1; done")
        sent = self.sh(1, f"head -c {XSK_PASS_BYTES} /dev/urandom >{w}.tx && "
                          f"socat -u OPEN:{w}.tx TCP4:{ADDR[0]}:{XSK_PASS_PORT} && sha256sum <{w}.tx",
                       timeout=300).split()[0]
        got = self.sh(0, wait_ended(["xskpass"], 60) + kill_left(["xskpass"])
                      + f"sha256sum <{w}; stat -c %s {w}", timeout=120).split()
        self.assertEqual((got[0], int(got[2])), (sent, XSK_PASS_BYTES),
                         "CORRUPT: the TCP stream through the zero-copy queue's XDP_PASS")
        return f"{XSK_PASS_BYTES} B passed intact"

    def op_zcrx(self, label, rng, t):
        """io_uring zcrx on node0's last queue (RSS kept off it, an ntuple
        rule steering the flow there): iou-zcrx from node1 into it. While
        it is bound, rx-checksumming must be on (dmsnic's rule: the stack
        cannot checksum payload it cannot read; off, every payload frame of
        the queue is dropped as csum_unreadable)."""
        port = 6400 + rng.randrange(300)
        i = self.ifname[0]
        setup = f"""{channels_var(i)}q=$((c - 1)); rm -f {WORK}/zcrxrule
[ $q -ge 1 ] || {{ echo "one channel: no queue to spare" >&2; exit 1; }}
ethtool -G {i} tcp-data-split on && ethtool -X {i} equal $q || exit 1
ethtool -N {i} flow-type tcp4 dst-port {port} action $q | sed -n 's/.*ID \\([0-9]*\\).*/\\1/p' >{WORK}/zcrxrule
[ -s {WORK}/zcrxrule ] || exit 1
{bg("zcrx", f"{ZCRX} -s -p {port} -i {i} -q $q")}
for j in $(seq 300); do
  grep -qi ':{port:04X} .* 0A' /proc/net/tcp6 && break; [ -e {WORK}/zcrx.rc ] && break; sleep 0.1
done
[ -e {WORK}/zcrx.rc ] && {{ cat {WORK}/zcrx.out >&2; exit 1; }}
echo "@rxcsum $(ethtool -k {i} | awk '/^rx-checksumming:/ {{print $2}}')"
"""
        try:
            res = self.do(label, 0, f"io_uring zcrx receiver on the last queue, {ZCRX_BYTES} B from node1", setup)
            if res.returncode:
                return outcome(res)
            # The receiver gives up 5 s after it listens; a sender whose
            # bytes go nowhere blocks in send() until its peer resets it.
            sender = run(NAME, 1, f"timeout 30 {ZCRX} -c -h {ADDR[0]} -p {port} -l 12840 -z {ZCRX_BYTES}", 120)
            unreadable = f"ethtool -S {i} | awk '/csum_unreadable/ {{s += $2}} END {{print s}}'"
            out = sections(self.sh(0, wait_ended(["zcrx"], 20) + f'echo "@rc $(cat {WORK}/zcrx.rc 2>/dev/null)"\n'
                                   f'echo "@unreadable $({unreadable})"\necho @out; cat {WORK}/zcrx.out'))
        finally:
            self.sh(0, kill_left(["zcrx"]) + f"r=$(cat {WORK}/zcrxrule); [ -z \"$r\" ] || ethtool -N {i} delete $r; "
                       f"ethtool -X {i} default", check=False)
        self.assertNotIn("payload mismatch", out["out"], "CORRUPT: iou-zcrx received other bytes than sent")
        self.assertEqual(sections(res.stdout)["rxcsum"], "on",
                         f"rx-checksumming off while io_uring zcrx is bound: node0 counts {out['unreadable']} "
                         f"frames csum_unreadable in all; receiver exit {out['rc']}, sender exit {sender.returncode}")
        if out["rc"] == "0" and sender.returncode == 0:
            return f"verified ({ZCRX_BYTES} B through io_uring zcrx)"
        return (f"interrupted: receiver exit {out['rc']} {out['out'].strip().splitlines()[-1:]}, "
                f"sender exit {sender.returncode} {sender.stderr.strip().splitlines()[-1:]}")

    def op_devmem_unbind(self, label, rng, t):
        res = self.do(label, 1, "kill -9 the devmem receiver: its binding goes under traffic",
                      f"[ -e {WORK}/dms.rc ] && exit 3; kill -9 $(cat {WORK}/dms.pid)")
        if res.returncode == 3:
            return "skipped: the devmem transfer had ended"
        t.killed = res.returncode == 0
        return outcome(res)

    def op_mtu(self, label, rng, t):
        mtu, said = rng.choice(self.mtus), []
        for node in rng.sample((0, 1), 2):
            i = self.ifname[node]
            res = self.do(label, node, f"ip link set dev {i} mtu {mtu}",
                          f"ip link set dev {i} mtu {mtu}; rc=$?; cat /sys/class/net/{i}/mtu; exit $rc")
            if res.returncode == 0:
                self.assertEqual(res.stdout.split()[-1], str(mtu), "the MTU does not read back")
            else:
                said.append(f"node{node}: {outcome(res)}")
        return f"refused: {'; '.join(said)}" if said else f"ok ({mtu} on both)"

    def op_flap(self, label, rng, t):
        node, pause = rng.choice((0, 1)), round(rng.uniform(0.2, 2.0), 1)
        i = self.ifname[node]
        res = self.do(label, node, f"ip link set dev {i} down, {pause} s, up", f"""
ip link set dev {i} down && sleep {pause} && ip link set dev {i} up || exit 1
for j in $(seq 150); do [ "$(cat /sys/class/net/{i}/carrier)" = 1 ] && exit 0; sleep 0.1; done
echo "no carrier 15 s after the link went up" >&2; exit 1""")
        self.assertEqual(res.returncode, 0, outcome(res))
        return "ok"

    def op_gpu_rebind(self, label, rng, t):
        """dmsgpu unbound and bound again; node1's devmem receiver or
        node0's sender (its TX binding) may be mid-transfer."""
        node, pause = rng.choice((0, 1)), round(rng.uniform(0.1, 1.0), 1)
        transfer = "dms" if node == 1 else "dmc"
        res = self.do(label, node, f"dmsgpu unbind, {pause} s, bind", f"""
[ -e {WORK}/{transfer}.rc ] && echo '@binding gone' || echo '@binding alive'
bdf=$(basename "$(readlink -f /sys/class/misc/dmsgpu0/device)")
echo $bdf >/sys/bus/pci/drivers/dmsgpu/unbind || exit 1
sleep {pause}
echo $bdf >/sys/bus/pci/drivers/dmsgpu/bind || exit 1
for j in $(seq 100); do [ -e /dev/dmsgpu0 ] && exit 0; sleep 0.1; done
echo "no /dev/dmsgpu0 after the rebind: $(ls /dev/dmsgpu* 2>&1)" >&2; exit 1""", timeout=180)
        self.gpu_unbound.add(node)
        self.assertEqual(res.returncode, 0, outcome(res))
        binding = sections(res.stdout).get("binding", "?")
        t.gpu_gone = t.gpu_gone or binding == "alive"
        return f"ok (the devmem binding was {binding})"

    # ---- afterwards -------------------------------------------------------------

    def test_2_after_the_rounds(self):
        """Back at the boot configuration: both transfers verify, iperf3
        moves data both ways, nothing lingers, the counters are sane."""
        started = time.monotonic()
        for node in (1, 0):
            self.check_settled(node, "final", sections(self.sh(node, self.settle_script(node, "final"))))
        t = self.start_transfers("final", random.Random(f"{SEED}/final"), 0)
        result = self.collect(t)
        self.assertEqual([v.split()[0] for v in result.values()], ["verified", "verified"], result)
        self.sh(1, self.iperf_script(1))
        res = json.loads(self.sh(0, kill_left(["iperf"]) + f"iperf3 -c {ADDR[1]} -p {IPERF_PORT} -t 3 -J --bidir",
                                 timeout=120))
        for way in ("sum_received", "sum_received_bidir_reverse"):
            self.assertGreater(res["end"][way]["bytes"], 64 << 10, f"iperf3 {way}")
        for node in (0, 1):
            self.assert_clean(node)
        say(f"final checks in {time.monotonic() - started:.0f} s")

    def assert_clean(self, node):
        """No page pool outlived its queue, no dma-buf is bound, every dmsgpu
        buffer is back (after loopback pings on each CPU: test_devmem's
        assert_clean says why); the error counters are 0 and device qstats
        agree with the rtnl totals."""
        i = self.ifname[node]
        out = sections(self.sh(node, f"""for k in $(seq 20); do
  for c in $(seq 0 $(($(nproc) - 1))); do taskset -c $c ping -q -c 1 -W 1 127.0.0.1 >/dev/null; done
  p=$({TOOL} pools); b=$(cat /sys/class/misc/dmsgpu0/buffers)
  echo "$p" | grep -q -e detach_time -e dmabuf || [ "$b" != 0 ] || break
  sleep 0.5
done
echo @pools; echo "$p"; echo "@buffers $b"
echo @stats; ethtool -S {i}
echo @qstats; python3 - {i} device <<'EOF'
{QSTATS}
EOF
""", timeout=300))
        pools = json.loads(out["pools"])["pools"]
        self.assertEqual([p for p in pools if "detach_time" in p or "dmabuf" in p], [], f"node{node}: {pools}")
        self.assertEqual(out["buffers"].strip(), "0", f"node{node}: dmsgpu buffers still allocated")
        stats = {k: int(v) for k, v in re.findall(r"^\s*(\S+):\s*(\d+)\s*$", out["stats"], re.M)}
        excused = DMA_ERRORS if node in self.gpu_unbound else None
        bad = {k: v for k, v in stats.items()
               if v and (MUST_BE_ZERO.fullmatch(k) or (DMA_ERRORS.fullmatch(k) and not excused))}
        self.assertEqual(bad, {}, f"node{node}: error counters")
        q = json.loads(out["qstats"])
        total, rtnl = q["qstats"][0], q["rtnl"]
        for key in ("rx", "tx"):
            # rtnl is read right after: a stray frame or two may land between.
            self.assertTrue(0 <= rtnl[key]["packets"] - total[f"{key}-packets"] <= 8,
                            f"node{node}: {key} packets: qstats {total}, rtnl {rtnl}")
        say(f"node{node}: clean; rx {rtnl['rx']['packets']} tx {rtnl['tx']['packets']} packets, "
            + ", ".join(f"{k} {v}" for k, v in sorted(stats.items()) if DMA_ERRORS.fullmatch(k)))


if __name__ == "__main__":
    main()

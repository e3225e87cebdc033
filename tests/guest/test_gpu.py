"""dmsgpu in a booted guest, driven by guest/tools/dms-gpu.

One boot runs everything (a dma-buf lives only as long as the process that
holds its fd, so each dms-gpu call does its own allocations):
  - selftest: a 64 MiB (debug kernel: 16 MiB) dma-buf filled with a pattern through mmap; the CRC
    engine's result equals the CPU's CRC32C of the pattern; the copy engine
    copies it out unchanged, copies a second pattern in, and the CPU sees it;
    both engines then run on an unaligned range crossing bounce-buffer chunks;
  - bad input: ALLOC beyond free memory -> ENOMEM, COPY/CRC beyond the
    buffer -> EINVAL, malformed ALLOC -> EINVAL;
  - devmem TCP (bind-rx to the dmsnic interface) attaches and maps a dma-buf;
  - the memory is back in the allocator afterwards (sysfs), the driver logged
    no engine errors, and the node's counters (--stats-json) show the copy
    engine's bytes on the GPU link and through the root complex.
A second boot, a 16 MiB GPU whose interrupts are all lost, covers a gather
list longer than device memory, private mmap (refused), and the driver
unbound under a CPU mapping, an engine wait, a devmem binding and buffers
being closed, each followed by a rebind (SmallGpuAndRemoval).
A host-only test checks that the tool's ioctl structures match the UAPI header.
"""

import ctypes
import importlib.machinery
import importlib.util
import json
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from guestlib import cli, complaints, main, scaled

ROOT = Path(__file__).resolve().parents[2]
TOOL_LIB = ROOT / "guest" / "tools" / "dmslib.py"
UAPI = ROOT / "guest" / "include" / "uapi" / "dmsgpu.h"
TOOL = "/opt/devmemsim/bin/dms-gpu"

MiB = 1 << 20
PAGE = 4096
MEM_SIZE = 256 * MiB  # passed to the node with --set gpu.mem_size
BUF = scaled(64 * MiB)  # the selftest's dma-buf
SEED = 7


def load_tool():
    loader = importlib.machinery.SourceFileLoader("dmslib", str(TOOL_LIB))
    spec = importlib.util.spec_from_loader("dmslib", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def bad_input_steps():
    """dms-gpu run steps; each `expect` must fail with its errno."""
    end = 2**64 - PAGE
    return [
        "expect ENOMEM alloc huge %d" % (MEM_SIZE + PAGE),
        "expect EINVAL alloc zero 0",
        "expect EINVAL alloc odd 4096 --align 12288",
        "alloc a %d" % BUF,
        "info",
        # Everything that is left fits, one page more does not.
        "expect ENOMEM alloc b %d" % (MEM_SIZE - BUF + PAGE),
        "alloc b %d" % (MEM_SIZE - BUF),
        "info",
        "expect ENOMEM alloc c %d" % PAGE,
        "free b",
        # Ranges beyond the 64 MiB buffer, including offset + len overflow.
        "expect EINVAL crc a --offset %d --len 1" % BUF,
        "expect EINVAL crc a --offset 0 --len %d" % (BUF + 1),
        "expect EINVAL crc a --offset %d --len %d" % (end, 2 * PAGE),
        "expect EINVAL copy-out a --offset %d --len %d" % (BUF - PAGE, 2 * PAGE),
        "expect EINVAL copy-in a --pattern zero --offset %d --len 1" % BUF,
        "expect EINVAL copy-in a --pattern zero --offset %d --len %d" % (end, 2 * PAGE),
        # The last byte is inside; an empty range is allowed (CRC = seed).
        "copy-in a --pattern ones --offset %d --len 1" % (BUF - 1),
        "crc a --offset %d --len 1 --expect-pattern ones" % (BUF - 1),
        "crc a --offset %d --len 0 --seed-crc 0x1234" % BUF,
        # Gather mode: scattered ranges as one stream, checked by the CPU.
        "crc-list a 0+4096 %d+1448 100+77" % (BUF - 1448),
        "expect EINVAL crc-list a 0+0",
        "expect EINVAL crc-list a %d+2" % (BUF - 1),
        "expect EINVAL crc-list a %d+%d" % (end, 2 * PAGE),
        "free a",
        "info",
    ]


CRC_LIST_BYTES = 4096 + 1448 + 77  # the crc-list step above

# selftest's unaligned second pass (guest/tools/dms-gpu cmd_selftest).
SUB_LEN = min(BUF - (BUF // 3 | 1), (3 << 20) + 3)

GUEST_SCRIPT = f"""
T={TOOL}
echo @selftest; $T selftest --size {BUF} --pattern random --seed {SEED}; echo "@rc $?"
echo @bad; $T run {' '.join("'%s'" % s for s in bad_input_steps())}; echo "@rc $?"
echo @bind
IF=$(ls /sys/bus/pci/drivers/dmsnic/*/net/ | head -n1)
ip link set "$IF" up && ethtool -G "$IF" tcp-data-split on
$T run 'alloc d 16M' "bind-rx d $IF 1" 'unbind'; echo "@rc $?"
# A devmem binding may drop its dma-buf reference a moment after unbind.
for i in $(seq 50); do [ "$(cat /sys/class/misc/dmsgpu0/buffers)" = 0 ] && break; sleep 0.1; done
echo @sysfs; for f in mem_size mem_used mem_free buffers; do
  echo "$f $(cat /sys/class/misc/dmsgpu0/$f)"; done
echo @dmesg; dmesg | grep dmsgpu
"""


def sections(out):
    res, cur = {}, None
    for line in out.splitlines():
        if line.startswith("@rc "):
            res[cur + ".rc"] = int(line.split()[1])
        elif line.startswith("@"):
            cur = line[1:].strip()
            res[cur] = []
        elif cur:
            res[cur].append(line)
    return res


class HostUapi(unittest.TestCase):
    """The tool's ctypes structures and ioctl numbers match dmsgpu.h."""

    def test_tool_matches_header(self):
        cc = shutil.which("cc") or shutil.which("gcc")
        if not cc:
            self.skipTest("no C compiler")
        tool = load_tool()
        fields = {
            "dmsgpu_info": ("Info", ["mem_size", "mem_used", "mem_free", "hw_version", "buffers"]),
            "dmsgpu_alloc": ("Alloc", ["size", "align", "offset", "flags", "fd"]),
            "dmsgpu_copy": ("Copy", ["fd", "direction", "offset", "len", "user_ptr"]),
            "dmsgpu_crc": ("Crc", ["fd", "seed", "offset", "len", "crc", "flags"]),
            "dmsgpu_range": ("Range", ["offset", "len"]),
            "dmsgpu_crc_list": ("CrcList", ["fd", "seed", "count", "flags", "ranges", "crc",
                                            "reserved"]),
        }
        prints = []
        for st, (_, names) in fields.items():
            prints.append(f'printf("{st} %zu\\n", sizeof(struct {st}));')
            prints += [f'printf("{st}.{n} %zu\\n", offsetof(struct {st}, {n}));' for n in names]
        for ioc in ("INFO", "ALLOC", "COPY", "CRC", "CRC_LIST"):
            prints.append(f'printf("DMSGPU_IOCTL_{ioc} %lu\\n", (unsigned long)DMSGPU_IOCTL_{ioc});')
        for d in ("TO_DEVICE", "FROM_DEVICE"):
            prints.append(f'printf("DMSGPU_COPY_{d} %d\\n", DMSGPU_COPY_{d});')
        prints.append('printf("DMSGPU_CRC_LIST_MAX %d\\n", DMSGPU_CRC_LIST_MAX);')
        src = "#include <stddef.h>\n#include <stdio.h>\n#include \"%s\"\nint main(void) {\n%s\nreturn 0;\n}\n" % (
            UAPI, "\n".join(prints))
        with tempfile.TemporaryDirectory() as d:
            c, exe = Path(d) / "uapi.c", Path(d) / "uapi"
            c.write_text(src)
            subprocess.run([cc, "-Wall", "-Werror", "-o", exe, c], check=True)
            want = dict(line.split() for line in subprocess.run(
                [exe], check=True, capture_output=True, text=True).stdout.splitlines())
        for st, (cls, names) in fields.items():
            ct = getattr(tool, cls)
            self.assertEqual(int(want[st]), ctypes.sizeof(ct), st)
            for n in names:
                self.assertEqual(int(want[f"{st}.{n}"]), getattr(ct, n).offset, f"{st}.{n}")
        for name in ("DMSGPU_IOCTL_INFO", "DMSGPU_IOCTL_ALLOC", "DMSGPU_IOCTL_COPY",
                     "DMSGPU_IOCTL_CRC", "DMSGPU_IOCTL_CRC_LIST", "DMSGPU_CRC_LIST_MAX",
                     "DMSGPU_COPY_TO_DEVICE", "DMSGPU_COPY_FROM_DEVICE"):
            self.assertEqual(int(want[name]), getattr(tool, name), name)

    def test_cpu_crc32c(self):
        tool = load_tool()
        # The standard check value, and Linux's crc32c() convention.
        self.assertEqual(tool.crc32c(b"123456789") ^ 0xFFFFFFFF, 0xE3069283)
        self.assertEqual(tool.crc32c(b"", 0x1234), 0x1234)
        data = tool.pattern("random", 100_003, 1)
        self.assertEqual(tool.crc32c(data[50_000:], tool.crc32c(data[:50_000])), tool.crc32c(data))


class Gpu(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.stats_path = Path(cls.tmp.name) / "stats.json"
        cls.res = cli("run", "--set", f"gpu.mem_size={MEM_SIZE // MiB}M",
                      "--stats-json", str(cls.stats_path), "--", GUEST_SCRIPT, timeout=1800)
        cls.s = sections(cls.res.stdout)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def output(self):
        return f"\nstdout:\n{self.res.stdout}\nstderr:\n{self.res.stderr}"

    def selftest(self):
        self.assertEqual(self.s.get("selftest.rc"), 0, self.output())
        return json.loads("\n".join(self.s["selftest"]))

    def steps(self, name):
        return [json.loads(line) for line in self.s[name] if line.startswith("{")]

    def test_run_succeeds(self):
        self.assertEqual(self.res.returncode, 0, self.output())

    def test_engine_crc_equals_cpu_crc32c(self):
        crcs = [st for st in self.selftest()["steps"] if st["step"] == "crc"]
        self.assertEqual([(st["offset"], st["len"]) for st in crcs],
                         [(0, BUF), (BUF // 3 | 1, SUB_LEN)])
        for st in crcs:
            self.assertTrue(st["match"])
            self.assertEqual(st["engine"], st["cpu"])

    def test_copy_engine_round_trip(self):
        steps = self.selftest()["steps"]
        outs = [st for st in steps if st["step"] == "copy-out"]
        self.assertEqual([(st["offset"], st["len"], st["match"]) for st in outs],
                         [(0, BUF, True), (BUF // 3 | 1, SUB_LEN, True)])
        copy_in = [st for st in steps if st["step"] == "copy-in"]
        self.assertEqual([st["len"] for st in copy_in], [BUF])
        self.assertTrue([st for st in steps if st["step"] == "check"][0]["match"])

    def test_selftest_frees_its_buffer(self):
        infos = [st for st in self.selftest()["steps"] if st["step"] == "info"]
        self.assertEqual(infos[0]["mem_used"], BUF)
        self.assertEqual(infos[0]["buffers"], 1)
        self.assertEqual(infos[1]["mem_used"], 0)
        self.assertEqual(infos[1]["mem_size"], MEM_SIZE)

    def test_bad_input(self):
        self.assertEqual(self.s.get("bad.rc"), 0, self.output())
        steps = self.steps("bad")
        self.assertEqual(len(steps), len(bad_input_steps()), self.output())
        expected = [s.split()[1] for s in bad_input_steps() if s.startswith("expect ")]
        got = [st["got"] for st in steps if st["step"] == "expect"]
        self.assertEqual(got, expected)
        full = [st for st in steps if st["step"] == "info"][1]
        self.assertEqual((full["mem_used"], full["mem_free"], full["buffers"]), (MEM_SIZE, 0, 2))
        empty = [st for st in steps if st["step"] == "crc" and st["len"] == 0][0]
        self.assertEqual(empty["engine"], 0x1234)

    def test_devmem_rx_bind_maps_buffer(self):
        """devmem TCP imports the dma-buf with a static attachment, maps it
        for the NIC (P2P below the switch) and fills the queue's ring from it."""
        lines = self.steps("bind")
        self.assertEqual(self.s.get("bind.rc"), 0, self.output())
        self.assertEqual([st["step"] for st in lines], ["alloc", "bind-rx", "unbind"], self.output())
        self.assertGreater(lines[1]["id"], 0, self.output())
        self.assertNotIn("cannot map device memory", "\n".join(self.s["dmesg"]))

    def test_memory_returned(self):
        sysfs = dict(line.split() for line in self.s["sysfs"])
        self.assertEqual(sysfs, {"mem_size": str(MEM_SIZE), "mem_used": "0",
                                 "mem_free": str(MEM_SIZE), "buffers": "0"}, self.output())

    def test_driver_log(self):
        dmesg = "\n".join(self.s["dmesg"])
        self.assertRegex(dmesg, r"dmsgpu \S+: devmemsim GPU v1\.\d+: 256 MiB device memory .* /dev/dmsgpu0")
        self.assertNotRegex(dmesg, r"engine|timed out|error", self.output())

    def test_stats_count_copy_engine_bytes(self):
        self.assertEqual(self.res.returncode, 0, self.output())
        st = json.loads(self.stats_path.read_text())["nodes"]["node0"]
        gpu = st["gpu"]
        # selftest: BUF out, in, and CRCed, then an unaligned range out
        # and CRCed; the bad-input run adds a 1-byte copy-in and a 1-byte CRC
        # (refused requests never reach the engines).
        self.assertEqual(gpu["copy_to_host_bytes"], BUF + SUB_LEN)
        self.assertEqual(gpu["copy_to_dev_bytes"], BUF + 1)
        self.assertEqual(gpu["crc_bytes"], BUF + SUB_LEN + 1 + CRC_LIST_BYTES)
        self.assertEqual(gpu["errors"], 0)
        link = st["pcie"]["links"]["gpu"]
        self.assertGreaterEqual(link["up"]["payload_bytes"], BUF + SUB_LEN)  # device -> host writes
        self.assertGreaterEqual(link["down"]["payload_bytes"], BUF + 1)  # read completions
        rc = st["pcie"]["root_complex"]
        self.assertGreaterEqual(rc["host_write_bytes"], BUF + SUB_LEN)
        self.assertGreaterEqual(rc["host_read_bytes"], BUF + 1)


SMALL_MEM = 16 * MiB
# The small GPU's node loses every GPU interrupt: each engine job then ends
# by the driver's 10 s job timeout finding it done, which keeps an ioctl in
# its wait for the device long enough to unbind the driver under it.
SMALL_FAULTS = "faults.gpu_msi_drop_rate=1"

# What the removal cases share (guest Python): the GPU's PCI address, bind
# and unbind, an unbind in its own process (remove() may wait) with the
# time it took, and errno names.
REMOVAL_PY = """
import errno, mmap, os, subprocess, sys, time
sys.path.insert(0, "/opt/devmemsim/bin")
from dmslib import Buffer, Gpu, StepError, bind_dmabuf
DRV = "/sys/bus/pci/drivers/dmsgpu/"
BDF = os.path.basename(os.path.realpath("/sys/class/misc/dmsgpu0/device"))


def driver(op):
    with open(DRV + op, "w") as f:
        f.write(BDF)


def unbind_start():
    return subprocess.Popen(["sh", "-c", f"echo {BDF} > {DRV}unbind"]), time.monotonic()


def unbind_seconds(proc, t0, timeout):
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        return None
    return round(time.monotonic() - t0, 1)


def name(e):
    return errno.errorcode.get(e.errno, str(e.errno))


def attempt(what, fn):
    try:
        fn()
        print(what, 0)
    except (StepError, OSError) as e:
        print(what, name(e))
"""

# With a dma-buf mapped and touched, unbind the driver, then touch another
# page of the mapping in a child (which SIGBUS must kill) and call an ioctl
# on the old fd. The buffer and the old /dev fd outlive the rebind: mmap and
# ioctls on them fail, the new device neither counts nor takes the old
# buffer, and closing them last frees the old device's data.
REVOKE_PY = """
old = Gpu("/dev/dmsgpu0")
buf = old.alloc(1 << 20)
buf.cpu_write(0, b"x" * 4096)
driver("unbind")
pid = os.fork()
if pid == 0:
    buf.cpu_read(8192, 1)
    buf.cpu_read(0, 1)
    os._exit(0)
_, status = os.waitpid(pid, 0)
print("child", os.WTERMSIG(status) if os.WIFSIGNALED(status) else -os.WEXITSTATUS(status))
attempt("ioctl", lambda: buf.crc(0, 4096))
driver("bind")
gpu = Gpu("/dev/dmsgpu0")
attempt("old_mmap", lambda: mmap.mmap(buf.fd, 4096, mmap.MAP_SHARED, mmap.PROT_READ))
attempt("old_dev", old.info)
attempt("cross", lambda: Buffer(gpu, buf.fd, 0, buf.size).crc(0, 4096))
new = gpu.alloc(1 << 20)
print("buffers", gpu.info()["buffers"])
buf.close()
os.close(old.fd)
new.cpu_write(0, b"new")
print("new", bytes(new.cpu_read(0, 3)).decode())
new.close()
print("buffers", gpu.info()["buffers"])
"""

# A copy job whose interrupt is lost keeps its ioctl in the driver's wait
# for the device (SMALL_FAULTS); unbind meanwhile. remove() must end that
# wait, not sit it out: the ioctl fails with ENODEV.
LOST_IRQ_PY = """
buf = Gpu("/dev/dmsgpu0").alloc(1 << 20)
pid = os.fork()
if pid == 0:
    try:
        buf.copy(0, 0, bytearray(1 << 20))
        os._exit(0)
    except StepError as e:
        os._exit(e.errno or 100)
time.sleep(3)
proc, t0 = unbind_start()
print("unbind_s", unbind_seconds(proc, t0, 60))
_, status = os.waitpid(pid, 0)
code = os.waitstatus_to_exitcode(status)
print("copy", errno.errorcode.get(code, str(code)))
buf.close()
driver("bind")
"""

# devmem TCP binds a dma-buf to a NIC queue: a static importer, which
# cannot be revoked. unbind must wait for it (not leave its DMA aimed at a
# released BAR), and finish once the binding's socket closes.
STATIC_PY = """
buf = Gpu("/dev/dmsgpu0").alloc(4 << 20)
nl, _ = bind_dmabuf(buf, os.environ["IF"], [1])
proc, t0 = unbind_start()
time.sleep(6)
print("waiting", proc.poll() is None)
nl.close()
print("unbind_s", unbind_seconds(proc, t0, 120))
buf.close()
driver("bind")
"""

# A process closes its mapped dma-bufs one by one while the driver unbinds:
# remove() walks buffers whose last reference may be going meanwhile.
CLOSE_RACE_PY = """
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    gpu = Gpu("/dev/dmsgpu0")
    bufs = [gpu.alloc(256 << 10) for _ in range(32)]
    for b in bufs:
        b.cpu_write(0, b"y")
    os.write(w, b"1")
    for b in bufs:
        b.close()
        time.sleep(0.01)
    os._exit(0)
os.read(r, 1)
proc, t0 = unbind_start()
print("unbind_s", unbind_seconds(proc, t0, 60))
os.waitpid(pid, 0)
driver("bind")
"""

# A private mapping of a dma-buf would be copy-on-write, which device memory
# cannot be: mmap must refuse it (the kernel BUGs on the first fault of
# one), and shared mappings keep working.
PRIVATE_PY = """
buf = Gpu("/dev/dmsgpu0").alloc(1 << 20)
for what, prot in (("ro", mmap.PROT_READ), ("rw", mmap.PROT_READ | mmap.PROT_WRITE)):
    attempt(what, lambda: mmap.mmap(buf.fd, 4096, mmap.MAP_PRIVATE, prot)[0])
buf.cpu_write(0, b"ok")
print("shared", bytes(buf.cpu_read(0, 2)).decode())
buf.close()
"""


def guest_python(section, body):
    return f"""echo @{section}; python3 - <<'PY'
{REMOVAL_PY}
{body}
PY
echo "@rc $?"
"""


SMALL_SCRIPT = f"""
T={TOOL}
echo @crclist; $T run 'alloc a 8M' 'crc-list a 0+8M 0+8M 0+8M' 'free a'; echo "@rc $?"
export IF=$(ls /sys/bus/pci/drivers/dmsnic/*/net/ | head -n1)
ip link set "$IF" up && ethtool -G "$IF" tcp-data-split on
{guest_python("revoke", REVOKE_PY)}
{guest_python("lostirq", LOST_IRQ_PY)}
{guest_python("static", STATIC_PY)}
{guest_python("closerace", CLOSE_RACE_PY)}
{guest_python("private", PRIVATE_PY)}
echo @rebound; $T run info; echo "@rc $?"
echo @dmesg; dmesg
"""


class SmallGpuAndRemoval(unittest.TestCase):
    """A GPU smaller than one CRC chunk; the driver unbound under a mapping,
    an engine wait, a devmem binding and closing buffers; private mmap."""

    @classmethod
    def setUpClass(cls):
        cls.res = cli("run", "--set", f"gpu.mem_size={SMALL_MEM // MiB}M", "--set", SMALL_FAULTS,
                      "--", SMALL_SCRIPT, timeout=1800)
        cls.s = sections(cls.res.stdout)

    def output(self):
        return f"\nstdout:\n{self.res.stdout}\nstderr:\n{self.res.stderr}"

    def case(self, name):
        """A removal case's "key value" lines (the last value of each key
        wins; REVOKE_PY prints "buffers" twice, see test_buffer_outlives_rebind)."""
        self.assertEqual(self.s.get(name + ".rc"), 0, self.output())
        return dict(line.split(" ", 1) for line in self.s[name] if " " in line)

    def test_crc_list_longer_than_device_memory(self):
        """24 MiB of ranges over a 16 MiB GPU: each job stays within the
        device memory (the device refuses a longer one); CRC = the CPU's."""
        self.assertEqual(self.s.get("crclist.rc"), 0, self.output())
        steps = [json.loads(line) for line in self.s["crclist"] if line.startswith("{")]
        self.assertTrue(steps[1]["match"], self.output())

    def test_unbind_revokes_cpu_mapping(self):
        got = self.case("revoke")
        self.assertEqual(got["child"], "7", self.output())  # SIGBUS
        self.assertEqual(got["ioctl"], "ENODEV", self.output())

    def test_buffer_outlives_rebind(self):
        got = self.case("revoke")
        self.assertEqual((got["old_mmap"], got["old_dev"], got["cross"]),
                         ("ENODEV", "ENODEV", "EINVAL"), self.output())
        buffers = [line.split()[1] for line in self.s["revoke"] if line.startswith("buffers ")]
        self.assertEqual(buffers, ["1", "0"], self.output())
        self.assertEqual(got["new"], "new", self.output())

    def test_unbind_ends_engine_wait(self):
        """The job's wait ends at unbind, not at the 10 s job timeout (the
        unbind starts 3 s into it)."""
        got = self.case("lostirq")
        self.assertNotEqual(got["unbind_s"], "None", self.output())
        self.assertLess(float(got["unbind_s"]), 5, self.output())
        self.assertEqual(got["copy"], "ENODEV", self.output())

    def test_unbind_waits_for_static_importer(self):
        got = self.case("static")
        self.assertEqual(got["waiting"], "True", self.output())
        self.assertNotEqual(got["unbind_s"], "None", self.output())
        dmesg = "\n".join(self.s["dmesg"])
        self.assertRegex(dmesg, r"1 mapping\(s\) of device memory held by importers that cannot "
                                r"be revoked .* waits until they are unmapped")
        self.assertRegex(dmesg, r"importers unmapped device memory after \d+ ms")

    def test_unbind_while_buffers_close(self):
        got = self.case("closerace")
        self.assertNotEqual(got["unbind_s"], "None", self.output())

    def test_private_mmap_refused(self):
        got = self.case("private")
        self.assertEqual((got["ro"], got["rw"], got["shared"]), ("EINVAL", "EINVAL", "ok"),
                         self.output())

    def test_rebind_works(self):
        self.assertEqual(self.s.get("rebound.rc"), 0, self.output())
        info = json.loads(self.s["rebound"][0])
        self.assertEqual((info["mem_size"], info["buffers"]), (SMALL_MEM, 0), self.output())

    def test_no_kernel_complaints(self):
        self.assertEqual(complaints("\n".join(self.s["dmesg"])), [], self.output())


if __name__ == "__main__":
    main()

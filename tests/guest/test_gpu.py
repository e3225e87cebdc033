"""dmsgpu in a booted guest, driven by guest/tools/dms-gpu.

One boot runs everything (a dma-buf lives only as long as the process that
holds its fd, so each dms-gpu call does its own allocations):
  - selftest: a 64 MiB dma-buf filled with a pattern through mmap; the CRC
    engine's result equals the CPU's CRC32C of the pattern; the copy engine
    copies it out unchanged, copies a second pattern in, and the CPU sees it;
    both engines then run on an unaligned range crossing bounce-buffer chunks;
  - bad input: ALLOC beyond free memory -> ENOMEM, COPY/CRC beyond the
    buffer -> EINVAL, malformed ALLOC -> EINVAL;
  - devmem TCP (bind-rx to the dmsnic interface) attaches and maps a dma-buf;
  - the memory is back in the allocator afterwards (sysfs), the driver logged
    no engine errors, and the node's counters (--stats-json) show the copy
    engine's bytes on the GPU link and through the root complex.
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

from guestlib import cli, complaints

ROOT = Path(__file__).resolve().parents[2]
TOOL_LIB = ROOT / "guest" / "tools" / "dmslib.py"
UAPI = ROOT / "guest" / "include" / "uapi" / "dmsgpu.h"
TOOL = "/opt/devmemsim/bin/dms-gpu"

MiB = 1 << 20
PAGE = 4096
MEM_SIZE = 256 * MiB  # passed to the node with --set gpu.mem_size
BUF = 64 * MiB
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
        # selftest: 64 MiB out, in, and CRCed, then an unaligned range out
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

# With a dma-buf mapped and touched, unbind the driver, then touch another
# page of the mapping in a child (which SIGBUS must kill) and call an ioctl
# on the old fd; rebind the driver at the end.
REVOKE_SCRIPT = """
import errno, os, sys
sys.path.insert(0, "/opt/devmemsim/bin")
from dmslib import Gpu, StepError
bdf = os.path.basename(os.path.realpath("/sys/class/misc/dmsgpu0/device"))
buf = Gpu("/dev/dmsgpu0").alloc(1 << 20)
buf.cpu_write(0, b"x" * 4096)
with open("/sys/bus/pci/drivers/dmsgpu/unbind", "w") as f:
    f.write(bdf)
pid = os.fork()
if pid == 0:
    buf.cpu_read(8192, 1)
    buf.cpu_read(0, 1)
    os._exit(0)
_, status = os.waitpid(pid, 0)
print("child", os.WTERMSIG(status) if os.WIFSIGNALED(status) else -os.WEXITSTATUS(status))
try:
    buf.crc(0, 4096)
    print("ioctl 0")
except StepError as e:
    print("ioctl", errno.errorcode.get(e.errno, e.errno))
buf.close()
with open("/sys/bus/pci/drivers/dmsgpu/bind", "w") as f:
    f.write(bdf)
"""

SMALL_SCRIPT = f"""
T={TOOL}
echo @crclist; $T run 'alloc a 8M' 'crc-list a 0+8M 0+8M 0+8M' 'free a'; echo "@rc $?"
echo @revoke; python3 - <<'PY'
{REVOKE_SCRIPT}
PY
echo "@rc $?"
echo @rebound; $T run info; echo "@rc $?"
echo @dmesg; dmesg
"""


class SmallGpuAndRemoval(unittest.TestCase):
    """A GPU smaller than one CRC chunk; the driver unbound under a mapping."""

    @classmethod
    def setUpClass(cls):
        cls.res = cli("run", "--set", f"gpu.mem_size={SMALL_MEM // MiB}M", "--", SMALL_SCRIPT,
                      timeout=1800)
        cls.s = sections(cls.res.stdout)

    def output(self):
        return f"\nstdout:\n{self.res.stdout}\nstderr:\n{self.res.stderr}"

    def test_crc_list_longer_than_device_memory(self):
        """24 MiB of ranges over a 16 MiB GPU: each job stays within the
        device memory (the device refuses a longer one); CRC = the CPU's."""
        self.assertEqual(self.s.get("crclist.rc"), 0, self.output())
        steps = [json.loads(line) for line in self.s["crclist"] if line.startswith("{")]
        self.assertTrue(steps[1]["match"], self.output())

    def test_unbind_revokes_cpu_mapping(self):
        self.assertEqual(self.s.get("revoke.rc"), 0, self.output())
        self.assertIn("child 7", self.s["revoke"], self.output())  # SIGBUS
        self.assertIn("ioctl ENODEV", self.s["revoke"], self.output())

    def test_rebind_works(self):
        self.assertEqual(self.s.get("rebound.rc"), 0, self.output())
        info = json.loads(self.s["rebound"][0])
        self.assertEqual((info["mem_size"], info["buffers"]), (SMALL_MEM, 0), self.output())

    def test_no_kernel_complaints(self):
        self.assertEqual(complaints("\n".join(self.s["dmesg"])), [], self.output())


if __name__ == "__main__":
    unittest.main(verbosity=2)

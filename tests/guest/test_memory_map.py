"""A guest that changes the memory map while another vCPU does I/O.

One vCPU turns the GPU's memory decode off and on TOGGLES times as fast as
it can (each write makes QEMU build a new memory map); the other reads the
NIC's ID register through its BAR the whole time. The NIC's regions sit above the
GPU's, so their place in the map moves with every toggle. Under TCG each
vCPU's TLB names I/O regions by their index in the map it was filled from:
QEMU 10.0.13 looked those indexes up in the newest map, so a read could land
in another device's registers or abort QEMU (iotlb_to_section's assertion;
CI saw it at boot, during the kernel's BAR sizing). Every read must return
the NIC's ID, and QEMU must live.
"""

import os
import re
import sys
import unittest

from guestlib import boot, main, run, sh, stop

from devmemsim.contract import C  # noqa: E402

# The toggles the race gets (each a new memory map, while the other vCPU
# reads), and the time it may take at most on a slow host.
TOGGLES = 4000
SECONDS = 60

# Runs in the guest: PROBE reads on CPU 1 while TOGGLE writes on CPU 0.
SCRIPT = r"""
set -e
pci() {{ for d in /sys/bus/pci/devices/*; do
	if [ "$(cat $d/vendor):$(cat $d/device)" = "{vendor:#06x}:$1" ]; then echo $d; fi; done; }}
NIC=$(pci {nic:#06x}); GPU=$(pci {gpu:#06x})
# The drivers stay out: the test is about QEMU, not about what a driver
# does while its device stops decoding.
echo $(basename $NIC) > /sys/bus/pci/drivers/dmsnic/unbind
echo $(basename $GPU) > /sys/bus/pci/drivers/dmsgpu/unbind
setpci -s $(basename $NIC) COMMAND=0x2:0x2
rm -f /tmp/toggled
taskset -c 1 python3 -c '
import mmap, os, struct, sys, time
fd = os.open(sys.argv[1] + "/resource{nic_bar}", os.O_RDONLY | os.O_SYNC)
regs = memoryview(mmap.mmap(fd, 4096, prot=mmap.PROT_READ)).cast("I")
reads = wrong = 0
end = time.monotonic() + {seconds}
while time.monotonic() < end and not os.path.exists("/tmp/toggled"):
    for _ in range(100):
        value = regs[0]
        reads += 1
        if value != {magic}:
            wrong += 1
            if wrong <= 5:
                print("wrong read %#x" % value)
print("reads", reads, "wrong", wrong)
' $NIC &
taskset -c 0 python3 -c '
import os, struct, sys, time
fd = os.open(sys.argv[1] + "/config", os.O_RDWR)
cmd = struct.unpack("<H", os.pread(fd, 2, 4))[0]
toggles = 0
end = time.monotonic() + {seconds}
while toggles < {toggles} and time.monotonic() < end:
    os.pwrite(fd, struct.pack("<H", cmd & ~2), 4)
    os.pwrite(fd, struct.pack("<H", cmd | 2), 4)
    toggles += 1
print("toggles", toggles)
open("/tmp/toggled", "w").close()
' $GPU
wait
"""


def counts(out):
    """{'reads': N, 'wrong': N, 'toggles': N} from the script's output."""
    return {key: int(re.search(rf"^(?:.* )?{key} (\d+)", out, re.M).group(1))
            for key in ("reads", "wrong", "toggles")}


class MemoryMapUnderIo(unittest.TestCase):
    NAME = f"memmap-test-{os.getpid()}"

    @classmethod
    def setUpClass(cls):
        boot(cls.NAME, "--smp", "2")

    @classmethod
    def tearDownClass(cls):
        stop(cls.NAME)

    def test_io_reaches_its_device_while_the_map_changes(self):
        script = SCRIPT.format(vendor=C.DMS_PCI_VENDOR_ID, nic=C.DMS_PCI_DEVICE_ID_NIC,
                               gpu=C.DMS_PCI_DEVICE_ID_GPU, nic_bar=C.DMS_NIC_BAR_REGS,
                               magic=C.DMS_NIC_ID_MAGIC, toggles=TOGGLES, seconds=SECONDS)
        res = run(self.NAME, 0, script, timeout=SECONDS * 4)
        self.assertEqual(res.returncode, 0, f"QEMU or the guest died:\n{res.stdout}\n{res.stderr}")
        got = counts(res.stdout)
        print(got, file=sys.stderr)
        # Enough of both for the race to have had its chances (a loaded
        # 2-core host still gives thousands of each).
        self.assertGreater(got["toggles"], 1000, got)
        self.assertGreater(got["reads"], 10000, got)
        self.assertEqual(got["wrong"], 0, res.stdout)
        self.assertIn("ok", sh(self.NAME, 0, "echo ok"))


if __name__ == "__main__":
    main()

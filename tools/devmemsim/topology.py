"""A node's PCIe topology, defined once for the CLI's nodes and the qtest
tests: NIC and GPU on two downstream ports of one switch behind a root port,
so peer-to-peer traffic between them stays below the switch."""

NIC_PORT = "dn0"  # bus= of devmemsim-nic
GPU_PORT = "dn1"  # bus= of devmemsim-gpu

SWITCH = [
    "-device", "pcie-root-port,id=rp0,bus=pcie.0,chassis=1,slot=0",
    "-device", "x3130-upstream,id=up0,bus=rp0",
    "-device", f"xio3130-downstream,id={NIC_PORT},bus=up0,chassis=2,slot=0",
    "-device", f"xio3130-downstream,id={GPU_PORT},bus=up0,chassis=3,slot=1",
]

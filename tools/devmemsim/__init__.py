"""devmemsim: emulated devmem TCP hardware (NIC + GPU) in QEMU."""

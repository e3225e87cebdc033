#!/usr/bin/python3
"""docs/datasheet.md's register tables agree with the contract headers.

The PCI identity table must match pci_ids.h. Every register a table names
must exist in sysc-model/include/devmemsim/*.h at the offset the table
gives, and every register the headers define must be in a table. The headers are read by tests/qemu/contract.py, the Python
tests' one reader of the contract.

The tables' name column is read as the datasheet writes it:
  `NAME`                         one register
  `A`, `B`                       several, at the offsets 'a/b' or from 'a–b'
  `X_{P,Q}_BASE_LO/HI`           braces expand; LO/HI is a pair, HI at LO + 4
  `A`, `B` (LO/HI)               each name is a LO/HI pair
  `NAME[n]`                      n registers NAME(0)..NAME(n-1), offsets 'a–b'
  `PREFIX_*`                     every header register with that prefix in 'a–b'
  queue *q*  at '0xA + 0xS·q'    the per-queue block, DMS_<DEV>_Q_BASE(q)
"""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
from devmemsim.contract import C  # the headers' #defines, evaluated

DATASHEET = ROOT / "docs" / "datasheet.md"

# (section, subsection heading start) -> (device prefix, register prefix,
# pattern of the header names that table must cover).
TABLES = {
    ("NIC", "Registers (BAR0)"): ("DMS_NIC_", "DMS_NIC_REG_", r"DMS_NIC_REG_\w+"),
    ("NIC", "Queue registers"): ("DMS_NIC_", "DMS_NIC_", r"DMS_NIC_(RXQ|TXQ|Q_IRQ|Q_RX_ITR|Q_TX_ITR)_\w+"),
    ("GPU", "Registers (BAR0)"): ("DMS_GPU_", "DMS_GPU_REG_", r"DMS_GPU_REG_\w+"),
}

HEADER = {name: getattr(C, name) for name in dir(C) if name.startswith("DMS_")}


def tables(text: str) -> dict:
    """(section, subsection) -> rows {column: cell} of its first table."""
    found, section, sub, rows = {}, "", "", None
    for line in text.splitlines():
        if line.startswith("## "):
            section, sub = line[3:].strip(), ""
        elif line.startswith("### "):
            sub = line[4:].strip()
        if not line.startswith("|"):
            rows = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if rows is None:
            rows, columns = [], cells
            found.setdefault((section, sub), rows)
        elif not all(set(c) <= set("-: ") for c in cells):
            rows.append(dict(zip(columns, cells)))
    return found


def offsets(cell: str):
    """('range', a, b) | ('list', [a, ...]) | ('queue', base, stride)."""
    cell = cell.replace("`", "").strip()
    m = re.fullmatch(r"(0x[0-9a-f]+)\s*\+\s*(0x[0-9a-f]+)\s*·\s*q", cell)
    if m:
        return ("queue", int(m.group(1), 16), int(m.group(2), 16))
    m = re.fullmatch(r"(0x[0-9a-f]+)\s*[–-]\s*(0x[0-9a-f]+)", cell)
    if m:
        return ("range", int(m.group(1), 16), int(m.group(2), 16))
    return ("list", [int(v, 16) for v in cell.split("/")])


def name_groups(cell: str) -> list:
    """The name cell as groups of registers at consecutive offsets."""
    pair = "(LO/HI)" in cell
    groups = []
    for item in re.findall(r"`([^`]+)`", cell):
        m = re.fullmatch(r"(.*)\{(.*?)\}(.*)", item)
        for name in [m.group(1) + x + m.group(3) for x in m.group(2).split(",")] if m else [item]:
            if name.endswith("_LO/HI"):
                groups.append([name[:-3], name[:-6] + "_HI"])
            elif pair:
                groups.append([name + "_LO", name + "_HI"])
            else:
                groups.append([name])
    return groups


def value(name: str, index: int = 0):
    v = HEADER.get(name)
    return v(index) if callable(v) else v


def check_placed(prefix: str, groups: list, where) -> tuple:
    """Registers at offsets from a list (one per group) or a range."""
    kind = where[0]
    if kind == "range":
        flat = [n for g in groups for n in g]
        placed = [(n, where[1] + 4 * i) for i, n in enumerate(flat)]
        errors = [] if placed and placed[-1][1] == where[2] else [
            f"{', '.join(flat)}: {len(flat)} registers from {where[1]:#x} do not end at {where[2]:#x}"]
    elif kind == "list" and len(where[1]) == len(groups):
        placed = [(n, base + 4 * i) for g, base in zip(groups, where[1]) for i, n in enumerate(g)]
        errors = []
    else:
        return [f"{groups}: cannot pair these names with the offsets {where}"], set()
    for name, off in placed:
        have = value(prefix + name)
        if have is None:
            errors.append(f"{name} (offset {off:#x}): no {prefix}{name} in the headers")
        elif have != off:
            errors.append(f"{name}: datasheet {off:#x}, headers {prefix}{name} = {have:#x}")
    return errors, {prefix + n for n, _ in placed}


def check_row(device: str, prefix: str, row: dict) -> tuple:
    """(errors, header names documented) for one table row."""
    name, where = row.get("name", ""), offsets(row.get("offset", ""))
    if where[0] == "queue":
        base = device + "Q_BASE"
        if value(base) != where[1] or value(base, 1) - value(base, 0) != where[2]:
            return [f"queue block: datasheet {where[1]:#x} + {where[2]:#x}·q, headers {base}(q) "
                    f"gives {value(base)} and {value(base, 1)}"], {base}
        return [], {base}
    m = re.fullmatch(r"`(\w+)\[(\d+)\]`", name)
    if m and where[0] == "range":
        reg, n = prefix + m.group(1), int(m.group(2))
        if not callable(HEADER.get(reg)) or (value(reg), value(reg, n - 1)) != where[1:]:
            return [f"{m.group(1)}[{n}]: datasheet {where[1]:#x}–{where[2]:#x}, headers {reg}(i)"
                    " does not span that"], {reg}
        return [], {reg}
    m = re.fullmatch(r"`(\w+_)\*`", name)
    if m and where[0] == "range":
        members = {n: value(n) for n in HEADER if n.startswith(prefix + m.group(1))}
        outside = [n for n, v in members.items() if not where[1] <= v <= where[2]]
        ends = set(members.values())
        errors = [f"{name}: {n} = {members[n]:#x} lies outside {where[1]:#x}–{where[2]:#x}"
                  for n in outside]
        if where[1] not in ends or where[2] not in ends:
            errors.append(f"{name}: no header register at {where[1]:#x} or {where[2]:#x}")
        return errors, set(members)
    return check_placed(prefix, name_groups(name), where)


def check_identity(rows: list) -> list:
    """The PCI identity table against pci_ids.h."""
    errors = []
    for row in rows:
        dev = row.get("function", "").removeprefix("devmemsim-").upper()
        ids = [HEADER.get(f"DMS_PCI_DEVICE_ID_{dev}"), HEADER.get(f"DMS_PCI_CLASS_{dev}")]
        if None in ids:
            errors.append(f"PCI identity: {row.get('function')}: no DMS_PCI_*_{dev} in pci_ids.h")
            continue
        want = {
            "vendor:device": f"{C.DMS_PCI_VENDOR_ID:04x}:{ids[0]:04x}",
            "class": f"{ids[1]:04x}",
            "subsystem": f"{C.DMS_PCI_SUBSYS_VENDOR_ID:04x}:{C.DMS_PCI_SUBSYS_ID:04x}",
            "revision": str(C.DMS_PCI_REVISION),
        }
        for column, expect in want.items():
            cell = row.get(column, "")
            m = re.search(r"`([^`]+)`", cell)
            have = m.group(1) if m else cell.strip()
            if have != expect:
                errors.append(f"PCI identity: {row.get('function')} {column}: datasheet {have}, "
                              f"headers {expect}")
    return errors


def main() -> int:
    found = tables(DATASHEET.read_text())
    identity = found.get(("PCI identity", ""))
    errors = check_identity(identity) if identity else ["no table under '## PCI identity'"]
    for (section, heading), (device, prefix, covers) in TABLES.items():
        rows = next((r for (s, sub), r in found.items()
                     if s == section and sub.startswith(heading)), None)
        if rows is None:
            errors.append(f"{section}: no table under '### {heading}'")
            continue
        documented = set()
        for row in rows:
            try:
                row_errors, names = check_row(device, prefix, row)
            except (NameError, SyntaxError, TypeError) as e:
                row_errors, names = [f"{row.get('name')}: cannot evaluate the header macro: {e}"], set()
            errors += [f"{section} {heading}: {e}" for e in row_errors]
            documented |= names
        missing = sorted(n for n in HEADER if re.fullmatch(covers, n) and n not in documented)
        errors += [f"{section} {heading}: {n} = {value(n):#x} is in the headers, not the datasheet"
                   for n in missing]
    for e in errors:
        print(e)
    print(f"datasheet: {len(errors)} disagreements with the headers")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

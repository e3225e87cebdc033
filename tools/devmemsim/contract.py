"""The hardware contract's constants, read from the C headers in
sysc-model/include/devmemsim (the one source of truth), for the CLI's
checks (e.g. the NIC's largest MTU) and the Python tests. Reading the
headers needs no build."""

import re

from .paths import ROOT

HEADERS = ROOT / "sysc-model" / "include" / "devmemsim"
_DEFINE = re.compile(r"^#define\s+(DMS_\w+)\s+(.+?)\s*(?:/\*.*)?$")
_MACRO = re.compile(r"^#define\s+(DMS_\w+)\((\w+)\)\s+(.+?)\s*(?:/\*.*)?$")


def _load() -> dict:
    raw, macros = {}, {}
    for h in sorted(HEADERS.glob("*.h")):
        for line in h.read_text().splitlines():
            m = _MACRO.match(line)
            if m:
                macros[m.group(1)] = (m.group(2), m.group(3))
                continue
            m = _DEFINE.match(line)
            if m:
                raw[m.group(1)] = m.group(2)
    values = {}

    def value(name):
        if name not in values:
            expr = re.sub(r"\b(\d+|0x[0-9a-fA-F]+)U\b", r"\1", raw[name])
            expr = re.sub(r"\bDMS_\w+\b", lambda m: str(value(m.group(0))), expr)
            values[name] = eval(expr, {"__builtins__": {}})  # integer arithmetic only
        return values[name]

    for name in raw:
        try:
            value(name)
        except (SyntaxError, NameError, KeyError):
            pass  # not a plain integer (none of those are used by tests)
    # One-argument macros such as DMS_NIC_Q_BASE(q) become functions; the
    # DMS_* names in their bodies are the plain defines' values.
    for name, (param, body) in macros.items():
        body = re.sub(r"\b(\d+|0x[0-9a-fA-F]+)U\b", r"\1", body)
        body = re.sub(r"\bDMS_\w+\b", lambda m: str(value(m.group(0))), body)
        values[name] = (lambda p, b: lambda x: eval(
            re.sub(rf"\b{p}\b", str(int(x)), b), {"__builtins__": {}}))(param, body)
    return values


C = type("Contract", (), _load())

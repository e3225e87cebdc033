"""`devmemsim build` and `devmemsim test`: build everything, or what the
selected tests need, then run them (meson test)."""

import json
import subprocess

from .build import build_all, build_for_tests, build_in_background
from .nodeargs import takes_command
from .paths import BUILD


def add_commands(sub):
    sub.add_parser("build", help="build QEMU, the model, the kernel, modules and guest image").set_defaults(
        run=cmd_build)
    t = sub.add_parser("test", help="build what the selected tests need and run them (meson test)")
    t.add_argument("--quick", action="store_true",
                   help="only the contributors' tier (meson suite 'quick': unit, qemu, cli, lint, the "
                        "fuzz smoke and one guest smoke; no debug kernel, no second kernel tree)")
    t.epilog = "Arguments after '--' go to meson test."
    t.set_defaults(run=cmd_test, takes_command=True)
    takes_command(t, "[-- MESON-TEST-ARGS...]")


def cmd_build(a) -> int:
    build_all()
    return 0


def cmd_test(a) -> int:
    meson_args = (["--suite", "quick"] if a.quick else []) + a.argv
    with build_in_background(build_for_tests(meson_args)):
        status = subprocess.call(["meson", "test", "-C", str(BUILD), "--print-errorlogs", *meson_args])
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    try:
        with open(BUILD / "meson-logs" / "testlog.json") as f:
            for line in f:
                result = json.loads(line).get("result")
                key = {"OK": "passed", "EXPECTEDFAIL": "passed", "SKIP": "skipped"}.get(result, "failed")
                counts[key] += 1
    except (OSError, ValueError):
        pass
    print(f"tests: {counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped")
    return status

"""`devmemsim build` and `devmemsim test`: build everything, or what the
selected tests need, then run them (meson test)."""

import fnmatch
import json
import subprocess
from pathlib import Path

from .build import (CLI_DOCS, TEST_TREE_FRAGMENT, build_all, build_guest, build_in_background, build_lock,
                    build_model, build_pinned, build_qemu, run)
from .ktree import build_tree, test_tree, tree_dir
from .nodeargs import takes_command
from .paths import BUILD


def add_commands(sub):
    sub.add_parser("build", help="build QEMU, the model, the kernel, modules and guest image (and the CLI's man "
                   "page and bash completion)").set_defaults(run=cmd_build)
    t = sub.add_parser("test", help="build what the selected tests need and run them (meson test)")
    t.add_argument("--quick", action="store_true",
                   help="only the contributors' tier (meson suite 'quick': unit, qemu, cli, lint, the "
                        "fuzz smoke and one guest smoke; no debug kernel, no second kernel tree)")
    t.epilog = "Arguments after '--' go to meson test."
    t.set_defaults(run=cmd_test, takes_command=True)
    takes_command(t, "[-- MESON-TEST-ARGS...]")


def cmd_build(a) -> int:
    build_all()
    with build_lock():
        build_model(CLI_DOCS)
    return 0


def test_log(meson_args: list) -> str:
    """The JSON log `meson test MESON_ARGS` writes: a test setup's is
    named after it (testlog-SETUP.json)."""
    options, _ = meson_test_args(meson_args)
    setup = (options.get("--setup") or [""])[-1]
    return f"testlog-{setup}.json" if setup not in ("", "default") else "testlog.json"


def cmd_test(a) -> int:
    meson_args = (["--suite", "quick"] if a.quick else []) + a.argv
    with build_in_background(build_for_tests(meson_args)):
        status = subprocess.call(["meson", "test", "-C", str(BUILD), "--print-errorlogs", *meson_args])
    if "--list" in meson_args:
        return status  # nothing ran: the log is an earlier run's
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    try:
        with open(BUILD / "meson-logs" / test_log(meson_args)) as f:
            for line in f:
                result = json.loads(line).get("result")
                key = {"OK": "passed", "EXPECTEDFAIL": "passed", "SKIP": "skipped"}.get(result, "failed")
                counts[key] += 1
    except (OSError, ValueError):
        pass
    print(f"tests: {counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped")
    return status


# What each test suite needs built (tests/meson.build): the model build is
# enough for the unit, RTL, fuzz, lint, sweep, sim and conformance suites, QEMU too for the qtest and CLI
# suites, every artifact for the guest suite (and for a suite not listed),
# and the debug kernel's too for the guest-debug suite.
STAGES = ("model", "qemu", "guest", "guest-debug")
SUITE_NEEDS = {"unit": "model", "rtl": "model", "fuzz": "model", "lint": "model", "cli": "qemu",
               "sweep": "model", "sim": "model", "conformance": "model", "qemu": "qemu",
               "guest-debug": "guest-debug", "quick": "model"}
# meson test options that take a value (the next argument unless given as --opt=value).
_MESON_VALUE_OPTS = {"--suite", "--no-suite", "--repeat", "--num-processes", "-j", "--setup",
                     "--wrapper", "--timeout-multiplier", "-t", "--test-args", "--logbase",
                     "--gdb-path", "--max-lines", "-C"}


def build_for_tests(meson_args: list) -> list:
    """Build what the tests that `meson test MESON_ARGS` selects need, but
    for the kernels that only their later suites boot: those are returned
    as [(what, build function)], for build_in_background to build while
    the earlier suites run (guest-kselftest's test tree, then the debug
    flavour: the order they are needed in)."""
    with build_lock():
        model = build_model()
        tests = suites_by_test(model)
        stage = stage_for_tests(meson_args, tests)
        if stage == "model":
            return []
        qemu = build_qemu(model)
        if stage == "qemu":
            return []
        build_guest(qemu, "default")
    suites = selected_suites(meson_args, tests)
    later = []
    if "guest-kselftest" in suites:
        later.append(("guest-kselftest's kernel tree",
                      lambda: build_tree(qemu, tree_dir(test_tree()), [TEST_TREE_FRAGMENT])))
    if stage == "guest-debug":
        later.append(("the debug kernel flavour", lambda: build_pinned(qemu, "debug")))
    return later


def suites_by_test(model_build: Path) -> dict:
    """{test name: [suite, ...]} from meson's introspection."""
    out = run(["meson", "introspect", model_build, "--tests"], "listing the tests", capture=True)
    return {t["name"]: [s.split(":")[-1] for s in t["suite"]] for t in json.loads(out)}


def stage_for_tests(meson_args: list, tests: dict) -> str:
    """The last of STAGES the selected tests need (none but the model's
    configured build to list them)."""
    if "--list" in meson_args:
        return "model"
    needs = [SUITE_NEEDS.get(suite, "guest") for suite in selected_suites(meson_args, tests)] or ["model"]
    return max(needs, key=STAGES.index)


def meson_test_args(meson_args: list) -> tuple[dict, list]:
    """`meson test` arguments read as meson reads them: ({option: [its
    values, in order]}, the test names given)."""
    options, names = {}, []
    args = list(meson_args)
    while args:
        arg = args.pop(0)
        opt, eq, value = arg.partition("=")
        if opt in _MESON_VALUE_OPTS and not eq:
            value = args.pop(0) if args else ""
        if opt in _MESON_VALUE_OPTS:
            options.setdefault(opt, []).append(value)
        elif not arg.startswith("-"):
            names.append(arg)
    return options, names


def selected_suites(meson_args: list, tests: dict) -> set:
    """The suites of the tests `meson test MESON_ARGS` selects."""
    options, names = meson_test_args(meson_args)
    wanted = {v.split(":")[-1] for v in options.get("--suite", [])}
    unwanted = {v.split(":")[-1] for v in options.get("--no-suite", [])}
    names = [n.split(":")[-1] for n in names]
    suites = set()
    for name, test_suites in tests.items():
        if names and not any(fnmatch.fnmatchcase(name, n) for n in names):
            continue
        if wanted and not wanted.intersection(test_suites):
            continue
        if unwanted.intersection(test_suites):
            continue
        suites.update(test_suites)
    return suites

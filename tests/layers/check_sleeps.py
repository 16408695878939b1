#!/usr/bin/env python3
"""Checks that no daemon test sleeps to let time pass.

The daemon's timers run on a TimerClock (estimator/base/clock.h): its tests move a manual clock
(tests/hub/manual_timer_clock.h) instead of sleeping, and wait for another thread's work by
checking what it leaves (tests/daemon/wait_until.h). This checker fails on any sleep in the C++
sources (.cc, .h) of the folders below: std::this_thread::sleep_for or sleep_until, usleep,
nanosleep, sleep(). A line may carry an exemption, `// sleep-ok: <reason>`, for a wait that is
truly about another thread or process and has nothing to wait on; the reason is required.

Scanned: tests/daemon, tests/subscriptions, tests/pipeline, tests/api, tests/faults; benchmarks
(*_bench.cc) measure wall time on purpose and are not. Not scanned: the shell scripts (they wait
for a process they started to print its port).

Usage: check_sleeps.py [REPO_ROOT] | --self-test. Exit 0 when clean; otherwise one line per sleep
(file:line: what it calls) and exit 1.
"""
import pathlib
import re
import sys

import checker_main

SCANNED = ("tests/daemon", "tests/subscriptions", "tests/pipeline", "tests/api", "tests/faults")
SLEEP = re.compile(r"\b(sleep_for|sleep_until|usleep|nanosleep|sleep)\s*\(")
EXEMPT = re.compile(r"//\s*sleep-ok:\s*\S")


def code_of(line: str) -> str:
    """`line` without its // comment and string literals (a sleep named in prose is no call)."""
    line = re.sub(r'"(?:\\.|[^"\\])*"', '""', line)
    cut = line.find("//")
    return line if cut < 0 else line[:cut]


def check(root: pathlib.Path):
    problems = []
    for folder in SCANNED:
        base = root / folder
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*")):
            if path.suffix not in (".cc", ".h") or not path.is_file():
                continue
            if path.name.endswith("_bench.cc"):
                continue
            rel = path.relative_to(root).as_posix()
            for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                m = SLEEP.search(code_of(line))
                if m and not EXEMPT.search(line):
                    problems.append(f"{rel}:{n}: calls {m.group(1)}(): move the test's clock or "
                                    "wait for the work's result (tests/daemon/wait_until.h)")
    return problems


def make_bad_tree(root: pathlib.Path):
    """Each way to sleep, among lines that must pass: an exempt wait, a sleep in a comment or a
    string, a folder not scanned, a benchmark, a file that is not C++."""
    files = {
        "tests/daemon/a_test.cc": (
            "std::this_thread::sleep_for(std::chrono::seconds(3));\n"
            "// std::this_thread::sleep_for(kInterval) would be slow\n"
            'Log("sleep(1)");\n'
            "std::this_thread::sleep_for(kPause);  // sleep-ok: a child process, nothing to see\n"
            "std::this_thread::sleep_for(kPause);  // sleep-ok:\n"),
        "tests/subscriptions/b.h": "  usleep(1000);\n",
        "tests/pipeline/c_test.cc": "std::this_thread::sleep_until(deadline);\n::sleep(2);\n",
        "tests/api/d_test.cc": "std::this_thread::sleep_for(kPause);\n",
        "tests/api/load_bench.cc": "std::this_thread::sleep_for(std::chrono::seconds(10));\n",
        "tests/faults/f_test.cc": "std::this_thread::sleep_for(kPause);\n",
        "tests/fuzz/g_test.cc": "std::this_thread::sleep_for(kPause);\n",
        "tests/daemon/e.sh": "sleep 1\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


if __name__ == "__main__":
    sys.exit(checker_main.run(check, make_bad_tree, ["tests/daemon/a_test.cc:1:",
                                                     "tests/daemon/a_test.cc:5:",
                                                     "tests/subscriptions/b.h:1:",
                                                     "tests/pipeline/c_test.cc:1:",
                                                     "tests/pipeline/c_test.cc:2:",
                                                     "tests/api/d_test.cc:1:",
                                                     "tests/faults/f_test.cc:1:"]))

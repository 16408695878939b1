"""The command line both structure checkers share: `CHECKER [REPO_ROOT] | --self-test`."""
import pathlib
import sys


def run(check, make_bad_tree, want) -> int:
    """Runs `check(root)` and prints what it finds. With --self-test, runs it on the synthetic
    tree `make_bad_tree(root)` writes instead, and passes when it reports exactly one line
    containing each string of `want`, and nothing else."""
    if sys.argv[1:] == ["--self-test"]:
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            make_bad_tree(pathlib.Path(d))
            problems = check(pathlib.Path(d))
        print("\n".join(problems))
        ok = len(problems) == len(want) and all(
            sum(w in p for p in problems) == 1 for w in want)
        print("self-test", "passed" if ok else "FAILED")
        return 0 if ok else 1
    problems = check(pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve())
    for p in problems:
        print(p)
    return 1 if problems else 0

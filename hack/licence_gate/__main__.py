"""``python -m licence_gate`` (run by hack/licences): the gate. Exit 0 when every package
is allowed, 1 otherwise, naming each refused package, its version, its licence and where
it was read."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from licence_gate import go_modules, python_dists
from licence_gate.policy import Judgement, Override, judge, load

ALLOWLIST = Path(__file__).with_name("allowlist.toml")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="hack/licences", description=__doc__)
    parser.add_argument("--allowlist", type=Path, default=ALLOWLIST)
    parser.add_argument(
        "--go-binary", type=Path, action="append", default=[],
        help="a Go binary whose linked modules are checked (repeatable)",
    )  # fmt: skip
    parser.add_argument("--no-python", action="store_true", help="skip this venv's distributions")
    parser.add_argument("-v", "--verbose", action="store_true", help="list every package")
    args = parser.parse_args(argv)
    policy = load(args.allowlist)
    judgements: list[Judgement] = []
    stale: list[Override] = []
    if not args.no_python:
        for dist in python_dists.installed():
            judgements.append(
                judge(
                    policy,
                    ecosystem="python",
                    name=dist.name,
                    version=dist.version,
                    read=dist.declared,
                )
            )
        stale += policy.unused("python")
    if args.go_binary:
        cache = go_modules.module_cache()
        for module in go_modules.modules_of(args.go_binary):
            read = go_modules.declared_licence(module, cache=cache)
            judgements.append(
                judge(policy, ecosystem="go", name=module.path, version=module.version, read=read)
            )
        stale += policy.unused("go")
    refused = [j for j in judgements if not j.ok]
    for j in judgements if args.verbose else refused:
        print(f"licences: {'ok  ' if j.ok else 'FAIL'} {j.ecosystem} {j.name} {j.version}: {j.why}")
    for override in stale:
        print(
            f"licences: FAIL the override for {override.ecosystem} {override.name} matches no "
            "package: remove it from hack/licence_gate/allowlist.toml"
        )
    counts = {e: sum(1 for j in judgements if j.ecosystem == e) for e in ("python", "go")}
    print(
        f"licences: checked {counts['python']} Python distributions and {counts['go']} Go "
        f"modules; {len(refused)} refused, {len(stale)} stale overrides"
    )
    return 1 if refused or stale else 0


if __name__ == "__main__":
    sys.exit(main())

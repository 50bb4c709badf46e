"""``python -m harness.bench.build``: builds every compiled contestant (controller-runtime in Go, kube-rs in
Rust, release) into ~/.cache/kubeloop/bench, or finds it there. .ci/run runs it before the tests; the tests
that need a contestant skip, naming this command, rather than compile it themselves."""

from __future__ import annotations

from harness.bench.contestants.compiled import ALL, BuildError


def main() -> None:
    for program in ALL:
        try:
            print(program.build(log=print), flush=True)
        except BuildError as exc:
            raise SystemExit(str(exc)) from None


if __name__ == "__main__":
    main()

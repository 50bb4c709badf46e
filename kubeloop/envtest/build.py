"""Build the control-plane binaries from Go modules into the kubeloop cache.

No Kubernetes release binaries are downloaded: kube-apiserver & co. are compiled from the
``k8s.io/kubernetes`` module through a generated wrapper module, etcd from
``go.etcd.io/etcd/server/v3`` and kwok with ``go install``. Each component directory gets a
stamp file, so a second build is a no-op.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from kubeloop.envtest import gotool, versions
from kubeloop.envtest.progress import StepTimes, run_with_progress
from kubeloop.envtest.versions import Layout

KUBERNETES_COMMANDS = ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl")
ETCD_MAIN = "go.etcd.io/etcd/server/v3"  # the root module go.etcd.io/etcd/v3 has no main package
# kwok ships no built-in stages; we assemble the upstream "fast" ones from its module source.
KWOK_STAGE_FILES = (
    "kustomize/stage/node/fast/node-initialize.yaml",
    "kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
    "kustomize/stage/pod/fast/pod-ready.yaml",
    "kustomize/stage/pod/fast/pod-complete.yaml",
    "kustomize/stage/pod/fast/pod-delete.yaml",
)
# kwok's pod-delete stage (the kubelet's part of a graceful deletion) deletes by name, and retries after a
# NotFound: the retry deleted the next pod of the same name, which a fixed-name controller (a StatefulSet,
# immortal) had just created. The kubelet deletes with the pod's UID as a precondition; so does our kwok.
KWOK_PATCH = "pod-delete-uid-precondition"
KWOK_PATCH_FILE = "pkg/kwok/controllers/pod_controller.go"
KWOK_PATCH_FROM = "Pods(pod.Namespace).Delete(ctx, pod.Name, deleteOpt)"
KWOK_PATCH_TO = ("Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: "
                 "deleteOpt.GracePeriodSeconds, Preconditions: metav1.NewUIDPreconditions(string(pod.UID))})")
STAMP = ".kubeloop-stamp.json"
PARTIAL = "kubernetes-partial"  # the stamp of a Kubernetes build that stopped part-way
# A stable build date keeps binaries reproducible; the version string is what users look at.
BUILD_DATE = "1970-01-01T00:00:00Z"


class BuildError(RuntimeError):
    """A component could not be built; the message says which and shows the end of the log."""


Logger = Callable[[str], None]


def _stderr(msg: str) -> None:
    print(f"kubeloop: {msg}", file=sys.stderr, flush=True)


def _quiet(msg: str) -> None:
    """``--quiet``: no progress; failures still raise BuildError with the end of the Go output."""


@dataclass(frozen=True)
class Toolchain:
    """The binaries one cluster needs, all built for a fixed set of versions."""

    kubernetes_version: str
    etcd_version: str
    kwok_version: str
    kubernetes_dir: Path
    etcd_dir: Path
    kwok_dir: Path

    def binary(self, name: str) -> Path:
        if name == "etcd":
            return self.etcd_dir / "etcd"
        if name == "kwok":
            return self.kwok_dir / "kwok"
        return self.kubernetes_dir / name

    @property
    def kubectl(self) -> Path:
        return self.binary("kubectl")

    @property
    def kwok_stages(self) -> Path:
        return self.kwok_dir / "stages.yaml"


# --- pure helpers (unit tested) -------------------------------------------------------------


def staging_modules(go_mod: str) -> list[str]:
    """Modules the Kubernetes go.mod replaces with ``./staging/...`` directories.

    Those local replacements don't exist for a dependent module, so the wrapper must point
    each of them at the published ``v0.Y.Z`` tag instead.
    """
    found = re.findall(r"^\s*(?:replace\s+)?(\S+)\s*=>\s*\./staging/\S+\s*$", go_mod, re.MULTILINE)
    return sorted(set(found))


def go_directive(go_mod: str, directive: str) -> str | None:
    """First value of a top-level directive such as ``go`` or ``godebug``."""
    match = re.search(rf"^{directive}\s+(\S.*?)\s*$", go_mod, re.MULTILINE)
    return match.group(1) if match else None


def required_version(go_mod: str, module: str) -> str | None:
    """The version ``go.mod`` requires for ``module`` (``v3.6.5``), if any."""
    match = re.search(rf"^\s*(?:require\s+)?{re.escape(module)}\s+(v\S+)", go_mod, re.MULTILINE)
    return match.group(1) if match else None


def staging_version(kubernetes_version: str) -> str:
    """Kubernetes ``1.Y.Z`` publishes its staging modules as ``v0.Y.Z``."""
    _, minor, patch = versions.plain_version(kubernetes_version).split(".", 2)
    return f"v0.{minor}.{patch}"


def kubernetes_wrapper_go_mod(kubernetes_version: str, upstream_go_mod: str) -> str:
    version = versions.plain_version(kubernetes_version)
    lines = [
        "module kubeloop.local/k8sbuild",
        "",
        f"go {go_directive(upstream_go_mod, 'go') or '1.24'}",
    ]
    # Keep upstream's runtime behaviour defaults (godebug is taken from the main module only).
    if godebug := go_directive(upstream_go_mod, "godebug"):
        lines.append(f"godebug {godebug}")
    lines += ["", f"require k8s.io/kubernetes v{version}", "", "replace ("]
    pinned = staging_version(version)
    lines += [f"\t{mod} => {mod} {pinned}" for mod in staging_modules(upstream_go_mod)]
    lines += [")", ""]
    return "\n".join(lines)


def simple_wrapper_go_mod(module: str, go_version: str, requires: dict[str, str]) -> str:
    lines = [f"module {module}", "", f"go {go_version}", "", "require ("]
    lines += [f"\t{mod} {ver}" for mod, ver in sorted(requires.items())]
    lines += [")", ""]
    return "\n".join(lines)


def tools_go(packages: Iterable[str]) -> str:
    """A never-compiled file whose imports make ``go mod tidy`` resolve the command packages."""
    imports = "\n".join(f'\t_ "{pkg}"' for pkg in packages)
    return f"//go:build tools\n\npackage tools\n\nimport (\n{imports}\n)\n"


def kubernetes_ldflags(kubernetes_version: str, build_date: str = BUILD_DATE) -> str:
    """What the upstream Makefile stamps, so ``/version`` and ``kubectl version`` report it."""
    version = versions.plain_version(kubernetes_version)
    major, minor, _ = version.split(".", 2)
    pkg = "k8s.io/component-base/version"
    flags = {
        "gitVersion": f"v{version}",
        "gitMajor": major,
        "gitMinor": minor,
        "gitTreeState": "clean",
        "buildDate": build_date,
    }
    return " ".join(["-s", "-w"] + [f"-X {pkg}.{key}={val}" for key, val in flags.items()])


# --- stamps ---------------------------------------------------------------------------------


def read_stamp(directory: Path) -> dict[str, object] | None:
    try:
        data = json.loads((directory / STAMP).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def stamp_ok(directory: Path, component: str, version: str, binaries: Iterable[str]) -> bool:
    stamp = read_stamp(directory)
    if not stamp or stamp.get("component") != component or stamp.get("version") != version:
        return False
    return all(os.access(directory / b, os.X_OK) for b in binaries)


def kwok_ok(directory: Path, version: str) -> bool:
    """kwok built, with its stages and our patch (an unpatched build from before is built again)."""
    return (stamp_ok(directory, "kwok", version, ["kwok"]) and (directory / "stages.yaml").exists()
            and (read_stamp(directory) or {}).get("patch") == KWOK_PATCH)


def finished_binaries(directory: Path, version: str) -> list[str]:
    """The Kubernetes binaries an unfinished build of ``version`` completed (its partial stamp)."""
    stamp = read_stamp(directory) or {}
    if stamp.get("component") != PARTIAL or stamp.get("version") != version:
        return []
    done = stamp.get("done")
    names = [str(b) for b in done] if isinstance(done, list) else []
    return [b for b in names if b in KUBERNETES_COMMANDS and os.access(directory / b, os.X_OK)]


def _write_stamp(directory: Path, component: str, version: str, **extra: object) -> None:
    data = {"component": component, "version": version, **extra}
    (directory / STAMP).write_text(json.dumps(data, indent=2) + "\n")


# --- the builder ----------------------------------------------------------------------------


class Builder:
    """Runs the Go toolchain, one step at a time (the builds are CPU bound)."""

    def __init__(self, layout: Layout | None = None, log: Logger = _stderr,
                 go: gotool.GoChoice | None = None) -> None:
        self.layout = layout or Layout.default()
        self.log = log
        self._go_choice = go  # chosen on first use: PATH's go if new enough, else PyPI's
        self.times = StepTimes(self.layout.root / "build-times.json")

    @property
    def go(self) -> gotool.GoChoice:
        if self._go_choice is None:
            try:
                self._go_choice = gotool.select_go(versions.GO_MINIMUM, self.layout.root, self.log)
            except gotool.GoToolchainError as exc:
                raise BuildError(str(exc)) from exc
        return self._go_choice

    # public -------------------------------------------------------------------------------

    def ensure(self, kubernetes_version: str | None = None, force: bool = False) -> Toolchain:
        """Build whatever is missing for this Kubernetes version and return the toolchain."""
        k8s = versions.kubernetes_version(kubernetes_version)
        k8s_dir = self.layout.kubernetes_dir(k8s)
        stamp = read_stamp(k8s_dir) or {}
        k8s_ready = not force and stamp_ok(k8s_dir, "kubernetes", k8s, KUBERNETES_COMMANDS)
        upstream_go_mod = "" if k8s_ready else self._kubernetes_go_mod(k8s)
        pinned_etcd = str(stamp.get("etcd", "")) if k8s_ready else ""
        if not pinned_etcd and upstream_go_mod:
            pinned_etcd = versions.plain_version(required_version(upstream_go_mod, ETCD_MAIN) or "")
        etcd = versions.etcd_version() or pinned_etcd or versions.ETCD_VERSION
        kwok = versions.kwok_version()

        # Small components first so that a broken Go setup shows up in seconds, not minutes.
        self.build_etcd(etcd, force=force)
        self.build_kwok(kwok, force=force)
        if not k8s_ready:
            self.build_kubernetes(k8s, upstream_go_mod, etcd_pin=pinned_etcd or etcd, force=force)
        return self.toolchain(k8s, etcd, kwok)

    def cached(self, kubernetes_version: str | None = None) -> Toolchain | None:
        """The toolchain if everything is already built, without touching Go or the network."""
        k8s = versions.kubernetes_version(kubernetes_version)
        stamp = read_stamp(self.layout.kubernetes_dir(k8s)) or {}
        etcd = versions.etcd_version() or str(stamp.get("etcd") or versions.ETCD_VERSION)
        tc = self.toolchain(k8s, etcd, versions.kwok_version())
        complete = (
            stamp_ok(tc.kubernetes_dir, "kubernetes", k8s, KUBERNETES_COMMANDS)
            and stamp_ok(tc.etcd_dir, "etcd", etcd, ["etcd"])
            and kwok_ok(tc.kwok_dir, tc.kwok_version)
        )
        return tc if complete else None

    def toolchain(self, k8s: str, etcd: str, kwok: str) -> Toolchain:
        return Toolchain(
            kubernetes_version=k8s,
            etcd_version=etcd,
            kwok_version=kwok,
            kubernetes_dir=self.layout.kubernetes_dir(k8s),
            etcd_dir=self.layout.etcd_dir(etcd),
            kwok_dir=self.layout.kwok_dir(kwok),
        )

    def build_kubernetes(self, version: str, upstream_go_mod: str, etcd_pin: str, force: bool = False) -> Path:
        out = self.layout.kubernetes_dir(version)
        # Binaries a failed build already finished are kept and recorded, so a retry resumes after them.
        done = [] if force else finished_binaries(out, version)
        work = self._fresh_work_dir("k8s", version)
        (work / "go.mod").write_text(kubernetes_wrapper_go_mod(version, upstream_go_mod))
        packages = [f"k8s.io/kubernetes/cmd/{cmd}" for cmd in KUBERNETES_COMMANDS]
        (work / "tools.go").write_text(tools_go(packages))
        self._step("kubernetes: go mod tidy", ["go", "mod", "tidy", "-e"], work)
        out.mkdir(parents=True, exist_ok=True)
        ldflags = kubernetes_ldflags(version)
        # One `go build` per binary so progress is visible; shared packages come from the build cache.
        for cmd, pkg in zip(KUBERNETES_COMMANDS, packages, strict=True):
            if cmd in done:
                self.log(f"{cmd} v{version}: kept from the previous, unfinished build")
                continue
            argv = ["go", "build", "-tags", "providerless", "-trimpath", "-ldflags", ldflags]
            self._step(f"{cmd} v{version}", [*argv, "-o", str(out / cmd), pkg], work)
            done.append(cmd)
            _write_stamp(out, PARTIAL, version, done=done)
        _write_stamp(out, "kubernetes", version, etcd=etcd_pin, go=self._go_version())
        return out

    def build_etcd(self, version: str, force: bool = False) -> Path:
        out = self.layout.etcd_dir(version)
        if not force and stamp_ok(out, "etcd", version, ["etcd"]):
            return out
        work = self._fresh_work_dir("etcd", version)
        (work / "go.mod").write_text(
            simple_wrapper_go_mod("kubeloop.local/etcdbuild", "1.24", {ETCD_MAIN: f"v{version}"})
        )
        (work / "tools.go").write_text(tools_go([ETCD_MAIN]))
        out.mkdir(parents=True, exist_ok=True)
        try:
            self._step("etcd: go mod tidy", ["go", "mod", "tidy", "-e"], work)
            argv = ["go", "build", "-trimpath", "-ldflags", "-s -w", "-o", str(out / "etcd"), ETCD_MAIN]
            self._step(f"etcd v{version}", argv, work)
            _write_stamp(out, "etcd", version, source="go", go=self._go_version())
        except BuildError:
            if not self._etcd_from_system(out, version):
                raise
        return out

    def build_kwok(self, version: str, force: bool = False) -> Path:
        out = self.layout.kwok_dir(version)
        if not force and kwok_ok(out, version):
            return out
        out.mkdir(parents=True, exist_ok=True)
        work = self._fresh_work_dir("kwok", version)
        source = Path(self._module_info(f"sigs.k8s.io/kwok@v{version}", work)["Dir"])
        tree = work / "src"
        shutil.copytree(source, tree)  # the module cache is read-only; patch a copy
        tree.chmod(0o755)
        for path in tree.rglob("*"):
            path.chmod(0o755 if path.is_dir() else 0o644)
        patched = tree / KWOK_PATCH_FILE
        code = patched.read_text()
        if KWOK_PATCH_FROM not in code:
            raise BuildError(f"kwok v{version}: {KWOK_PATCH_FILE} no longer has {KWOK_PATCH_FROM!r}; "
                             "update KWOK_PATCH in kubeloop/envtest/build.py for this version")
        patched.write_text(code.replace(KWOK_PATCH_FROM, KWOK_PATCH_TO))
        ldflags = f"-s -w -X sigs.k8s.io/kwok/pkg/consts.Version={version}"
        argv = ["go", "build", "-mod=mod", "-trimpath", "-ldflags", ldflags, "-o", str(out / "kwok"), "./cmd/kwok"]
        self._step(f"kwok v{version}", argv, tree)
        stages = [(source / rel).read_text().strip() for rel in KWOK_STAGE_FILES]
        (out / "stages.yaml").write_text("\n---\n".join(stages) + "\n")
        _write_stamp(out, "kwok", version, go=self._go_version(), patch=KWOK_PATCH)
        return out

    # internals ----------------------------------------------------------------------------

    def _kubernetes_go_mod(self, version: str) -> str:
        work = self._fresh_work_dir("k8s-gomod", version)
        info = self._module_info(f"k8s.io/kubernetes@v{version}", work)
        return Path(info["GoMod"]).read_text()

    def _module_info(self, module: str, cwd: Path) -> dict[str, str]:
        """``go mod download -json`` of one module (downloads it into the module cache)."""
        self.log(f"fetching {module} (Go module proxy)")
        proc = self._go(["go", "mod", "download", "-json", module], cwd, capture=True)
        try:
            info: dict[str, str] = json.loads(proc.stdout)
        except ValueError as exc:
            raise BuildError(f"cannot download {module}: {proc.stderr.strip()}") from exc
        if proc.returncode != 0 or info.get("Error"):
            raise BuildError(f"cannot download {module}: {info.get('Error') or proc.stderr.strip()}")
        return info

    def _step(self, what: str, argv: list[str], cwd: Path, extra_env: dict[str, str] | None = None) -> None:
        log_file = cwd / "build.log"
        key = what.split(" v")[0]  # "kube-apiserver v1.35.4" -> "kube-apiserver": estimates survive upgrades
        estimate = self.times.get(key)
        self.log(f"building {what} ..." + (f" (about {estimate:.0f}s last time)" if estimate else ""))
        started = time.monotonic()
        with log_file.open("a") as fh:
            fh.write(f"\n$ {' '.join(argv)}\n")
            fh.flush()
            returncode = run_with_progress(self._argv(argv), cwd, self._env(extra_env), fh, what, estimate,
                                           self.log)
        elapsed = time.monotonic() - started
        if returncode != 0:
            tail = "\n".join(log_file.read_text().splitlines()[-25:])
            kept = self._already_built()
            raise BuildError(f"{what} failed after {elapsed:.0f}s (log: {log_file}); "
                             f"{'kept, already built: ' + kept if kept else 'nothing was built yet'}. "
                             f"The end of the Go output:\n{tail}")
        self.times.record(key, elapsed)
        self.log(f"{what} done in {elapsed:.1f}s")

    def _already_built(self) -> str:
        """Components whose binaries are complete in the cache (a failed step never removes them)."""
        root = self.layout.root / "bin"
        done = []
        for directory in sorted(root.glob("*")) if root.is_dir() else []:
            stamp = read_stamp(directory) or {}
            if stamp.get("component") == PARTIAL:
                finished = finished_binaries(directory, str(stamp.get("version")))
                done.append(f"{directory.name} ({', '.join(finished) or 'nothing yet'})")
            elif stamp:
                done.append(directory.name)
        return ", ".join(done)

    def _argv(self, argv: list[str]) -> list[str]:
        return [self.go.binary, *argv[1:]] if argv and argv[0] == "go" else argv

    def _env(self, extra_env: dict[str, str] | None) -> dict[str, str]:
        env = dict(os.environ)
        # -mod=mod lets the wrapper go.sum be completed on the fly; CGO off gives static binaries.
        env["GOFLAGS"] = f"{env.get('GOFLAGS', '')} -mod=mod".strip()
        env["CGO_ENABLED"] = "0"
        if self.go.source != "PATH":
            # A fetched Go must not pick up another installation's GOROOT, and tools it runs find it first.
            env["GOROOT"] = str(Path(self.go.binary).parents[1])
            env["PATH"] = os.pathsep.join([self.go.goroot_bin, env.get("PATH", "")])
        env.update(extra_env or {})
        return env

    def _go(self, argv: list[str], cwd: Path, *, capture: bool = False) -> subprocess.CompletedProcess[str]:
        return subprocess.run(self._argv(argv), cwd=cwd, env=self._env(None), capture_output=capture, text=True)

    def _go_version(self) -> str:
        return f"go{self.go.version}"

    def _fresh_work_dir(self, component: str, version: str) -> Path:
        work = self.layout.work_dir(component, version)
        if work.exists():
            shutil.rmtree(work)
        work.mkdir(parents=True)
        return work

    def _etcd_from_system(self, out: Path, version: str) -> bool:
        """Fallback: Debian's ``etcd-server`` package, used only when the Go build failed."""
        system = shutil.which("etcd") or ("/usr/bin/etcd" if Path("/usr/bin/etcd").exists() else None)
        if not system:
            self.log("etcd Go build failed and no system etcd found (Debian: apt-get install etcd-server)")
            return False
        self.log(f"WARNING: etcd Go build failed; falling back to the system etcd at {system}")
        target = out / "etcd"
        target.unlink(missing_ok=True)
        target.symlink_to(system)
        _write_stamp(out, "etcd", version, source=f"system:{system}")
        return True


def ensure_built(
    kubernetes_version: str | None = None, force: bool = False, log: Logger = _stderr, quiet: bool = False
) -> Toolchain:
    """Build (or reuse from the cache) everything a LocalCluster needs."""
    return Builder(log=_quiet if quiet else log).ensure(kubernetes_version, force=force)

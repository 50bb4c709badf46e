"""Renders the templates in ``kubeloop/scaffold/templates``: ``@KEY@`` placeholders (not ``{}`` or
``$``, which the generated Python and Helm-free YAML use themselves)."""

from __future__ import annotations

import importlib.util
import keyword
import re
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from kubeloop.packaging.dockerfile import write_dockerfile

_NAME = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")  # an RFC 1123 label: also a Deployment/Lease name
_KIND = re.compile(r"^[A-Z][A-Za-z0-9]*$")
_GROUP = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$")
_VERSION = re.compile(r"^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$")


class ScaffoldError(ValueError):
    """Invalid names, or a project that is not in the expected shape."""


@dataclass(frozen=True)
class Names:
    name: str  # the operator (and distribution) name: my-operator
    package: str  # its Python package: my_operator
    group: str
    kind: str
    version: str

    def __post_init__(self) -> None:
        checks = ((_NAME, self.name, "NAME must be lowercase letters, digits and '-' (e.g. my-operator)"),
                  (_KIND, self.kind, "--kind must be CamelCase (e.g. Website)"),
                  (_GROUP, self.group, "--group must be a DNS subdomain with a dot (e.g. example.com)"),
                  (_VERSION, self.version, "--version must look like v1, v1beta1 or v2alpha1"))
        for pattern, value, message in checks:
            if not pattern.match(value) or len(value) > 63 and pattern is not _GROUP:
                raise ScaffoldError(f"{value!r}: {message}")

    @property
    def snake(self) -> str:
        return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", self.kind).lower()

    def placeholders(self) -> dict[str, str]:
        from kubeloop import __version__

        return {"NAME": self.name, "PKG": self.package, "GROUP": self.group, "KIND": self.kind,
                "VERSION": self.version, "KIND_SNAKE": self.snake, "KIND_DASH": self.snake.replace("_", "-"),
                "KIND_PAD": " " * len(f"class {self.kind}("), "KUBELOOP_VERSION": __version__}


def render(template: str, names: Names) -> str:
    text = resources.files("kubeloop.scaffold").joinpath("templates", template).read_text()
    for key, value in names.placeholders().items():
        text = text.replace(f"@{key}@", value)
    return text


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("-"))


def _write(root: Path, files: dict[str, str]) -> list[Path]:
    written = []
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        written.append(path)
    return written


def init_project(name: str, out_dir: str | Path | None = None, *, group: str | None = None,
                 kind: str | None = None, version: str = "v1") -> list[Path]:
    """Create the project ``name`` in ``out_dir`` (default ``./name``), which must be new or empty."""
    root = Path(out_dir) if out_dir is not None else Path(name)
    if root.exists() and any(root.iterdir()):
        raise ScaffoldError(f"{root} exists and is not empty")
    names = Names(name, name.replace("-", "_"), group or f"{name}.example.com", kind or _camel(name), version)
    pkg = names.package
    if keyword.iskeyword(pkg) or importlib.util.find_spec(pkg) is not None:
        # `kubeloop run PKG` imports it by name: it must not shadow (or be shadowed by) another module.
        raise ScaffoldError(f"package name {pkg!r} is taken by an importable module; choose another NAME")
    files = {
        "pyproject.toml": render("project/pyproject.toml.tmpl", names),
        "README.md": render("project/README.md.tmpl", names),
        f"{pkg}/__init__.py": render("project/__init__.py.tmpl", names),
        f"{pkg}/models.py": render("project/models.py.tmpl", names) + render("api/model.py.tmpl", names),
        f"{pkg}/reconcile.py": render("project/reconcile.py.tmpl", names),
        f"tests/test_{pkg}.py": render("api/test.py.tmpl", names),
        # Round trips of the conversions the operator declares (none yet: the test has no cases).
        "tests/test_conversions.py": render("project/test_conversions.py.tmpl", names),
    }
    return _write(root, files) + write_dockerfile(root, pkg)


def project_settings(root: Path) -> dict[str, str]:
    try:
        data = tomllib.loads((root / "pyproject.toml").read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ScaffoldError(f"{root}: no readable pyproject.toml ({exc})") from exc
    settings: dict[str, str] | None = data.get("tool", {}).get("kubeloop")
    if not settings or not {"name", "package", "group"} <= settings.keys():
        raise ScaffoldError(f"{root}/pyproject.toml has no [tool.kubeloop] name/package/group: "
                            "not a project made by `kubeloop init`")
    return settings


def register(init: str, package: str, line: str) -> str:
    """``init`` with the import ``line`` among the registration imports, which sit sorted right above
    ``from PKG.reconcile import operator`` (where isort puts plain imports of the package too)."""
    lines = init.splitlines()
    anchor = f"from {package}.reconcile import operator"
    if anchor not in lines:
        return init.rstrip("\n") + "\n\n" + line + "\n"
    end = lines.index(anchor)
    start = end
    while start > 0 and lines[start - 1].startswith(f"import {package}."):
        start -= 1
    lines[start:end] = sorted({*lines[start:end], line})
    return "\n".join(lines) + "\n"


def create_api(project_dir: str | Path, kind: str, *, group: str | None = None,
               version: str = "v1") -> list[Path]:
    """Add ``kind``: its model (appended to models.py), a reconciler module registered in the package's
    ``__init__`` and a test."""
    root = Path(project_dir)
    settings = project_settings(root)
    names = Names(settings["name"], settings["package"], group or settings["group"], kind, version)
    pkg = root / names.package
    models = (pkg / "models.py").read_text()
    module = f"reconcile_{names.snake}"
    if re.search(rf"^class {kind}\(", models, re.MULTILINE) or (pkg / f"{module}.py").exists():
        raise ScaffoldError(f"{kind} already exists in {pkg}")
    test = root / "tests" / f"test_{names.snake}.py"
    if test.exists():
        raise ScaffoldError(f"{test} already exists")
    (pkg / "models.py").write_text(models.rstrip("\n") + "\n" + render("api/model.py.tmpl", names))
    (pkg / "__init__.py").write_text(register(
        (pkg / "__init__.py").read_text(), names.package, f"import {names.package}.{module}  # noqa: F401"))
    written = [pkg / "models.py", pkg / "__init__.py"]
    return written + _write(root, {f"{names.package}/{module}.py": render("api/reconcile.py.tmpl", names),
                                   f"tests/test_{names.snake}.py": render("api/test.py.tmpl", names)})

"""``kubeloop init`` / ``kubeloop create api`` output, checked without a cluster (the integration test
runs the scaffolded project's own tests)."""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubeloop.cli.generate import manifests
from kubeloop.cli.main import main
from kubeloop.cli.run import load_operator
from kubeloop.scaffold import ScaffoldError, create_api, init_project


@pytest.fixture
def importable(tmp_path: Path) -> Iterator[Path]:
    """``tmp_path`` on sys.path; modules imported from it are forgotten afterwards."""
    before = set(sys.modules)
    sys.path.insert(0, str(tmp_path))
    try:
        yield tmp_path
    finally:
        sys.path.remove(str(tmp_path))
        for name in set(sys.modules) - before:
            if str(tmp_path) in str(getattr(sys.modules[name], "__file__", None)):
                del sys.modules[name]
        importlib.invalidate_caches()


def test_init_creates_a_loadable_operator(importable: Path) -> None:
    written = init_project("shop-front", importable, group="shop.example.org", kind="Storefront")
    rel = sorted(str(p.relative_to(importable)) for p in written)
    assert rel == [".dockerignore", "Dockerfile", "README.md", "pyproject.toml", "shop_front/__init__.py",
                   "shop_front/models.py", "shop_front/reconcile.py", "tests/test_conversions.py",
                   "tests/test_shop_front.py"]
    for path in written:
        if path.suffix == ".py":
            compile(path.read_text(), str(path), "exec")
        assert "@" not in path.read_text().replace("@.type", "").replace("@operator", ""), path
    op = load_operator("shop_front")
    assert op.name == "shop-front"
    [crd] = [o for o in manifests("shop_front", op, "ns") if o["kind"] == "CustomResourceDefinition"]
    assert crd["metadata"]["name"] == "storefronts.shop.example.org"
    assert crd["spec"]["versions"][0]["subresources"] == {"status": {}}
    perms = {(p.resource, p.subresource, v) for p in op.permissions() for v in p.verbs}
    assert {("configmaps", None, "create"), ("configmaps", None, "delete"),
            ("storefronts", "status", "patch")} <= perms
    cmd = (importable / "Dockerfile").read_text().strip().splitlines()[-1]
    assert json.loads(cmd.removeprefix("CMD ")) == ["run", "shop_front", "--leader-elect"]


def test_create_api_adds_and_registers_a_kind(importable: Path) -> None:
    init_project("zoo", importable)
    written = create_api(importable, "SeaLion", version="v1beta1")
    assert sorted(str(p.relative_to(importable)) for p in written) == [
        "tests/test_sea_lion.py", "zoo/__init__.py", "zoo/models.py", "zoo/reconcile_sea_lion.py"]
    op = load_operator("zoo")
    kinds = {m.crd_info().kind: m.crd_info() for m in op.custom_resources()}
    assert set(kinds) == {"Zoo", "SeaLion"}
    assert kinds["SeaLion"].group == "zoo.example.com" and kinds["SeaLion"].version == "v1beta1"
    assert len(op.specs()) == 2
    with pytest.raises(ScaffoldError, match="already exists"):
        create_api(importable, "SeaLion")


@pytest.mark.parametrize(("args", "message"), [
    (("Bad_Name",), "NAME must be"),
    (("ok", None, "ok", "lowercase"), "CamelCase"),
    (("ok", "nodot", "Ok"), "DNS subdomain"),
    (("ok", "a.b", "Ok", "1"), "v1, v1beta1"),
    (("yaml",), "taken by an importable module"),
])
def test_init_rejects_bad_names(tmp_path: Path, args: tuple, message: str) -> None:
    name, group, kind, version = (*args, None, None, None)[:4]
    with pytest.raises(ScaffoldError, match=message):
        init_project(name, tmp_path / "p", group=group, kind=kind, version=version or "v1")


def test_cli_refuses_a_non_empty_dir_and_a_foreign_project(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine")
    result = CliRunner().invoke(main, ["init", "fresh", "-o", str(tmp_path)])
    assert result.exit_code != 0 and "not empty" in result.output
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    result = CliRunner().invoke(main, ["create", "api", "--kind", "Foo", "-p", str(tmp_path)])
    assert result.exit_code != 0 and "[tool.kubeloop]" in result.output

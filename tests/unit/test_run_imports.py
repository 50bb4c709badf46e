"""What a plain ``kubeloop run`` imports: the webhook server, its certificates (cryptography) and the
local control plane are loaded only by operators that serve webhooks (start-up CPU and
memory). Checked in a fresh interpreter, since this test process has imported everything already."""

from __future__ import annotations

import subprocess
import sys

import pytest

import kubeloop.webhooks as webhooks

RUN_MODULES = "import kubeloop, kubeloop.cli.main, kubeloop.cli.run, kubeloop.cli.runner, kubeloop.manager.http"


def _loaded_after(statement: str, modules: list[str]) -> dict[str, bool]:
    code = f"import sys\n{statement}\nprint(','.join(str(m in sys.modules) for m in {modules!r}))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return dict(zip(modules, (v == "True" for v in out.strip().split(",")), strict=True))


def test_a_run_without_webhooks_imports_no_certificates_server_or_control_plane() -> None:
    heavy = ["cryptography", "kubeloop.envtest", "kubeloop.webhooks.certs", "kubeloop.webhooks.server",
             "kubeloop.webhooks.migration"]
    assert _loaded_after(RUN_MODULES, heavy) == dict.fromkeys(heavy, False)


def test_every_exported_webhooks_name_resolves_on_first_use() -> None:
    for name in webhooks.__all__:
        assert getattr(webhooks, name) is not None, name
    assert webhooks.WebhookServer.__module__ == "kubeloop.webhooks.server"
    loaded = _loaded_after("from kubeloop.webhooks import WebhookServer", ["cryptography"])
    assert loaded == {"cryptography": True}  # serving a webhook needs its certificates: loaded with it


DICT_OPERATOR = ("import kubeloop\nfrom kubeloop import Context, Operator\nfrom kubeloop.resources import builtin\n"
                 "op = Operator('plain')\n"
                 "@op.reconcile(builtin.CONFIG_MAP)\nasync def reconcile(obj, ctx): pass\n"
                 "op.specs()\n")


def test_an_operator_on_plain_dicts_loads_no_pydantic_or_yaml() -> None:
    # pydantic and the model → CRD generator were a fifth of a run's start-up instructions:
    # only typed models, settings and webhooks need them, and those load them on first use. yaml is
    # for a kubeconfig, which a Deployment (in-cluster) does not read.
    heavy = ["pydantic", "kubeloop.resources.model", "kubeloop.resources.crd", "kubeloop.settings", "yaml"]
    assert _loaded_after(f"{RUN_MODULES}\n{DICT_OPERATOR}", heavy) == dict.fromkeys(heavy, False)


def test_typed_names_still_load_pydantic_on_first_use() -> None:
    loaded = _loaded_after("from kubeloop import CustomResource", ["pydantic", "kubeloop.resources.model"])
    assert loaded == {"pydantic": True, "kubeloop.resources.model": True}


def test_every_public_name_resolves() -> None:
    import kubeloop
    import kubeloop.resources as resources

    for module in (kubeloop, resources):
        missing = [name for name in module.__all__ if getattr(module, name, None) is None]
        assert missing == [], module.__name__
        assert set(module.__all__) <= set(dir(module))
    assert kubeloop.builtin is resources.builtin and kubeloop.Settings.__module__ == "kubeloop.settings"
    with pytest.raises(AttributeError, match="no attribute 'Setings'"):
        kubeloop.Setings  # noqa: B018 - a typo is still an AttributeError naming it


def test_an_operator_without_settings_gets_the_empty_model_on_first_use() -> None:
    import kubeloop

    op = kubeloop.Operator("plain")
    assert op.declared_settings is None and op.settings_model is kubeloop.Settings
    assert op.settings == kubeloop.Settings()
    op.settings = kubeloop.Settings()  # a test may still assign one


def test_a_run_does_not_import_prometheus_client() -> None:
    """kubeloop's metrics are its own (kubeloop/metrics/core.py); prometheus_client costs ~47 M instructions."""
    assert _loaded_after(RUN_MODULES, ["prometheus_client"]) == {"prometheus_client": False}


def test_a_run_does_not_import_aiohttp_web() -> None:
    """The metrics and probe server is kubeloop/manager/http.py on asyncio; aiohttp.web costs ~98 M instructions
    (the webhook server, loaded only with webhooks, still uses it)."""
    assert _loaded_after(RUN_MODULES, ["aiohttp.web"]) == {"aiohttp.web": False}

"""The kubeloop contestant: ``kubeloop run harness/bench/contestants/kubeloop_widget.py``."""

from kubeloop import Context, Operator

op = Operator("bench-widget")


@op.reconcile("widgets.bench.example.com")
async def reconcile(obj: dict, ctx: Context) -> None:
    # patch_status writes nothing when status already says so: a converged widget costs no request.
    await ctx.patch_status({"observed": obj["spec"]["value"]})

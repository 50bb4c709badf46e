//! The kube-rs contestant: a derived `Widget` resource, `Controller::run`, and a merge patch of
//! `/status` that copies `spec.value` to `status.observed`.
//!
//!     kube-rs-widget --namespace NS [--concurrency N]   (KUBECONFIG from the environment)
//!
//! `--concurrency 0` (the default) keeps kube-rs's own default: unbounded reconciles in flight.

use std::{sync::Arc, time::Duration};

use futures::StreamExt;
use kube::{
    Api, Client, CustomResource,
    api::{Patch, PatchParams},
    runtime::{Controller, controller::{Action, Config}, watcher},
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
#[kube(group = "bench.example.com", version = "v1", kind = "Widget", namespaced)]
#[kube(status = "WidgetStatus")]
pub struct WidgetSpec {
    pub value: Option<i64>,
}

#[derive(Deserialize, Serialize, Clone, Debug, Default, JsonSchema)]
pub struct WidgetStatus {
    pub observed: Option<i64>,
}

#[derive(Debug)]
struct Failed(kube::Error);

impl std::fmt::Display for Failed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "patching status: {}", self.0)
    }
}

impl std::error::Error for Failed {}

/// Writes `status.observed` only when it differs, so a converged widget costs no request.
async fn reconcile(widget: Arc<Widget>, api: Arc<Api<Widget>>) -> Result<Action, Failed> {
    let observed = widget.status.as_ref().and_then(|s| s.observed);
    if observed != widget.spec.value {
        let name = widget.metadata.name.as_deref().unwrap_or_default();
        let patch = Patch::Merge(json!({"status": {"observed": widget.spec.value}}));
        api.patch_status(name, &PatchParams::default(), &patch).await.map_err(Failed)?;
    }
    Ok(Action::await_change())
}

fn error_policy(_: Arc<Widget>, _: &Failed, _: Arc<Api<Widget>>) -> Action {
    Action::requeue(Duration::from_millis(500))
}

fn flag(args: &[String], name: &str) -> Option<String> {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let namespace = flag(&args, "--namespace").ok_or("--namespace NS is required")?;
    let concurrency: u16 = match flag(&args, "--concurrency") {
        Some(n) => n.parse().map_err(|_| format!("--concurrency: {n:?} is not a number 0..65535"))?,
        None => 0,
    };
    let client = Client::try_default().await?;
    let api: Api<Widget> = Api::namespaced(client, &namespace);
    Controller::new(api.clone(), watcher::Config::default())
        .with_config(Config::default().concurrency(concurrency))
        .shutdown_on_signal()
        .run(reconcile, error_policy, Arc::new(api))
        .for_each(|_| futures::future::ready(()))
        .await;
    Ok(())
}

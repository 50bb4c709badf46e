//! The kube-rs cache holder: a `Controller` for Pods or ConfigMaps of one namespace whose reconcile does
//! nothing but count. It exists to measure what caching realistic objects costs
//! (harness/bench/cached.py); it writes nothing.
//!
//!     kube-rs-cache --namespace NS --kind pods|configmaps --expect N   (KUBECONFIG from the environment)
//!
//! The store holds each object with `metadata.managedFields` removed before it is stored (`modify`, as
//! kube-rs documents for this; set to `None` rather than cleared, so no emptied Vec keeps its capacity).
//! stdout: "first" at the first reconcile, "reconciled K" when K reaches --expect and once a second
//! while K changes.

use std::{
    fmt::Debug,
    sync::{
        Arc,
        atomic::{AtomicI64, Ordering},
    },
    time::Duration,
};

use futures::StreamExt;
use k8s_openapi::{
    NamespaceResourceScope,
    api::core::v1::{ConfigMap, Pod},
};
use kube::{
    Api, Client, Resource,
    runtime::{
        Controller, WatchStreamExt,
        controller::Action,
        reflector, watcher,
    },
};
use serde::de::DeserializeOwned;

static RECONCILED: AtomicI64 = AtomicI64::new(0);

#[derive(Debug)]
struct Never;

impl std::fmt::Display for Never {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "never")
    }
}

impl std::error::Error for Never {}

fn flag(args: &[String], name: &str) -> Option<String> {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned()
}

async fn run<K>(client: Client, namespace: &str, expect: i64)
where
    K: Resource<DynamicType = (), Scope = NamespaceResourceScope> + Clone + Debug + DeserializeOwned
        + Send + Sync + 'static,
{
    let api: Api<K> = Api::namespaced(client, namespace);
    let (reader, writer) = reflector::store();
    let stream = watcher(api, watcher::Config::default())
        .default_backoff()
        .modify(|obj: &mut K| obj.meta_mut().managed_fields = None)
        .reflect(writer)
        .applied_objects();
    Controller::for_stream(stream, reader)
        .shutdown_on_signal()
        .run(
            move |_obj: Arc<K>, _ctx: Arc<()>| async move {
                let n = RECONCILED.fetch_add(1, Ordering::SeqCst) + 1;
                if n == 1 {
                    println!("first");
                }
                if n == expect {
                    println!("reconciled {n}");
                }
                Ok::<Action, Never>(Action::await_change())
            },
            |_obj: Arc<K>, _err: &Never, _ctx: Arc<()>| Action::await_change(),
            Arc::new(()),
        )
        .for_each(|_| futures::future::ready(()))
        .await;
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let namespace = flag(&args, "--namespace").ok_or("--namespace NS is required")?;
    let kind = flag(&args, "--kind").unwrap_or_else(|| "pods".into());
    let expect: i64 = match flag(&args, "--expect") {
        Some(n) => n.parse().map_err(|_| format!("--expect: {n:?} is not a number"))?,
        None => 0,
    };
    tokio::spawn(async {
        let mut last = 0;
        loop {
            tokio::time::sleep(Duration::from_secs(1)).await;
            let n = RECONCILED.load(Ordering::SeqCst);
            if n != last {
                println!("reconciled {n}");
                last = n;
            }
        }
    });
    let client = Client::try_default().await?;
    match kind.as_str() {
        "pods" => run::<Pod>(client, &namespace, expect).await,
        "configmaps" => run::<ConfigMap>(client, &namespace, expect).await,
        other => return Err(format!("--kind {other:?}: give pods or configmaps").into()),
    }
    Ok(())
}

// The controller-runtime cache holder: a controller For Pods or ConfigMaps of one namespace, its reconcile
// one Get from the cache. It exists to measure what caching realistic objects costs
// (harness/bench/cached.py); it writes nothing.
//
//	controller-runtime-cache --namespace NS --kind pods|configmaps --expect N   (KUBECONFIG from the environment)
//
// The cache drops managedFields (cache.TransformStripManagedFields, the transform controller-runtime
// documents for this). stdout: "first" at the first reconcile, "reconciled K" when K reaches --expect and
// once a second while K changes, so the harness can tell when everything was seen.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

var reconciled atomic.Int64

type reconciler struct {
	client.Client
	newObject func() client.Object
	expect    int64
}

func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := r.newObject()
	if err := r.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	n := reconciled.Add(1)
	if n == 1 {
		fmt.Println("first")
	}
	if n == r.expect {
		fmt.Printf("reconciled %d\n", n)
	}
	return ctrl.Result{}, nil
}

func report() {
	last := int64(0)
	for range time.Tick(time.Second) {
		if n := reconciled.Load(); n != last {
			fmt.Printf("reconciled %d\n", n)
			last = n
		}
	}
}

func main() {
	namespace := flag.String("namespace", "", "the namespace whose objects to cache (required)")
	kind := flag.String("kind", "pods", "pods or configmaps")
	expect := flag.Int64("expect", 0, "print as soon as this many reconciles are done")
	flag.Parse()
	var newObject func() client.Object
	switch *kind {
	case "pods":
		newObject = func() client.Object { return &corev1.Pod{} }
	case "configmaps":
		newObject = func() client.Object { return &corev1.ConfigMap{} }
	default:
		fmt.Fprintf(os.Stderr, "--kind %q: give pods or configmaps\n", *kind)
		os.Exit(2)
	}
	if *namespace == "" {
		os.Stderr.WriteString("--namespace NS is required\n")
		os.Exit(2)
	}
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme: scheme,
		Cache: cache.Options{DefaultNamespaces: map[string]cache.Config{*namespace: {}},
			DefaultTransform: cache.TransformStripManagedFields()},
		Metrics: metricsserver.Options{BindAddress: "0"},
	})
	if err == nil {
		err = ctrl.NewControllerManagedBy(mgr).For(newObject()).
			Complete(&reconciler{mgr.GetClient(), newObject, *expect})
	}
	go report()
	if err == nil {
		err = mgr.Start(ctrl.SetupSignalHandler())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "cache controller failed:", err)
		os.Exit(1)
	}
}

// The controller-runtime contestant: a typed Widget, one reconciler, and a merge patch of /status
// that copies spec.value to status.observed.
//
//	controller-runtime-widget --namespace NS [--max-concurrent-reconciles 16]   (KUBECONFIG from the environment)
//
// Settings that differ from controller-runtime's defaults: the cache watches one namespace (as every
// contestant does), MaxConcurrentReconciles comes from the flag (default 1), and the metrics server is
// off (":8080" could collide on a shared machine; the harness reads the API server's metrics instead).
package main

import (
	"context"
	"flag"
	"os"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

var groupVersion = schema.GroupVersion{Group: "bench.example.com", Version: "v1"}

// Widget is widgets.bench.example.com/v1; pointers keep "absent" apart from zero.
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Value *int64 `json:"value,omitempty"`
	} `json:"spec,omitempty"`
	Status struct {
		Observed *int64 `json:"observed,omitempty"`
	} `json:"status,omitempty"`
}

// WidgetList is what the cache lists.
type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Widget `json:"items"`
}

// DeepCopyObject and friends are what controller-gen would generate; written by hand to stay one file.
func (w *Widget) DeepCopyObject() runtime.Object {
	out := *w
	w.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec.Value = copyInt(w.Spec.Value)
	out.Status.Observed = copyInt(w.Status.Observed)
	return &out
}

func (l *WidgetList) DeepCopyObject() runtime.Object {
	out := *l
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	out.Items = make([]Widget, len(l.Items))
	for i := range l.Items {
		out.Items[i] = *l.Items[i].DeepCopyObject().(*Widget)
	}
	return &out
}

func copyInt(p *int64) *int64 {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

type reconciler struct{ client.Client }

// Reconcile writes status.observed only when it differs, so a converged widget costs no request.
func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var w Widget
	if err := r.Get(ctx, req.NamespacedName, &w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if equal(w.Spec.Value, w.Status.Observed) {
		return ctrl.Result{}, nil
	}
	before := w.DeepCopyObject().(*Widget)
	w.Status.Observed = copyInt(w.Spec.Value)
	return ctrl.Result{}, client.IgnoreNotFound(r.Status().Patch(ctx, &w, client.MergeFrom(before)))
}

func equal(a, b *int64) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

func main() {
	namespace := flag.String("namespace", "", "the namespace whose widgets to reconcile (required)")
	workers := flag.Int("max-concurrent-reconciles", 1, "controller.Options.MaxConcurrentReconciles")
	flag.Parse()
	log := ctrl.Log.WithName("widget")
	if *namespace == "" {
		os.Stderr.WriteString("--namespace NS is required\n")
		os.Exit(2)
	}
	scheme := runtime.NewScheme()
	scheme.AddKnownTypes(groupVersion, &Widget{}, &WidgetList{})
	metav1.AddToGroupVersion(scheme, groupVersion)
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme:  scheme,
		Cache:   cache.Options{DefaultNamespaces: map[string]cache.Config{*namespace: {}}},
		Metrics: metricsserver.Options{BindAddress: "0"},
	})
	if err == nil {
		err = ctrl.NewControllerManagedBy(mgr).
			For(&Widget{}).
			WithOptions(controller.Options{MaxConcurrentReconciles: *workers}).
			Complete(&reconciler{mgr.GetClient()})
	}
	if err == nil {
		err = mgr.Start(ctrl.SetupSignalHandler())
	}
	if err != nil {
		log.Error(err, "widget controller failed")
		os.Exit(1)
	}
}

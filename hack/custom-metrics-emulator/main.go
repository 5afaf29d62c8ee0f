// Command custom-metrics-emulator serves custom.metrics.k8s.io (v1beta2 and
// v1beta1) in a test-bed member, emulating per-pod custom metrics from pod
// annotations the way kwok emulates CPU from kwok.x-k8s.io/usage-cpu: a
// running pod annotated
//
//	custom-metrics.flotilla.io/<metric>: "<quantity>"
//
// reports that value for the pods metric <metric> (namespaced). Values are
// stamped with the time of the request and a 60 s window. Pods are read from
// an informer of the cluster --lister-kubeconfig reaches. External metrics
// are not served.
//
// The flags are those of custom-metrics-apiserver's AdapterBase
// (--secure-port, --tls-cert-file, --lister-kubeconfig,
// --authentication-kubeconfig, --authorization-kubeconfig, ...) and klog's.
package main

import (
	"os"
	"time"

	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/component-base/logs"
	"k8s.io/klog/v2"
	basecmd "sigs.k8s.io/custom-metrics-apiserver/pkg/cmd"
)

const name = "custom-metrics-emulator"

func main() {
	logs.InitLogs()
	defer logs.FlushLogs()

	cmd := &basecmd.AdapterBase{Name: name, FlagSet: pflag.NewFlagSet(name, pflag.ExitOnError)}
	logs.AddFlags(cmd.Flags())
	if err := cmd.Flags().Parse(os.Args[1:]); err != nil {
		klog.Fatalf("parsing flags: %v", err)
	}

	factory, err := cmd.Informers()
	if err != nil {
		klog.Fatalf("building the pod informer: %v", err)
	}
	pods := factory.Core().V1().Pods()
	// Only names, labels, annotations and phase are read.
	if err := pods.Informer().SetTransform(func(obj any) (any, error) {
		if m, ok := obj.(metav1.Object); ok {
			m.SetManagedFields(nil)
		}
		return obj, nil
	}); err != nil {
		klog.Fatalf("building the pod informer: %v", err)
	}
	// The server starts the informers it was built with.
	cmd.WithCustomMetrics(&podAnnotations{pods: pods.Lister(), now: time.Now})

	klog.InfoS("Serving custom.metrics.k8s.io from pod annotations", "prefix", AnnotationPrefix)
	if err := cmd.Run(genericapiserver.SetupSignalContext()); err != nil {
		klog.Fatalf("running %s: %v", name, err)
	}
}

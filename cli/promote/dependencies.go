package promote

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	configv1alpha1 "github.com/flotilla-io/flotilla/apis/config/v1alpha1"
	"github.com/flotilla-io/flotilla/interpreter"
	"github.com/flotilla-io/flotilla/interpreter/lua"
	"github.com/flotilla-io/flotilla/interpreter/thirdparty"
)

// Dependencies lists what an object depends on, as the control plane's
// resource interpreter does (InterpretDependency): the Lua
// customizations given (the control plane's
// ResourceInterpreterCustomizations), then those shipped for third-party
// kinds, then the built-ins (the pod template's ConfigMaps, Secrets,
// ServiceAccount and PersistentVolumeClaims for Deployments, StatefulSets,
// DaemonSets, ReplicaSets, Jobs, CronJobs and Pods; an Ingress's TLS
// Secrets). Interpreter webhooks are not asked: they run in the control
// plane's network.
type Dependencies struct {
	chain interpreter.Chain
}

// NewDependencies compiles the customizations rics. One that does not
// compile is left out, as the control plane leaves it out, and reported
// to warn.
func NewDependencies(rics []*configv1alpha1.ResourceInterpreterCustomization, warn func(string)) (*Dependencies, error) {
	custom := lua.NewCustomizations()
	for _, ric := range rics {
		if err := custom.Set(ric); err != nil {
			warn(fmt.Sprintf("ResourceInterpreterCustomization %s is left out: %v", ric.Name, err))
		}
	}
	shipped, err := thirdparty.New()
	if err != nil {
		return nil, fmt.Errorf("the shipped third-party customizations: %w", err)
	}
	return &Dependencies{chain: interpreter.Chain{custom, shipped, interpreter.NewNative()}}, nil
}

// Of lists the dependencies of obj; none for a kind without any.
func (d *Dependencies) Of(obj *unstructured.Unstructured) ([]interpreter.DependentObjectReference, error) {
	if !d.chain.HookEnabled(obj.GroupVersionKind(), interpreter.InterpretDependency) {
		return nil, nil
	}
	deps, err := d.chain.GetDependencies(obj)
	if err != nil {
		return nil, fmt.Errorf("listing the dependencies of %s %s: %w", obj.GetKind(), cache.NewObjectName(obj.GetNamespace(), obj.GetName()).String(), err)
	}
	return deps, nil
}

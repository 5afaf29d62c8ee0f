package webhook

import (
	"errors"
	"fmt"
	"math"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	configv1alpha1 "github.com/flotilla-io/flotilla/apis/config/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/interpreter"
)

// GetReplicas implements interpreter.Interpreter with InterpretReplica. A
// response without replicas means 0.
func (i *Interpreter) GetReplicas(obj *unstructured.Unstructured) (int32, *workv1alpha2.ReplicaRequirements, error) {
	r, err := i.interpret(interpreter.InterpretReplica, obj, nil)
	if err != nil {
		return 0, nil, err
	}
	var replicas int32
	if r.response.Replicas != nil {
		replicas = *r.response.Replicas
	}
	if replicas < 0 {
		return 0, nil, r.errorf("negative replicas %d", replicas)
	}
	return replicas, r.response.ReplicaRequirements, nil
}

// GetComponents implements interpreter.Interpreter with InterpretComponent:
// the components (pod templates, with their replicas and requirements) of a
// workload made of several.
func (i *Interpreter) GetComponents(obj *unstructured.Unstructured) ([]workv1alpha2.Component, error) {
	r, err := i.interpret(interpreter.InterpretComponent, obj, nil)
	if err != nil {
		return nil, err
	}
	return r.response.Components, nil
}

// ReviseReplica implements interpreter.Interpreter with ReviseReplica.
func (i *Interpreter) ReviseReplica(obj *unstructured.Unstructured, replicas int64) (*unstructured.Unstructured, error) {
	// The wire field is an int32; refuse what it cannot carry rather than wrap.
	if replicas < 0 || replicas > math.MaxInt32 {
		return nil, fmt.Errorf("%s: replicas %d out of range [0, %d]", interpreter.ReviseReplica, replicas, math.MaxInt32)
	}
	r, err := i.interpret(interpreter.ReviseReplica, obj, func(req *configv1alpha1.ResourceInterpreterRequest) error {
		n := int32(replicas)
		req.DesiredReplicas = &n
		return nil
	})
	if err != nil {
		return nil, err
	}
	return r.patched()
}

// Retain implements interpreter.Interpreter with Retain. The webhook is the
// one handling desired's kind; its patch applies to desired.
func (i *Interpreter) Retain(desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	r, err := i.interpret(interpreter.Retain, desired, func(req *configv1alpha1.ResourceInterpreterRequest) error {
		if observed == nil {
			return errors.New("nil observed object")
		}
		raw, err := observed.MarshalJSON()
		if err != nil {
			return fmt.Errorf("encoding observed object: %w", err)
		}
		req.ObservedObject = &runtime.RawExtension{Raw: raw}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return r.patched()
}

// AggregateStatus implements interpreter.Interpreter with AggregateStatus.
func (i *Interpreter) AggregateStatus(obj *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	r, err := i.interpret(interpreter.AggregateStatus, obj, func(req *configv1alpha1.ResourceInterpreterRequest) error {
		// Encoding only reads items, so they can be shared.
		req.AggregatedStatus = items
		return nil
	})
	if err != nil {
		return nil, err
	}
	return r.patched()
}

// ReflectStatus implements interpreter.Interpreter with InterpretStatus. It
// returns nil, and no error, when no webhook handles obj's kind or the
// webhook returns no status.
func (i *Interpreter) ReflectStatus(obj *unstructured.Unstructured) (*runtime.RawExtension, error) {
	r, err := i.interpret(interpreter.InterpretStatus, obj, nil)
	if errors.Is(err, errNoWebhook) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if s := r.response.RawStatus; s != nil && len(s.Raw) > 0 {
		return s, nil
	}
	return nil, nil
}

// InterpretHealth implements interpreter.Interpreter with InterpretHealth. It
// returns ResourceUnknown, and no error, when no webhook handles obj's kind.
func (i *Interpreter) InterpretHealth(obj *unstructured.Unstructured) (workv1alpha2.ResourceHealth, error) {
	r, err := i.interpret(interpreter.InterpretHealth, obj, nil)
	if errors.Is(err, errNoWebhook) {
		return workv1alpha2.ResourceUnknown, nil
	}
	if err != nil {
		return workv1alpha2.ResourceUnknown, err
	}
	switch h := r.response.Healthy; {
	case h == nil:
		return workv1alpha2.ResourceUnknown, r.errorf("response has no healthy")
	case *h:
		return workv1alpha2.ResourceHealthy, nil
	default:
		return workv1alpha2.ResourceUnhealthy, nil
	}
}

// GetDependencies implements interpreter.Interpreter with InterpretDependency.
func (i *Interpreter) GetDependencies(obj *unstructured.Unstructured) ([]interpreter.DependentObjectReference, error) {
	r, err := i.interpret(interpreter.InterpretDependency, obj, nil)
	if err != nil {
		return nil, err
	}
	deps := r.response.Dependencies
	if len(deps) == 0 {
		return nil, nil
	}
	out := make([]interpreter.DependentObjectReference, len(deps))
	for j, d := range deps {
		out[j] = interpreter.DependentObjectReference{
			APIVersion:    d.APIVersion,
			Kind:          d.Kind,
			Namespace:     d.Namespace,
			Name:          d.Name,
			LabelSelector: d.LabelSelector,
		}
	}
	return out, nil
}

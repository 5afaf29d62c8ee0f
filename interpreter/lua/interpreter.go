package lua

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/flotilla-io/flotilla/apis/config/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/interpreter"
)

// Customizations interprets the kinds ResourceInterpreterCustomizations
// target with their scripts. Set and Delete keep it in step with the
// customizations (an informer's handlers); each generation of a
// customization is compiled once.
type Customizations struct {
	mu sync.RWMutex
	// byName holds the compiled customizations.
	byName map[string]*compiled
	// byTarget holds, per target kind and operation, the script to call:
	// the one of the customization first by name when several define it.
	byTarget map[schema.GroupVersionKind]map[interpreter.Operation]*Script
	// onChange are told the kinds whose interpretation changed.
	onChange []func(schema.GroupVersionKind)
	// limits bound each call of the scripts.
	limits Limits
}

type compiled struct {
	generation int64
	target     schema.GroupVersionKind
	scripts    map[interpreter.Operation]*Script
}

var _ interpreter.Interpreter = (*Customizations)(nil)

// NewCustomizations returns an empty set of customizations whose calls run
// within the default Limits.
func NewCustomizations() *Customizations { return NewCustomizationsWithLimits(Limits{}) }

// NewCustomizationsWithLimits returns an empty set of customizations whose
// calls run within lim (a zero field takes its default).
func NewCustomizationsWithLimits(lim Limits) *Customizations {
	return &Customizations{byName: map[string]*compiled{}, byTarget: map[schema.GroupVersionKind]map[interpreter.Operation]*Script{},
		limits: lim}
}

// AddChangeHandler registers f, called with the target kind whenever a
// customization of it is added, changed or removed, so that the objects of
// that kind are interpreted again. A handler added later misses the
// earlier changes: the controllers add theirs before their first sync.
func (c *Customizations) AddChangeHandler(f func(schema.GroupVersionKind)) {
	c.mu.Lock()
	c.onChange = append(c.onChange, f)
	c.mu.Unlock()
}

func (c *Customizations) changed(gvks ...schema.GroupVersionKind) {
	c.mu.RLock()
	handlers := c.onChange
	c.mu.RUnlock()
	for _, gvk := range gvks {
		for _, f := range handlers {
			f(gvk)
		}
	}
}

// CompileCustomization compiles every script of ric, its calls to run
// within lim. Admission has checked them; an error here names the field of
// the first that fails.
func CompileCustomization(ric *configv1alpha1.ResourceInterpreterCustomization, lim Limits) (map[interpreter.Operation]*Script, error) {
	scripts := map[interpreter.Operation]*Script{}
	for _, rule := range ric.Spec.Customizations.Scripts() {
		if !rule.Set {
			continue
		}
		s, err := CompileWithLimits(rule.Script, rule.Function, 0, lim)
		if err != nil {
			closeAll(scripts)
			return nil, fmt.Errorf("spec.customizations.%s.luaScript: %w", rule.Field, err)
		}
		scripts[interpreter.Operation(rule.Operation)] = s
	}
	return scripts, nil
}

// Set compiles ric unless its generation is already compiled. A
// customization whose scripts do not compile is dropped (its kind falls
// back to the next interpreter) and the error returned.
func (c *Customizations) Set(ric *configv1alpha1.ResourceInterpreterCustomization) error {
	c.mu.RLock()
	cur, ok := c.byName[ric.Name]
	c.mu.RUnlock()
	if ok && cur.generation == ric.Generation && ric.Generation != 0 {
		return nil
	}
	scripts, err := CompileCustomization(ric, c.limits)
	target := schema.FromAPIVersionAndKind(ric.Spec.Target.APIVersion, ric.Spec.Target.Kind)
	affected := []schema.GroupVersionKind{target}
	c.mu.Lock()
	if old, ok := c.byName[ric.Name]; ok {
		closeAll(old.scripts)
		delete(c.byName, ric.Name)
		if old.target != target {
			affected = append(affected, old.target)
		}
	}
	if err == nil {
		c.byName[ric.Name] = &compiled{generation: ric.Generation, target: target, scripts: scripts}
	}
	c.reindex()
	c.mu.Unlock()
	c.changed(affected...)
	if err != nil {
		return fmt.Errorf("ResourceInterpreterCustomization %s: %w", ric.Name, err)
	}
	return nil
}

// Delete drops the customization called name.
func (c *Customizations) Delete(name string) {
	c.mu.Lock()
	old, ok := c.byName[name]
	if ok {
		closeAll(old.scripts)
		delete(c.byName, name)
		c.reindex()
	}
	c.mu.Unlock()
	if ok {
		c.changed(old.target)
	}
}

func closeAll(scripts map[interpreter.Operation]*Script) {
	for _, s := range scripts {
		s.Close()
	}
}

// reindex rebuilds byTarget; the caller holds the write lock.
func (c *Customizations) reindex() {
	names := make([]string, 0, len(c.byName))
	for n := range c.byName {
		names = append(names, n)
	}
	slices.Sort(names)
	idx := map[schema.GroupVersionKind]map[interpreter.Operation]*Script{}
	for _, n := range names {
		cc := c.byName[n]
		if idx[cc.target] == nil {
			idx[cc.target] = map[interpreter.Operation]*Script{}
		}
		for op, s := range cc.scripts {
			if _, taken := idx[cc.target][op]; !taken {
				idx[cc.target][op] = s
			}
		}
	}
	c.byTarget = idx
}

func (c *Customizations) script(gvk schema.GroupVersionKind, op interpreter.Operation) *Script {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.byTarget[gvk][op]
}

// HookEnabled implements interpreter.Interpreter.
func (c *Customizations) HookEnabled(gvk schema.GroupVersionKind, op interpreter.Operation) bool {
	return c.script(gvk, op) != nil
}

var errNoScript = errors.New("no customization defines this operation for this kind")

func (c *Customizations) mustScript(obj *unstructured.Unstructured, op interpreter.Operation) (*Script, error) {
	s := c.script(obj.GroupVersionKind(), op)
	if s == nil {
		return nil, fmt.Errorf("%s of %s: %w", op, obj.GroupVersionKind(), errNoScript)
	}
	return s, nil
}

// callOnObject calls op's function with obj alone and hands its nret
// results to results (GetReplicas, GetComponents, ReflectStatus,
// InterpretHealth, GetDependencies).
func (c *Customizations) callOnObject(obj *unstructured.Unstructured, op interpreter.Operation, nret int, results func(ret []lua.LValue, b *budget) error) error {
	s, err := c.mustScript(obj, op)
	if err != nil {
		return err
	}
	return s.Call(nret, func(L *lua.LState) []lua.LValue {
		return []lua.LValue{s.Arg(L, 0, obj.Object)}
	}, results)
}

// GetReplicas implements interpreter.Interpreter: GetReplicas(desiredObj)
// returns the replicas and, optionally, a ReplicaRequirements table.
func (c *Customizations) GetReplicas(obj *unstructured.Unstructured) (int32, *workv1alpha2.ReplicaRequirements, error) {
	var replicas int32
	var req *workv1alpha2.ReplicaRequirements
	err := c.callOnObject(obj, interpreter.InterpretReplica, 2, func(ret []lua.LValue, b *budget) error {
		n, ok := ret[0].(lua.LNumber)
		if !ok {
			return fmt.Errorf("returned %s as the replicas, want a number", ret[0].Type())
		}
		if n < 0 || n > math.MaxInt32 || float64(n) != math.Trunc(float64(n)) {
			return fmt.Errorf("returned %v replicas, want a whole number from 0 to %d", n, math.MaxInt32)
		}
		replicas = int32(n)
		if ret[1] == lua.LNil {
			return nil
		}
		if h, ok := helperValue(ret[1]); ok {
			if r, ok := h.(*workv1alpha2.ReplicaRequirements); ok {
				req = r
				return nil
			}
		}
		if r, ok := requestsOnly(ret[1]); ok {
			req = r
			return nil
		}
		return decodeResult(b, ret[1], &req)
	})
	return replicas, req, err
}

// GetComponents runs GetComponents(desiredObj), which returns the list of
// the workload's components ({name, replicas, replicaRequirements}).
func (c *Customizations) GetComponents(obj *unstructured.Unstructured) ([]workv1alpha2.Component, error) {
	var out []workv1alpha2.Component
	err := c.callOnObject(obj, interpreter.InterpretComponent, 1, func(ret []lua.LValue, b *budget) error {
		if ret[0] == lua.LNil {
			return nil
		}
		return decodeResult(b, ret[0], &out)
	})
	return out, err
}

// ReviseReplica implements interpreter.Interpreter:
// ReviseReplica(desiredObj, desiredReplica) returns the revised object.
func (c *Customizations) ReviseReplica(obj *unstructured.Unstructured, replicas int64) (*unstructured.Unstructured, error) {
	s, err := c.mustScript(obj, interpreter.ReviseReplica)
	if err != nil {
		return nil, err
	}
	return callForObject(s, obj.Object, replicas)
}

// Retain implements interpreter.Interpreter: Retain(desiredObj,
// observedObj) returns the object to apply.
func (c *Customizations) Retain(desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	s, err := c.mustScript(desired, interpreter.Retain)
	if err != nil {
		return nil, err
	}
	return callForObject(s, desired.Object, observed.Object)
}

// AggregateStatus implements interpreter.Interpreter:
// AggregateStatus(desiredObj, statusItems) returns the object with its
// status set; each item has clusterName, status, applied, appliedMessage
// and health, as in the binding's aggregatedStatus.
func (c *Customizations) AggregateStatus(obj *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	s, err := c.mustScript(obj, interpreter.AggregateStatus)
	if err != nil {
		return nil, err
	}
	luaItems, err := itemsValue(items)
	if err != nil {
		return nil, err
	}
	return callForObject(s, obj.Object, luaItems)
}

// itemsValue is items as JSON-like values.
func itemsValue(items []workv1alpha2.AggregatedStatusItem) ([]any, error) {
	out := make([]any, 0, len(items))
	for _, it := range items {
		m := map[string]any{"clusterName": it.ClusterName, "applied": it.Applied}
		if it.AppliedMessage != "" {
			m["appliedMessage"] = it.AppliedMessage
		}
		if it.Health != "" {
			m["health"] = string(it.Health)
		}
		if it.Status != nil && len(it.Status.Raw) > 0 {
			var st any
			if err := json.Unmarshal(it.Status.Raw, &st); err != nil {
				return nil, fmt.Errorf("status of cluster %s: %w", it.ClusterName, err)
			}
			m["status"] = st
		}
		out = append(out, m)
	}
	return out, nil
}

// ReflectStatus implements interpreter.Interpreter: ReflectStatus(observedObj)
// returns the status to report, or nil.
func (c *Customizations) ReflectStatus(obj *unstructured.Unstructured) (*runtime.RawExtension, error) {
	var out *runtime.RawExtension
	err := c.callOnObject(obj, interpreter.InterpretStatus, 1, func(ret []lua.LValue, b *budget) error {
		if ret[0] == lua.LNil {
			return nil
		}
		raw, err := b.encodeJSON(nil, ret[0], obj.Object["status"], 0)
		if err != nil {
			return err
		}
		out = &runtime.RawExtension{Raw: raw}
		return nil
	})
	return out, err
}

// InterpretHealth implements interpreter.Interpreter: InterpretHealth(observedObj)
// returns true when healthy.
func (c *Customizations) InterpretHealth(obj *unstructured.Unstructured) (workv1alpha2.ResourceHealth, error) {
	health := workv1alpha2.ResourceUnknown
	err := c.callOnObject(obj, interpreter.InterpretHealth, 1, func(ret []lua.LValue, _ *budget) error {
		b, ok := ret[0].(lua.LBool)
		if !ok {
			return fmt.Errorf("returned %s, want a boolean", ret[0].Type())
		}
		health = workv1alpha2.ResourceUnhealthy
		if b {
			health = workv1alpha2.ResourceHealthy
		}
		return nil
	})
	return health, err
}

// GetDependencies implements interpreter.Interpreter: GetDependencies(desiredObj)
// returns a list of {apiVersion, kind, namespace, name, labelSelector}.
func (c *Customizations) GetDependencies(obj *unstructured.Unstructured) ([]interpreter.DependentObjectReference, error) {
	var out []interpreter.DependentObjectReference
	err := c.callOnObject(obj, interpreter.InterpretDependency, 1, func(ret []lua.LValue, b *budget) error {
		if ret[0] == lua.LNil {
			return nil
		}
		if h, ok := helperValue(ret[0]); ok {
			if deps, ok := h.([]interpreter.DependentObjectReference); ok {
				out = deps
				return nil
			}
		}
		if deps, ok := namedDependencies(ret[0]); ok {
			out = deps
			return nil
		}
		return decodeResult(b, ret[0], &out)
	})
	return out, err
}

// callForObject calls a function taking the object and a second argument
// and returning the object to use (ReviseReplica, Retain, AggregateStatus).
func callForObject(s *Script, obj map[string]any, second any) (*unstructured.Unstructured, error) {
	var out *unstructured.Unstructured
	var arg0 lua.LValue
	var own map[*lua.LTable]bool
	err := s.Call(1, func(L *lua.LState) []lua.LValue {
		arg0, own = s.ObjectArg(L, obj)
		return []lua.LValue{arg0, s.Arg(L, 1, second)}
	}, func(ret []lua.LValue, b *budget) error {
		m, err := s.ObjectResult(b, ret[0], arg0, own, obj)
		if err != nil {
			return err
		}
		out = &unstructured.Unstructured{Object: m}
		return nil
	})
	return out, err
}

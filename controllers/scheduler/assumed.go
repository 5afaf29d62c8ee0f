package scheduler

import (
	"context"
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/estimator/assumed"
	"github.com/flotilla-io/flotilla/names"
	"github.com/flotilla-io/flotilla/placement"
)

// What the scheduler assigns a cluster is assumed there until the member
// shows it (Karmada's scheduling overcommit protection): the estimator
// takes it as used, so bindings scheduled one after the other, faster than
// their pods appear, do not all take the same room. The scheduler records
// what each result it writes adds (scheduleAssuming), and releases it as
// the bindings show it withdrawn, reduced or running, or when they go
// (watchAssumed); assumed.Cache says how.
//
// The assumptions live in this process's memory: the scheduler runs in
// the leader only, and a new leader starts with none, as Karmada's
// scheduler after a restart; until the members show the workloads placed
// before, its estimates count their pods only.

// SetAssumptionTTL sets how long an assumption is kept at most (by
// default assumed.DefaultTTL); 0 keeps none, and the estimates count the
// members' pods only. Call it before Run.
func (c *Controller) SetAssumptionTTL(ttl time.Duration) {
	if ttl <= 0 {
		c.assumed = nil
		return
	}
	c.assumed = assumed.New(ttl, nil)
}

// SetHealthInterpreted tells the scheduler which kinds have a health
// interpretation: only theirs says, when Healthy, that a workload's pods
// run (the others count Healthy whatever runs). Without it every kind's
// health is taken as meaningful. Call it before Run.
func (c *Controller) SetHealthInterpreted(interpreted func(schema.GroupVersionKind) bool) {
	c.healthInterpreted = interpreted
}

// watchAssumed has every change of a binding bring its assumptions in line
// with it (a cluster withdrawn or reduced, its collected status showing the
// pods) and its deletion release them.
func (c *Controller) watchAssumed(informers ...cache.SharedIndexInformer) error {
	handler := cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, cur any) { c.observeAssumed(cur) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if t := bindingOf(obj); t != nil {
				c.assumed.Forget(names.BindingKey(t.meta.Namespace, t.meta.Name))
			}
		},
	}
	for _, inf := range informers {
		if _, err := inf.AddEventHandler(handler); err != nil {
			return err
		}
	}
	return nil
}

// observeAssumed observes the binding obj is a version of. It reads the
// binding from the lister rather than obj: the lister is never older than
// the version a scheduling write was decided on, whereas the event may be
// (events reach handlers after the lister has moved on).
func (c *Controller) observeAssumed(obj any) {
	t := bindingOf(obj)
	if t == nil {
		return
	}
	key := names.BindingKey(t.meta.Namespace, t.meta.Name)
	c.assumed.Observe(key, func() (assumed.Observed, bool) {
		cur, err := c.lookup(key)
		if err != nil {
			return assumed.Observed{}, false
		}
		return assumed.Observed{Version: cur.meta.ResourceVersion, Clusters: cur.spec.Clusters, Status: cur.status.AggregatedStatus,
			HealthUninterpreted: c.healthInterpreted != nil && !c.healthInterpreted(schema.FromAPIVersionAndKind(cur.spec.Resource.APIVersion, cur.spec.Resource.Kind))}, true
	})
}

// scheduleAssuming decides where the binding goes (placement.Schedule)
// and, when the decision is a result to write (a success, or no cluster
// fitting), assumes it at once: the scheduler's workers decide side by
// side, and a decision made between another's estimate and its
// assumption would not see it. Deciding and assuming are therefore one
// step for the workloads the estimate counts; the write comes after, and
// its failure is undone (assumption.settle).
func (c *Controller) scheduleAssuming(ctx context.Context, key string, t *target, in placement.Input) (placement.Decision, *assumption, error) {
	if c.assumed == nil || c.estimate == nil || (t.spec.Replicas == 0 && len(t.spec.Components) == 0) {
		dec, err := placement.Schedule(in)
		return dec, nil, err
	}
	c.assuming.Lock()
	defer c.assuming.Unlock()
	dec, err := placement.Schedule(in)
	var se *placement.Error
	if err != nil && (!errors.As(err, &se) || se.Reason != workv1alpha2.BindingReasonNoClusterFit) {
		return dec, nil, err
	}
	undo := c.assumed.Assume(key, t.meta.ResourceVersion, t.spec, t.status, dec.Clusters)
	klog.FromContext(ctx).V(4).Info("Assumed the scheduling result until the members show it", "binding", key, "result", dec.Clusters)
	return dec, &assumption{undo: undo}, err
}

// assumption is a scheduling result assumed before it is written.
type assumption struct {
	undo    func()
	written bool
}

// wrote marks the result written: it stays assumed.
func (a *assumption) wrote() {
	if a != nil {
		a.written = true
	}
}

// settle takes the assumption back unless the result was written.
func (a *assumption) settle() {
	if a != nil && !a.written {
		a.undo()
	}
}

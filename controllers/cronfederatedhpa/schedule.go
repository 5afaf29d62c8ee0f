package cronfederatedhpa

import (
	"container/heap"
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/robfig/cron/v3"
	"k8s.io/apimachinery/pkg/types"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/apis/autoscaling/v1alpha1"
)

// maxSleep bounds how long the planner sleeps between two looks at the
// heap. Timers run on the monotonic clock while schedules are in wall time,
// so a corrected wall clock would otherwise delay the next execution by the
// size of the correction. One wake-up a minute for the whole controller is
// the price; it is not a per-object poll.
const maxSleep = time.Minute

// execution is a rule that came due: the time its schedule named.
type execution struct {
	rule         string
	scheduleTime time.Time
}

// outcome is an execution done and not yet recorded in the status.
type outcome struct {
	execution
	executionTime time.Time
	// applied holds what was set (applied* fields) when err is nil.
	applied autoscalingv1alpha1.SuccessfulExecution
	err     error
}

// plan is the schedule of one rule of one CronFederatedHPA.
type plan struct {
	key  string
	rule string
	from planSpec
	// schedule is nil when the rule could not be planned.
	schedule cron.Schedule
	loc      *time.Location
	// next is when the rule runs next; zero when the schedule names no time
	// in the next five years or is nil (then the plan is not in the heap).
	next  time.Time
	index int // in the heap; -1 when not in it
}

// planSpec is what a plan is made from; a rule whose planSpec changes is
// planned again.
type planSpec struct {
	schedule string
	timeZone string
}

func specOf(r *autoscalingv1alpha1.CronFederatedHPARule) planSpec {
	s := planSpec{schedule: r.Schedule}
	if r.TimeZone != nil {
		s.timeZone = *r.TimeZone
	}
	return s
}

// object is the planner's state of one CronFederatedHPA.
type object struct {
	uid   types.UID
	plans map[string]*plan // by rule name
	// due are executions the timer fired and no worker ran yet.
	due []execution
	// unrecorded are executions done whose status write has not succeeded.
	unrecorded []outcome
}

// planner keeps the next execution time of every rule of every
// CronFederatedHPA in one min-heap and fires them from one goroutine.
type planner struct {
	now func() time.Time
	// local is the time zone of rules without timeZone (Karmada: the
	// controller process's zone).
	local *time.Location
	// onDue is called, without the lock, with the key of an object some
	// of whose rules came due.
	onDue func(key string)

	mu      sync.Mutex
	queue   planHeap
	objects map[string]*object
	wake    chan struct{}
}

func newPlanner(now func() time.Time, local *time.Location, onDue func(string)) *planner {
	return &planner{now: now, local: local, onDue: onDue, objects: map[string]*object{}, wake: make(chan struct{}, 1)}
}

// parseSchedule returns the schedule of a rule and the zone it is read in:
// a CRON_TZ= or TZ= prefix in the schedule wins (robfig/cron converts to
// it), then the rule's timeZone, then local.
func parseSchedule(r *autoscalingv1alpha1.CronFederatedHPARule, local *time.Location) (cron.Schedule, *time.Location, error) {
	s, err := cron.ParseStandard(r.Schedule)
	if err != nil {
		return nil, nil, fmt.Errorf("invalid schedule %q of rule %s: %w", r.Schedule, r.Name, err)
	}
	loc := local
	if r.TimeZone != nil && *r.TimeZone != "" {
		if loc, err = time.LoadLocation(*r.TimeZone); err != nil {
			return nil, nil, fmt.Errorf("invalid time zone %q of rule %s: %w", *r.TimeZone, r.Name, err)
		}
	}
	return s, loc, nil
}

// sync makes the plans of the object key those of its rules that are not
// suspended. A rule whose schedule and time zone are unchanged keeps its
// next time; a new or changed one is planned from now; plans of rules
// removed or suspended are dropped with their due executions. It returns
// the rules that could not be planned.
func (p *planner) sync(key string, uid types.UID, rules []autoscalingv1alpha1.CronFederatedHPARule) map[string]error {
	p.mu.Lock()
	defer p.mu.Unlock()
	o := p.objects[key]
	if o != nil && o.uid != uid {
		// Deleted and created again under the same name.
		p.forgetLocked(key)
		o = nil
	}
	if o == nil {
		o = &object{uid: uid, plans: map[string]*plan{}}
		p.objects[key] = o
	}
	var failed map[string]error
	want := map[string]bool{}
	now := p.now()
	for i := range rules {
		r := &rules[i]
		if r.Suspend != nil && *r.Suspend {
			continue
		}
		want[r.Name] = true
		spec := specOf(r)
		if old := o.plans[r.Name]; old != nil && old.from == spec {
			continue
		}
		p.dropLocked(o, r.Name)
		pl := &plan{key: key, rule: r.Name, from: spec, index: -1}
		o.plans[r.Name] = pl
		s, loc, err := parseSchedule(r, p.local)
		if err != nil {
			// Kept without a schedule, so that the failure is reported
			// once per change of the rule, not at every reconcile.
			if failed == nil {
				failed = map[string]error{}
			}
			failed[r.Name] = err
			continue
		}
		pl.schedule, pl.loc = s, loc
		if pl.next = s.Next(now.In(loc)); !pl.next.IsZero() {
			heap.Push(&p.queue, pl)
		}
	}
	for name := range o.plans {
		if !want[name] {
			p.dropLocked(o, name)
		}
	}
	o.due = keepRules(o.due, want)
	p.poke()
	return failed
}

// dropLocked removes the plan of rule from o and from the heap.
func (p *planner) dropLocked(o *object, rule string) {
	pl := o.plans[rule]
	if pl == nil {
		return
	}
	if pl.index >= 0 {
		heap.Remove(&p.queue, pl.index)
	}
	delete(o.plans, rule)
}

// keepRules returns the executions of the rules in want.
func keepRules(due []execution, want map[string]bool) []execution {
	out := due[:0]
	for _, x := range due {
		if want[x.rule] {
			out = append(out, x)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// forget drops everything planned for key.
func (p *planner) forget(key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.forgetLocked(key)
}

func (p *planner) forgetLocked(key string) {
	o := p.objects[key]
	if o == nil {
		return
	}
	for name := range o.plans {
		p.dropLocked(o, name)
	}
	delete(p.objects, key)
}

// next returns when rule of key runs next, if it is planned and its
// schedule names a time.
func (p *planner) next(key, rule string) (time.Time, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if o := p.objects[key]; o != nil {
		if pl := o.plans[rule]; pl != nil && !pl.next.IsZero() {
			return pl.next, true
		}
	}
	return time.Time{}, false
}

// takeDue returns the executions of key that came due, and forgets them.
func (p *planner) takeDue(key string) []execution {
	p.mu.Lock()
	defer p.mu.Unlock()
	o := p.objects[key]
	if o == nil {
		return nil
	}
	due := o.due
	o.due = nil
	return due
}

// unrecorded returns the outcomes of key not yet in its status.
func (p *planner) unrecorded(key string) []outcome {
	p.mu.Lock()
	defer p.mu.Unlock()
	if o := p.objects[key]; o != nil {
		return append([]outcome(nil), o.unrecorded...)
	}
	return nil
}

// setUnrecorded replaces the outcomes of key waiting for a status write.
func (p *planner) setUnrecorded(key string, outs []outcome) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if o := p.objects[key]; o != nil {
		o.unrecorded = outs
	}
}

// fire moves every plan due at now to its object's due executions,
// plans its next time from now (missed times are not caught up, as with
// Karmada's gocron jobs) and reports the objects concerned.
func (p *planner) fire(now time.Time) {
	p.mu.Lock()
	keys := map[string]bool{}
	for len(p.queue) > 0 && !p.queue[0].next.After(now) {
		pl := p.queue[0]
		o := p.objects[pl.key]
		o.due = append(o.due, execution{rule: pl.rule, scheduleTime: pl.next})
		keys[pl.key] = true
		pl.next = pl.schedule.Next(now.In(pl.loc))
		if pl.next.IsZero() {
			heap.Pop(&p.queue)
		} else {
			heap.Fix(&p.queue, 0)
		}
	}
	p.mu.Unlock()
	for key := range keys {
		p.onDue(key)
	}
}

// poke wakes the run loop to look at the heap again.
func (p *planner) poke() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// sleep returns how long to wait before the earliest plan is due.
func (p *planner) sleep() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.queue) == 0 {
		return maxSleep
	}
	return min(max(p.queue[0].next.Sub(p.now()), 0), maxSleep)
}

// run fires plans as they come due until ctx ends.
func (p *planner) run(ctx context.Context) {
	t := time.NewTimer(p.sleep())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			p.fire(p.now())
		case <-p.wake:
		}
		t.Reset(p.sleep())
	}
}

// planHeap orders plans by next time.
type planHeap []*plan

func (h planHeap) Len() int           { return len(h) }
func (h planHeap) Less(i, j int) bool { return h[i].next.Before(h[j].next) }
func (h planHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *planHeap) Push(x any) {
	pl := x.(*plan)
	pl.index = len(*h)
	*h = append(*h, pl)
}
func (h *planHeap) Pop() any {
	old := *h
	pl := old[len(old)-1]
	old[len(old)-1] = nil
	pl.index = -1
	*h = old[:len(old)-1]
	return pl
}

package cronfederatedhpa

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/apis/autoscaling/v1alpha1"
)

func mustLoad(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func TestParseSchedule(t *testing.T) {
	t.Parallel()
	tokyo := mustLoad(t, "Asia/Tokyo")
	now := time.Date(2025, 3, 1, 10, 4, 0, 0, time.UTC) // 19:04 in Tokyo
	for _, tc := range []struct {
		name     string
		schedule string
		timeZone *string
		want     time.Time
		wantErr  bool
	}{
		// The proposal's example: "3 * * * *" applied at 9:04 runs at 10:03.
		{name: "local zone", schedule: "3 * * * *", want: time.Date(2025, 3, 1, 11, 3, 0, 0, time.UTC)},
		{name: "exact time is not now", schedule: "4 10 * * *", want: time.Date(2025, 3, 2, 10, 4, 0, 0, time.UTC)},
		{name: "rule timeZone", schedule: "0 20 * * *", timeZone: ptr.To("Asia/Tokyo"), want: time.Date(2025, 3, 1, 20, 0, 0, 0, tokyo)},
		{name: "CRON_TZ prefix", schedule: "CRON_TZ=Asia/Tokyo 0 20 * * *", want: time.Date(2025, 3, 1, 20, 0, 0, 0, tokyo)},
		{name: "CRON_TZ wins over timeZone", schedule: "CRON_TZ=UTC 0 20 * * *", timeZone: ptr.To("Asia/Tokyo"), want: time.Date(2025, 3, 1, 20, 0, 0, 0, time.UTC)},
		{name: "descriptor", schedule: "@daily", want: time.Date(2025, 3, 2, 0, 0, 0, 0, time.UTC)},
		{name: "bad schedule", schedule: "61 * * * *", wantErr: true},
		{name: "six fields are not standard", schedule: "0 0 1 * * *", wantErr: true},
		{name: "bad time zone", schedule: "0 * * * *", timeZone: ptr.To("Mars/Olympus"), wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := &autoscalingv1alpha1.CronFederatedHPARule{Name: "r", Schedule: tc.schedule, TimeZone: tc.timeZone}
			s, loc, err := parseSchedule(r, time.UTC)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if got := s.Next(now.In(loc)); !got.Equal(tc.want) {
				t.Errorf("next = %v, want %v", got, tc.want)
			}
		})
	}
}

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.t = t }

// dueRecorder collects the keys the planner reports.
type dueRecorder struct {
	mu   sync.Mutex
	keys []string
}

func (d *dueRecorder) add(key string) { d.mu.Lock(); defer d.mu.Unlock(); d.keys = append(d.keys, key) }
func (d *dueRecorder) take() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	k := d.keys
	d.keys = nil
	slices.Sort(k)
	return k
}

func rule(name, schedule string) autoscalingv1alpha1.CronFederatedHPARule {
	return autoscalingv1alpha1.CronFederatedHPARule{Name: name, Schedule: schedule, TargetReplicas: ptr.To[int32](1)}
}

func nextOf(t *testing.T, p *planner, key, rule string) time.Time {
	t.Helper()
	n, ok := p.next(key, rule)
	if !ok {
		t.Fatalf("%s/%s not planned", key, rule)
	}
	return n
}

func TestPlannerSyncAndFire(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2025, 1, 1, 8, 0, 30, 0, time.UTC)
	clock := &fakeClock{t: t0}
	due := &dueRecorder{}
	p := newPlanner(clock.now, time.UTC, due.add)

	if failed := p.sync("ns/a", "uid-a", []autoscalingv1alpha1.CronFederatedHPARule{rule("every-min", "* * * * *"), rule("hourly", "0 * * * *")}); failed != nil {
		t.Fatalf("sync failed: %v", failed)
	}
	p.sync("ns/b", "uid-b", []autoscalingv1alpha1.CronFederatedHPARule{rule("five", "*/5 * * * *")})
	if got, want := nextOf(t, p, "ns/a", "every-min"), t0.Truncate(time.Minute).Add(time.Minute); !got.Equal(want) {
		t.Errorf("next every-min = %v, want %v", got, want)
	}
	if got := p.sleep(); got != 30*time.Second {
		t.Errorf("sleep = %v, want 30s", got)
	}

	// Nothing due before 08:01.
	p.fire(t0.Add(29 * time.Second))
	if k := due.take(); len(k) != 0 {
		t.Errorf("due early: %v", k)
	}

	// At 08:05 every-min (08:01) and five (08:05) are due; missed minutes
	// are not caught up: every-min runs next at 08:06.
	at := time.Date(2025, 1, 1, 8, 5, 0, 0, time.UTC)
	clock.set(at)
	p.fire(at)
	if diff := cmp.Diff([]string{"ns/a", "ns/b"}, due.take()); diff != "" {
		t.Errorf("due keys (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]execution{{rule: "every-min", scheduleTime: time.Date(2025, 1, 1, 8, 1, 0, 0, time.UTC)}},
		p.takeDue("ns/a"), cmp.AllowUnexported(execution{})); diff != "" {
		t.Errorf("due of a (-want +got):\n%s", diff)
	}
	if got := p.takeDue("ns/a"); got != nil {
		t.Errorf("due taken twice: %v", got)
	}
	if got, want := nextOf(t, p, "ns/a", "every-min"), at.Add(time.Minute); !got.Equal(want) {
		t.Errorf("next every-min = %v, want %v", got, want)
	}
	if got, want := nextOf(t, p, "ns/b", "five"), at.Add(5*time.Minute); !got.Equal(want) {
		t.Errorf("next five = %v, want %v", got, want)
	}

	// Same spec again: plans kept (not re-planned from now).
	clock.set(at.Add(30 * time.Second))
	p.sync("ns/a", "uid-a", []autoscalingv1alpha1.CronFederatedHPARule{rule("every-min", "* * * * *"), rule("hourly", "0 * * * *")})
	if got, want := nextOf(t, p, "ns/a", "hourly"), time.Date(2025, 1, 1, 9, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("next hourly = %v, want %v", got, want)
	}

	// every-min is due, then suspended before a worker ran it: dropped.
	// hourly changes schedule: re-planned. A new rule is planned.
	p.fire(at.Add(time.Minute))
	due.take()
	suspended := rule("every-min", "* * * * *")
	suspended.Suspend = ptr.To(true)
	p.sync("ns/a", "uid-a", []autoscalingv1alpha1.CronFederatedHPARule{suspended, rule("hourly", "30 * * * *"), rule("new", "0 0 * * *")})
	if _, ok := p.next("ns/a", "every-min"); ok {
		t.Error("suspended rule still planned")
	}
	if got := p.takeDue("ns/a"); got != nil {
		t.Errorf("due of a suspended rule kept: %v", got)
	}
	if got, want := nextOf(t, p, "ns/a", "hourly"), time.Date(2025, 1, 1, 8, 30, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("next hourly = %v, want %v", got, want)
	}
	if got, want := nextOf(t, p, "ns/a", "new"), time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("next new = %v, want %v", got, want)
	}

	// A broken rule is reported once per change.
	bad := rule("bad", "not a schedule")
	if failed := p.sync("ns/b", "uid-b", []autoscalingv1alpha1.CronFederatedHPARule{rule("five", "*/5 * * * *"), bad}); failed["bad"] == nil {
		t.Errorf("bad rule not reported: %v", failed)
	}
	if failed := p.sync("ns/b", "uid-b", []autoscalingv1alpha1.CronFederatedHPARule{rule("five", "*/5 * * * *"), bad}); failed != nil {
		t.Errorf("bad rule reported again: %v", failed)
	}
	if _, ok := p.next("ns/b", "bad"); ok {
		t.Error("bad rule has a next time")
	}

	// Recreated under the same name: planned afresh.
	p.setUnrecorded("ns/b", []outcome{{execution: execution{rule: "five"}}})
	p.sync("ns/b", "uid-b2", []autoscalingv1alpha1.CronFederatedHPARule{rule("five", "*/5 * * * *")})
	if got := p.unrecorded("ns/b"); got != nil {
		t.Errorf("outcomes of the old object kept: %v", got)
	}

	// Forgotten objects leave the heap.
	p.forget("ns/a")
	p.forget("ns/b")
	if len(p.queue) != 0 || len(p.objects) != 0 {
		t.Errorf("left after forget: %d plans, %d objects", len(p.queue), len(p.objects))
	}
	if got := p.sleep(); got != maxSleep {
		t.Errorf("sleep with nothing planned = %v, want %v", got, maxSleep)
	}
}

// TestPlannerHeapOrder checks that many plans come due in time order,
// whatever order they were planned in.
func TestPlannerHeapOrder(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	p := newPlanner(func() time.Time { return t0 }, time.UTC, func(string) {})
	for i, m := range []int{7, 3, 9, 1, 5, 2, 8} {
		p.sync(fmt.Sprintf("ns/%d", i), "", []autoscalingv1alpha1.CronFederatedHPARule{rule("r", fmt.Sprintf("%d 0 * * *", m))})
	}
	var got []int
	for range 7 {
		got = append(got, p.queue[0].next.Minute())
		p.fire(p.queue[0].next)
	}
	if !slices.IsSorted(got) {
		t.Errorf("fired in order %v", got)
	}
}

// TestPlannerRun runs the timer loop on the real clock: a rule due every
// second is reported without polling.
func TestPlannerRun(t *testing.T) {
	t.Parallel()
	keys := make(chan string, 10)
	p := newPlanner(time.Now, time.UTC, func(k string) { keys <- k })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { p.run(ctx); close(done) }()
	// Planned after the loop started: sync must wake it.
	p.sync("ns/x", "", []autoscalingv1alpha1.CronFederatedHPARule{rule("r", "@every 1s")})
	select {
	case k := <-keys:
		if k != "ns/x" {
			t.Errorf("due key %q", k)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("rule not fired")
	}
	if len(p.takeDue("ns/x")) == 0 {
		t.Error("no due execution")
	}
	cancel()
	<-done
}

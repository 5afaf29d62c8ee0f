package status

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestReportLags(t *testing.T) {
	t0 := time.Unix(10000, 0)
	type obs struct {
		cluster string
		lag     time.Duration
		at      time.Duration // after t0
	}
	for _, tc := range []struct {
		name     string
		observed []obs
		cluster  string
		at       time.Duration
		want     time.Duration
	}{
		{"nothing observed: the fixed grace", nil, "m1", 0, workReportGrace},
		{"quick reports: the fixed grace", []obs{{"m1", 2 * time.Second, 0}}, "m1", time.Second, workReportGrace},
		{"late reports: half as long again", []obs{{"m1", 40 * time.Second, 0}}, "m1", time.Second, 60 * time.Second},
		{"the longest in memory counts", []obs{{"m1", 40 * time.Second, 0}, {"m1", 10 * time.Second, 10 * time.Second}}, "m1", 20 * time.Second, 60 * time.Second},
		{"bounded", []obs{{"m1", 10 * time.Minute, 0}}, "m1", time.Second, maxWorkReportGrace},
		{"forgotten after lagMemory", []obs{{"m1", 40 * time.Second, 0}}, "m1", lagMemory + time.Second, workReportGrace},
		{"a newer shorter lag replaces a forgotten one", []obs{{"m1", 80 * time.Second, 0}, {"m1", 22 * time.Second, lagMemory + time.Second}}, "m1", lagMemory + 2*time.Second, 33 * time.Second},
		{"per cluster", []obs{{"m1", 40 * time.Second, 0}}, "m2", time.Second, workReportGrace},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newReportLags()
			for _, o := range tc.observed {
				r.observe(o.cluster, o.lag, t0.Add(o.at))
			}
			if got := r.grace(tc.cluster, t0.Add(tc.at)); got != tc.want {
				t.Errorf("grace = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestWorkReportLagObserved: a Work's first Applied report tells how late
// its cluster's Works report, and the wait for that cluster follows.
func TestWorkReportLagObserved(t *testing.T) {
	f := newFixture(t, nil, nil)
	now := time.Unix(20000, 0)
	f.c.now = func() time.Time { return now }
	created := metav1.NewTime(now.Add(-50 * time.Second))
	old := work(t, "m1", "", "", nil)
	old.CreationTimestamp = created
	cur := work(t, "m1", metav1.ConditionTrue, "", nil)
	cur.CreationTimestamp = created
	cur.Status.Conditions[0].LastTransitionTime = metav1.NewTime(now.Add(-2 * time.Second))
	f.c.onWorkUpdate(old, cur)
	if got := f.c.lags.grace("m1", now); got != 72*time.Second {
		t.Errorf("grace after a report 48 s late: %v, want 72s", got)
	}
	// A second report of the same Work is no new observation.
	again := cur.DeepCopy()
	again.Status.Conditions[0].Message = "again"
	f.c.onWorkUpdate(cur, again)
	if got := f.c.lags.grace("m2", now); got != workReportGrace {
		t.Errorf("grace of another cluster: %v, want %v", got, workReportGrace)
	}
}

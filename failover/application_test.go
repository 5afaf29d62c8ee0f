package failover

import (
	"fmt"
	"strings"
	"testing"
	"time"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

func TestApplicationEvictions(t *testing.T) {
	targets := []workv1alpha2.TargetCluster{{Name: "m1", Replicas: 2}, {Name: "m2", Replicas: 1}}
	item := func(c string, h workv1alpha2.ResourceHealth) workv1alpha2.AggregatedStatusItem {
		return workv1alpha2.AggregatedStatusItem{ClusterName: c, Applied: true, Health: h}
	}
	for _, tc := range []struct {
		name      string
		status    []workv1alpha2.AggregatedStatusItem
		since     map[string]time.Time
		want      string // evicted clusters
		wantSince string
		wantAfter time.Duration
	}{
		{"all healthy", []workv1alpha2.AggregatedStatusItem{item("m1", "Healthy"), item("m2", "Healthy")}, nil, "", "map[]", 0},
		{"first seen unhealthy: the whole toleration", []workv1alpha2.AggregatedStatusItem{item("m1", "Unhealthy")}, nil, "", "map[m1:" + t0.String() + "]", time.Minute},
		{"unhealthy for 40s of 60s", []workv1alpha2.AggregatedStatusItem{item("m1", "Unhealthy")}, map[string]time.Time{"m1": t0.Add(-40 * time.Second)}, "", "map[m1:" + t0.Add(-40*time.Second).String() + "]", 20 * time.Second},
		{"unhealthy for 60s: evicted", []workv1alpha2.AggregatedStatusItem{item("m1", "Unhealthy"), item("m2", "Healthy")}, map[string]time.Time{"m1": t0.Add(-time.Minute)}, "m1", "map[m1:" + t0.Add(-time.Minute).String() + "]", 0},
		{"healthy again: forgotten", []workv1alpha2.AggregatedStatusItem{item("m1", "Healthy")}, map[string]time.Time{"m1": t0.Add(-time.Hour)}, "", "map[]", 0},
		{"unknown health is not unhealthy", []workv1alpha2.AggregatedStatusItem{item("m1", "Unknown")}, map[string]time.Time{"m1": t0.Add(-time.Hour)}, "", "map[]", 0},
		{"a cluster no longer scheduled to is forgotten", []workv1alpha2.AggregatedStatusItem{item("m3", "Unhealthy")}, map[string]time.Time{"m3": t0.Add(-time.Hour)}, "", "map[]", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evict, next, after := ApplicationEvictions(targets, tc.status, tc.since, time.Minute, t0)
			var got []string
			for _, e := range evict {
				got = append(got, e.Cluster)
				if e.Replicas != 2 || !strings.Contains(e.Message, "unhealthy in cluster m1") {
					t.Errorf("eviction %+v", e)
				}
			}
			if strings.Join(got, ",") != tc.want || fmt.Sprint(next) != tc.wantSince || after != tc.wantAfter {
				t.Errorf("got %v, since %v, after %v; want %q, %s, %v", got, next, after, tc.want, tc.wantSince, tc.wantAfter)
			}
		})
	}
}

func TestPreservedLabels(t *testing.T) {
	tasks := []workv1alpha2.GracefulEvictionTask{
		{FromCluster: "m1", ClustersBeforeFailover: []string{"m1", "m2"}, PreservedLabelState: map[string]string{"failover.example/replicas": "3", "shard": "a"}},
		{FromCluster: "m2", ClustersBeforeFailover: []string{"m2"}, PreservedLabelState: map[string]string{"shard": "b"}},
		{FromCluster: "m4", ClustersBeforeFailover: []string{"m4"}},
	}
	for _, tc := range []struct{ cluster, want string }{
		{"m3", "map[failover.example/replicas:3 shard:b]"}, // new to both: the later task wins
		{"m1", "map[shard:b]"},                             // ran there before the first failover
		{"m2", "map[]"},                                    // ran there before both
	} {
		if got := fmt.Sprint(PreservedLabels(tasks, tc.cluster)); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.cluster, got, tc.want)
		}
	}
}

func TestUnhealthySinceAnnotation(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 29, 22, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		since map[string]time.Time
		want  string
	}{
		{name: "none", want: ""},
		{name: "sorted, UTC, to the second", since: map[string]time.Time{
			"member2": t0.Add(1500 * time.Millisecond).In(time.FixedZone("x", 3600)), "member1": t0},
			want: `{"member1":"2026-11-29T22:00:00Z","member2":"2026-11-29T22:00:01Z"}`},
	}
	for _, tc := range tests {
		got := FormatUnhealthySince(tc.since)
		if got != tc.want {
			t.Errorf("%s: Format = %s, want %s", tc.name, got, tc.want)
		}
		back := ParseUnhealthySince(got)
		if len(back) != len(tc.since) {
			t.Errorf("%s: read back %v", tc.name, back)
		}
		for c, ts := range tc.since {
			if !back[c].Equal(ts.Truncate(time.Second)) {
				t.Errorf("%s: %s read back as %v, want %v", tc.name, c, back[c], ts.Truncate(time.Second))
			}
		}
		if FormatUnhealthySince(back) != got {
			t.Errorf("%s: not stable through a round trip", tc.name)
		}
	}
	if got := ParseUnhealthySince(`{"member1":"yesterday","member2":"2026-11-29T22:00:00Z"}`); len(got) != 1 || !got["member2"].Equal(t0) {
		t.Errorf("a bad entry: %v", got)
	}
	if got := ParseUnhealthySince(`not json`); got != nil {
		t.Errorf("not JSON: %v", got)
	}
}

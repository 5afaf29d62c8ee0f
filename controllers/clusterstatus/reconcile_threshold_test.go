package clusterstatus

import (
	"testing"
	"time"
)

func TestFailureThreshold(t *testing.T) {
	t.Parallel()
	type probe struct {
		at              time.Duration // after fixedNow
		ready, wasReady bool
		wantHold        bool
	}
	tests := []struct {
		name   string
		probes []probe
	}{
		{name: "a Ready cluster failing within the threshold is held, past it reported", probes: []probe{
			{at: 0, wasReady: true, wantHold: true},
			{at: 59 * time.Second, wasReady: true, wantHold: true},
			{at: time.Minute, wasReady: true, wantHold: false},
		}},
		{name: "a cluster never Ready is reported at once", probes: []probe{
			{at: 0, wantHold: false},
		}},
		{name: "a ready probe ends the failure: the next one starts anew", probes: []probe{
			{at: 0, wasReady: true, wantHold: true},
			{at: 30 * time.Second, ready: true, wasReady: true, wantHold: false},
			{at: 70 * time.Second, wasReady: true, wantHold: true},
		}},
		{name: "the failure runs from the first failed probe, Ready or not", probes: []probe{
			{at: 0, wantHold: false},
			{at: time.Minute, wasReady: true, wantHold: false},
		}},
		{name: "a ready probe is never held", probes: []probe{
			{at: 0, ready: true, wasReady: true, wantHold: false},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var now time.Time
			f := newFailureThreshold(time.Minute, func() time.Time { return now })
			for i, p := range tc.probes {
				now = fixedNow.Add(p.at)
				if got := f.hold("member1", p.ready, p.wasReady); got != p.wantHold {
					t.Errorf("probe %d: hold = %v, want %v", i, got, p.wantHold)
				}
			}
			// Another cluster's failures are its own.
			if f.hold("member2", false, true) != true {
				t.Error("member2's first failure not held")
			}
		})
	}
}

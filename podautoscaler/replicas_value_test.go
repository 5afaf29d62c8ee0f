package podautoscaler

import (
	"math"
	"strings"
	"testing"
)

// TestObjectAndExternal ports upstream's Object and External scenarios.
func TestObjectAndExternal(t *testing.T) {
	t.Parallel()
	const maxInt64 = math.MaxInt64
	cases := []struct {
		name       string
		kind       string // objectValue, objectAverage, externalValue, externalAverage
		current    int32
		pods       podSet
		values     []int64
		target     int64
		tolerances *Tolerances

		wantReplicas int32
		wantValue    int64
		wantErr      string
	}{
		{name: "object: scale up", kind: "objectValue", current: 3, pods: podSet{n: 3},
			values: []int64{20000}, target: 15000, wantReplicas: 4, wantValue: 20000},
		{name: "object: scale up counts only ready pods", kind: "objectValue", current: 3,
			pods:   podSet{n: 3, readiness: conditions(F, T, F)},
			values: []int64{50000}, target: 10000, wantReplicas: 5, wantValue: 50000},
		{name: "object: scale down", kind: "objectValue", current: 5, pods: podSet{n: 5},
			values: []int64{12000}, target: 20000, wantReplicas: 3, wantValue: 12000},
		{name: "object: within tolerance", kind: "objectValue", current: 3, pods: podSet{n: 3},
			values: []int64{20666}, target: 20000, wantReplicas: 3, wantValue: 20666},
		{name: "object: outside a 1% scale-up tolerance", kind: "objectValue", current: 3, pods: podSet{n: 3},
			tolerances: &Tolerances{ScaleDown: testingTolerance, ScaleUp: .01},
			values:     []int64{20666}, target: 20000, wantReplicas: 4, wantValue: 20666},
		{name: "object: replicas capped at max int32", kind: "objectValue", current: 3, pods: podSet{n: 3},
			values: []int64{maxInt64}, target: 1, wantReplicas: math.MaxInt32, wantValue: maxInt64},
		{name: "object: from zero ignores pods and tolerance", kind: "objectValue", current: 0,
			values: []int64{1050}, target: 1000, wantReplicas: 2, wantValue: 1050},
		{name: "object: from zero to zero", kind: "objectValue", current: 0,
			values: []int64{0}, target: 1000, wantReplicas: 0, wantValue: 0},
		{name: "object: no pods", kind: "objectValue", current: 3,
			values: []int64{50000}, target: 10000,
			wantErr: "unable to calculate ready pods: no pods returned by selector while calculating replica count"},
		{name: "object: no pods needed within tolerance", kind: "objectValue", current: 3,
			values: []int64{10000}, target: 10000, wantReplicas: 3, wantValue: 10000},

		{name: "object per pod: scale up", kind: "objectAverage", current: 3,
			values: []int64{20000}, target: 5000, wantReplicas: 4, wantValue: 6667},
		{name: "object per pod: scale down", kind: "objectAverage", current: 5,
			values: []int64{6000}, target: 2000, wantReplicas: 3, wantValue: 1200},
		{name: "object per pod: within tolerance", kind: "objectAverage", current: 4,
			values: []int64{20166}, target: 5000, wantReplicas: 4, wantValue: 5042},
		{name: "object per pod: outside a 1% scale-up tolerance", kind: "objectAverage", current: 4,
			tolerances: &Tolerances{ScaleDown: testingTolerance, ScaleUp: .01},
			values:     []int64{20208}, target: 5000, wantReplicas: 5, wantValue: 5052},

		{name: "external: scale up counts only ready pods", kind: "externalValue", current: 3,
			pods:   podSet{n: 3, readiness: conditions(F, T, F)},
			values: []int64{8600}, target: 4400, wantReplicas: 2, wantValue: 8600},
		{name: "external: scale down", kind: "externalValue", current: 5, pods: podSet{n: 5},
			values: []int64{8600}, target: 14334, wantReplicas: 3, wantValue: 8600},
		{name: "external: series are summed", kind: "externalValue", current: 2, pods: podSet{n: 2},
			values: []int64{3000, 3000}, target: 2000, wantReplicas: 6, wantValue: 6000},
		{name: "external: within tolerance", kind: "externalValue", current: 3, pods: podSet{n: 3},
			values: []int64{8600}, target: 8888, wantReplicas: 3, wantValue: 8600},
		{name: "external: outside a 1% scale-up tolerance", kind: "externalValue", current: 3, pods: podSet{n: 3},
			tolerances: &Tolerances{ScaleDown: testingTolerance, ScaleUp: .01},
			values:     []int64{8900}, target: 8800, wantReplicas: 4, wantValue: 8900},
		{name: "external: sum capped on overflow", kind: "externalValue", current: 3, pods: podSet{n: 3},
			values: []int64{maxInt64/2 + 1, maxInt64/2 + 1}, target: maxInt64, wantReplicas: 3, wantValue: maxInt64},
		{name: "external: from zero", kind: "externalValue", current: 0,
			values: []int64{2500}, target: 1000, wantReplicas: 3, wantValue: 2500},

		{name: "external per pod: scale up", kind: "externalAverage", current: 3,
			values: []int64{8600}, target: 2150, wantReplicas: 4, wantValue: 2867},
		{name: "external per pod: scale down", kind: "externalAverage", current: 5,
			values: []int64{8600}, target: 2867, wantReplicas: 3, wantValue: 1720},
		{name: "external per pod: within tolerance", kind: "externalAverage", current: 3,
			values: []int64{8600}, target: 2900, wantReplicas: 3, wantValue: 2867},
		{name: "external per pod: outside a 1% scale-up tolerance", kind: "externalAverage", current: 3,
			tolerances: &Tolerances{ScaleDown: testingTolerance, ScaleUp: .01},
			values:     []int64{8600}, target: 2800, wantReplicas: 4, wantValue: 2867},
		{name: "external per pod: replicas capped at max int32", kind: "externalAverage", current: 1,
			values: []int64{maxInt64}, target: 1, wantReplicas: math.MaxInt32, wantValue: maxInt64},
		{name: "external per pod: usage overflow", kind: "externalAverage", current: 1,
			values: []int64{maxInt64}, target: maxInt64, wantReplicas: 1, wantValue: maxInt64},
		{name: "external per pod: negative running sum counts as overflow", kind: "externalAverage", current: 1,
			values: []int64{maxInt64, 1}, target: maxInt64, wantReplicas: 1, wantValue: maxInt64},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			calc := testingCalculator(tc.tolerances)
			pods := tc.pods.build()
			var got ValueProposal
			var err error
			switch tc.kind {
			case "objectValue":
				got, err = calc.ObjectValue(tc.current, tc.target, tc.values[0], pods)
			case "objectAverage":
				got = calc.ObjectAverageValue(tc.current, tc.target, tc.values[0], testNow)
			case "externalValue":
				got, err = calc.ExternalValue(tc.current, tc.target, tc.values, pods)
			case "externalAverage":
				got = calc.ExternalAverageValue(tc.current, tc.target, tc.values, testNow)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if got.Replicas != tc.wantReplicas || got.Value != tc.wantValue {
				t.Errorf("got %+v, want replicas %d value %d", got, tc.wantReplicas, tc.wantValue)
			}
			// Like upstream, only the AverageValue targets report a timestamp.
			averaged := tc.kind == "objectAverage" || tc.kind == "externalAverage"
			if averaged != got.Timestamp.Equal(testNow) {
				t.Errorf("timestamp = %v", got.Timestamp)
			}
		})
	}
}

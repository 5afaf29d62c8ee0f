package soak

import (
	"math"
	"testing"
)

// rowsOf makes a replica's run from minute first with one value a minute.
func rowsOf(replica int, started float64, first int, values ...float64) []row {
	var out []row
	for i, v := range values {
		out = append(out, row{minute: first + i, replica: replica, started: started, up: true, heap: v})
	}
	return out
}

func flat(n int, v float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func TestGrowth(t *testing.T) {
	heap := func(r row) float64 { return r.heap }
	ramp := make([]float64, 25)
	for i := range ramp {
		ramp[i] = 100 + float64(i) // 1 MiB a minute
	}
	for _, tc := range []struct {
		name     string
		rows     []row
		want     float64
		measured bool
	}{
		{name: "too short a run", rows: rowsOf(0, 1, 1, flat(15, 100)...)},
		{name: "flat", rows: rowsOf(0, 1, 1, flat(25, 100)...), measured: true},
		// From the tenth minute (109, 110, 111) to the end (122, 123, 124).
		{name: "a steady climb", rows: rowsOf(0, 1, 1, ramp...), want: 123.0/110 - 1, measured: true},
		{name: "the first ten minutes do not count", rows: rowsOf(0, 1, 1, append([]float64{10, 20, 30, 40, 50, 60, 70, 80, 90}, flat(16, 100)...)...), measured: true},
		{
			name: "a restarted replica is a new run; the worst run counts",
			rows: append(rowsOf(0, 1, 1, flat(12, 100)...), append(rowsOf(0, 2, 13, flat(22, 50)...), rowsOf(1, 3, 1, ramp...)...)...),
			want: 123.0/110 - 1, measured: true,
		},
		{
			name:     "samples of a replica that was down are left out",
			rows:     append(rowsOf(0, 1, 1, flat(25, 100)...), row{minute: 26, replica: 0, up: false}),
			measured: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, measured := growth(tc.rows, heap)
			if measured != tc.measured || math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("growth %v (measured %v), want %v (%v)", got, measured, tc.want, tc.measured)
			}
		})
	}
}

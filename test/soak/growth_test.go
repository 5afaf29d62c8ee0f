package soak

import (
	"bytes"
	"encoding/csv"
	"math"
	"runtime"
	"runtime/pprof"
	"testing"
)

// rowsOf makes a replica's run from minute first with one heap value a
// minute, all in one role.
func rowsOf(replica int, started float64, leader bool, first int, values ...float64) []Row {
	var out []Row
	for i, v := range values {
		out = append(out, Row{Minute: first + i, Replica: replica, Started: started, Leader: leader, Up: true, GCGoal: v})
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
	live := func(r Row) float64 { return r.GCGoal }
	ramp := make([]float64, 25)
	for i := range ramp {
		ramp[i] = 100 + float64(i) // 1 MiB a minute
	}
	cat := func(parts ...[]Row) []Row {
		var out []Row
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	// A fault at minute 25 of a flat run: the last sample doubles.
	faulted := rowsOf(0, 1, true, 1, flat(25, 100)...)
	faulted[24].GCGoal, faulted[24].Fault = 200, "stopped member2"
	// A run whose first sample is a fault's minute still starts there.
	startedAtFault := rowsOf(0, 1, true, 1, ramp...)
	startedAtFault[0].Fault = "killed replica 1"
	for _, tc := range []struct {
		name     string
		rows     []Row
		all      bool
		want     float64
		measured int
	}{
		{name: "too short a run", rows: rowsOf(0, 1, true, 1, flat(15, 100)...)},
		{name: "flat", rows: rowsOf(0, 1, true, 1, flat(25, 100)...), measured: 1},
		// From the tenth minute (109, 110, 111) to the end (122, 123, 124).
		{name: "a steady climb", rows: rowsOf(0, 1, true, 1, ramp...), want: 123.0/110 - 1, measured: 1},
		{name: "the first ten minutes do not count", rows: rowsOf(0, 1, true, 1, append([]float64{10, 20, 30, 40, 50, 60, 70, 80, 90}, flat(16, 100)...)...), measured: 1},
		{
			name: "taking over is not growth: the spans of each role count apart",
			rows: cat(rowsOf(1, 1, false, 1, flat(15, 100)...), rowsOf(1, 1, true, 16, flat(15, 200)...)),
			// the standby span (minutes 10-15) is too short; the leader span
			// (16-30) is flat.
			measured: 1,
		},
		{
			name:     "a restarted replica is a new run; the worst span counts",
			rows:     cat(rowsOf(0, 1, true, 1, flat(12, 100)...), rowsOf(0, 2, true, 13, flat(22, 50)...), rowsOf(1, 3, true, 1, ramp...)),
			want:     123.0/110 - 1,
			measured: 2,
		},
		{name: "a sample at a fault's minute is left out", rows: faulted, measured: 1},
		// From (109, 110, 111) to (122, 123, 200).
		{name: "all samples: the fault's sample counts", rows: faulted, all: true, want: (100+100+200)/3.0/100 - 1, measured: 1},
		{name: "a run starting at a fault's minute is counted from its start", rows: startedAtFault, want: 123.0/110 - 1, measured: 1},
		{
			name:     "samples of a replica that was down are left out",
			rows:     append(rowsOf(0, 1, true, 1, flat(25, 100)...), Row{Minute: 26, Replica: 0}),
			measured: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, measured := Growth(tc.rows, live, !tc.all)
			if measured != tc.measured || math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("growth %v over %d spans, want %v over %d", got, measured, tc.want, tc.measured)
			}
		})
	}
}

// A row written as CSV reads back the same.
func TestCSVRoundTrip(t *testing.T) {
	rows := []Row{{Minute: 3, Replica: 1, Started: 1796013804, Leader: true, Up: true, Heap: 170.7, GCGoal: 188.5, RSS: 297.9, Goroutines: 2037,
		FDs: 105, Queue: 2, Diff: 1, Converge: 0.4, Fault: "stopped member1; killed replica 0", Live: 81.3}}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	_ = w.Write(CSVHeader)
	_ = w.Write(rows[0].Record())
	w.Flush()
	got, err := ReadCSV(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != rows[0] {
		t.Errorf("read back %+v, want %+v", got, rows)
	}
	if _, err := ReadCSV(bytes.NewBufferString("minute,replica\n1,0\n")); err == nil {
		t.Error("a CSV of other columns read")
	}
	// A recording made before the live heap was measured: no live_mib.
	buf.Reset()
	w = csv.NewWriter(&buf)
	_ = w.Write(CSVHeader[:len(CSVHeader)-1])
	rec := rows[0].Record()
	_ = w.Write(rec[:len(rec)-1])
	w.Flush()
	got, err = ReadCSV(&buf)
	want := rows[0]
	want.Live = 0
	if err != nil || len(got) != 1 || got[0] != want {
		t.Errorf("an older recording read back %+v, %v; want %+v", got, err, want)
	}
}

// The goal is judged on the live heap when the recording has it; an
// older one falls back to the GC's goal.
func TestHeapFigure(t *testing.T) {
	rows := []Row{{Up: true, GCGoal: 200, Live: 80}, {Up: false}}
	if f, name := HeapFigure(rows); f(rows[0]) != 80 || name != "live after a forced GC" {
		t.Errorf("with Live: %v, %q", f(rows[0]), name)
	}
	rows[0].Live = 0
	if f, name := HeapFigure(rows); f(rows[0]) != 200 || name != "the GC's goal" {
		t.Errorf("without Live: %v, %q", f(rows[0]), name)
	}
}

// LiveOfProfile reads the bytes in use of a heap profile: those this test
// holds are counted, within the profile's sampling.
func TestLiveOfProfile(t *testing.T) {
	held := make([][]byte, 0, 64)
	for range 64 {
		held = append(held, make([]byte, 1<<20))
	}
	runtime.GC()
	var buf bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&buf, 0); err != nil {
		t.Fatal(err)
	}
	live, err := LiveOfProfile(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if live < 60 || live > 200 {
		t.Errorf("live %.1f MiB while holding 64 MiB", live)
	}
	runtime.KeepAlive(held)
	buf.Reset()
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := LiveOfProfile(buf.Bytes()); err == nil {
		t.Error("a goroutine profile read as a heap profile")
	}
	if _, err := LiveOfProfile([]byte("not a profile")); err == nil {
		t.Error("garbage read as a profile")
	}
}

package soak

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/google/pprof/profile"
)

// Row is one replica's figures at one minute of a soak: a line of
// soak.csv, which hack/soakplot draws.
type Row struct {
	Minute  int
	Replica int
	// Started is the replica's process_start_time_seconds: it tells one
	// run of the replica from the next.
	Started float64
	Leader  bool
	// Up: the replica answered; the figures below are zero otherwise.
	Up        bool
	Heap, RSS float64 // MiB
	// GCGoal is the heap size at which the next GC starts (MiB): with
	// GOGC=100 the heap live after the last one, plus as much again and
	// the goroutines' stacks; it moves with when that collection ran.
	GCGoal float64
	// Live is the heap live after a collection the soak forces (MiB): the
	// bytes in use in a heap profile taken with gc=1. It is what the
	// process keeps, without the GC's timing or the goroutines' stacks
	// that move the GC's goal. Zero in recordings made before it was
	// measured.
	Live       float64
	Goroutines float64
	FDs        float64
	// Queue is workqueue_depth, summed over the replica's queues.
	Queue float64
	// Diff is the members' difference from their templates when the
	// workload paused; Converge how long it took to reach 0 (-1: it did
	// not within the settle time).
	Diff     int
	Converge float64
	Fault    string
	// Templates is how many templates the workload had at the pause.
	Templates int
}

// CSVHeader names the columns of soak.csv.
var CSVHeader = []string{"minute", "replica", "started", "leader", "up", "heap_mib", "gc_goal_mib", "rss_mib", "goroutines", "open_fds", "queue_depth", "diff", "converge_s", "fault", "templates", "live_mib"}

// Record is r as a line of soak.csv.
func (r Row) Record() []string {
	f1 := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
	return []string{strconv.Itoa(r.Minute), strconv.Itoa(r.Replica), strconv.FormatFloat(r.Started, 'f', 0, 64),
		strconv.FormatBool(r.Leader), strconv.FormatBool(r.Up), f1(r.Heap), f1(r.GCGoal), f1(r.RSS), f1(r.Goroutines), f1(r.FDs), f1(r.Queue),
		strconv.Itoa(r.Diff), f1(r.Converge), r.Fault, strconv.Itoa(r.Templates), f1(r.Live)}
}

// ReadCSV reads the rows of a soak.csv.
func ReadCSV(in io.Reader) ([]Row, error) {
	records, err := csv.NewReader(in).ReadAll()
	if err != nil {
		return nil, err
	}
	// Recordings made before live_mib was measured lack that last column.
	if len(records) == 0 || len(records[0]) != len(CSVHeader) && len(records[0]) != len(CSVHeader)-1 {
		return nil, fmt.Errorf("not a soak recording: want the columns %v", CSVHeader)
	}
	var out []Row
	for n, rec := range records[1:] {
		var r Row
		var errs []error
		atoi := func(s string) int {
			v, err := strconv.Atoi(s)
			errs = append(errs, err)
			return v
		}
		atof := func(s string) float64 {
			v, err := strconv.ParseFloat(s, 64)
			errs = append(errs, err)
			return v
		}
		r.Minute, r.Replica, r.Started = atoi(rec[0]), atoi(rec[1]), atof(rec[2])
		r.Leader, r.Up = rec[3] == "true", rec[4] == "true"
		r.Heap, r.GCGoal, r.RSS, r.Goroutines, r.FDs, r.Queue = atof(rec[5]), atof(rec[6]), atof(rec[7]), atof(rec[8]), atof(rec[9]), atof(rec[10])
		r.Diff, r.Converge, r.Fault, r.Templates = atoi(rec[11]), atof(rec[12]), rec[13], atoi(rec[14])
		if len(rec) > 15 {
			r.Live = atof(rec[15])
		}
		for _, err := range errs {
			if err != nil {
				return nil, fmt.Errorf("row %d: %w", n+2, err)
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// Growth is the largest relative growth of a figure over the spans in
// which a replica keeps one role (leader or standby) in one run, counted
// from the tenth minute of the run (its caches filled) for at least ten
// minutes: the mean of the last three samples over the mean of the first
// three (one sample of a heap is as much the GC's timing as the heap). A
// role change is not growth: a standby that takes over builds the
// leader's state. measured says how many spans qualified.
//
// With quiet, samples taken at the minute of a fault (a member stopped,
// a replica killed: the row names it) are left out: they measure the
// fault's transient (the member's informers and search store rebuilt,
// the unreachable member's writes retried), not what the process keeps.
// The soak's goal is judged on the quiet figure; both are reported.
func Growth(rows []Row, figure func(Row) float64, quiet bool) (worst float64, measured int) {
	type span struct {
		runStart int
		rows     []Row
	}
	runStart := map[string]int{}
	spans := map[string]*span{}
	var order []string
	for _, r := range rows {
		if !r.Up {
			continue
		}
		run := fmt.Sprintf("%d/%.0f", r.Replica, r.Started)
		if _, ok := runStart[run]; !ok {
			runStart[run] = r.Minute
		}
		if quiet && r.Fault != "" {
			continue
		}
		key := fmt.Sprintf("%s/%v", run, r.Leader)
		if spans[key] == nil {
			spans[key] = &span{runStart: runStart[run]}
			order = append(order, key)
		}
		spans[key].rows = append(spans[key].rows, r)
	}
	mean := func(rs []Row) float64 {
		sum := 0.0
		for _, r := range rs {
			sum += figure(r)
		}
		return sum / float64(len(rs))
	}
	for _, key := range order {
		s := spans[key]
		from := -1
		for i, r := range s.rows {
			if r.Minute-s.runStart >= 9 {
				from = i
				break
			}
		}
		rs := s.rows
		if from < 0 || rs[len(rs)-1].Minute-rs[from].Minute < 10 || len(rs)-from < 6 {
			continue
		}
		measured++
		if g := mean(rs[len(rs)-3:])/mean(rs[from:from+3]) - 1; g > worst {
			worst = g
		}
	}
	return worst, measured
}

// HeapFigure is the heap figure the soak's goal is judged on: the live
// heap after a forced collection (Live) when the recording has it, else
// the GC's goal (recordings made before Live was measured); name says
// which.
func HeapFigure(rows []Row) (figure func(Row) float64, name string) {
	for _, r := range rows {
		if r.Up && r.Live == 0 {
			return func(r Row) float64 { return r.GCGoal }, "the GC's goal"
		}
	}
	return func(r Row) float64 { return r.Live }, "live after a forced GC"
}

// LiveOfProfile is the heap in use (MiB) a heap profile records: after a
// collection when the profile was taken with gc=1.
func LiveOfProfile(raw []byte) (float64, error) {
	p, err := profile.ParseData(raw)
	if err != nil {
		return 0, err
	}
	idx := -1
	for i, st := range p.SampleType {
		if st.Type == "inuse_space" {
			idx = i
		}
	}
	if idx < 0 {
		return 0, errors.New("not a heap profile: no inuse_space")
	}
	var sum int64
	for _, s := range p.Sample {
		sum += s.Value[idx]
	}
	return float64(sum) / (1 << 20), nil
}

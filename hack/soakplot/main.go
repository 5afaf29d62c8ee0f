// Command soakplot draws the curves of a soak's recording (the CSV
// test/soak writes, one row per replica and minute) as a PNG: heap in use,
// the live heap after a forced GC, the GC's goal, resident memory,
// goroutines, open files and queue depth of each replica, and the
// members' difference from their templates at each minute's pause, with
// the faults marked; and prints the growth figures (test/soak Growth).
// With -profiles, a recording made before the soak measured the live
// heap gets it from the heap profiles the soak kept
// (FLOTILLA_SOAK_PROFILES=1), and is written back to -in.
//
//	go run ./hack/soakplot [-in _output/soak/soak.csv] [-out _output/soak/soak.png] [-profiles _output/soak/profiles]
package main

import (
	"bytes"
	"encoding/csv"
	"flag"
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/flotilla-io/flotilla/test/soak"
)

func main() {
	in := flag.String("in", "_output/soak/soak.csv", "the soak's recording")
	out := flag.String("out", "_output/soak/soak.png", "the image to write")
	profiles := flag.String("profiles", "", "fill the live heap of rows without it from the heap profiles kept in this directory (m<minute>-r<replica>-<role>.pprof), and write the recording back")
	flag.Parse()
	if *profiles != "" {
		if err := fillLive(*in, *profiles); err != nil {
			fmt.Fprintln(os.Stderr, "soakplot:", err)
			os.Exit(1)
		}
	}
	if err := run(*in, *out, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "soakplot:", err)
		os.Exit(1)
	}
}

// panels are the figures drawn, with their titles; per replica unless
// perReplica is false (the fleet's figures, recorded alike for each).
var panels = []struct {
	title      string
	value      func(soak.Row) float64
	perReplica bool
}{
	{"heap in use (MiB)", func(r soak.Row) float64 { return r.Heap }, true},
	{"live heap after a forced GC (MiB)", func(r soak.Row) float64 { return r.Live }, true},
	{"GC goal (MiB)", func(r soak.Row) float64 { return r.GCGoal }, true},
	{"resident memory (MiB)", func(r soak.Row) float64 { return r.RSS }, true},
	{"goroutines", func(r soak.Row) float64 { return r.Goroutines }, true},
	{"open files", func(r soak.Row) float64 { return r.FDs }, true},
	{"controllers' queue depth", func(r soak.Row) float64 { return r.Queue }, true},
	{"member objects differing from templates (at the pause)", func(r soak.Row) float64 { return float64(r.Diff) }, false},
	{"seconds to match again (at the pause)", func(r soak.Row) float64 { return r.Converge }, false},
	{"templates", func(r soak.Row) float64 { return float64(r.Templates) }, false},
}

// readRecording reads the rows of the recording in.
func readRecording(in string) ([]soak.Row, error) {
	f, err := os.Open(in)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	rows, err := soak.ReadCSV(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", in, err)
	}
	return rows, nil
}

func run(in, out string, report io.Writer) error {
	samples, err := readRecording(in)
	if err != nil {
		return err
	}
	if len(samples) == 0 {
		return fmt.Errorf("%s holds no samples", in)
	}
	replicas := 0
	for _, s := range samples {
		replicas = max(replicas, s.Replica+1)
	}
	colors := []color.Color{color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}}
	plots := make([][]*plot.Plot, (len(panels)+1)/2)
	for i, pn := range panels {
		p := plot.New()
		p.Title.Text = pn.title
		p.X.Label.Text = "minute"
		perReplica := pn.perReplica
		for r := 0; r < replicas; r++ {
			if !perReplica && r > 0 {
				break
			}
			var pts plotter.XYs
			for _, s := range samples {
				if s.Replica != r || perReplica && !s.Up {
					continue
				}
				pts = append(pts, plotter.XY{X: float64(s.Minute), Y: pn.value(s)})
			}
			if len(pts) == 0 {
				continue
			}
			line, err := plotter.NewLine(pts)
			if err != nil {
				return err
			}
			line.Color = colors[r%len(colors)]
			p.Add(line)
			if perReplica {
				p.Legend.Add(fmt.Sprintf("replica %d", r), line)
			}
		}
		// The faults: a point at the bottom of each minute that had one.
		var marks plotter.XYs
		for _, s := range samples {
			if s.Replica == 0 && s.Fault != "" {
				marks = append(marks, plotter.XY{X: float64(s.Minute), Y: 0})
			}
		}
		if len(marks) > 0 {
			sc, err := plotter.NewScatter(marks)
			if err != nil {
				return err
			}
			sc.Shape = draw.TriangleGlyph{}
			sc.Color = color.Gray{Y: 0x60}
			p.Add(sc)
			if i == 0 {
				p.Legend.Add("fault (member stopped, replica killed)", sc)
			}
		}
		p.Y.Min = 0
		plots[i/2] = append(plots[i/2], p)
	}
	if last := len(plots) - 1; len(plots[last]) < 2 {
		plots[last] = append(plots[last], nil) // an empty tile
	}
	img := vgimg.New(vg.Points(1200), vg.Points(300*float64(len(plots))))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: len(plots), Cols: 2, PadX: vg.Points(10), PadY: vg.Points(10),
		PadTop: vg.Points(5), PadBottom: vg.Points(5), PadLeft: vg.Points(5), PadRight: vg.Points(5)}
	canvases := plot.Align(plots, tiles, dc)
	for i := range plots {
		for j := range plots[i] {
			if plots[i][j] == nil {
				continue
			}
			plots[i][j].Draw(canvases[i][j])
		}
	}
	w, err := os.Create(out)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(w); err != nil {
		_ = w.Close()
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return summarize(samples, report)
}

// summarize prints the growth figures of the recording (soak.Growth).
func summarize(rows []soak.Row, report io.Writer) error {
	live, name := soak.HeapFigure(rows)
	heap, spans := soak.Growth(rows, live, true)
	heapAll, _ := soak.Growth(rows, live, false)
	goal, _ := soak.Growth(rows, func(r soak.Row) float64 { return r.GCGoal }, true)
	gor, _ := soak.Growth(rows, func(r soak.Row) float64 { return r.Goroutines }, true)
	minutes, matched, worst := 0, 0, 0.0
	for _, r := range rows {
		if r.Replica != 0 {
			continue
		}
		minutes++
		if r.Converge >= 0 {
			matched++
			worst = max(worst, r.Converge)
		}
	}
	_, err := fmt.Fprintf(report, "%d minutes; growth while a replica keeps its role, from its run's 10th minute (%d spans), leaving out the samples taken at a fault's minute: live heap (%s) %.1f %% (%.1f %% with them; the GC's goal %.1f %%), goroutines %.1f %%; members matched their templates at %d of %d pauses, within %.1f s at worst\n",
		minutes, spans, name, 100*heap, 100*heapAll, 100*goal, 100*gor, matched, minutes, worst)
	return err
}

// fillLive sets the live heap of the rows of the recording in that lack
// it from the heap profiles in dir, and writes the recording back.
func fillLive(in, dir string) error {
	rows, err := readRecording(in)
	if err != nil {
		return err
	}
	filled := 0
	for i, r := range rows {
		if !r.Up || r.Live != 0 {
			continue
		}
		role := "standby"
		if r.Leader {
			role = "leader"
		}
		raw, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("m%02d-r%d-%s.pprof", r.Minute, r.Replica, role)))
		if err != nil {
			return fmt.Errorf("minute %d replica %d: %w", r.Minute, r.Replica, err)
		}
		if rows[i].Live, err = soak.LiveOfProfile(raw); err != nil {
			return fmt.Errorf("minute %d replica %d: %w", r.Minute, r.Replica, err)
		}
		filled++
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	_ = w.Write(soak.CSVHeader)
	for _, r := range rows {
		_ = w.Write(r.Record())
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	fmt.Printf("live heap of %d rows from %s\n", filled, dir)
	return os.WriteFile(in, buf.Bytes(), 0o644)
}

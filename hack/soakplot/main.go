// Command soakplot draws the curves of a soak's recording (the CSV
// test/soak writes, one row per replica and minute) as a PNG: heap in use,
// resident memory, goroutines and open files of each replica, and the
// members' difference from their templates at each minute's pause, with
// the faults marked.
//
//	go run ./hack/soakplot [-in _output/soak/soak.csv] [-out _output/soak/soak.png]
package main

import (
	"encoding/csv"
	"flag"
	"fmt"
	"image/color"
	"os"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

func main() {
	in := flag.String("in", "_output/soak/soak.csv", "the soak's recording")
	out := flag.String("out", "_output/soak/soak.png", "the image to write")
	flag.Parse()
	if err := run(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "soakplot:", err)
		os.Exit(1)
	}
}

// sample is one row of the recording.
type sample struct {
	minute, replica int
	up              bool
	values          map[string]float64
	fault           string
}

// panels are the figures drawn, by CSV column, with their titles.
var panels = []struct{ column, title string }{
	{"heap_mib", "heap in use (MiB)"},
	{"gc_goal_mib", "GC goal: twice the live heap (MiB)"},
	{"rss_mib", "resident memory (MiB)"},
	{"goroutines", "goroutines"},
	{"open_fds", "open files"},
	{"queue_depth", "controllers' queue depth"},
	{"diff", "member objects differing from templates (at the pause)"},
	{"converge_s", "seconds to match again (at the pause)"},
}

func run(in, out string) error {
	samples, replicas, err := read(in)
	if err != nil {
		return err
	}
	if len(samples) == 0 {
		return fmt.Errorf("%s holds no samples", in)
	}
	colors := []color.Color{color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}}
	plots := make([][]*plot.Plot, (len(panels)+1)/2)
	for i, pn := range panels {
		p := plot.New()
		p.Title.Text = pn.title
		p.X.Label.Text = "minute"
		perReplica := pn.column != "diff" && pn.column != "converge_s"
		for r := 0; r < replicas; r++ {
			if !perReplica && r > 0 {
				break
			}
			var pts plotter.XYs
			for _, s := range samples {
				if s.replica != r || perReplica && !s.up {
					continue
				}
				pts = append(pts, plotter.XY{X: float64(s.minute), Y: s.values[pn.column]})
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
			if s.replica == 0 && s.fault != "" {
				marks = append(marks, plotter.XY{X: float64(s.minute), Y: 0})
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
	img := vgimg.New(vg.Points(1200), vg.Points(300*float64(len(plots))))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: len(plots), Cols: 2, PadX: vg.Points(10), PadY: vg.Points(10),
		PadTop: vg.Points(5), PadBottom: vg.Points(5), PadLeft: vg.Points(5), PadRight: vg.Points(5)}
	canvases := plot.Align(plots, tiles, dc)
	for i := range plots {
		for j := range plots[i] {
			plots[i][j].Draw(canvases[i][j])
		}
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// read parses the recording; it returns the samples and how many
// replicas there were.
func read(path string) ([]sample, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer func() { _ = f.Close() }()
	records, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, 0, err
	}
	if len(records) == 0 {
		return nil, 0, fmt.Errorf("%s is empty", path)
	}
	col := map[string]int{}
	for i, name := range records[0] {
		col[name] = i
	}
	for _, need := range []string{"minute", "replica", "up", "fault"} {
		if _, ok := col[need]; !ok {
			return nil, 0, fmt.Errorf("%s has no column %q", path, need)
		}
	}
	var out []sample
	replicas := 0
	for n, rec := range records[1:] {
		s := sample{values: map[string]float64{}, fault: rec[col["fault"]]}
		if s.minute, err = strconv.Atoi(rec[col["minute"]]); err != nil {
			return nil, 0, fmt.Errorf("row %d: %w", n+2, err)
		}
		if s.replica, err = strconv.Atoi(rec[col["replica"]]); err != nil {
			return nil, 0, fmt.Errorf("row %d: %w", n+2, err)
		}
		s.up = rec[col["up"]] == "true"
		for _, pn := range panels {
			i, ok := col[pn.column]
			if !ok {
				return nil, 0, fmt.Errorf("%s has no column %q", path, pn.column)
			}
			if s.values[pn.column], err = strconv.ParseFloat(rec[i], 64); err != nil {
				return nil, 0, fmt.Errorf("row %d, %s: %w", n+2, pn.column, err)
			}
		}
		replicas = max(replicas, s.replica+1)
		out = append(out, s)
	}
	return out, replicas, nil
}

package main

import (
	"bytes"
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"testing"

	"github.com/flotilla-io/flotilla/test/soak"
)

// TestPlot draws a small recording of two replicas, a restart and a fault,
// and checks the image, and that a recording missing a column is refused.
func TestPlot(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString(strings.Join(soak.CSVHeader, ",") + "\n")
	for m := 1; m <= 20; m++ {
		fault := ""
		if m%5 == 2 {
			fault = "stopped member1"
		}
		for r := range 2 {
			up := r != 1 || m != 8
			fmt.Fprintf(&b, "%d,%d,%d,%v,%v,%d,%d,%d,%d,%d,0,%d,%.1f,%s,%d,%d\n", m, r, 1000+r, r == 0, up, 100+m, 150+m, 200+m, 900+r, 80, m%3, float64(m%4), fault, 120+m%5, 70+m%2)
		}
	}
	in, out := filepath.Join(dir, "soak.csv"), filepath.Join(dir, "soak.png")
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var report bytes.Buffer
	if err := run(in, out, &report); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	if w, h := img.Bounds().Dx(), img.Bounds().Dy(); w < 1000 || h < 600 {
		t.Errorf("image %dx%d, want at least 1000x600", w, h)
	}
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte("minute,replica,up,fault\n1,0,true,\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(report.String(), "20 minutes;") || !strings.Contains(report.String(), "goroutines 0.0 %") {
		t.Errorf("report %q", report.String())
	}
	if err := run(bad, filepath.Join(dir, "bad.png"), &report); err == nil || !strings.Contains(err.Error(), "heap_mib") {
		t.Errorf("a recording without heap_mib: %v, want refused", err)
	}
}

// TestFillLive: a recording made before the soak measured the live heap
// gets it from the profiles kept beside it.
func TestFillLive(t *testing.T) {
	dir := t.TempDir()
	var prof bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&prof, 0); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString(strings.Join(soak.CSVHeader[:len(soak.CSVHeader)-1], ",") + "\n")
	for m := 1; m <= 2; m++ {
		for r := range 2 {
			role := "standby"
			if r == 0 {
				role = "leader"
			}
			fmt.Fprintf(&b, "%d,%d,1000,%v,true,100,150,200,900,80,0,0,0.4,,120\n", m, r, r == 0)
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("m%02d-r%d-%s.pprof", m, r, role)), prof.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	in := filepath.Join(dir, "soak.csv")
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := fillLive(in, dir); err != nil {
		t.Fatal(err)
	}
	rows, err := readRecording(in)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := soak.LiveOfProfile(prof.Bytes())
	for _, r := range rows {
		if r.Live == 0 || math.Abs(r.Live-want) > 0.1 {
			t.Errorf("minute %d replica %d: live %.1f, want %.1f", r.Minute, r.Replica, r.Live, want)
		}
	}
	// A missing profile is an error, not a zero.
	if err := os.Remove(filepath.Join(dir, "m01-r0-leader.pprof")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := fillLive(in, dir); err == nil {
		t.Error("a missing profile did not fail")
	}
}

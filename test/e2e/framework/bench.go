package framework

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/test/env"
)

// RecordBench prints a benchmark's figures and appends them to
// _output/bench/<name>.
func RecordBench(t *testing.T, name, text string) {
	t.Helper()
	fmt.Print(text)
	root, err := env.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "_output", "bench")
	_ = os.MkdirAll(dir, 0o755)
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(text); err != nil {
		_ = f.Close()
		t.Fatal(err)
	}
	if err := f.Close(); err != nil { // the line is on disk only once closed
		t.Fatal(err)
	}
}

// Percentile returns the p-th (0..1) of durations, nearest rank below.
func Percentile(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[int(float64(len(s)-1)*p)]
}

package placement

import (
	"errors"
	"testing"

	pt "github.com/flotilla-io/flotilla/placement/placementtest"
)

// cand is a candidate named name with available replicas.
func cand(name string, available int64, opts ...pt.ClusterOpt) candidate {
	return candidate{cluster: pt.Cluster(name, opts...), available: available}
}

// held is a candidate the binding already runs on (ClusterLocality 100).
func held(c candidate) candidate {
	c.score = 100
	return c
}

// checkErr compares an error with the wanted Scheduled reason and message
// ("" reason: no error). It reports whether err was nil.
func checkErr(t *testing.T, err error, wantReason, wantMessage string) bool {
	t.Helper()
	if wantReason == "" {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return true
	}
	var se *Error
	if !errors.As(err, &se) {
		t.Fatalf("error = %v, want a placement.Error with reason %s", err, wantReason)
	}
	if se.Reason != wantReason || se.Message != wantMessage {
		t.Errorf("error = %s: %q, want %s: %q", se.Reason, se.Message, wantReason, wantMessage)
	}
	return false
}

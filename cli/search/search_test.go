package search

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

func TestRunSearch(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	answer := `{"total":3,"items":[
	 {"kind":"Deployment","metadata":{"name":"web","namespace":"shop","creationTimestamp":"2026-11-25T11:00:00Z","annotations":{"resource.karmada.io/cached-from-cluster":"member1"}}},
	 {"kind":"Node","metadata":{"name":"n1","creationTimestamp":"2026-11-23T12:00:00Z","annotations":{"resource.karmada.io/cached-from-cluster":"member2"}}}],
	 "facets":{"cluster":[{"term":"member1","count":2},{"term":"member2","count":1}],"kind":[{"term":"Deployment","count":2},{"term":"Node","count":1}]}}`
	for _, tc := range []struct {
		name   string
		body   string
		err    error
		want   []string
		errMsg string
	}{
		{name: "table and facets", body: answer, want: []string{
			"CLUSTER   KIND         NAMESPACE   NAME   AGE",
			"member1   Deployment   shop        web    60m",
			"member2   Node         <none>      n1     2d",
			"2 of 3 matches (from 0).",
			"By cluster: member1 (2), member2 (1)",
			"By kind: Deployment (2), Node (1)",
		}},
		{name: "nothing found", body: `{"total":0,"items":[]}`, want: []string{`No objects match "q".`}},
		{name: "the server's message", err: apierrors.NewBadRequest("invalid query at position 7: unexpected end"), errMsg: "invalid query at position 7"},
		{name: "not JSON", body: "<html>", errMsg: "reading the answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var gotQ string
			get := func(_ context.Context, q string, from, size int) ([]byte, error) {
				gotQ = q
				return []byte(tc.body), tc.err
			}
			var out bytes.Buffer
			err := runSearch(t.Context(), get, "q", 0, 50, now, &out)
			if tc.errMsg != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errMsg) {
					t.Fatalf("error %v, want %q", err, tc.errMsg)
				}
				return
			}
			if err != nil || gotQ != "q" {
				t.Fatalf("error %v, query %q", err, gotQ)
			}
			for _, line := range tc.want {
				if !strings.Contains(out.String(), line) {
					t.Errorf("output lacks %q:\n%s", line, out.String())
				}
			}
		})
	}
}

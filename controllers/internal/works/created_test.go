package works

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
)

func TestCreated(t *testing.T) {
	t.Parallel()
	work := func(ns, owner string) *workv1alpha1.Work {
		return &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w", Labels: map[string]string{"owner": owner}}}
	}
	names := func(ws []*workv1alpha1.Work) map[string]bool {
		out := map[string]bool{}
		for _, w := range ws {
			out[w.Namespace] = true
		}
		return out
	}
	const ttl = time.Minute
	start := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		// run acts on c, the clock at start; it returns what With("o1",
		// stored) then gives, by namespace, and the remembered count.
		run       func(c *Created, clock *time.Time) ([]*workv1alpha1.Work, int)
		want      map[string]bool
		wantCount int
	}{{
		name: "created, not delivered: read as stored",
		run: func(c *Created, _ *time.Time) ([]*workv1alpha1.Work, int) {
			c.Remember(work("a", "o1"))
			c.Remember(work("b", "o1"))
			c.Remember(work("a2", "o2"))
			return c.With("o1", nil), c.Len()
		},
		want: map[string]bool{"a": true, "b": true}, wantCount: 3,
	}, {
		name: "the informer has one: not doubled, forgotten",
		run: func(c *Created, _ *time.Time) ([]*workv1alpha1.Work, int) {
			c.Remember(work("a", "o1"))
			c.Remember(work("b", "o1"))
			return c.With("o1", []*workv1alpha1.Work{work("a", "o1")}), c.Len()
		},
		want: map[string]bool{"a": true, "b": true}, wantCount: 1,
	}, {
		name: "delivered through the handler, then deleted: gone",
		run: func(c *Created, _ *time.Time) ([]*workv1alpha1.Work, int) {
			w := work("a", "o1")
			c.Remember(w)
			c.Handler().OnAdd(w, false)
			c.Remember(work("b", "o1"))
			c.Handler().OnDelete(cache.DeletedFinalStateUnknown{Key: "b/w", Obj: work("b", "o1")})
			return c.With("o1", nil), c.Len()
		},
		want: map[string]bool{}, wantCount: 0,
	}, {
		name: "deleted by the controller: forgotten",
		run: func(c *Created, _ *time.Time) ([]*workv1alpha1.Work, int) {
			c.Remember(work("a", "o1"))
			c.Forget("a", "w")
			return c.With("o1", nil), c.Len()
		},
		want: map[string]bool{}, wantCount: 0,
	}, {
		name: "expired: not read, forgotten",
		run: func(c *Created, clock *time.Time) ([]*workv1alpha1.Work, int) {
			c.Remember(work("a", "o1"))
			*clock = clock.Add(ttl / 2)
			c.Remember(work("b", "o1"))
			*clock = clock.Add(ttl/2 + time.Second)
			return c.With("o1", nil), c.Len()
		},
		want: map[string]bool{"b": true}, wantCount: 1,
	}, {
		name: "expired Works of owners never read again are swept by a later creation",
		run: func(c *Created, clock *time.Time) ([]*workv1alpha1.Work, int) {
			c.Remember(work("a", "o2"))
			c.Remember(work("b", "o3"))
			*clock = clock.Add(2 * ttl)
			c.Remember(work("c", "o1"))
			return c.With("o1", nil), c.Len()
		},
		want: map[string]bool{"c": true}, wantCount: 1,
	}, {
		name: "a Work without owner is not remembered",
		run: func(c *Created, _ *time.Time) ([]*workv1alpha1.Work, int) {
			c.Remember(work("a", ""))
			return c.With("", nil), c.Len()
		},
		want: map[string]bool{}, wantCount: 0,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clock := start
			c := NewCreated(ttl, func(w *workv1alpha1.Work) string { return w.Labels["owner"] })
			c.now = func() time.Time { return clock }
			got, n := tc.run(c, &clock)
			if g := names(got); len(g) != len(tc.want) || len(got) != len(tc.want) {
				t.Errorf("With = %v, want %v", g, tc.want)
			} else {
				for k := range tc.want {
					if !g[k] {
						t.Errorf("With = %v, want %v", g, tc.want)
					}
				}
			}
			if n != tc.wantCount {
				t.Errorf("%d remembered, want %d", n, tc.wantCount)
			}
		})
	}
}

func TestCreatedGet(t *testing.T) {
	t.Parallel()
	const ttl = time.Minute
	clock := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	c := NewCreated(ttl, func(w *workv1alpha1.Work) string { return w.Namespace })
	c.now = func() time.Time { return clock }
	c.Remember(&workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "w"}})
	if w, ok := c.Get("a", "w"); !ok || w.Name != "w" {
		t.Errorf("Get(a/w) = %v, %v; want the created Work", w, ok)
	}
	if _, ok := c.Get("a", "other"); ok {
		t.Error("Get(a/other) found a Work never created")
	}
	clock = clock.Add(ttl + time.Second)
	if _, ok := c.Get("a", "w"); ok {
		t.Error("Get(a/w) found the Work after it expired")
	}
	if n := c.Len(); n != 0 {
		t.Errorf("%d remembered after the expired Get, want 0", n)
	}
}

package index

import (
	"context"
	"testing"
)

func TestSmoke(t *testing.T) {
	ix := openTest(t, Options{})
	for i := 0; i < 50; i++ {
		k, o := kwokPod("member1", i)
		ix.Put(k, o)
	}
	mustFlush(t, ix)
	for _, q := range []string{"", "*", "kind:pod", "image:nginx*", "image:redis", "phase:running ns-3", "nginx", "labels.app:web-1", "-kind:Pod", `image:"nginx:1.19"`, "condition:ready=true", "text:\"kwok node\"", "secretword", "managedfieldsonly", "apiVersion:v1", "group:core", "name:pod-1*"} {
		r, err := ix.Search(context.Background(), Request{Query: q, Size: 3})
		if err != nil {
			t.Errorf("%q: %v", q, err)
			continue
		}
		t.Logf("%q: total %d hits %v facets %v", q, r.Total, r.Hits, r.Facets["kind"])
	}
	t.Logf("%+v", ix.Stats())
}

package manager

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned/fake"
	"github.com/flotilla-io/flotilla/apis/generated/informers/externalversions"
)

// The controllers read the process's Cluster informer: their factory hands
// it out, its Start never runs it (its owner does, under the server's
// lifetime, not a lease's), and nothing lists or watches Clusters besides it.
func TestUseClusterInformer(t *testing.T) {
	t.Parallel()
	owner := fake.NewSimpleClientset(&clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1"}})
	shared := externalversions.NewSharedInformerFactory(owner, 0).Cluster().V1alpha1().Clusters().Informer()
	lists := func() int {
		n := 0
		for _, a := range owner.Actions() {
			if a.GetVerb() == "list" {
				n++
			}
		}
		return n
	}

	client := fake.NewSimpleClientset()
	c := &Context{KarmadaInformers: externalversions.NewSharedInformerFactory(client, 0)}
	c.UseClusterInformer(shared)
	clusters := c.KarmadaInformers.Cluster().V1alpha1().Clusters()

	// The controllers' factory starts under a lease, which ends: had Start
	// run the shared informer, it would now be stopped for good.
	leaseCtx, loseLease := context.WithCancel(context.Background())
	c.KarmadaInformers.Start(leaseCtx.Done())
	loseLease()
	c.KarmadaInformers.Shutdown() // waits for what Start ran
	if shared.IsStopped() || lists() != 0 {
		t.Fatalf("the controllers' factory ran the shared informer (stopped %t, %d lists)", shared.IsStopped(), lists())
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go shared.RunWithContext(ctx) // its owner
	syncCtx, stop := context.WithTimeout(ctx, 10*time.Second)
	defer stop()
	if !cache.WaitForCacheSync(syncCtx.Done(), clusters.Informer().HasSynced) {
		t.Fatal("the controllers' Cluster informer never synced")
	}
	if _, err := clusters.Lister().Get("member1"); err != nil {
		t.Errorf("the controllers' lister: %v", err)
	}
	if got := lists(); got != 1 {
		t.Errorf("Clusters listed %d times, want 1", got)
	}
	for _, a := range client.Actions() {
		if a.GetResource().Resource == "clusters" {
			t.Errorf("the controllers' client %s clusters itself", a.GetVerb())
		}
	}
}

// "*" enables every controller but those off by default, which run only
// when named; "-name" always wins.
func TestEnabled(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		list []string
		want bool
	}{
		{"scheduler", []string{"*"}, true},
		{"scheduler", []string{"*", "-scheduler"}, false},
		{"scheduler", []string{"binding"}, false},
		{"descheduler", []string{"*"}, false},
		{"descheduler", []string{"*", "descheduler"}, true},
		{"descheduler", []string{"descheduler", "-descheduler"}, false},
	} {
		if got := Enabled(tc.name, tc.list); got != tc.want {
			t.Errorf("Enabled(%s, %v) = %t, want %t", tc.name, tc.list, got, tc.want)
		}
	}
	if got := DisabledByDefault(); len(got) != 1 || got[0] != "descheduler" {
		t.Errorf("DisabledByDefault() = %v", got)
	}
	if err := Validate([]string{"*", "descheduler"}); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

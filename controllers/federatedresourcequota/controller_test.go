package federatedresourcequota

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	karmadafake "github.com/flotilla-io/flotilla/apis/generated/clientset/versioned/fake"
	"github.com/flotilla-io/flotilla/apis/generated/informers/externalversions"
	"github.com/flotilla-io/flotilla/apis/work/mutation"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	"github.com/flotilla-io/flotilla/names"
)

// TestRun runs both controllers on one informer factory over a fake
// flotilla-apiserver: a quota's Works appear, the status the execution
// controller would reflect into them reaches the quota, overallUsed follows
// the bindings' scheduling results as they are written, and the Works go
// with the quota.
func TestRun(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	quota := newQuota("member1", resources("cpu=4"), "member2", resources("cpu=2"))
	client := karmadafake.NewSimpleClientset(quota,
		&clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1"}},
		&clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member2"}})
	// flotilla-apiserver mutates the Works it creates (the permanent ids);
	// patches bring what is mutated already.
	client.PrependReactor("create", "works", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if w, ok := a.(clienttesting.CreateAction).GetObject().(*workv1alpha1.Work); ok {
			return false, nil, mutation.MutateWork(w, true)
		}
		return false, nil, nil
	})
	f := externalversions.NewSharedInformerFactory(client, 0)
	rec := record.NewFakeRecorder(100)
	p, w := f.Policy().V1alpha1().FederatedResourceQuotas(), f.Work().V1alpha1().Works()
	status, err := NewStatus(p, w, f.Work().V1alpha2().ResourceBindings(), client, rec)
	if err != nil {
		t.Fatal(err)
	}
	sync, err := NewSync(p, w, f.Cluster().V1alpha1().Clusters(), client, rec)
	if err != nil {
		t.Fatal(err)
	}
	f.Start(ctx.Done())
	go sync.Run(ctx, 1)
	go status.Run(ctx, 1)

	workName := names.WorkName("ResourceQuota", "q", "ns")
	poll := func(what string, cond func() (bool, error)) {
		t.Helper()
		if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
			return cond()
		}); err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
	}
	poll("the Works", func() (bool, error) {
		for _, c := range []string{"member1", "member2"} {
			if _, err := client.WorkV1alpha1().Works(names.ExecutionNamespace(c)).Get(ctx, workName, metav1.GetOptions{}); err != nil {
				return false, nil
			}
		}
		return true, nil
	})

	// What the execution controller would write.
	for c, st := range map[string]string{"member1": quotaStatus(`"cpu":"4"`, `"cpu":"1"`), "member2": quotaStatus(`"cpu":"2"`, `"cpu":"2"`)} {
		wk, err := client.WorkV1alpha1().Works(names.ExecutionNamespace(c)).Get(ctx, workName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		wk.Status = reflectedWork(c, true, st).Status
		if _, err := client.WorkV1alpha1().Works(wk.Namespace).UpdateStatus(ctx, wk, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	poll("the status", func() (bool, error) {
		q, err := client.PolicyV1alpha1().FederatedResourceQuotas("ns").Get(ctx, "q", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		used := q.Status.OverallUsed[("cpu")]
		return len(q.Status.AggregatedStatus) == 2 && used.String() == "3", nil
	})
	// A quota without static assignments: a scheduling result written,
	// overallUsed follows at once.
	pooled := newQuota()
	pooled.Namespace = "pool"
	if _, err := client.PolicyV1alpha1().FederatedResourceQuotas("pool").Create(ctx, pooled, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	web := scheduledBinding("web", "500m", 1, 2)
	web.Namespace = "pool"
	if _, err := client.WorkV1alpha2().ResourceBindings("pool").Create(ctx, web, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll("overallUsed", func() (bool, error) {
		q, err := client.PolicyV1alpha1().FederatedResourceQuotas("pool").Get(ctx, "q", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		used := q.Status.OverallUsed[("cpu")]
		return len(q.Status.OverallUsed) == 1 && used.String() == "1500m", nil
	})

	if err := client.PolicyV1alpha1().FederatedResourceQuotas("ns").Delete(ctx, "q", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	poll("the Works to go", func() (bool, error) {
		list, err := client.WorkV1alpha1().Works("").List(ctx, metav1.ListOptions{})
		return err == nil && len(list.Items) == 0, nil
	})

	reasons := map[string]int{}
	for {
		select {
		case e := <-rec.Events:
			var typ, reason string
			_, _ = fmt.Sscan(e, &typ, &reason)
			reasons[reason]++
			continue
		default:
		}
		break
	}
	for _, r := range []string{EventReasonSyncWorkSucceed, EventReasonAggregateStatusSucceed, EventReasonCollectOverallStatusSucceed} {
		if reasons[r] == 0 {
			t.Errorf("no %s event; got %v", r, reasons)
		}
	}
	if reasons[EventReasonSyncWorkSucceed] != 1 {
		t.Errorf("%d SyncWorkSucceed events, want 1 (one write)", reasons[EventReasonSyncWorkSucceed])
	}
}

package detector

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned/fake"
	worklisters "github.com/flotilla-io/flotilla/apis/generated/listers/work/v1alpha2"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/interpreter"
	"github.com/flotilla-io/flotilla/placement"
	pt "github.com/flotilla-io/flotilla/placement/placementtest"
)

// A binding write flotilla-apiserver refuses for a FederatedResourceQuota
// (higher requests on a scheduled binding) comes back from ensureBinding
// as that refusal, which reconcileTemplate records on the template as
// ApplyPolicyFailed; the stored binding keeps its old requirements.
func TestEnsureBindingQuotaRefusal(t *testing.T) {
	t.Parallel()
	obj := flinkDeployment()
	gvk := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	obj.SetGroupVersionKind(gvk)
	obj.SetName("web")
	old := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-deployment"},
		Spec: workv1alpha2.ResourceBindingSpec{Replicas: 1, ReplicaRequirements: &workv1alpha2.ReplicaRequirements{ResourceRequest: pt.RL("cpu", "500m")},
			Clusters: []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 1}}}}
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	if err := idx.Add(old); err != nil {
		t.Fatal(err)
	}
	client := fake.NewSimpleClientset(old.DeepCopy())
	client.PrependReactor("patch", "resourcebindings", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, placement.NewQuotaRefusal("web-deployment",
			placement.QuotaDenial("FederatedResourceQuota(default/team) exceeded for resource cpu: requested sum 1, limit 500m."))
	})
	c := &Controller{rbs: worklisters.NewResourceBindingLister(idx), client: client,
		interp: &fakeInterp{hooks: map[interpreter.Operation]bool{interpreter.InterpretReplica: true}, replicas: 1}}
	p := &policy{Namespace: "default", Name: "all", Spec: &policyv1alpha1.PropagationSpec{Placement: policyv1alpha1.Placement{}}}
	_, err := c.ensureBinding(context.Background(), gvk, obj, p)
	if !placement.IsQuotaRefusal(err) {
		t.Fatalf("ensureBinding error %v, want the quota refusal", err)
	}
	stored, err := client.WorkV1alpha2().ResourceBindings("default").Get(context.Background(), "web-deployment", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := stored.Spec.ReplicaRequirements.ResourceRequest.Cpu().String(); got != "500m" {
		t.Errorf("stored requests cpu %s, want the old 500m", got)
	}
}

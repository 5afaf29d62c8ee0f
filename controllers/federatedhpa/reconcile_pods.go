package federatedhpa

import (
	"errors"
	"sort"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/labels"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/member"
	"github.com/flotilla-io/flotilla/names"
	"github.com/flotilla-io/flotilla/podautoscaler"
)

// errPodsUnknown: the member is not Ready or its pod informer has not
// listed.
var errPodsUnknown = errors.New("member pods unknown")

// podsReconciler finds the target's pods in the members its binding places
// it on.
type podsReconciler struct {
	// binding reads a ResourceBinding from the cache.
	binding func(namespace, name string) (*workv1alpha2.ResourceBinding, error)
	// memberPods lists the pods of namespace that selector matches in a
	// member (shared: do not modify); an error when they are unknown.
	memberPods func(cluster, namespace string, selector labels.Selector) ([]*member.Pod, error)
}

// memberPod is a pod of a member cluster.
type memberPod struct {
	cluster string
	pod     *member.Pod
}

// reconcile returns the pods selector matches in the target clusters, and
// the clusters whose pods are unknown. A nil selector matches nothing.
func (r *podsReconciler) reconcile(namespace string, ref autoscalingv2.CrossVersionObjectReference, selector labels.Selector) ([]memberPod, []string) {
	if selector == nil {
		return nil, nil
	}
	var out []memberPod
	var missing []string
	for _, name := range r.targetClusters(namespace, ref) {
		pods, err := r.memberPods(name, namespace, selector)
		if err != nil {
			missing = append(missing, name)
			continue
		}
		for _, p := range pods {
			out = append(out, memberPod{cluster: name, pod: p})
		}
	}
	return out, missing
}

// targetClusters are the members the template's binding places it on.
func (r *podsReconciler) targetClusters(namespace string, ref autoscalingv2.CrossVersionObjectReference) []string {
	rb, err := r.binding(namespace, names.BindingName(ref.Kind, ref.Name))
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(rb.Spec.Clusters))
	for _, t := range rb.Spec.Clusters {
		out = append(out, t.Name)
	}
	sort.Strings(out)
	return out
}

// podautoscalerPod is what the algorithm reads of a member pod. The request
// maps are the hub's, shared and read-only.
func podautoscalerPod(cluster string, p *member.Pod) podautoscaler.Pod {
	out := podautoscaler.Pod{Cluster: cluster, Namespace: p.Namespace, Name: p.Name, Phase: p.Phase, Deleting: p.Deleting,
		Ready: p.Ready, ReadyTransition: p.ReadyTransition(), StartTime: p.StartTime(), PodRequests: p.PodLevelRequests()}
	for _, c := range p.Containers() {
		out.Containers = append(out.Containers, podautoscaler.Container{Name: c.Name, Requests: c.Requests})
	}
	return out
}

package federatedhpa

import (
	"sort"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"github.com/flotilla-io/flotilla/podautoscaler"
)

// recommendReconciler runs the algorithm (package podautoscaler, pure) with
// the memory it keeps of each FederatedHPA: its recommendation and scale
// history, and the pod selector it last computed with, to find the pods
// two FederatedHPAs select.
type recommendReconciler struct {
	algorithm podautoscaler.Config

	mu sync.Mutex
	// histories are the algorithm's memory of each FederatedHPA.
	histories map[string]*podautoscaler.History
	// selectors are the pod selectors each FederatedHPA last computed
	// with.
	selectors map[string]labels.Selector
}

func newRecommendReconciler(algorithm podautoscaler.Config) *recommendReconciler {
	return &recommendReconciler{algorithm: algorithm, histories: map[string]*podautoscaler.History{}, selectors: map[string]labels.Selector{}}
}

// reconcile records selector as key's, completes in with the other
// FederatedHPAs selecting pods, and returns the algorithm's recommendation
// and key's history (for the rescale to record in).
func (r *recommendReconciler) reconcile(key string, in podautoscaler.Input, selector labels.Selector, pods []memberPod, now time.Time) (podautoscaler.Recommendation, *podautoscaler.History) {
	// The workqueue hands a key to one worker at a time: the history is
	// this worker's; only the maps are shared.
	r.mu.Lock()
	h := r.histories[key]
	if h == nil {
		h = &podautoscaler.History{}
		r.histories[key] = h
	}
	r.selectors[key] = selector
	in.AutoscalersSelectingPods = r.autoscalersSelecting(in.Namespace, pods)
	r.mu.Unlock()
	return r.algorithm.Recommend(in, h, now), h
}

// autoscalersSelecting lists the FederatedHPAs of namespace whose last
// selector matches one of pods; the caller holds r.mu.
func (r *recommendReconciler) autoscalersSelecting(namespace string, pods []memberPod) []string {
	var out []string
	for key, sel := range r.selectors {
		if ns, _, _ := cache.SplitMetaNamespaceKey(key); ns != namespace || sel == nil {
			continue
		}
		for _, p := range pods {
			if sel.Matches(labels.Set(p.pod.Labels())) {
				out = append(out, key)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

// forget drops the memory of a FederatedHPA gone.
func (r *recommendReconciler) forget(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.histories, key)
	delete(r.selectors, key)
}

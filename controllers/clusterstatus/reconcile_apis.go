package clusterstatus

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/member"
)

// Reasons and messages of the CompleteAPIEnablements condition, as Karmada
// writes them.
const (
	ReasonCompleteAPIEnablements    = "CompleteAPIEnablements"
	ReasonIncompleteAPIEnablements  = "IncompleteAPIEnablements"
	MessageCompleteAPIEnablements   = "collected complete APIs from member cluster"
	MessageIncompleteAPIEnablements = "collected partial APIs from member cluster"
)

// apisReconciler sets the member's Kubernetes version, the APIs it serves
// and the CompleteAPIEnablements condition.
type apisReconciler struct {
	// version returns the member's git version.
	version func(client *member.Client) (string, error)
	// resources returns the member's discovery: the lists of the groups
	// that answered, and an error when some did not.
	resources func(client *member.Client) ([]*metav1.APIResourceList, error)
}

// reconcile fills status from a ready member. What discovery fails to
// return is kept from the stored status.
func (r *apisReconciler) reconcile(cluster *clusterv1alpha1.Cluster, client *member.Client, status *clusterv1alpha1.ClusterStatus) {
	if v, err := r.version(client); err == nil {
		status.KubernetesVersion = v
	}
	lists, err := r.resources(client)
	enablements := apiEnablements(lists)
	if enablements != nil {
		status.APIEnablements = enablements
	}
	cond := metav1.Condition{Type: clusterv1alpha1.ClusterConditionCompleteAPIEnablements, Status: metav1.ConditionTrue,
		Reason: ReasonCompleteAPIEnablements, Message: MessageCompleteAPIEnablements, ObservedGeneration: cluster.Generation}
	if enablements == nil || err != nil {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, ReasonIncompleteAPIEnablements, MessageIncompleteAPIEnablements
	}
	meta.SetStatusCondition(&status.Conditions, cond)
}

// apiEnablements lists the group versions and resources of lists, sorted,
// without subresources; nil when lists is empty.
func apiEnablements(lists []*metav1.APIResourceList) []clusterv1alpha1.APIEnablement {
	if len(lists) == 0 {
		return nil
	}
	out := make([]clusterv1alpha1.APIEnablement, 0, len(lists))
	for _, l := range lists {
		e := clusterv1alpha1.APIEnablement{GroupVersion: l.GroupVersion}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") {
				continue
			}
			e.Resources = append(e.Resources, clusterv1alpha1.APIResource{Name: r.Name, Kind: r.Kind})
		}
		slices.SortFunc(e.Resources, func(a, b clusterv1alpha1.APIResource) int { return strings.Compare(a.Name, b.Name) })
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b clusterv1alpha1.APIEnablement) int { return strings.Compare(a.GroupVersion, b.GroupVersion) })
	return out
}

// serverVersion reads the member's /version.
func serverVersion(client *member.Client) (string, error) {
	v, err := client.Clientset.Discovery().ServerVersion()
	if err != nil {
		return "", err
	}
	return v.GitVersion, nil
}

// serverResources runs the member's discovery of groups and resources.
func serverResources(client *member.Client) ([]*metav1.APIResourceList, error) {
	_, lists, err := client.Clientset.Discovery().ServerGroupsAndResources()
	return lists, err
}

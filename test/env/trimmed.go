package env

import (
	"strconv"
	"strings"
)

// A trimmed member is a member cut down so that many fit on a small
// machine (the scale bed: `make up MEMBERS=20`, test/e2e/scalebed). It
// runs a kube-apiserver with minimal admission, bounded concurrency and no
// watch cache, a kube-controller-manager with only the controllers that
// joining and namespace deletion need, and kwok with one fake node; no
// kube-scheduler, metrics-server or custom-metrics-emulator. Objects
// propagated to it are stored and served, but no Pod is ever created
// there: a Deployment stays without ReplicaSet and its status without
// replicas.

// trimmedControllers are the kube-controller-manager controllers of a
// trimmed member: flotillactl join waits for the token controller to issue
// the tokens of the service accounts it creates there, and the namespace
// controller empties and removes a namespace deleted there (Flotilla
// deletes what it propagated). Pod-making controllers, the garbage
// collector (which watches every resource) and the node lifecycle
// controller (kwok keeps the node Ready itself) are left out.
var trimmedControllers = []string{
	"serviceaccount-token-controller",
	"namespace-controller",
}

// trimmedAdmissionPlugins are the kube-apiserver's default admission
// plugins a trimmed member disables: all but NamespaceLifecycle, which
// refuses objects in a namespace being deleted. They default and check
// Pods, PVCs and quotas, which a trimmed member never has, and the
// policy and webhook plugins each keep informers.
var trimmedAdmissionPlugins = []string{
	"LimitRanger", "ServiceAccount", "TaintNodesByCondition", "PodSecurity", "Priority",
	"DefaultTolerationSeconds", "DefaultStorageClass", "StorageObjectInUseProtection",
	"PodGroupProtection", "PersistentVolumeClaimResize", "RuntimeClass",
	"CertificateApproval", "CertificateSigning", "ClusterTrustBundleAttest", "CertificateSubjectRestriction",
	"DefaultIngressClass", "PodTopologyLabels", "PodGroupWorkloadExists", "NodeDeclaredFeatureValidator",
	"JobValidation", "PodResizeValidator",
	"MutatingAdmissionPolicy", "MutatingAdmissionWebhook", "ValidatingAdmissionPolicy", "ValidatingAdmissionWebhook",
	"ResourceQuota",
}

// Request limits of a trimmed member's kube-apiserver, without priority
// and fairness (whose configuration controller writes and watches a dozen
// objects, and whose seats would be a handful at these limits): a
// trimmed member serves one Flotilla, its own controllers and kwok.
const (
	trimmedMaxRequestsInflight         = 50
	trimmedMaxMutatingRequestsInflight = 25
)

// trimmedAPIServerArgs are the flags a trimmed member's kube-apiserver
// adds to a member's. Its watch cache is off: kube-apiserver 1.36 no
// longer takes a cache size (--watch-cache-sizes only tells 0, off, from
// on; --default-watch-cache-size is gone), and without it the server
// neither lists nor watches every resource from etcd at start-up; lists
// and watches of its few clients go to etcd.
func trimmedAPIServerArgs() []string {
	return []string{
		"--disable-admission-plugins=" + strings.Join(trimmedAdmissionPlugins, ","),
		"--enable-priority-and-fairness=false",
		"--max-requests-inflight=" + strconv.Itoa(trimmedMaxRequestsInflight),
		"--max-mutating-requests-inflight=" + strconv.Itoa(trimmedMaxMutatingRequestsInflight),
		"--profiling=false",
		"--watch-cache=false",
	}
}

// MemberName is the name of the i-th member of a test bed: member<i>.
func MemberName(i int) string { return "member" + strconv.Itoa(i) }

// TrimmedMembers returns the options of trimmed members member<first> to
// member<last>, with one fake node each.
func TrimmedMembers(first, last int) []MemberOptions {
	var ms []MemberOptions
	for i := first; i <= last; i++ {
		ms = append(ms, MemberOptions{Name: MemberName(i), Trimmed: true, Nodes: NodeOptions{Count: 1}})
	}
	return ms
}

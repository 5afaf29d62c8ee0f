package membership

import (
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/flotilla-io/flotilla/cli/controlplane"
	"github.com/flotilla-io/flotilla/names"
)

// Names and labels of what join creates. The names are Karmada's (karmadactl
// join), so a cluster joined by either tool looks the same to the control plane.
const (
	// impersonatorServiceAccount is the member ServiceAccount whose token the
	// control plane uses to proxy requests (it impersonates the caller).
	impersonatorServiceAccount = "karmada-impersonator"
)

// joinNames derives every name join uses from the cluster name and the
// credentials namespace.
type joinNames struct {
	cluster   string
	namespace string
}

// serviceAccount is the member ServiceAccount the control plane acts as.
func (n joinNames) serviceAccount() string { return "karmada-" + n.cluster }

// clusterRole names the member ClusterRole and ClusterRoleBinding granting
// that ServiceAccount everything.
func (n joinNames) clusterRole() string { return "karmada-controller-manager:" + n.serviceAccount() }

// secret is the control-plane Secret with the member's token and CA.
func (n joinNames) secret() string { return n.cluster }

// impersonatorSecret is the control-plane Secret with the impersonator token.
func (n joinNames) impersonatorSecret() string { return n.cluster + "-impersonator" }

// createdLabels are the labels of every object join creates.
func createdLabels() map[string]string {
	return map[string]string{names.SystemLabel: "true", names.ManagedByLabel: controlplane.UserAgent}
}

// createdByUs says whether flotillactl join created obj.
func createdByUs(obj metav1.Object) bool {
	return obj.GetLabels()[names.ManagedByLabel] == controlplane.UserAgent
}

// memberCluster is a member cluster as its kubeconfig describes it.
type memberCluster struct {
	kube kubernetes.Interface
	// endpoint is the API server URL (the kubeconfig's server).
	endpoint string
	// caData is the kubeconfig's CA (inline or read from its file); may be empty.
	caData []byte
	// insecure is the kubeconfig's insecure-skip-tls-verify.
	insecure bool
	// proxyURL is the kubeconfig's proxy-url; may be empty.
	proxyURL string
}

// loadMember reads the member kubeconfig. With no context given, it uses the
// context named after the cluster if the kubeconfig has one, else the current
// context: a kubeconfig listing several members then needs no --cluster-context.
func loadMember(kubeconfig, kubeContext, clusterName string) (*memberCluster, error) {
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig}
	raw, err := rules.Load()
	if err != nil {
		return nil, fmt.Errorf("loading the member kubeconfig %s: %w", kubeconfig, err)
	}
	if kubeContext == "" {
		if _, ok := raw.Contexts[clusterName]; ok {
			kubeContext = clusterName
		} else {
			kubeContext = raw.CurrentContext
		}
	}
	ctxEntry, ok := raw.Contexts[kubeContext]
	if !ok {
		return nil, fmt.Errorf("the member kubeconfig %s has no context %q", kubeconfig, kubeContext)
	}
	cfg, err := clientcmd.NewNonInteractiveClientConfig(*raw, kubeContext, &clientcmd.ConfigOverrides{}, rules).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("reading context %q of the member kubeconfig %s: %w", kubeContext, kubeconfig, err)
	}
	m := &memberCluster{endpoint: cfg.Host, insecure: cfg.Insecure}
	if c := raw.Clusters[ctxEntry.Cluster]; c != nil {
		m.proxyURL = c.ProxyURL
	}
	tlsFiles := rest.CopyConfig(cfg)
	if err := rest.LoadTLSFiles(tlsFiles); err != nil {
		return nil, fmt.Errorf("reading the TLS files of context %q of the member kubeconfig %s: %w", kubeContext, kubeconfig, err)
	}
	m.caData = tlsFiles.CAData
	m.kube, err = kubernetes.NewForConfig(rest.AddUserAgent(cfg, controlplane.UserAgent))
	if err != nil {
		return nil, fmt.Errorf("building the member client for %s: %w", cfg.Host, err)
	}
	return m, nil
}

// printer reports each change, in kubectl's "<kind>/<name> <verb>" style,
// prefixed with where it happened.
type printer struct {
	out    io.Writer
	dryRun bool
}

func (p printer) changed(where, what, verb string) {
	if p.dryRun {
		fmt.Fprintf(p.out, "%s: %s %s (dry run)\n", where, what, verb)
		return
	}
	fmt.Fprintf(p.out, "%s: %s %s\n", where, what, verb)
}

// Where changes happen, for messages and errors.
const (
	onMember       = "member"
	onControlPlane = "control plane"
)

// ref names an object in messages: kind/name, or kind/namespace/name.
func ref(kind, namespace, name string) string {
	if namespace == "" {
		return kind + "/" + name
	}
	return kind + "/" + namespace + "/" + name
}

// tokenReady says whether the token controller has filled a token secret.
func tokenReady(s *corev1.Secret) bool { return len(s.Data[corev1.ServiceAccountTokenKey]) > 0 }

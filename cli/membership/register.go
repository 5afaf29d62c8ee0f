package membership

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/flotilla-io/flotilla/agent/agentconfig"
	"github.com/flotilla-io/flotilla/cli/controlplane"
	"github.com/flotilla-io/flotilla/names"
)

// Names of what register creates in the member (karmadactl register's).
const (
	// AgentServiceAccount is the agent's ServiceAccount.
	AgentServiceAccount = "karmada-agent-sa"
	// AgentClusterRole names the agent's ClusterRole and ClusterRoleBinding.
	AgentClusterRole = "karmada-agent"
	// agentKubeconfigCluster is the name of the control plane in the
	// agent's kubeconfig.
	agentKubeconfigCluster = "karmada-apiserver"
	// agentBinary is the agent's executable, for the printed command.
	agentBinary = "flotilla-agent"
)

// RegisterOptions holds the flags of register. Use NewRegisterOptions.
type RegisterOptions struct {
	Endpoint                 string
	Token                    string
	CACertHashes             []string
	UnsafeSkipCAVerification bool
	ClusterName              string
	Kubeconfig               string
	Context                  string
	AgentNamespace           string
	AgentKubeconfigOut       string
	ClusterProvider          string
	ClusterRegion            string
	ClusterZones             []string
	CertExpirationSeconds    int32
	Timeout                  time.Duration
	Force                    bool
	// ControlPlaneKubeconfig and ControlPlaneContext reach the control
	// plane as an admin: with --force, to allow registering a cluster
	// name that is already registered.
	ControlPlaneKubeconfig string
	ControlPlaneContext    string
	// AgentImage and AgentReplicas are the agent's Deployment
	// (karmadactl's --karmada-agent-image and --karmada-agent-replicas);
	// no Deployment with 0 replicas. An empty image is the chart's.
	AgentImage    string
	AgentReplicas int32
	// DryRun prints what register would do and does nothing.
	DryRun bool

	// self is how the user runs this binary, for the printed commands.
	self string
	// admin is the control plane as ControlPlaneKubeconfig's user, or nil.
	admin *controlplane.Clients
	// interval is how often to poll cluster-info and the request.
	interval time.Duration
	// clientFor builds a client of the control plane (tests give fakes).
	clientFor func(*rest.Config) (kubernetes.Interface, error)
	tokenID   string
	secret    string
}

// NewRegisterOptions returns register's defaults; self is how the user
// runs this binary, for the commands register prints.
func NewRegisterOptions(self string) *RegisterOptions {
	return &RegisterOptions{
		AgentNamespace:        names.SystemNamespace,
		CertExpirationSeconds: 365 * 24 * 3600,
		AgentReplicas:         1,
		Timeout:               5 * time.Minute,
		self:                  self,
		interval:              time.Second,
		clientFor: func(cfg *rest.Config) (kubernetes.Interface, error) {
			return kubernetes.NewForConfig(rest.AddUserAgent(cfg, controlplane.UserAgent))
		},
	}
}

// Run registers the member of --kubeconfig with the control plane at the
// endpoint args names (register CONTROL_PLANE_ENDPOINT), reporting on out.
func (o *RegisterOptions) Run(ctx context.Context, args []string, out io.Writer) error {
	if err := o.complete(args); err != nil {
		return err
	}
	if err := o.validate(); err != nil {
		return err
	}
	m, err := loadKubeconfig(o.Kubeconfig, o.Context)
	if err != nil {
		return fmt.Errorf("register cluster %q: %w", o.ClusterName, err)
	}
	if o.ControlPlaneKubeconfig != "" {
		cfg, err := kubeconfigLoader(o.ControlPlaneKubeconfig, o.ControlPlaneContext).ClientConfig()
		if err != nil {
			return fmt.Errorf("register cluster %q: loading the control-plane kubeconfig: %w", o.ClusterName, err)
		}
		c, err := controlplane.NewClients(cfg)
		if err != nil {
			return fmt.Errorf("register cluster %q: %w", o.ClusterName, err)
		}
		o.admin = &c
	}
	if err := o.run(ctx, m, out); err != nil {
		return fmt.Errorf("register cluster %q: %w", o.ClusterName, err)
	}
	return nil
}

func (o *RegisterOptions) complete(args []string) error {
	if len(args) != 1 {
		return errors.New("register takes exactly one argument, the control plane's endpoint (https://host:port)")
	}
	o.Endpoint = args[0]
	if !strings.Contains(o.Endpoint, "://") {
		o.Endpoint = "https://" + o.Endpoint
	}
	if o.ClusterName == "" {
		raw, err := kubeconfigLoader(o.Kubeconfig, o.Context).RawConfig()
		if err != nil {
			return fmt.Errorf("loading the member kubeconfig to name the cluster: %w", err)
		}
		current := o.Context
		if current == "" {
			current = raw.CurrentContext
		}
		if c := raw.Contexts[current]; c != nil {
			o.ClusterName = c.Cluster
		}
	}
	return nil
}

func (o *RegisterOptions) validate() error {
	errs := memberFlags{
		cluster: o.ClusterName, namespaceFlag: "--agent-namespace", namespace: o.AgentNamespace,
		timeoutFlag: "--discovery-timeout", timeout: o.Timeout,
	}.validate()
	if u, err := url.Parse(o.Endpoint); err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		errs = append(errs, fmt.Errorf("invalid control-plane endpoint %q: want https://host[:port]", o.Endpoint))
	}
	if o.Token == "" {
		errs = append(errs, errors.New("--token is required"))
	} else {
		var err error
		if o.tokenID, o.secret, err = parseToken(o.Token); err != nil {
			errs = append(errs, fmt.Errorf("invalid --token: %w", err))
		}
	}
	if len(o.CACertHashes) == 0 && !o.UnsafeSkipCAVerification {
		errs = append(errs, errors.New("--discovery-token-ca-cert-hash is required (or --discovery-token-unsafe-skip-ca-verification)"))
	}
	if err := validateCAHashes(o.CACertHashes); err != nil {
		errs = append(errs, err)
	}
	if o.AgentReplicas < 0 {
		errs = append(errs, fmt.Errorf("--karmada-agent-replicas must not be negative, got %d", o.AgentReplicas))
	}
	if o.AgentImage != "" {
		if _, _, err := splitImage(o.AgentImage); err != nil {
			errs = append(errs, err)
		}
	}
	if o.CertExpirationSeconds < 600 {
		errs = append(errs, fmt.Errorf("--cert-expiration-seconds must be at least 600, got %d", o.CertExpirationSeconds))
	}
	return utilerrors.NewAggregate(errs)
}

// kubeconfig is a loaded kubeconfig: a client and where it came from.
type kubeconfig struct {
	kube kubernetes.Interface
	// path is the file given, if any (for the printed agent command).
	path string
}

func kubeconfigLoader(path, kubeContext string) clientcmd.ClientConfig {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = path
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: kubeContext})
}

// loadKubeconfig builds a client from a kubeconfig file (or the default
// loading rules when path is empty).
func loadKubeconfig(path, kubeContext string) (*kubeconfig, error) {
	cfg, err := kubeconfigLoader(path, kubeContext).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading the kubeconfig %s: %w", path, err)
	}
	kube, err := kubernetes.NewForConfig(rest.AddUserAgent(cfg, controlplane.UserAgent))
	if err != nil {
		return nil, err
	}
	return &kubeconfig{kube: kube, path: path}, nil
}

// run registers the member m.
func (o *RegisterOptions) run(ctx context.Context, m *kubeconfig, out io.Writer) error {
	if err := o.preflight(ctx, m.kube); err != nil {
		return err
	}
	// Rendered before anything is asked of the control plane: a chart
	// that cannot render fails here.
	agentObjs, err := o.agentObjects()
	if err != nil {
		return err
	}
	if o.DryRun {
		return o.printAgentObjects(out, agentObjs)
	}
	ident, err := o.identity(ctx, m.kube)
	if err != nil {
		return err
	}
	id := ident.id
	info, err := o.discover(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "[discovery] control plane %s, CA verified\n", o.Endpoint)
	bootstrap, err := o.clientFor(&rest.Config{Host: o.Endpoint, BearerToken: o.Token, TLSClientConfig: rest.TLSClientConfig{CAData: info.ca}})
	if err != nil {
		return err
	}
	if err := checkBootstrapToken(ctx, bootstrap, o.tokenID); err != nil {
		return err
	}
	if err := o.allowReregistration(ctx, ident, out); err != nil {
		return err
	}
	certPEM, keyPEM, err := o.requestCertificate(ctx, bootstrap, id, out)
	if err != nil {
		return err
	}
	agentKubeconfig, err := o.agentKubeconfig(info.ca, certPEM, keyPEM)
	if err != nil {
		return err
	}
	if err := o.ensureMemberObjects(ctx, m.kube, agentKubeconfig, out); err != nil {
		return err
	}
	if o.AgentReplicas > 0 {
		if err := o.applyAgentObjects(ctx, m.kube, agentObjs, out); err != nil {
			return err
		}
	}
	if o.AgentKubeconfigOut != "" {
		if err := os.WriteFile(o.AgentKubeconfigOut, agentKubeconfig, 0o600); err != nil {
			return fmt.Errorf("writing the agent kubeconfig: %w", err)
		}
		fmt.Fprintf(out, "local: agent kubeconfig written to %s\n", o.AgentKubeconfigOut)
	}
	if o.AgentReplicas > 0 {
		fmt.Fprintf(out, "\ncluster(%s) is registered in Pull mode; its agent runs in the member as %s (%d replicas of %s)\n",
			o.ClusterName, ref("deployment", o.AgentNamespace, AgentRelease), o.AgentReplicas, agentImage(agentObjs))
		return nil
	}
	fmt.Fprintf(out, "\ncluster(%s) is registered in Pull mode\n\nStart its agent:\n  %s\n", o.ClusterName, o.agentCommand(m))
	return nil
}

// identity reads the member's id and, with --control-plane-kubeconfig,
// checks it against the Cluster of the name as the other member commands
// do: a name taken by another member, or this member registered under
// another name, fails here rather than at the control plane's decision.
// Without an admin's kubeconfig the control plane alone decides.
func (o *RegisterOptions) identity(ctx context.Context, member kubernetes.Interface) (memberIdentity, error) {
	if o.admin == nil {
		id, err := memberID(ctx, member)
		return memberIdentity{id: id}, err
	}
	ident, err := registerAction.readIdentity(ctx, o.admin.Karmada, o.ClusterName, member)
	if err != nil {
		return ident, err
	}
	return ident, registerAction.checkIdentity(o.ClusterName, ident)
}

// allowReregistration lets the control plane issue this member's
// registered name again, as the admin of --control-plane-kubeconfig, when
// --force asks for it: it annotates the Cluster with the member's id (the
// control plane removes the annotation when it approves). identity has
// checked that the Cluster, if any, is this member's.
func (o *RegisterOptions) allowReregistration(ctx context.Context, ident memberIdentity, out io.Writer) error {
	if !o.Force || o.admin == nil || ident.existing == nil {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{names.ReregisterAnnotation: ident.id}}})
	if err != nil {
		return err
	}
	if _, err := o.admin.Karmada.ClusterV1alpha1().Clusters().Patch(ctx, o.ClusterName, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: controlplane.UserAgent}); err != nil {
		return fmt.Errorf("allowing cluster %s to be registered again: %w", o.ClusterName, err)
	}
	fmt.Fprintf(out, "[control plane] cluster %s may be registered again (%s)\n", o.ClusterName, names.ReregisterAnnotation)
	return nil
}

// preflight refuses a member that already holds an agent's credentials,
// before anything is asked of the control plane.
func (o *RegisterOptions) preflight(ctx context.Context, member kubernetes.Interface) error {
	cluster, exists, err := agentconfig.Registered(ctx, member, o.AgentNamespace)
	if err != nil || !exists || o.Force {
		return err
	}
	as := "an unknown cluster"
	if cluster != "" {
		as = "cluster " + cluster
	}
	return fmt.Errorf("this member is already registered (as %s: secret %s/%s exists); unregister it first, or pass --force to register it again and replace its credentials",
		as, o.AgentNamespace, names.AgentConfigSecret)
}

// agentMemberRules are the agent's rights in its member: everything, as
// karmada-agent has, and explicitly impersonation of any caller, which the
// tunnel uses to proxy requests with the caller's identity.
func agentMemberRules() []rbacv1.PolicyRule {
	return append(clusterRoleRules(),
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"users", "groups", "serviceaccounts"}, Verbs: []string{"impersonate"}},
		rbacv1.PolicyRule{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"uids", "userextras/*"}, Verbs: []string{"impersonate"}},
	)
}

// ensureMemberObjects writes the agent's namespace, identity, rights and
// kubeconfig Secret into the member.
func (o *RegisterOptions) ensureMemberObjects(ctx context.Context, member kubernetes.Interface, agentKubeconfig []byte, out io.Writer) error {
	p := printer{out: out}
	if err := ensureNamespace(ctx, member, o.AgentNamespace, onMember, p); err != nil {
		return err
	}
	if err := ensureServiceAccount(ctx, member, o.AgentNamespace, AgentServiceAccount, p); err != nil {
		return err
	}
	if err := ensureClusterRole(ctx, member, AgentClusterRole, agentMemberRules(), p); err != nil {
		return err
	}
	if err := ensureClusterRoleBinding(ctx, member, AgentClusterRole, o.AgentNamespace, AgentServiceAccount, p); err != nil {
		return err
	}
	outcome, err := agentconfig.Write(ctx, member, o.AgentNamespace, o.ClusterName, agentKubeconfig, createdLabels())
	if err != nil {
		return err
	}
	p.changed(onMember, ref("secret", o.AgentNamespace, names.AgentConfigSecret), string(outcome))
	return nil
}

// agentCommand is how to start the agent as a local process.
func (o *RegisterOptions) agentCommand(m *kubeconfig) string {
	cp := o.AgentKubeconfigOut
	if cp == "" {
		cp = fmt.Sprintf("<key %s of secret %s/%s in the member>", names.AgentConfigKey, o.AgentNamespace, names.AgentConfigSecret)
	}
	member := m.path
	if member == "" {
		member = "<the member's kubeconfig>"
	}
	return fmt.Sprintf("%s --cluster-name=%s --control-plane-kubeconfig=%s --member-kubeconfig=%s", agentBinary, o.ClusterName, cp, member)
}

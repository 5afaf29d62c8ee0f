package membership

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/cli/controlplane"
	"github.com/flotilla-io/flotilla/names"
)

// JoinOptions holds the flags of join. Zero values are never valid; use NewJoinOptions.
type JoinOptions struct {
	ClusterName       string
	ClusterKubeconfig string
	ClusterContext    string
	ClusterNamespace  string
	ClusterProvider   string
	ClusterRegion     string
	ClusterZones      []string
	DryRun            bool
	Force             bool

	// SetProvider, SetRegion and SetZones say which of those flags were
	// given: join writes only those, so a later join without them keeps
	// what is there, and --cluster-provider="" clears it.
	SetProvider, SetRegion, SetZones bool
	// Ready is how long to wait for the Cluster to be Ready (--wait).
	Ready ReadyWait

	// token is how long to wait for the member's token controller.
	token tokenWait
}

// NewJoinOptions returns join's defaults.
func NewJoinOptions() *JoinOptions {
	return &JoinOptions{
		ClusterNamespace: names.SecretNamespace,
		token:            tokenWait{timeout: 60 * time.Second, interval: time.Second},
		Ready:            ReadyWait{Enabled: true, Timeout: DefaultJoinWait, Interval: time.Second},
	}
}

// Run joins the cluster args names (join CLUSTER_NAME): the control plane
// is the one flags locates, the member the one of --cluster-kubeconfig.
// What changed is reported on out, the wait for Ready on progress.
func (o *JoinOptions) Run(ctx context.Context, flags genericclioptions.RESTClientGetter, args []string, out, progress io.Writer) error {
	if err := o.complete(args); err != nil {
		return err
	}
	if err := o.validate(); err != nil {
		return err
	}
	cp, err := controlplane.ClientsOf(flags)
	if err != nil {
		return fmt.Errorf("join cluster %q: %w", o.ClusterName, err)
	}
	m, err := loadMember(o.ClusterKubeconfig, o.ClusterContext, o.ClusterName)
	if err != nil {
		return fmt.Errorf("join cluster %q: %w", o.ClusterName, err)
	}
	return o.run(ctx, cp, m, out, progress)
}

func (o *JoinOptions) complete(args []string) error {
	if len(args) != 1 {
		return errors.New("join takes exactly one argument, the cluster name")
	}
	o.ClusterName = args[0]
	return nil
}

func (o *JoinOptions) validate() error {
	errs := memberFlags{cluster: o.ClusterName, namespaceFlag: "--cluster-namespace", namespace: o.ClusterNamespace}.validate()
	if o.ClusterKubeconfig == "" {
		errs = append(errs, errors.New("--cluster-kubeconfig is required"))
	}
	// provider, region and zones must be label values (placement selects on them).
	for _, f := range []struct {
		flag   string
		values []string
	}{{"--cluster-provider", []string{o.ClusterProvider}}, {"--cluster-region", []string{o.ClusterRegion}}, {"--cluster-zones", o.ClusterZones}} {
		for _, v := range f.values {
			if msgs := validation.IsValidLabelValue(v); len(msgs) > 0 {
				errs = append(errs, fmt.Errorf("invalid %s %q: %s", f.flag, v, strings.Join(msgs, "; ")))
			}
		}
	}
	return utilerrors.NewAggregate(errs)
}

// memberCredentials are the tokens join obtained in the member; nil in
// dry-run mode until the token controller has issued them.
type memberCredentials struct {
	token, caCert, impersonatorToken []byte
}

// run joins the member m to the control plane cp, then waits for the
// Cluster to be Ready, reporting on progress.
func (o *JoinOptions) run(ctx context.Context, cp controlplane.Clients, m *memberCluster, out, progress io.Writer) error {
	p := printer{out: out, dryRun: o.DryRun}
	if err := o.join(ctx, cp, m, p); err != nil {
		return fmt.Errorf("join cluster %q: %w", o.ClusterName, err)
	}
	if o.DryRun {
		fmt.Fprintf(out, "cluster(%s) would be joined (dry run: nothing was written)\n", o.ClusterName)
		return nil
	}
	fmt.Fprintf(out, "cluster(%s) is joined successfully\n", o.ClusterName)
	return waitReady(ctx, cp.Karmada.ClusterV1alpha1().Clusters(), o.ClusterName, o.Ready, progress)
}

func (o *JoinOptions) join(ctx context.Context, cp controlplane.Clients, m *memberCluster, p printer) error {
	action := joinAction.withForce(o.Force)
	ident, err := action.readIdentity(ctx, cp.Karmada, o.ClusterName, m.kube)
	if err != nil {
		return err
	}
	if err := action.checkIdentity(o.ClusterName, ident); err != nil {
		return err
	}
	creds, err := o.ensureMember(ctx, m, p)
	if err != nil {
		return err
	}
	return o.ensureControlPlane(ctx, cp, m, creds, ident.existing, ident.id, p)
}

// ensureMember creates the namespace, service accounts, RBAC and token
// secrets in the member and returns the tokens.
func (o *JoinOptions) ensureMember(ctx context.Context, m *memberCluster, p printer) (*memberCredentials, error) {
	n := joinNames{cluster: o.ClusterName, namespace: o.ClusterNamespace}
	if err := ensureNamespace(ctx, m.kube, n.namespace, onMember, p); err != nil {
		return nil, err
	}
	// The impersonator's rights (impersonate the callers allowed to proxy)
	// are granted later by the control plane's unified-auth controller.
	if err := ensureServiceAccount(ctx, m.kube, n.namespace, impersonatorServiceAccount, p); err != nil {
		return nil, err
	}
	if err := ensureServiceAccount(ctx, m.kube, n.namespace, n.serviceAccount(), p); err != nil {
		return nil, err
	}
	if err := ensureClusterRole(ctx, m.kube, n.clusterRole(), clusterRoleRules(), p); err != nil {
		return nil, err
	}
	if err := ensureClusterRoleBinding(ctx, m.kube, n.clusterRole(), n.namespace, n.serviceAccount(), p); err != nil {
		return nil, err
	}
	impersonator, err := ensureTokenSecret(ctx, m.kube, n.namespace, impersonatorServiceAccount, o.token, p)
	if err != nil {
		return nil, err
	}
	cred, err := ensureTokenSecret(ctx, m.kube, n.namespace, n.serviceAccount(), o.token, p)
	if err != nil {
		return nil, err
	}
	if cred == nil || impersonator == nil { // dry run, tokens not issued yet
		return nil, nil
	}
	return &memberCredentials{
		token:             cred.Data[corev1.ServiceAccountTokenKey],
		caCert:            cred.Data[corev1.ServiceAccountRootCAKey],
		impersonatorToken: impersonator.Data[corev1.ServiceAccountTokenKey],
	}, nil
}

// ensureControlPlane writes the secrets and the Cluster in the control plane,
// then makes the Cluster own the secrets.
func (o *JoinOptions) ensureControlPlane(ctx context.Context, cp controlplane.Clients, m *memberCluster, creds *memberCredentials, existing *clusterv1alpha1.Cluster, id string, p printer) error {
	n := joinNames{cluster: o.ClusterName, namespace: o.ClusterNamespace}
	if err := ensureNamespace(ctx, cp.Kube, n.namespace, onControlPlane, p); err != nil {
		return err
	}
	if creds == nil {
		p.changed(onControlPlane, ref("secret", n.namespace, n.secret())+" and "+ref("secret", n.namespace, n.impersonatorSecret()),
			"created or updated once the member has issued the tokens")
	} else {
		caBundle := creds.caCert
		if len(caBundle) == 0 {
			caBundle = m.caData
		}
		data := map[string][]byte{names.SecretTokenKey: creds.token}
		if len(caBundle) > 0 {
			data[names.SecretCABundleKey] = caBundle
		}
		if err := ensureOpaqueSecret(ctx, cp.Kube, n.namespace, n.secret(), data, p); err != nil {
			return err
		}
		data = map[string][]byte{names.SecretTokenKey: creds.impersonatorToken}
		if err := ensureOpaqueSecret(ctx, cp.Kube, n.namespace, n.impersonatorSecret(), data, p); err != nil {
			return err
		}
	}

	cluster, err := o.ensureCluster(ctx, cp, existing, m, id, p)
	if err != nil {
		return err
	}
	owner := metav1.OwnerReference{
		APIVersion: clusterv1alpha1.SchemeGroupVersion.String(), Kind: "Cluster",
		Name: cluster.Name, UID: cluster.UID,
		Controller: ptr.To(false), BlockOwnerDeletion: ptr.To(false),
	}
	for _, name := range []string{n.secret(), n.impersonatorSecret()} {
		if err := ensureOwner(ctx, cp.Kube, n.namespace, name, owner, p); err != nil {
			return err
		}
	}
	return nil
}

// applySpec sets the fields of spec that join owns. Taints, resource models,
// proxy headers and whatever else others wrote are left alone.
func (o *JoinOptions) applySpec(spec *clusterv1alpha1.ClusterSpec, m *memberCluster, id string) {
	n := joinNames{cluster: o.ClusterName, namespace: o.ClusterNamespace}
	spec.ID = id
	spec.SyncMode = clusterv1alpha1.Push
	spec.APIEndpoint = m.endpoint
	spec.SecretRef = &clusterv1alpha1.LocalSecretReference{Namespace: n.namespace, Name: n.secret()}
	spec.ImpersonatorSecretRef = &clusterv1alpha1.LocalSecretReference{Namespace: n.namespace, Name: n.impersonatorSecret()}
	spec.InsecureSkipTLSVerification = m.insecure
	spec.ProxyURL = m.proxyURL
	if o.SetProvider {
		spec.Provider = o.ClusterProvider
	}
	if o.SetRegion {
		spec.Region = o.ClusterRegion
	}
	if o.SetZones {
		spec.Zones = nil
		for _, z := range o.ClusterZones {
			if z != "" {
				spec.Zones = append(spec.Zones, z)
			}
		}
		spec.Zone = "" // deprecated; zone and zones together are invalid
	}
}

// ensureCluster creates the Cluster, or updates the fields join owns.
func (o *JoinOptions) ensureCluster(ctx context.Context, cp controlplane.Clients, existing *clusterv1alpha1.Cluster, m *memberCluster, id string, p printer) (*clusterv1alpha1.Cluster, error) {
	clusters := cp.Karmada.ClusterV1alpha1().Clusters()
	if existing == nil {
		c := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: o.ClusterName}}
		o.applySpec(&c.Spec, m, id)
		if !o.DryRun {
			var err error
			if c, err = clusters.Create(ctx, c, metav1.CreateOptions{}); err != nil {
				return nil, fmt.Errorf("creating cluster %s on the control plane: %w", o.ClusterName, err)
			}
		}
		p.changed(onControlPlane, ref("cluster", "", o.ClusterName), "created")
		return c, nil
	}

	result, cur := existing, existing
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if cur == nil { // a conflict: read again
			var err error
			if cur, err = clusters.Get(ctx, o.ClusterName, metav1.GetOptions{}); err != nil {
				return fmt.Errorf("reading cluster %s on the control plane: %w", o.ClusterName, err)
			}
		}
		want := cur.DeepCopy()
		o.applySpec(&want.Spec, m, id)
		if equality.Semantic.DeepEqual(want.Spec, cur.Spec) {
			result = cur
			return nil
		}
		result = want
		if !o.DryRun {
			updated, err := clusters.Update(ctx, want, metav1.UpdateOptions{})
			if err != nil {
				cur = nil
				return fmt.Errorf("updating cluster %s on the control plane: %w", o.ClusterName, err)
			}
			result = updated
		}
		p.changed(onControlPlane, ref("cluster", "", o.ClusterName), "updated")
		return nil
	})
	return result, err
}

package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/names"
)

// joinOptions holds the flags of join. Zero values are never valid; use newJoinOptions.
type joinOptions struct {
	ClusterName       string
	ClusterKubeconfig string
	ClusterContext    string
	ClusterNamespace  string
	ClusterProvider   string
	ClusterRegion     string
	ClusterZones      []string
	DryRun            bool
	Force             bool

	// setProvider, setRegion and setZones record which of those flags were
	// given: join writes only those, so a later join without them keeps what
	// is there, and --cluster-provider="" clears it.
	setProvider, setRegion, setZones bool
	// token is how long to wait for the member's token controller.
	token tokenWait
	// ready is how long to wait for the Cluster to be Ready (--wait).
	ready readyWait
}

func newJoinOptions() *joinOptions {
	return &joinOptions{
		ClusterNamespace: defaultClusterNamespace,
		token:            tokenWait{timeout: 60 * time.Second, interval: time.Second},
		ready:            readyWait{enabled: true, timeout: defaultJoinWait, interval: time.Second},
	}
}

// newJoinCommand returns join; self is how the user runs this binary, for examples.
func newJoinCommand(cp *controlPlaneFlags, self string) *cobra.Command {
	o := newJoinOptions()
	cmd := &cobra.Command{
		Use:   "join CLUSTER_NAME --cluster-kubeconfig=<KUBECONFIG>",
		Short: "Register a cluster with the control plane in Push mode",
		Long: `Register a cluster with the control plane in Push mode, as karmadactl join does.

In the member cluster, in namespace --cluster-namespace: ServiceAccount
karmada-<name> bound to ClusterRole karmada-controller-manager:karmada-<name>
(everything), ServiceAccount karmada-impersonator, and a token Secret for each.
In the control plane: Secrets <name> (token, caBundle) and <name>-impersonator
(token) in --cluster-namespace, owned by the Cluster <name>, which points at them.

Running join again changes only what differs.

Once joined (karmadactl's "cluster(<name>) is joined successfully" on stdout),
join waits up to --wait for the Cluster to be Ready, printing on stderr each
state of its Ready condition. --wait=0 returns at once, as karmadactl join
does. Not Ready in time is a warning, or an error (exit 1) when --wait was
given.`,
		Example: fmt.Sprintf(`  # Join the cluster of the current context of member1.config as member1
  %[1]s join member1 --cluster-kubeconfig=member1.config

  # Preview without writing anything
  %[1]s join member1 --cluster-kubeconfig=members.config --cluster-context=member1 --dry-run`, self),
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.complete(cmd.Flags(), args); err != nil {
				return err
			}
			if err := o.validate(); err != nil {
				return err
			}
			cpc, err := cp.clients()
			if err != nil {
				return fmt.Errorf("join cluster %q: %w", o.ClusterName, err)
			}
			m, err := loadMember(o.ClusterKubeconfig, o.ClusterContext, o.ClusterName)
			if err != nil {
				return fmt.Errorf("join cluster %q: %w", o.ClusterName, err)
			}
			o.ready.required = cmd.Flags().Changed("wait")
			return o.run(cmd.Context(), cpc, m, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.addFlags(cmd.Flags())
	return cmd
}

func (o *joinOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ClusterKubeconfig, "cluster-kubeconfig", o.ClusterKubeconfig, "Path of the member cluster's kubeconfig (required).")
	fs.StringVar(&o.ClusterContext, "cluster-context", o.ClusterContext, "Context of the member in --cluster-kubeconfig. Default: the context named like the cluster if there is one, else the current context.")
	fs.StringVar(&o.ClusterNamespace, "cluster-namespace", o.ClusterNamespace, "Namespace, in the member and in the control plane, holding the member's credentials.")
	fs.StringVar(&o.ClusterProvider, "cluster-provider", o.ClusterProvider, "Provider of the cluster (spec.provider), for spreading workloads across providers.")
	fs.StringVar(&o.ClusterRegion, "cluster-region", o.ClusterRegion, "Region of the cluster (spec.region), for spreading workloads across regions.")
	fs.StringSliceVar(&o.ClusterZones, "cluster-zones", o.ClusterZones, "Zones of the cluster (spec.zones), comma-separated, for spreading workloads across zones.")
	fs.BoolVar(&o.DryRun, "dry-run", o.DryRun, "Only print what would change; read but write nothing.")
	fs.Var(waitValue{enabled: &o.ready.enabled, timeout: &o.ready.timeout}, "wait",
		"How long to wait for the joined Cluster to be Ready, with progress on stderr (a duration); 0 or false: return once joined.")
	fs.BoolVar(&o.Force, "force", o.Force, "Take over a Cluster of that name registered for another member (other id) or in Pull mode, or register a member already registered under another name.")
}

func (o *joinOptions) complete(fs *pflag.FlagSet, args []string) error {
	if len(args) != 1 {
		return errors.New("join takes exactly one argument, the cluster name")
	}
	o.ClusterName = args[0]
	o.setProvider = fs.Changed("cluster-provider")
	o.setRegion = fs.Changed("cluster-region")
	o.setZones = fs.Changed("cluster-zones")
	return nil
}

func (o *joinOptions) validate() error {
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
func (o *joinOptions) run(ctx context.Context, cp controlPlane, m *memberCluster, out, progress io.Writer) error {
	p := printer{out: out, dryRun: o.DryRun}
	if err := o.join(ctx, cp, m, p); err != nil {
		return fmt.Errorf("join cluster %q: %w", o.ClusterName, err)
	}
	if o.DryRun {
		fmt.Fprintf(out, "cluster(%s) would be joined (dry run: nothing was written)\n", o.ClusterName)
		return nil
	}
	fmt.Fprintf(out, "cluster(%s) is joined successfully\n", o.ClusterName)
	return waitReady(ctx, cp.karmada.ClusterV1alpha1().Clusters(), o.ClusterName, o.ready, progress)
}

func (o *joinOptions) join(ctx context.Context, cp controlPlane, m *memberCluster, p printer) error {
	action := joinAction.withForce(o.Force)
	ident, err := action.readIdentity(ctx, cp.karmada, o.ClusterName, m.kube)
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
func (o *joinOptions) ensureMember(ctx context.Context, m *memberCluster, p printer) (*memberCredentials, error) {
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
func (o *joinOptions) ensureControlPlane(ctx context.Context, cp controlPlane, m *memberCluster, creds *memberCredentials, existing *clusterv1alpha1.Cluster, id string, p printer) error {
	n := joinNames{cluster: o.ClusterName, namespace: o.ClusterNamespace}
	if err := ensureNamespace(ctx, cp.kube, n.namespace, onControlPlane, p); err != nil {
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
		if err := ensureOpaqueSecret(ctx, cp.kube, n.namespace, n.secret(), data, p); err != nil {
			return err
		}
		data = map[string][]byte{names.SecretTokenKey: creds.impersonatorToken}
		if err := ensureOpaqueSecret(ctx, cp.kube, n.namespace, n.impersonatorSecret(), data, p); err != nil {
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
		if err := ensureOwner(ctx, cp.kube, n.namespace, name, owner, p); err != nil {
			return err
		}
	}
	return nil
}

// applySpec sets the fields of spec that join owns. Taints, resource models,
// proxy headers and whatever else others wrote are left alone.
func (o *joinOptions) applySpec(spec *clusterv1alpha1.ClusterSpec, m *memberCluster, id string) {
	n := joinNames{cluster: o.ClusterName, namespace: o.ClusterNamespace}
	spec.ID = id
	spec.SyncMode = clusterv1alpha1.Push
	spec.APIEndpoint = m.endpoint
	spec.SecretRef = &clusterv1alpha1.LocalSecretReference{Namespace: n.namespace, Name: n.secret()}
	spec.ImpersonatorSecretRef = &clusterv1alpha1.LocalSecretReference{Namespace: n.namespace, Name: n.impersonatorSecret()}
	spec.InsecureSkipTLSVerification = m.insecure
	spec.ProxyURL = m.proxyURL
	if o.setProvider {
		spec.Provider = o.ClusterProvider
	}
	if o.setRegion {
		spec.Region = o.ClusterRegion
	}
	if o.setZones {
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
func (o *joinOptions) ensureCluster(ctx context.Context, cp controlPlane, existing *clusterv1alpha1.Cluster, m *memberCluster, id string, p printer) (*clusterv1alpha1.Cluster, error) {
	clusters := cp.karmada.ClusterV1alpha1().Clusters()
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

package membership

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/duration"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"
	bootstrapsecrets "k8s.io/cluster-bootstrap/util/secrets"

	clustervalidation "github.com/flotilla-io/flotilla/apis/cluster/validation"
	"github.com/flotilla-io/flotilla/cli/controlplane"
	"github.com/flotilla-io/flotilla/names"
)

// TokenCreateOptions holds the flags of token create. Use NewTokenCreateOptions.
type TokenCreateOptions struct {
	TTL                  time.Duration
	Description          string
	Groups               []string
	Usages               []string
	PrintRegisterCommand bool
	// ClusterName binds the token to one cluster name: it may register
	// only that cluster (names.BoundTokenGroup).
	ClusterName string

	// self is how the user runs this binary, for the printed command.
	self string
	now  func() time.Time
}

// NewTokenCreateOptions returns token create's defaults; self is how the
// user runs this binary, for the register command it prints.
func NewTokenCreateOptions(self string) *TokenCreateOptions {
	return &TokenCreateOptions{
		TTL:    24 * time.Hour,
		Groups: []string{names.DefaultTokenGroup},
		// kubeadm's and karmadactl's default: register verifies cluster-info's
		// signature (signing) and authenticates with the token.
		Usages: []string{"signing", "authentication"},
		self:   self,
		now:    time.Now,
	}
}

// Run creates a bootstrap token on the control plane flags locates and
// prints it, or the register command that uses it, on out.
func (o *TokenCreateOptions) Run(ctx context.Context, flags genericclioptions.RESTClientGetter, out io.Writer) error {
	if err := o.validate(); err != nil {
		return err
	}
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return fmt.Errorf("loading the control-plane kubeconfig: %w", err)
	}
	kube, err := kubernetes.NewForConfig(rest.AddUserAgent(rest.CopyConfig(cfg), controlplane.UserAgent))
	if err != nil {
		return err
	}
	return o.run(ctx, kube, cfg, out)
}

func (o *TokenCreateOptions) validate() error {
	var errs []error
	if o.TTL < 0 {
		errs = append(errs, fmt.Errorf("--ttl must not be negative, got %s", o.TTL))
	}
	for _, g := range o.Groups {
		if err := bootstraputil.ValidateBootstrapGroupName(g); err != nil {
			errs = append(errs, fmt.Errorf("invalid --groups: %w", err))
		}
		if strings.HasPrefix(g, names.BoundTokenGroupPrefix) {
			errs = append(errs, fmt.Errorf("invalid --groups %q: use --cluster-name to bind a token to a cluster", g))
		}
	}
	if len(o.Usages) == 0 {
		errs = append(errs, errors.New("--usages must name at least one usage"))
	}
	for _, u := range o.Usages {
		if !slices.Contains(bootstrapapi.KnownTokenUsages, u) {
			errs = append(errs, fmt.Errorf("invalid --usages %q: known usages are %s", u, strings.Join(bootstrapapi.KnownTokenUsages, ", ")))
		}
	}
	if o.ClusterName != "" {
		if msgs := clustervalidation.ValidateClusterName(o.ClusterName, false); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("invalid --cluster-name %q: %s", o.ClusterName, strings.Join(msgs, "; ")))
		}
	}
	return utilerrors.NewAggregate(errs)
}

// tokenSecret returns the Secret of a bootstrap token.
func (o *TokenCreateOptions) tokenSecret(token string) (*corev1.Secret, error) {
	id, secret, err := parseToken(token)
	if err != nil {
		return nil, err
	}
	data := map[string][]byte{
		bootstrapapi.BootstrapTokenIDKey:     []byte(id),
		bootstrapapi.BootstrapTokenSecretKey: []byte(secret),
	}
	for _, u := range o.Usages {
		data[bootstrapapi.BootstrapTokenUsagePrefix+u] = []byte("true")
	}
	groups := o.Groups
	if o.ClusterName != "" {
		groups = append(slices.Clone(groups), names.BoundTokenGroup(o.ClusterName))
	}
	if len(groups) > 0 {
		data[bootstrapapi.BootstrapTokenExtraGroupsKey] = []byte(strings.Join(groups, ","))
	}
	if o.Description != "" {
		data[bootstrapapi.BootstrapTokenDescriptionKey] = []byte(o.Description)
	}
	if o.TTL > 0 {
		data[bootstrapapi.BootstrapTokenExpirationKey] = []byte(o.now().Add(o.TTL).UTC().Format(time.RFC3339))
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: bootstrapapi.BootstrapTokenSecretPrefix + id, Labels: createdLabels()},
		Type:       bootstrapapi.SecretTypeBootstrapToken,
		Data:       data,
	}, nil
}

// run creates the token and prints it, or the register command. cfg is
// the control plane's client configuration: its server and CA go into
// cluster-info when there is none.
func (o *TokenCreateOptions) run(ctx context.Context, kube kubernetes.Interface, cfg *rest.Config, out io.Writer) error {
	info, err := ensureClusterInfo(ctx, kube, cfg)
	if err != nil {
		return err
	}
	hash, err := registerCAHash(info.ca)
	if err != nil {
		return fmt.Errorf("the CA of kube-public/cluster-info: %w", err)
	}
	token, err := generateToken()
	if err != nil {
		return err
	}
	s, err := o.tokenSecret(token)
	if err != nil {
		return err
	}
	if _, err := kube.CoreV1().Secrets(s.Namespace).Create(ctx, s, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating bootstrap token secret %s/%s on the control plane: %w", s.Namespace, s.Name, err)
	}
	if !o.PrintRegisterCommand {
		fmt.Fprintln(out, token)
		return nil
	}
	bound := ""
	if o.ClusterName != "" {
		bound = " --cluster-name " + o.ClusterName
	}
	fmt.Fprintf(out, "%s register %s --token %s --discovery-token-ca-cert-hash %s%s\n", o.self, info.server, token, hash, bound)
	return nil
}

// ensureClusterInfo returns kube-public/cluster-info, creating it from the
// control plane's client configuration when there is none (a control plane
// set up by kubeadm or karmadactl init has it). An existing one is kept:
// its endpoint is the one members know.
func ensureClusterInfo(ctx context.Context, kube kubernetes.Interface, cfg *rest.Config) (clusterInfo, error) {
	cms := kube.CoreV1().ConfigMaps(names.ClusterInfoNamespace)
	cm, err := cms.Get(ctx, names.ClusterInfoName, metav1.GetOptions{})
	if err == nil {
		return parseClusterInfo(cm)
	}
	if !apierrors.IsNotFound(err) {
		return clusterInfo{}, fmt.Errorf("reading %s/%s on the control plane: %w", names.ClusterInfoNamespace, names.ClusterInfoName, err)
	}
	tls := rest.CopyConfig(cfg)
	if err := rest.LoadTLSFiles(tls); err != nil {
		return clusterInfo{}, fmt.Errorf("reading the CA of the control-plane kubeconfig: %w", err)
	}
	if len(tls.CAData) == 0 {
		return clusterInfo{}, errors.New("the control-plane kubeconfig has no certificate authority, which members need to trust the control plane; create kube-public/cluster-info or use a kubeconfig with one")
	}
	info := clusterInfo{server: cfg.Host, ca: tls.CAData}
	kc := clientcmdapi.NewConfig()
	kc.Clusters[""] = &clientcmdapi.Cluster{Server: info.server, CertificateAuthorityData: info.ca}
	data, err := clientcmd.Write(*kc)
	if err != nil {
		return clusterInfo{}, err
	}
	cm = &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: names.ClusterInfoNamespace, Name: names.ClusterInfoName, Labels: createdLabels()},
		Data:       map[string]string{bootstrapapi.KubeConfigKey: string(data)},
	}
	if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return ensureClusterInfo(ctx, kube, cfg)
		}
		return clusterInfo{}, fmt.Errorf("creating %s/%s on the control plane: %w", cm.Namespace, cm.Name, err)
	}
	return info, nil
}

// ListTokens prints the bootstrap tokens of the control plane flags
// locates on out (token list).
func ListTokens(ctx context.Context, flags genericclioptions.RESTClientGetter, out io.Writer) error {
	cp, err := controlplane.ClientsOf(flags)
	if err != nil {
		return err
	}
	return listTokens(ctx, cp.Kube, time.Now(), out)
}

// listTokens prints the bootstrap tokens as karmadactl and kubeadm do:
// TOKEN (id.secret: whoever may list them may read the Secrets), TTL,
// EXPIRES, USAGES, DESCRIPTION, EXTRA GROUPS.
func listTokens(ctx context.Context, kube kubernetes.Interface, now time.Time, out io.Writer) error {
	list, err := kube.CoreV1().Secrets(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("type", string(bootstrapapi.SecretTypeBootstrapToken)).String(),
	})
	if err != nil {
		return fmt.Errorf("listing bootstrap tokens on the control plane: %w", err)
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	w := tabwriter.NewWriter(out, 10, 4, 3, ' ', 0)
	fmt.Fprintln(w, "TOKEN\tTTL\tEXPIRES\tUSAGES\tDESCRIPTION\tEXTRA GROUPS")
	for _, s := range list.Items {
		ttl, expires := "<forever>", "<never>"
		if e := bootstrapsecrets.GetData(&s, bootstrapapi.BootstrapTokenExpirationKey); e != "" {
			expires, ttl = e, "<invalid>"
			if t, err := time.Parse(time.RFC3339, e); err == nil {
				ttl = duration.ShortHumanDuration(t.Sub(now))
			}
		}
		var usages []string
		for _, u := range bootstrapapi.KnownTokenUsages {
			if bootstrapsecrets.GetData(&s, bootstrapapi.BootstrapTokenUsagePrefix+u) == "true" {
				usages = append(usages, u)
			}
		}
		description := bootstrapsecrets.GetData(&s, bootstrapapi.BootstrapTokenDescriptionKey)
		if description == "" {
			description = "<none>"
		}
		groups := bootstrapsecrets.GetData(&s, bootstrapapi.BootstrapTokenExtraGroupsKey)
		if groups == "" {
			groups = "<none>"
		}
		token := bootstraputil.TokenFromIDAndSecret(bootstrapsecrets.GetData(&s, bootstrapapi.BootstrapTokenIDKey), bootstrapsecrets.GetData(&s, bootstrapapi.BootstrapTokenSecretKey))
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", token, ttl, expires, strings.Join(usages, ","), description, groups)
	}
	return w.Flush()
}

// DeleteTokens deletes the bootstrap tokens args names (token ids or
// tokens) from the control plane flags locates (token delete), reporting
// each on out.
func DeleteTokens(ctx context.Context, flags genericclioptions.RESTClientGetter, args []string, out io.Writer) error {
	cp, err := controlplane.ClientsOf(flags)
	if err != nil {
		return err
	}
	for _, a := range args {
		id, _, _ := strings.Cut(a, ".")
		if !bootstraputil.IsValidBootstrapTokenID(id) {
			return fmt.Errorf("%q is neither a token id nor a token", a)
		}
		name := bootstraputil.BootstrapTokenSecretName(id)
		if err := cp.Kube.CoreV1().Secrets(metav1.NamespaceSystem).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			return fmt.Errorf("deleting bootstrap token %s: %w", id, err)
		}
		fmt.Fprintf(out, "bootstrap token %q deleted\n", id)
	}
	return nil
}

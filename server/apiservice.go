package server

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/typed/apiextensions/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	aggregator "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"
)

// APIServiceOptions say how flotilla-apiserver registers its groups with the host.
type APIServiceOptions struct {
	// Register creates or updates the APIService objects at start.
	Register bool
	// ServiceName and ServiceNamespace name the Service the APIServices point
	// at; the serving certificate must be valid for <name>.<namespace>.svc.
	ServiceName, ServiceNamespace string
	// ExternalName, when set, makes that Service an ExternalName Service for
	// this host name: how the aggregator reaches a server running as a local process.
	ExternalName string
	// CABundleFile is the CA the aggregator verifies the serving certificate
	// with. Default: the last certificate of the serving certificate file
	// (the self-signed CA when the server generated its own certificate).
	CABundleFile string
}

// Priorities Karmada's aggregated servers register with.
const (
	groupPriorityMinimum = 2000
	versionPriority      = 10
)

// apiServiceRegistrar creates or updates, on the host, the Service and the
// APIService objects that route this server's groups to it, the admission
// policy that protects labelled objects from deletion, and the CRDs of the
// MCS API (ServiceExport, ServiceImport).
type apiServiceRegistrar struct {
	core     kubernetes.Interface
	agg      aggregator.Interface
	crds     apiextensionsclient.CustomResourceDefinitionInterface
	opts     APIServiceOptions
	port     int32
	caBundle []byte
	versions []schema.GroupVersion
}

func newAPIServiceRegistrar(host *rest.Config, opts APIServiceOptions, serving *genericoptions.SecureServingOptionsWithLoopback, versions []schema.GroupVersion) (*apiServiceRegistrar, error) {
	core, err := kubernetes.NewForConfig(host)
	if err != nil {
		return nil, err
	}
	agg, err := aggregator.NewForConfig(host)
	if err != nil {
		return nil, err
	}
	ext, err := apiextensionsclient.NewForConfig(host)
	if err != nil {
		return nil, err
	}
	ca, err := caBundle(opts, serving)
	if err != nil {
		return nil, fmt.Errorf("CA bundle for the APIServices: %w", err)
	}
	return &apiServiceRegistrar{core: core, agg: agg, crds: ext.CustomResourceDefinitions(), opts: opts, port: int32(serving.BindPort), caBundle: ca, versions: versions}, nil
}

// caBundle is the CA clients verify this server with: --apiservice-ca-file,
// or the last certificate of the serving certificate file (the
// self-signed CA when the server generated its own certificate).
func caBundle(opts APIServiceOptions, serving *genericoptions.SecureServingOptionsWithLoopback) ([]byte, error) {
	caFile := opts.CABundleFile
	if caFile == "" {
		caFile = serving.ServerCert.CertKey.CertFile
	}
	return lastCertificate(caFile)
}

// lastCertificate returns the last PEM certificate of a file: the CA of a
// chain written leaf first.
func lastCertificate(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var last *pem.Block
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		if b.Type == "CERTIFICATE" {
			last = b
		}
	}
	if last == nil {
		return nil, fmt.Errorf("no certificate in %s", path)
	}
	if _, err := x509.ParseCertificate(last.Bytes); err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(last), nil
}

// run registers until it succeeds or ctx ends, backing off on errors.
func (r *apiServiceRegistrar) run(ctx context.Context, log logr.Logger) {
	_ = wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		if err := r.register(ctx); err != nil {
			log.Error(err, "Registering APIServices failed; retrying")
			return false, nil
		}
		log.Info("Registered APIServices", "count", len(r.versions), "service", r.opts.ServiceNamespace+"/"+r.opts.ServiceName)
		return true, nil
	})
}

// register makes the host state right; it writes only what differs.
func (r *apiServiceRegistrar) register(ctx context.Context) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: r.opts.ServiceNamespace}}
	if _, err := r.core.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	if r.opts.ExternalName != "" {
		if err := r.ensureService(ctx); err != nil {
			return err
		}
	}
	// Deletion protection first: it is in force before the APIs are routed.
	errs := []error{r.ensureDeletionProtection(ctx), r.ensureProxyAdmin(ctx), r.ensureAgentBootstrapRBAC(ctx), ensureMCSCRDs(ctx, r.crds), r.ensureInventoryWriters(ctx)}
	for _, gv := range r.versions {
		errs = append(errs, r.ensureAPIService(ctx, gv))
	}
	return errors.Join(errs...)
}

func (r *apiServiceRegistrar) ensureService(ctx context.Context) error {
	want := corev1.ServiceSpec{
		Type: corev1.ServiceTypeExternalName, ExternalName: r.opts.ExternalName,
		Ports: []corev1.ServicePort{{Name: "https", Port: r.port, Protocol: corev1.ProtocolTCP}},
	}
	svcs := r.core.CoreV1().Services(r.opts.ServiceNamespace)
	cur, err := svcs.Get(ctx, r.opts.ServiceName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = svcs.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: r.opts.ServiceName, Namespace: r.opts.ServiceNamespace}, Spec: want}, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	if cur.Spec.Type == want.Type && cur.Spec.ExternalName == want.ExternalName && len(cur.Spec.Ports) == 1 && cur.Spec.Ports[0].Port == r.port {
		return nil
	}
	cur.Spec = want
	_, err = svcs.Update(ctx, cur, metav1.UpdateOptions{})
	return err
}

func (r *apiServiceRegistrar) ensureAPIService(ctx context.Context, gv schema.GroupVersion) error {
	port := r.port
	if r.opts.ExternalName == "" {
		port = 443
	}
	want := apiregv1.APIServiceSpec{
		Group: gv.Group, Version: gv.Version,
		Service:              &apiregv1.ServiceReference{Namespace: r.opts.ServiceNamespace, Name: r.opts.ServiceName, Port: &port},
		CABundle:             r.caBundle,
		GroupPriorityMinimum: groupPriorityMinimum, VersionPriority: versionPriority,
	}
	name := gv.Version + "." + gv.Group
	api := r.agg.ApiregistrationV1().APIServices()
	cur, err := api.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = api.Create(ctx, &apiregv1.APIService{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: want}, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	if apiequality.Semantic.DeepEqual(cur.Spec, want) {
		return nil
	}
	cur.Spec = want
	_, err = api.Update(ctx, cur, metav1.UpdateOptions{})
	return err
}

// proxyAdmin is the ClusterRole Karmada ships for clusters/proxy, bound to
// system:admin; Flotilla also binds the system:masters group, so a cluster
// admin can reach every member through the proxy out of the box.
const proxyAdmin = "cluster-proxy-admin"

func (r *apiServiceRegistrar) ensureProxyAdmin(ctx context.Context) error {
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: proxyAdmin}, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{"cluster.karmada.io"}, Resources: []string{"clusters/proxy"}, Verbs: []string{"*"},
	}}}
	if _, err := r.core.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: proxyAdmin},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: proxyAdmin},
		Subjects: []rbacv1.Subject{
			{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "system:admin"},
			{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "system:masters"},
		}}
	if _, err := r.core.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

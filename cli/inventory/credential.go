package inventory

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientauthenticationv1 "k8s.io/client-go/pkg/apis/clientauthentication/v1"
	clientauthenticationv1beta1 "k8s.io/client-go/pkg/apis/clientauthentication/v1beta1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/auth/exec"
)

// ExecInfoEnv is the variable client-go passes the cluster in to an exec
// plugin whose provideClusterInfo is true.
const ExecInfoEnv = "KUBERNETES_EXEC_INFO"

// CredentialOptions are flotillactl inventory credential's inputs.
type CredentialOptions struct {
	// ControlPlane is the caller's configuration for the control plane
	// (the kubeconfig flags).
	ControlPlane func() (*rest.Config, error)
	// ExecInfo is the value of KUBERNETES_EXEC_INFO ("" when unset).
	ExecInfo string
	// AllowedServers are further URLs (scheme://host[:port]) the
	// credentials may be handed to, besides the control plane's own: the
	// --cluster-profile-server the profiles advertise when it differs
	// from the kubeconfig's.
	AllowedServers []string
	Out            io.Writer
}

// RunCredential writes to o.Out the ExecCredential carrying the caller's
// credentials for the control plane: its bearer token (or token file), or
// its client certificate and key. When client-go says which cluster it
// asks for (KUBERNETES_EXEC_INFO), the credentials go only to the control
// plane (or an allowed server): a profile pointing elsewhere is refused,
// so the caller's control-plane credentials never leave it.
func RunCredential(o CredentialOptions) error {
	cfg, err := o.ControlPlane()
	if err != nil {
		return err
	}
	apiVersion := clientauthenticationv1.SchemeGroupVersion.String()
	if o.ExecInfo != "" {
		obj, target, err := exec.LoadExecCredential([]byte(o.ExecInfo))
		if err != nil {
			return fmt.Errorf("reading %s: %w", ExecInfoEnv, err)
		}
		apiVersion = obj.GetObjectKind().GroupVersionKind().GroupVersion().String()
		if err := sameServer(target.Host, cfg.Host, o.AllowedServers); err != nil {
			return err
		}
	}
	status, err := credentials(cfg)
	if err != nil {
		return err
	}
	var out runtime.Object
	switch apiVersion {
	case clientauthenticationv1.SchemeGroupVersion.String():
		out = &clientauthenticationv1.ExecCredential{Status: status}
	case clientauthenticationv1beta1.SchemeGroupVersion.String():
		out = &clientauthenticationv1beta1.ExecCredential{Status: &clientauthenticationv1beta1.ExecCredentialStatus{
			Token: status.Token, ClientCertificateData: status.ClientCertificateData, ClientKeyData: status.ClientKeyData}}
	default:
		return fmt.Errorf("%s asks for %s; flotillactl answers client.authentication.k8s.io/v1 or v1beta1", ExecInfoEnv, apiVersion)
	}
	out.GetObjectKind().SetGroupVersionKind(schemaGVK(apiVersion))
	return json.NewEncoder(o.Out).Encode(out)
}

// credentials reads what cfg authenticates with.
func credentials(cfg *rest.Config) (*clientauthenticationv1.ExecCredentialStatus, error) {
	cfg = rest.CopyConfig(cfg)
	if err := rest.LoadTLSFiles(cfg); err != nil { // the certificate and key files into their data
		return nil, err
	}
	s := &clientauthenticationv1.ExecCredentialStatus{Token: cfg.BearerToken}
	if s.Token == "" && cfg.BearerTokenFile != "" {
		b, err := os.ReadFile(cfg.BearerTokenFile)
		if err != nil {
			return nil, err
		}
		s.Token = strings.TrimSpace(string(b))
	}
	if len(cfg.CertData) > 0 && len(cfg.KeyData) > 0 {
		s.ClientCertificateData, s.ClientKeyData = string(cfg.CertData), string(cfg.KeyData)
	}
	switch {
	case s.Token != "" || s.ClientCertificateData != "":
		return s, nil
	case cfg.ExecProvider != nil:
		return nil, fmt.Errorf("the kubeconfig's user authenticates with the exec plugin %q: name that plugin in the provider file instead", cfg.ExecProvider.Command)
	case cfg.AuthProvider != nil:
		return nil, fmt.Errorf("the kubeconfig's user authenticates with the auth provider %q, which an exec credential cannot carry", cfg.AuthProvider.Name)
	}
	return nil, errors.New("the kubeconfig's user has no token and no client certificate for the control plane")
}

// sameServer refuses a target that is neither the control plane nor an
// allowed server (compared by scheme and host:port).
func sameServer(target, controlPlane string, allowed []string) error {
	want, err := origin(target)
	if err != nil {
		return fmt.Errorf("the cluster's server %q: %w", target, err)
	}
	for _, s := range append([]string{controlPlane}, allowed...) {
		if o, err := origin(s); err == nil && o == want {
			return nil
		}
	}
	return fmt.Errorf("refusing to hand the control plane's credentials to %s: it is not the control plane of this kubeconfig (%s); "+
		"if the profiles advertise another address of it, allow it with --allowed-server", target, controlPlane)
}

// origin is scheme://host:port of a URL, the port made explicit.
func origin(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil {
		return "", err
	}
	if u.Scheme == "" || u.Host == "" {
		return "", fmt.Errorf("not an absolute URL")
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"https": "443", "http": "80"}[u.Scheme]
	}
	return u.Scheme + "://" + strings.ToLower(u.Hostname()) + ":" + port, nil
}

func schemaGVK(apiVersion string) schema.GroupVersionKind {
	gv, _ := schema.ParseGroupVersion(apiVersion) // one of the two above
	return gv.WithKind("ExecCredential")
}

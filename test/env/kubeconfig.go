package env

import (
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Context is one entry of a kubeconfig written by WriteKubeconfig.
type Context struct {
	Name     string
	Server   string
	CA       []byte
	CertPEM  []byte
	KeyPEM   []byte
	Username string
}

// WriteKubeconfig writes a kubeconfig holding contexts, with every credential
// embedded, and current as its current context.
func WriteKubeconfig(path, current string, contexts ...Context) error {
	cfg := clientcmdapi.NewConfig()
	for _, c := range contexts {
		user := c.Username
		if user == "" {
			user = c.Name
		}
		cfg.Clusters[c.Name] = &clientcmdapi.Cluster{Server: c.Server, CertificateAuthorityData: c.CA}
		cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificateData: c.CertPEM, ClientKeyData: c.KeyPEM}
		cfg.Contexts[c.Name] = &clientcmdapi.Context{Cluster: c.Name, AuthInfo: user}
	}
	if _, ok := cfg.Contexts[current]; !ok && current != "" {
		return fmt.Errorf("kubeconfig %s: current context %q is not among the contexts", path, current)
	}
	cfg.CurrentContext = current
	return clientcmd.WriteToFile(*cfg, path)
}

// restConfigFromKubeconfig loads the current context of a kubeconfig file.
func restConfigFromKubeconfig(path string) (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig %s: %w", path, err)
	}
	return cfg, nil
}

// AdminContext returns a kubeconfig context for c with its admin identity,
// named after the cluster.
func AdminContext(c *Cluster) (Context, error) {
	ca, err := os.ReadFile(filepath.Join(c.PKIDir(), "ca.crt"))
	if err != nil {
		return Context{}, err
	}
	cert, err := os.ReadFile(filepath.Join(c.PKIDir(), "admin.crt"))
	if err != nil {
		return Context{}, err
	}
	key, err := os.ReadFile(filepath.Join(c.PKIDir(), "admin.key"))
	if err != nil {
		return Context{}, err
	}
	return Context{Name: c.Name, Server: c.Server, CA: ca, CertPEM: cert, KeyPEM: key, Username: c.Name + "-admin"}, nil
}

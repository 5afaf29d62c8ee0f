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
	ctx, err := identityContext(c, "admin")
	ctx.Username = c.Name + "-admin"
	return ctx, err
}

// identityContext returns a context for c with the client certificate
// <id>.crt/.key of its PKI.
func identityContext(c *Cluster, id string) (Context, error) {
	var files [3][]byte
	for i, name := range []string{"ca.crt", id + ".crt", id + ".key"} {
		data, err := os.ReadFile(filepath.Join(c.PKIDir(), name))
		if err != nil {
			return Context{}, err
		}
		files[i] = data
	}
	return Context{Name: c.Name, Server: c.Server, CA: files[0], CertPEM: files[1], KeyPEM: files[2]}, nil
}

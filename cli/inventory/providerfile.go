package inventory

import (
	"encoding/json"
	"io"

	clientauthenticationv1 "k8s.io/client-go/pkg/apis/clientauthentication/v1"

	"github.com/flotilla-io/flotilla/inventory"
)

// ProviderFile is the consumer's provider file of the Cluster Inventory
// API's access library (its -clusterprofile-provider-file): which exec
// plugin gives credentials for the access providers of which name.
type ProviderFile struct {
	Providers []Provider `json:"providers"`
}

// Provider names an access provider and the exec plugin for it.
type Provider struct {
	Name       string     `json:"name"`
	ExecConfig ExecConfig `json:"execConfig"`
}

// ExecConfig is a kubeconfig user's exec section (clientcmd's ExecConfig,
// as the provider file writes it).
type ExecConfig struct {
	APIVersion         string   `json:"apiVersion"`
	Command            string   `json:"command"`
	Args               []string `json:"args,omitempty"`
	ProvideClusterInfo bool     `json:"provideClusterInfo"`
	InteractiveMode    string   `json:"interactiveMode"`
}

// WriteProviderFile writes the provider file naming command args as the
// plugin of Flotilla's access provider.
func WriteProviderFile(out io.Writer, command string, args []string) error {
	f := ProviderFile{Providers: []Provider{{Name: inventory.Manager, ExecConfig: ExecConfig{
		APIVersion: clientauthenticationv1.SchemeGroupVersion.String(), Command: command, Args: args,
		ProvideClusterInfo: true, InteractiveMode: "Never",
	}}}}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(f)
}

package inventory

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

func execInfo(apiVersion, server string) string {
	return `{"apiVersion":"` + apiVersion + `","kind":"ExecCredential","spec":{"interactive":false,"cluster":{"server":"` + server + `"}}}`
}

func TestRunCredential(t *testing.T) {
	t.Parallel()
	const cp = "https://127.0.0.1:6443"
	token := &rest.Config{Host: cp, BearerToken: "t0ken"}
	tests := []struct {
		name     string
		cfg      *rest.Config
		info     string
		allowed  []string
		want     string // a substring of the output
		wantErr  string
		wantKind string // apiVersion of the output
	}{
		{name: "a token, no cluster info", cfg: token, want: `"token":"t0ken"`, wantKind: "client.authentication.k8s.io/v1"},
		{name: "a client certificate", cfg: &rest.Config{Host: cp, TLSClientConfig: rest.TLSClientConfig{CertData: []byte("CERT"), KeyData: []byte("KEY")}},
			want: `"clientCertificateData":"CERT","clientKeyData":"KEY"`, wantKind: "client.authentication.k8s.io/v1"},
		{name: "the control plane's proxy", cfg: token, info: execInfo("client.authentication.k8s.io/v1", cp+"/apis/cluster.karmada.io/v1alpha1/clusters/member1/proxy"),
			want: `"token":"t0ken"`, wantKind: "client.authentication.k8s.io/v1"},
		{name: "v1beta1 asked, v1beta1 answered", cfg: token, info: execInfo("client.authentication.k8s.io/v1beta1", cp+"/apis/cluster.karmada.io/v1alpha1/clusters/member1/proxy"),
			want: `"token":"t0ken"`, wantKind: "client.authentication.k8s.io/v1beta1"},
		{name: "the default port made explicit", cfg: &rest.Config{Host: "https://cp.example", BearerToken: "t0ken"}, info: execInfo("client.authentication.k8s.io/v1", "https://CP.example:443/x"),
			want: `"token":"t0ken"`, wantKind: "client.authentication.k8s.io/v1"},
		{name: "another server refused", cfg: token, info: execInfo("client.authentication.k8s.io/v1", "https://evil.example:6443/proxy"),
			wantErr: "refusing to hand the control plane's credentials to https://evil.example:6443"},
		{name: "another server allowed", cfg: token, info: execInfo("client.authentication.k8s.io/v1", "https://cp.example:6443/proxy"), allowed: []string{"https://cp.example:6443"},
			want: `"token":"t0ken"`, wantKind: "client.authentication.k8s.io/v1"},
		{name: "an exec user", cfg: &rest.Config{Host: cp, ExecProvider: &clientcmdapi.ExecConfig{Command: "kubelogin"}},
			wantErr: `exec plugin "kubelogin": name that plugin in the provider file`},
		{name: "no credentials", cfg: &rest.Config{Host: cp}, wantErr: "no token and no client certificate"},
		{name: "bad exec info", cfg: token, info: `{"kind":"Pod"}`, wantErr: "reading KUBERNETES_EXEC_INFO"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			err := RunCredential(CredentialOptions{ControlPlane: func() (*rest.Config, error) { return tc.cfg, nil }, ExecInfo: tc.info, AllowedServers: tc.allowed, Out: &out})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				if out.Len() != 0 {
					t.Errorf("printed %s on an error", out.String())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), tc.want) {
				t.Errorf("output %s, want %s", out.String(), tc.want)
			}
			var head struct{ APIVersion, Kind string }
			if err := json.Unmarshal(out.Bytes(), &head); err != nil || head.APIVersion != tc.wantKind || head.Kind != "ExecCredential" {
				t.Errorf("output %s: %v", out.String(), err)
			}
		})
	}
}

func TestWriteProviderFile(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if err := WriteProviderFile(&out, "/usr/local/bin/flotillactl", []string{"inventory", "credential"}); err != nil {
		t.Fatal(err)
	}
	var f ProviderFile
	if err := json.Unmarshal(out.Bytes(), &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Providers) != 1 || f.Providers[0].Name != "flotilla" || !f.Providers[0].ExecConfig.ProvideClusterInfo ||
		f.Providers[0].ExecConfig.APIVersion != "client.authentication.k8s.io/v1" || f.Providers[0].ExecConfig.Command != "/usr/local/bin/flotillactl" {
		t.Errorf("provider file %s", out.String())
	}
}

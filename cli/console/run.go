package console

import (
	"context"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/klog/v2"
)

// Run serves the console of the control plane flags locates, as the
// kubeconfig's user (with login, as each user who logs in with a token:
// the kubeconfig, or the pod's in-cluster config, then gives the
// control plane's address and CA only), on address:port (port 0: any
// free port) until ctx ends; with open it starts the desktop's browser on
// it (xdg-open), when there is one.
func Run(ctx context.Context, flags genericclioptions.RESTClientGetter, address string, port int, open, login bool, out io.Writer) error {
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return fmt.Errorf("loading the control-plane kubeconfig: %w", err)
	}
	newServer := New
	if login {
		newServer = NewLogin
	}
	s, err := newServer(cfg)
	if err != nil {
		return err
	}
	return s.Run(ctx, net.JoinHostPort(address, strconv.Itoa(port)), out, func(url string) {
		if !open {
			return
		}
		browser, err := exec.LookPath("xdg-open")
		if err != nil {
			_, _ = fmt.Fprintln(out, "No browser to open here (xdg-open not found); open the URL above.")
			return
		}
		if err := exec.CommandContext(ctx, browser, url).Start(); err != nil {
			klog.V(2).InfoS("Starting the browser", "err", err)
		}
	})
}

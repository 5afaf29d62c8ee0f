package server

import (
	"context"
	"fmt"

	"github.com/flotilla-io/flotilla/controllers/agentregistration"
)

// ensureAgentBootstrapRBAC applies, on the host, the RBAC of Pull-mode
// registration (agentregistration.BootstrapRBAC): bootstrap tokens of the
// default group may request agent certificates and have them approved,
// agents may renew theirs, and anyone may read kube-public/cluster-info.
// Server-side apply makes it idempotent.
func (r *apiServiceRegistrar) ensureAgentBootstrapRBAC(ctx context.Context) error {
	if err := agentregistration.ApplyBootstrapRBAC(ctx, r.core, fieldManager); err != nil {
		return fmt.Errorf("applying the RBAC of agent registration: %w", err)
	}
	return nil
}

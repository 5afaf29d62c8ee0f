package server

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/registry/admission/deletionprotection"
)

// fieldManager owns what flotilla-apiserver applies to the host.
const fieldManager = "flotilla-apiserver"

// ensureDeletionProtection applies, on the host, the ValidatingAdmissionPolicy
// and binding that refuse to delete objects labelled
// resourcetemplate.karmada.io/deletion-protected=Always: the host has no
// Karmada webhook. Server-side apply makes it idempotent (an unchanged
// policy is not rewritten) and takes back fields someone else changed.
func (r *apiServiceRegistrar) ensureDeletionProtection(ctx context.Context) error {
	api := r.core.AdmissionregistrationV1()
	opts := metav1.ApplyOptions{FieldManager: fieldManager, Force: true}
	if _, err := api.ValidatingAdmissionPolicies().Apply(ctx, deletionprotection.HostPolicy(), opts); err != nil {
		return fmt.Errorf("applying ValidatingAdmissionPolicy %s: %w", deletionprotection.HostPolicyName, err)
	}
	if _, err := api.ValidatingAdmissionPolicyBindings().Apply(ctx, deletionprotection.HostPolicyBinding(), opts); err != nil {
		return fmt.Errorf("applying ValidatingAdmissionPolicyBinding %s: %w", deletionprotection.HostPolicyName, err)
	}
	return nil
}

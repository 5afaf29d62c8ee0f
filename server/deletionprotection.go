package server

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	admissionregistrationv1ac "k8s.io/client-go/applyconfigurations/admissionregistration/v1"

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
	return r.applyAdmissionPolicy(ctx, deletionprotection.HostPolicy(), deletionprotection.HostPolicyBinding())
}

// applyAdmissionPolicy applies a ValidatingAdmissionPolicy and its binding
// on the host with server-side apply.
func (r *apiServiceRegistrar) applyAdmissionPolicy(ctx context.Context, policy *admissionregistrationv1ac.ValidatingAdmissionPolicyApplyConfiguration,
	binding *admissionregistrationv1ac.ValidatingAdmissionPolicyBindingApplyConfiguration) error {
	api := r.core.AdmissionregistrationV1()
	opts := metav1.ApplyOptions{FieldManager: fieldManager, Force: true}
	if _, err := api.ValidatingAdmissionPolicies().Apply(ctx, policy, opts); err != nil {
		return fmt.Errorf("applying ValidatingAdmissionPolicy %s: %w", *policy.Name, err)
	}
	if _, err := api.ValidatingAdmissionPolicyBindings().Apply(ctx, binding, opts); err != nil {
		return fmt.Errorf("applying ValidatingAdmissionPolicyBinding %s: %w", *binding.Name, err)
	}
	return nil
}

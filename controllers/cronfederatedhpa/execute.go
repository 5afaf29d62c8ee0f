package cronfederatedhpa

import (
	"context"
	"encoding/json"
	"fmt"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/apis/autoscaling/v1alpha1"
)

// executor applies a rule to the target of a CronFederatedHPA. Its
// dependencies are functions so that it is tested without servers.
type executor struct {
	// patchFederatedHPA merge-patches a FederatedHPA in flotilla-apiserver.
	patchFederatedHPA func(ctx context.Context, namespace, name string, patch []byte) error
	// resourceFor maps a kind to its resource in the host.
	resourceFor func(gvk schema.GroupVersionKind) (schema.GroupResource, error)
	// getScale and updateScale read and write the scale subresource of a
	// workload template in the host.
	getScale    func(ctx context.Context, namespace string, gr schema.GroupResource, name string) (*autoscalingv1.Scale, error)
	updateScale func(ctx context.Context, namespace string, gr schema.GroupResource, s *autoscalingv1.Scale) error
}

// execute applies rule to the target of cron: the bounds of a FederatedHPA
// or the replicas of a workload. It returns what it applied, which is what
// the rule sets even when the target already had it (as Karmada records).
func (e *executor) execute(ctx context.Context, cron *autoscalingv1alpha1.CronFederatedHPA, rule *autoscalingv1alpha1.CronFederatedHPARule) (autoscalingv1alpha1.SuccessfulExecution, error) {
	ref := cron.Spec.ScaleTargetRef
	if ref.APIVersion == autoscalingv1alpha1.SchemeGroupVersion.String() {
		if ref.Kind != autoscalingv1alpha1.FederatedHPAKind {
			return autoscalingv1alpha1.SuccessfulExecution{}, fmt.Errorf("CronFederatedHPA(%s/%s) do not support scale target %s/%s",
				cron.Namespace, cron.Name, ref.APIVersion, ref.Kind)
		}
		if err := e.scaleFederatedHPA(ctx, cron.Namespace, ref.Name, rule); err != nil {
			return autoscalingv1alpha1.SuccessfulExecution{}, err
		}
		return autoscalingv1alpha1.SuccessfulExecution{AppliedMinReplicas: rule.TargetMinReplicas, AppliedMaxReplicas: rule.TargetMaxReplicas}, nil
	}
	if rule.TargetReplicas == nil {
		return autoscalingv1alpha1.SuccessfulExecution{}, fmt.Errorf("rule %s sets no targetReplicas for %s %s", rule.Name, ref.Kind, ref.Name)
	}
	if err := e.scaleWorkload(ctx, cron.Namespace, ref.APIVersion, ref.Kind, ref.Name, *rule.TargetReplicas); err != nil {
		return autoscalingv1alpha1.SuccessfulExecution{}, err
	}
	return autoscalingv1alpha1.SuccessfulExecution{AppliedReplicas: rule.TargetReplicas}, nil
}

// scaleFederatedHPA sets the bounds the rule names. A merge patch with
// the values already there changes nothing in storage, so there is no
// read first.
func (e *executor) scaleFederatedHPA(ctx context.Context, namespace, name string, rule *autoscalingv1alpha1.CronFederatedHPARule) error {
	spec := map[string]int32{}
	if rule.TargetMinReplicas != nil {
		spec["minReplicas"] = *rule.TargetMinReplicas
	}
	if rule.TargetMaxReplicas != nil {
		spec["maxReplicas"] = *rule.TargetMaxReplicas
	}
	if len(spec) == 0 {
		return fmt.Errorf("rule %s sets neither targetMinReplicas nor targetMaxReplicas", rule.Name)
	}
	patch, err := json.Marshal(map[string]any{"spec": spec})
	if err != nil {
		return err
	}
	return e.patchFederatedHPA(ctx, namespace, name, patch)
}

// scaleWorkload sets the replicas of a workload template through its scale
// subresource, unless it has them already; a conflicting write is retried
// on a fresh read.
func (e *executor) scaleWorkload(ctx context.Context, namespace, apiVersion, kind, name string, replicas int32) error {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return fmt.Errorf("invalid scaleTargetRef apiVersion %q: %w", apiVersion, err)
	}
	gr, err := e.resourceFor(gv.WithKind(kind))
	if err != nil {
		return err
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s, err := e.getScale(ctx, namespace, gr, name)
		if err != nil {
			return err
		}
		if s.Spec.Replicas == replicas {
			return nil
		}
		s = s.DeepCopy()
		s.Spec.Replicas = replicas
		return e.updateScale(ctx, namespace, gr, s)
	})
}

package rollout

import (
	"context"
	"fmt"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/flotilla-io/flotilla/rolloutplan"
)

// Reasons of a RolloutStrategy's Ready condition.
const (
	reasonStagesSelectClusters = "StagesSelectClusters"
	reasonStagesMisselect      = "StagesMisselect"
)

// strategyConditionReady is True when every stage of a strategy selects a
// registered cluster and no cluster is selected by two stages.
const strategyConditionReady = "Ready"

// reconcileStrategy writes a strategy's Ready condition: what its stages
// select among the registered clusters (rolloutplan.Coverage).
func (c *Controller) reconcileStrategy(ctx context.Context, name string) error {
	s, err := c.strategies.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		return err
	}
	list, err := c.clusters.List(labels.Everything())
	if err != nil {
		return err
	}
	clusters := make([]rolloutplan.Cluster, 0, len(list))
	for _, cl := range list {
		clusters = append(clusters, rolloutplan.Cluster{Name: cl.Name, Labels: cl.Labels})
	}
	cond := metav1.Condition{Type: strategyConditionReady, Status: metav1.ConditionTrue, Reason: reasonStagesSelectClusters,
		Message:            fmt.Sprintf("Each of the %d stages selects registered clusters, none selected twice", len(s.Spec.Stages)),
		ObservedGeneration: s.Generation, LastTransitionTime: metav1.NewTime(c.now())}
	if problem := rolloutplan.Coverage(s.Spec.Stages, clusters); problem != "" {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, reasonStagesMisselect, problem
	}
	status := *s.Status.DeepCopy()
	status.ObservedGeneration = s.Generation
	meta.SetStatusCondition(&status.Conditions, cond)
	if apiequality.Semantic.DeepEqual(status, s.Status) {
		return nil
	}
	updated := s.DeepCopy()
	updated.Status = status
	if _, err := c.client.FlotillaV1alpha1().RolloutStrategies().UpdateStatus(ctx, updated, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("writing the status of RolloutStrategy %s: %w", name, err)
	}
	return nil
}

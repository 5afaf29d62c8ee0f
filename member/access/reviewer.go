package access

import (
	"context"
	"fmt"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// reviewTimeout bounds one SubjectAccessReview in a member: a member that
// does not answer costs a request this long at most.
const reviewTimeout = 5 * time.Second

// NewReviewer returns a Reviewer creating the SubjectAccessReview in the
// member with the clientset client returns for it (the control plane's
// credentials there, which need create on subjectaccessreviews).
func NewReviewer(client func(cluster string) (kubernetes.Interface, error)) Reviewer {
	return func(ctx context.Context, cluster string, sar *authorizationv1.SubjectAccessReview) (bool, error) {
		cs, err := client(cluster)
		if err != nil {
			return false, fmt.Errorf("reaching cluster %q: %w", cluster, err)
		}
		ctx, cancel := context.WithTimeout(ctx, reviewTimeout)
		defer cancel()
		out, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
		if err != nil {
			return false, fmt.Errorf("access review in cluster %q: %w", cluster, err)
		}
		return out.Status.Allowed, nil
	}
}

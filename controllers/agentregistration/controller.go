package agentregistration

import (
	"context"
	"fmt"

	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	certificatesinformers "k8s.io/client-go/informers/certificates/v1"
	"k8s.io/client-go/kubernetes"
	certificateslisters "k8s.io/client-go/listers/certificates/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	clusterinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/cluster/v1alpha1"
	clusterlisters "github.com/flotilla-io/flotilla/apis/generated/listers/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/controllers/internal/worker"
)

// Controller decides on the agents' certificate requests on the host.
type Controller struct {
	csrs     certificateslisters.CertificateSigningRequestLister
	clusters clusterlisters.ClusterLister
	synced   []cache.InformerSynced
	host     kubernetes.Interface
	karmada  versioned.Interface
	queue    workqueue.TypedRateLimitingInterface[string]
}

// New returns the controller. host is the host API server (requests, RBAC,
// Leases, SubjectAccessReviews), karmada flotilla-apiserver (Clusters).
func New(csrs certificatesinformers.CertificateSigningRequestInformer, clusters clusterinformers.ClusterInformer,
	host kubernetes.Interface, karmada versioned.Interface) (*Controller, error) {
	c := &Controller{
		csrs: csrs.Lister(), clusters: clusters.Lister(),
		synced: []cache.InformerSynced{csrs.Informer().HasSynced, clusters.Informer().HasSynced},
		host:   host, karmada: karmada,
		queue: worker.NewQueue(ControllerName),
	}
	enqueue := worker.EnqueueKey(c.queue)
	// Only requests to the client signer can be agents'; decided ones are done.
	filter := func(obj any) bool {
		csr, ok := obj.(*certificatesv1.CertificateSigningRequest)
		return ok && csr.Spec.SignerName == certificatesv1.KubeAPIServerClientSignerName && !decided(csr)
	}
	_, err := csrs.Informer().AddEventHandler(cache.FilteringResourceEventHandler{
		FilterFunc: filter,
		Handler:    cache.ResourceEventHandlerFuncs{AddFunc: enqueue, UpdateFunc: func(_, cur any) { enqueue(cur) }},
	})
	return c, err
}

// Run decides until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	worker.Run(ctx, c.queue, c.synced, workers, c.reconcile)
}

func (c *Controller) reconcile(ctx context.Context, name string) error {
	csr, err := c.csrs.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if decided(csr) {
		return nil
	}
	req, ours, err := Recognize(csr)
	if !ours {
		return nil
	}
	log := klog.FromContext(ctx).WithValues("csr", name, "requester", csr.Spec.Username)
	if err != nil {
		return c.conclude(ctx, csr, Verdict{Action: Deny, Reason: ReasonInvalid, Message: "not a valid agent certificate request: " + err.Error()})
	}
	log = log.WithValues("cluster", req.Cluster, "clusterID", req.ClusterID, "renewal", req.Renewal)
	authorized, err := c.authorize(ctx, csr, req.Subresource())
	if err != nil {
		return err
	}
	// The Cluster of the name is read live: the lister may not have seen
	// a Cluster created a moment ago for another request.
	existing, err := c.karmada.ClusterV1alpha1().Clusters().Get(ctx, req.Cluster, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		existing = nil
	case err != nil:
		return fmt.Errorf("reading cluster %s: %w", req.Cluster, err)
	}
	sameID, err := c.clustersWithID(req.ClusterID)
	if err != nil {
		return err
	}
	v := Decide(req, existing, sameID, authorized)
	if v.Action == Deny {
		log.Info("Denying agent certificate request", "reason", v.Reason, "message", v.Message)
		return c.conclude(ctx, csr, v)
	}

	cluster := existing
	if v.CreateCluster {
		cluster = &clusterv1alpha1.Cluster{
			ObjectMeta: metav1.ObjectMeta{Name: req.Cluster},
			Spec:       clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Pull, ID: req.ClusterID},
		}
		cluster, err = c.karmada.ClusterV1alpha1().Clusters().Create(ctx, cluster, metav1.CreateOptions{FieldManager: ControllerName})
		if err != nil {
			// AlreadyExists included: the retry decides again on what is there.
			return fmt.Errorf("creating cluster %s: %w", req.Cluster, err)
		}
		log.Info("Created cluster for agent", "uid", cluster.UID)
	}
	if err := applyAgentRBAC(ctx, c.host, AgentRBAC(cluster)); err != nil {
		return fmt.Errorf("granting the agent of cluster %s its rights: %w", req.Cluster, err)
	}
	log.Info("Approving agent certificate request")
	return c.conclude(ctx, csr, v)
}

// clustersWithID lists the Clusters whose spec.id is id (none for "").
func (c *Controller) clustersWithID(id string) ([]*clusterv1alpha1.Cluster, error) {
	if id == "" {
		return nil, nil
	}
	all, err := c.clusters.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	var out []*clusterv1alpha1.Cluster
	for _, cl := range all {
		if cl.Spec.ID == id {
			out = append(out, cl)
		}
	}
	return out, nil
}

// authorize asks the host whether the requester may create
// certificatesigningrequests/<subresource>, as Karmada's approver does.
func (c *Controller) authorize(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, subresource string) (bool, error) {
	extra := map[string]authorizationv1.ExtraValue{}
	for k, v := range csr.Spec.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: csr.Spec.Username, UID: csr.Spec.UID, Groups: csr.Spec.Groups, Extra: extra,
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Group: certificatesv1.GroupName, Resource: "certificatesigningrequests", Subresource: subresource, Verb: "create", Version: "*",
		},
	}}
	res, err := c.host.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("reviewing whether %s may create certificatesigningrequests/%s: %w", csr.Spec.Username, subresource, err)
	}
	return res.Status.Allowed, nil
}

// conclude writes the verdict into the request's conditions.
func (c *Controller) conclude(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, v Verdict) error {
	csr = csr.DeepCopy()
	cond := certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateDenied, Status: corev1.ConditionTrue, Reason: v.Reason, Message: v.Message,
		LastUpdateTime: metav1.Now(),
	}
	if v.Action == Approve {
		cond.Type = certificatesv1.CertificateApproved
	}
	csr.Status.Conditions = append(csr.Status.Conditions, cond)
	if _, err := c.host.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{FieldManager: ControllerName}); err != nil {
		return fmt.Errorf("writing the %s condition of certificate request %s: %w", cond.Type, csr.Name, err)
	}
	return nil
}

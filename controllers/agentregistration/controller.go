package agentregistration

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	certificatesinformers "k8s.io/client-go/informers/certificates/v1"
	"k8s.io/client-go/kubernetes"
	certificateslisters "k8s.io/client-go/listers/certificates/v1"
	"k8s.io/client-go/tools/cache"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	clusterinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/cluster/v1alpha1"
	clusterlisters "github.com/flotilla-io/flotilla/apis/generated/listers/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/controllers/internal/worker"
	"github.com/flotilla-io/flotilla/names"
)

// Controller decides on the agents' certificate requests on the host.
type Controller struct {
	csrs     certificateslisters.CertificateSigningRequestLister
	clusters clusterlisters.ClusterLister
	synced   []cache.InformerSynced
	host     kubernetes.Interface
	karmada  versioned.Interface
	queue    workqueue.TypedRateLimitingInterface[string]
	// MaxPerToken is how many clusters one bootstrap token not bound to a
	// cluster name may register (0: no limit).
	MaxPerToken int
}

// New returns the controller. host is the host API server (requests, RBAC,
// Leases, SubjectAccessReviews), karmada flotilla-apiserver (Clusters).
func New(csrs certificatesinformers.CertificateSigningRequestInformer, clusters clusterinformers.ClusterInformer,
	host kubernetes.Interface, karmada versioned.Interface) (*Controller, error) {
	c := &Controller{
		csrs: csrs.Lister(), clusters: clusters.Lister(),
		synced: []cache.InformerSynced{csrs.Informer().HasSynced, clusters.Informer().HasSynced},
		host:   host, karmada: karmada,
		queue: worker.NewQueue(names.AgentRegistrationController),
	}
	enqueue := worker.EnqueueKey(c.queue)
	// Only requests to the client signer can be agents'; decided ones are
	// done once their certificate, if this controller approved one, is
	// recorded on the Cluster.
	filter := func(obj any) bool {
		csr, ok := obj.(*certificatesv1.CertificateSigningRequest)
		return ok && csr.Spec.SignerName == certificatesv1.KubeAPIServerClientSignerName && (!decided(csr) || approvedAt(csr) != nil && len(csr.Status.Certificate) > 0)
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
	req, ours, err := Recognize(csr)
	if !ours {
		return nil
	}
	if decided(csr) {
		if err != nil || approvedAt(csr) == nil || len(csr.Status.Certificate) == 0 {
			return nil
		}
		return c.recordIssued(ctx, req.Cluster, csr)
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
	facts := Facts{Existing: existing, Authorized: authorized, MaxPerToken: c.MaxPerToken}
	if facts.SameID, facts.ByToken, err = c.lookup(req); err != nil {
		return err
	}
	v := Decide(req, facts)
	if v.Action == Deny {
		log.Info("Denying agent certificate request", "reason", v.Reason, "message", v.Message)
		return c.conclude(ctx, csr, v)
	}

	cluster := existing
	if v.CreateCluster {
		cluster = &clusterv1alpha1.Cluster{
			ObjectMeta: metav1.ObjectMeta{Name: req.Cluster, Annotations: map[string]string{names.RegisteredByAnnotation: req.Requester}},
			Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Pull, ID: req.ClusterID,
				Provider: req.Provider, Region: req.Region, Zones: req.Zones},
		}
		cluster, err = c.karmada.ClusterV1alpha1().Clusters().Create(ctx, cluster, metav1.CreateOptions{FieldManager: names.AgentRegistrationController})
		if err != nil {
			// AlreadyExists included: the retry decides again on what is there.
			return fmt.Errorf("creating cluster %s: %w", req.Cluster, err)
		}
		log.Info("Created cluster for agent", "uid", cluster.UID)
	}
	if err := applyAgentRBAC(ctx, c.host, AgentRBAC(cluster)); err != nil {
		return fmt.Errorf("granting the agent of cluster %s its rights: %w", req.Cluster, err)
	}
	if _, ok := cluster.Annotations[names.ReregisterAnnotation]; ok && !req.Renewal {
		// The admin's permission is good for one registration, and the
		// certificates issued before it are no longer renewed.
		if err := c.patchAnnotations(ctx, req.Cluster, map[string]*string{names.ReregisterAnnotation: nil, names.AgentCertificatesAnnotation: nil}); err != nil {
			return err
		}
	}
	log.Info("Approving agent certificate request")
	return c.conclude(ctx, csr, v)
}

// lookup returns the Clusters whose spec.id is req's cluster id (none for
// ""), and how many Clusters req's requester registered.
func (c *Controller) lookup(req Request) (sameID []*clusterv1alpha1.Cluster, byToken int, err error) {
	all, err := c.clusters.List(labels.Everything())
	if err != nil {
		return nil, 0, err
	}
	for _, cl := range all {
		if req.ClusterID != "" && cl.Spec.ID == req.ClusterID {
			sameID = append(sameID, cl)
		}
		if cl.Annotations[names.RegisteredByAnnotation] == req.Requester {
			byToken++
		}
	}
	return sameID, byToken, nil
}

// recordIssued adds the fingerprint of the certificate signed for an
// approved request to its Cluster, so the agent may renew it. A request
// approved before the Cluster was created (for an earlier Cluster of the
// same name) is not recorded.
func (c *Controller) recordIssued(ctx context.Context, cluster string, csr *certificatesv1.CertificateSigningRequest) error {
	cl, err := c.clusters.Get(cluster)
	if apierrors.IsNotFound(err) {
		// The lister may not have seen a Cluster created a moment ago.
		cl, err = c.karmada.ClusterV1alpha1().Clusters().Get(ctx, cluster, metav1.GetOptions{})
	}
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if approvedAt(csr).Before(&cl.CreationTimestamp) {
		return nil
	}
	certs, err := certutil.ParseCertsPEM(csr.Status.Certificate)
	if err != nil || len(certs) == 0 {
		return nil // not ours to repair: the agent will not get a usable certificate either
	}
	fp := fingerprint(certs[0].Raw)
	issued := IssuedCertificates(cl)
	if slices.Contains(issued, fp) {
		return nil
	}
	issued = append(issued, fp)
	if len(issued) > maxIssuedCertificates {
		issued = issued[len(issued)-maxIssuedCertificates:]
	}
	return c.patchAnnotations(ctx, cluster, map[string]*string{names.AgentCertificatesAnnotation: ptr.To(strings.Join(issued, ","))})
}

// patchAnnotations sets (or, with nil, removes) annotations of a Cluster.
func (c *Controller) patchAnnotations(ctx context.Context, cluster string, annotations map[string]*string) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	if err != nil {
		return err
	}
	if _, err := c.karmada.ClusterV1alpha1().Clusters().Patch(ctx, cluster, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: names.AgentRegistrationController}); err != nil {
		return fmt.Errorf("annotating cluster %s: %w", cluster, err)
	}
	return nil
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
	if _, err := c.host.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{FieldManager: names.AgentRegistrationController}); err != nil {
		return fmt.Errorf("writing the %s condition of certificate request %s: %w", cond.Type, csr.Name, err)
	}
	return nil
}

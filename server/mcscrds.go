package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/typed/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	multiclusterv1alpha1 "github.com/flotilla-io/flotilla/apis/multicluster/v1alpha1"
)

// ensureMCSCRDs installs, on the host, the CustomResourceDefinitions of the
// MCS API (ServiceExport, ServiceImport), so users can write them as
// templates and propagate them, and of the Cluster Inventory API
// (ClusterProfile), which the cluster-profile controller writes: with server-side apply, when absent or
// when this server installed them before (a field manager of
// fieldManager), so a new Flotilla brings its definition along. A CRD of
// that name someone else installed (another MCS implementation, a user) is
// left as it is: Flotilla only reads the fields the upstream API defines.
func ensureMCSCRDs(ctx context.Context, crds apiextensionsclient.CustomResourceDefinitionInterface) error {
	want, err := multiclusterv1alpha1.CRDs()
	if err != nil {
		return err
	}
	var errs []error
	for _, crd := range want {
		cur, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
		apply, err := shouldApplyCRD(cur, err)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !apply {
			klog.FromContext(ctx).V(2).Info("Leaving a CustomResourceDefinition Flotilla did not install", "crd", crd.Name)
			continue
		}
		if err := applyCRD(ctx, crds, crd); err != nil {
			errs = append(errs, fmt.Errorf("applying CustomResourceDefinition %s: %w", crd.Name, err))
		}
	}
	return errors.Join(errs...)
}

// shouldApplyCRD decides from the host's CRD (cur and the error reading
// it) whether to apply Flotilla's: when it is absent, or when this server
// applied it before.
func shouldApplyCRD(cur *apiextensionsv1.CustomResourceDefinition, getErr error) (bool, error) {
	switch {
	case apierrors.IsNotFound(getErr):
		return true, nil
	case getErr != nil:
		return false, getErr
	}
	return appliedBy(cur, fieldManager), nil
}

// appliedBy tells whether manager owns fields of crd.
func appliedBy(crd *apiextensionsv1.CustomResourceDefinition, manager string) bool {
	for _, f := range crd.ManagedFields {
		if f.Manager == manager {
			return true
		}
	}
	return false
}

func applyCRD(ctx context.Context, crds apiextensionsclient.CustomResourceDefinitionInterface, crd *apiextensionsv1.CustomResourceDefinition) error {
	crd.TypeMeta = metav1.TypeMeta{APIVersion: apiextensionsv1.SchemeGroupVersion.String(), Kind: "CustomResourceDefinition"}
	body, err := json.Marshal(crd)
	if err != nil {
		return err
	}
	force := true
	_, err = crds.Patch(ctx, crd.Name, types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: fieldManager, Force: &force})
	return err
}

package inprocess

// The generated clientset's interface over the storage: one method per
// group and one per kind, each a typed client of the kind in process.
// TestEveryKindInProcess fails when a kind of the generated clientset is
// missing here.

import (
	appsv1alpha1 "github.com/flotilla-io/flotilla/apis/apps/v1alpha1"
	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/apis/autoscaling/v1alpha1"
	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	configv1alpha1 "github.com/flotilla-io/flotilla/apis/config/v1alpha1"
	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	clientappsv1alpha1 "github.com/flotilla-io/flotilla/apis/generated/clientset/versioned/typed/apps/v1alpha1"
	clientautoscalingv1alpha1 "github.com/flotilla-io/flotilla/apis/generated/clientset/versioned/typed/autoscaling/v1alpha1"
	clientclusterv1alpha1 "github.com/flotilla-io/flotilla/apis/generated/clientset/versioned/typed/cluster/v1alpha1"
	clientconfigv1alpha1 "github.com/flotilla-io/flotilla/apis/generated/clientset/versioned/typed/config/v1alpha1"
	clientflotillav1alpha1 "github.com/flotilla-io/flotilla/apis/generated/clientset/versioned/typed/flotilla/v1alpha1"
	clientnetworkingv1alpha1 "github.com/flotilla-io/flotilla/apis/generated/clientset/versioned/typed/networking/v1alpha1"
	clientpolicyv1alpha1 "github.com/flotilla-io/flotilla/apis/generated/clientset/versioned/typed/policy/v1alpha1"
	clientremedyv1alpha1 "github.com/flotilla-io/flotilla/apis/generated/clientset/versioned/typed/remedy/v1alpha1"
	clientsearchv1alpha1 "github.com/flotilla-io/flotilla/apis/generated/clientset/versioned/typed/search/v1alpha1"
	clientworkv1alpha1 "github.com/flotilla-io/flotilla/apis/generated/clientset/versioned/typed/work/v1alpha1"
	clientworkv1alpha2 "github.com/flotilla-io/flotilla/apis/generated/clientset/versioned/typed/work/v1alpha2"
	networkingv1alpha1 "github.com/flotilla-io/flotilla/apis/networking/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	remedyv1alpha1 "github.com/flotilla-io/flotilla/apis/remedy/v1alpha1"
	searchv1alpha1 "github.com/flotilla-io/flotilla/apis/search/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// AppsV1alpha1 implements the generated clientset's AppsV1alpha1 in process.
func (c *Clientset) AppsV1alpha1() clientappsv1alpha1.AppsV1alpha1Interface {
	return appsV1alpha1{AppsV1alpha1Interface: c.Clientset.AppsV1alpha1(), c: c}
}

type appsV1alpha1 struct {
	clientappsv1alpha1.AppsV1alpha1Interface
	c *Clientset
}

func (g appsV1alpha1) WorkloadRebalancers() clientappsv1alpha1.WorkloadRebalancerInterface {
	return newTyped(g.c, appsv1alpha1.SchemeGroupVersion.WithResource("workloadrebalancers"), "", g.AppsV1alpha1Interface.WorkloadRebalancers(),
		func() *appsv1alpha1.WorkloadRebalancer { return &appsv1alpha1.WorkloadRebalancer{} }, func() *appsv1alpha1.WorkloadRebalancerList { return &appsv1alpha1.WorkloadRebalancerList{} })
}

// AutoscalingV1alpha1 implements the generated clientset's AutoscalingV1alpha1 in process.
func (c *Clientset) AutoscalingV1alpha1() clientautoscalingv1alpha1.AutoscalingV1alpha1Interface {
	return autoscalingV1alpha1{AutoscalingV1alpha1Interface: c.Clientset.AutoscalingV1alpha1(), c: c}
}

type autoscalingV1alpha1 struct {
	clientautoscalingv1alpha1.AutoscalingV1alpha1Interface
	c *Clientset
}

func (g autoscalingV1alpha1) CronFederatedHPAs(namespace string) clientautoscalingv1alpha1.CronFederatedHPAInterface {
	return newTyped(g.c, autoscalingv1alpha1.SchemeGroupVersion.WithResource("cronfederatedhpas"), namespace, g.AutoscalingV1alpha1Interface.CronFederatedHPAs(namespace),
		func() *autoscalingv1alpha1.CronFederatedHPA { return &autoscalingv1alpha1.CronFederatedHPA{} }, func() *autoscalingv1alpha1.CronFederatedHPAList { return &autoscalingv1alpha1.CronFederatedHPAList{} })
}

func (g autoscalingV1alpha1) FederatedHPAs(namespace string) clientautoscalingv1alpha1.FederatedHPAInterface {
	return newTyped(g.c, autoscalingv1alpha1.SchemeGroupVersion.WithResource("federatedhpas"), namespace, g.AutoscalingV1alpha1Interface.FederatedHPAs(namespace),
		func() *autoscalingv1alpha1.FederatedHPA { return &autoscalingv1alpha1.FederatedHPA{} }, func() *autoscalingv1alpha1.FederatedHPAList { return &autoscalingv1alpha1.FederatedHPAList{} })
}

// ClusterV1alpha1 implements the generated clientset's ClusterV1alpha1 in process.
func (c *Clientset) ClusterV1alpha1() clientclusterv1alpha1.ClusterV1alpha1Interface {
	return clusterV1alpha1{ClusterV1alpha1Interface: c.Clientset.ClusterV1alpha1(), c: c}
}

type clusterV1alpha1 struct {
	clientclusterv1alpha1.ClusterV1alpha1Interface
	c *Clientset
}

func (g clusterV1alpha1) Clusters() clientclusterv1alpha1.ClusterInterface {
	return newTyped(g.c, clusterv1alpha1.SchemeGroupVersion.WithResource("clusters"), "", g.ClusterV1alpha1Interface.Clusters(),
		func() *clusterv1alpha1.Cluster { return &clusterv1alpha1.Cluster{} }, func() *clusterv1alpha1.ClusterList { return &clusterv1alpha1.ClusterList{} })
}

// ConfigV1alpha1 implements the generated clientset's ConfigV1alpha1 in process.
func (c *Clientset) ConfigV1alpha1() clientconfigv1alpha1.ConfigV1alpha1Interface {
	return configV1alpha1{ConfigV1alpha1Interface: c.Clientset.ConfigV1alpha1(), c: c}
}

type configV1alpha1 struct {
	clientconfigv1alpha1.ConfigV1alpha1Interface
	c *Clientset
}

func (g configV1alpha1) ResourceInterpreterCustomizations() clientconfigv1alpha1.ResourceInterpreterCustomizationInterface {
	return newTyped(g.c, configv1alpha1.SchemeGroupVersion.WithResource("resourceinterpretercustomizations"), "", g.ConfigV1alpha1Interface.ResourceInterpreterCustomizations(),
		func() *configv1alpha1.ResourceInterpreterCustomization {
			return &configv1alpha1.ResourceInterpreterCustomization{}
		}, func() *configv1alpha1.ResourceInterpreterCustomizationList {
			return &configv1alpha1.ResourceInterpreterCustomizationList{}
		})
}

func (g configV1alpha1) ResourceInterpreterWebhookConfigurations() clientconfigv1alpha1.ResourceInterpreterWebhookConfigurationInterface {
	return newTyped(g.c, configv1alpha1.SchemeGroupVersion.WithResource("resourceinterpreterwebhookconfigurations"), "", g.ConfigV1alpha1Interface.ResourceInterpreterWebhookConfigurations(),
		func() *configv1alpha1.ResourceInterpreterWebhookConfiguration {
			return &configv1alpha1.ResourceInterpreterWebhookConfiguration{}
		}, func() *configv1alpha1.ResourceInterpreterWebhookConfigurationList {
			return &configv1alpha1.ResourceInterpreterWebhookConfigurationList{}
		})
}

// FlotillaV1alpha1 implements the generated clientset's FlotillaV1alpha1 in process.
func (c *Clientset) FlotillaV1alpha1() clientflotillav1alpha1.FlotillaV1alpha1Interface {
	return flotillaV1alpha1{FlotillaV1alpha1Interface: c.Clientset.FlotillaV1alpha1(), c: c}
}

type flotillaV1alpha1 struct {
	clientflotillav1alpha1.FlotillaV1alpha1Interface
	c *Clientset
}

func (g flotillaV1alpha1) ResourceRevisions(namespace string) clientflotillav1alpha1.ResourceRevisionInterface {
	return newTyped(g.c, flotillav1alpha1.SchemeGroupVersion.WithResource("resourcerevisions"), namespace, g.FlotillaV1alpha1Interface.ResourceRevisions(namespace),
		func() *flotillav1alpha1.ResourceRevision { return &flotillav1alpha1.ResourceRevision{} }, func() *flotillav1alpha1.ResourceRevisionList { return &flotillav1alpha1.ResourceRevisionList{} })
}

func (g flotillaV1alpha1) RolloutRuns(namespace string) clientflotillav1alpha1.RolloutRunInterface {
	return newTyped(g.c, flotillav1alpha1.SchemeGroupVersion.WithResource("rolloutruns"), namespace, g.FlotillaV1alpha1Interface.RolloutRuns(namespace),
		func() *flotillav1alpha1.RolloutRun { return &flotillav1alpha1.RolloutRun{} }, func() *flotillav1alpha1.RolloutRunList { return &flotillav1alpha1.RolloutRunList{} })
}

func (g flotillaV1alpha1) RolloutStrategies() clientflotillav1alpha1.RolloutStrategyInterface {
	return newTyped(g.c, flotillav1alpha1.SchemeGroupVersion.WithResource("rolloutstrategies"), "", g.FlotillaV1alpha1Interface.RolloutStrategies(),
		func() *flotillav1alpha1.RolloutStrategy { return &flotillav1alpha1.RolloutStrategy{} }, func() *flotillav1alpha1.RolloutStrategyList { return &flotillav1alpha1.RolloutStrategyList{} })
}

// NetworkingV1alpha1 implements the generated clientset's NetworkingV1alpha1 in process.
func (c *Clientset) NetworkingV1alpha1() clientnetworkingv1alpha1.NetworkingV1alpha1Interface {
	return networkingV1alpha1{NetworkingV1alpha1Interface: c.Clientset.NetworkingV1alpha1(), c: c}
}

type networkingV1alpha1 struct {
	clientnetworkingv1alpha1.NetworkingV1alpha1Interface
	c *Clientset
}

func (g networkingV1alpha1) MultiClusterIngresses(namespace string) clientnetworkingv1alpha1.MultiClusterIngressInterface {
	return newTyped(g.c, networkingv1alpha1.SchemeGroupVersion.WithResource("multiclusteringresses"), namespace, g.NetworkingV1alpha1Interface.MultiClusterIngresses(namespace),
		func() *networkingv1alpha1.MultiClusterIngress { return &networkingv1alpha1.MultiClusterIngress{} }, func() *networkingv1alpha1.MultiClusterIngressList {
			return &networkingv1alpha1.MultiClusterIngressList{}
		})
}

func (g networkingV1alpha1) MultiClusterServices(namespace string) clientnetworkingv1alpha1.MultiClusterServiceInterface {
	return newTyped(g.c, networkingv1alpha1.SchemeGroupVersion.WithResource("multiclusterservices"), namespace, g.NetworkingV1alpha1Interface.MultiClusterServices(namespace),
		func() *networkingv1alpha1.MultiClusterService { return &networkingv1alpha1.MultiClusterService{} }, func() *networkingv1alpha1.MultiClusterServiceList {
			return &networkingv1alpha1.MultiClusterServiceList{}
		})
}

// PolicyV1alpha1 implements the generated clientset's PolicyV1alpha1 in process.
func (c *Clientset) PolicyV1alpha1() clientpolicyv1alpha1.PolicyV1alpha1Interface {
	return policyV1alpha1{PolicyV1alpha1Interface: c.Clientset.PolicyV1alpha1(), c: c}
}

type policyV1alpha1 struct {
	clientpolicyv1alpha1.PolicyV1alpha1Interface
	c *Clientset
}

func (g policyV1alpha1) ClusterOverridePolicies() clientpolicyv1alpha1.ClusterOverridePolicyInterface {
	return newTyped(g.c, policyv1alpha1.SchemeGroupVersion.WithResource("clusteroverridepolicies"), "", g.PolicyV1alpha1Interface.ClusterOverridePolicies(),
		func() *policyv1alpha1.ClusterOverridePolicy { return &policyv1alpha1.ClusterOverridePolicy{} }, func() *policyv1alpha1.ClusterOverridePolicyList { return &policyv1alpha1.ClusterOverridePolicyList{} })
}

func (g policyV1alpha1) ClusterPropagationPolicies() clientpolicyv1alpha1.ClusterPropagationPolicyInterface {
	return newTyped(g.c, policyv1alpha1.SchemeGroupVersion.WithResource("clusterpropagationpolicies"), "", g.PolicyV1alpha1Interface.ClusterPropagationPolicies(),
		func() *policyv1alpha1.ClusterPropagationPolicy { return &policyv1alpha1.ClusterPropagationPolicy{} }, func() *policyv1alpha1.ClusterPropagationPolicyList {
			return &policyv1alpha1.ClusterPropagationPolicyList{}
		})
}

func (g policyV1alpha1) ClusterTaintPolicies() clientpolicyv1alpha1.ClusterTaintPolicyInterface {
	return newTyped(g.c, policyv1alpha1.SchemeGroupVersion.WithResource("clustertaintpolicies"), "", g.PolicyV1alpha1Interface.ClusterTaintPolicies(),
		func() *policyv1alpha1.ClusterTaintPolicy { return &policyv1alpha1.ClusterTaintPolicy{} }, func() *policyv1alpha1.ClusterTaintPolicyList { return &policyv1alpha1.ClusterTaintPolicyList{} })
}

func (g policyV1alpha1) FederatedResourceQuotas(namespace string) clientpolicyv1alpha1.FederatedResourceQuotaInterface {
	return newTyped(g.c, policyv1alpha1.SchemeGroupVersion.WithResource("federatedresourcequotas"), namespace, g.PolicyV1alpha1Interface.FederatedResourceQuotas(namespace),
		func() *policyv1alpha1.FederatedResourceQuota { return &policyv1alpha1.FederatedResourceQuota{} }, func() *policyv1alpha1.FederatedResourceQuotaList { return &policyv1alpha1.FederatedResourceQuotaList{} })
}

func (g policyV1alpha1) OverridePolicies(namespace string) clientpolicyv1alpha1.OverridePolicyInterface {
	return newTyped(g.c, policyv1alpha1.SchemeGroupVersion.WithResource("overridepolicies"), namespace, g.PolicyV1alpha1Interface.OverridePolicies(namespace),
		func() *policyv1alpha1.OverridePolicy { return &policyv1alpha1.OverridePolicy{} }, func() *policyv1alpha1.OverridePolicyList { return &policyv1alpha1.OverridePolicyList{} })
}

func (g policyV1alpha1) PropagationPolicies(namespace string) clientpolicyv1alpha1.PropagationPolicyInterface {
	return newTyped(g.c, policyv1alpha1.SchemeGroupVersion.WithResource("propagationpolicies"), namespace, g.PolicyV1alpha1Interface.PropagationPolicies(namespace),
		func() *policyv1alpha1.PropagationPolicy { return &policyv1alpha1.PropagationPolicy{} }, func() *policyv1alpha1.PropagationPolicyList { return &policyv1alpha1.PropagationPolicyList{} })
}

// RemedyV1alpha1 implements the generated clientset's RemedyV1alpha1 in process.
func (c *Clientset) RemedyV1alpha1() clientremedyv1alpha1.RemedyV1alpha1Interface {
	return remedyV1alpha1{RemedyV1alpha1Interface: c.Clientset.RemedyV1alpha1(), c: c}
}

type remedyV1alpha1 struct {
	clientremedyv1alpha1.RemedyV1alpha1Interface
	c *Clientset
}

func (g remedyV1alpha1) Remedies() clientremedyv1alpha1.RemedyInterface {
	return newTyped(g.c, remedyv1alpha1.SchemeGroupVersion.WithResource("remedies"), "", g.RemedyV1alpha1Interface.Remedies(),
		func() *remedyv1alpha1.Remedy { return &remedyv1alpha1.Remedy{} }, func() *remedyv1alpha1.RemedyList { return &remedyv1alpha1.RemedyList{} })
}

// SearchV1alpha1 implements the generated clientset's SearchV1alpha1 in process.
func (c *Clientset) SearchV1alpha1() clientsearchv1alpha1.SearchV1alpha1Interface {
	return searchV1alpha1{SearchV1alpha1Interface: c.Clientset.SearchV1alpha1(), c: c}
}

type searchV1alpha1 struct {
	clientsearchv1alpha1.SearchV1alpha1Interface
	c *Clientset
}

func (g searchV1alpha1) ResourceRegistries() clientsearchv1alpha1.ResourceRegistryInterface {
	return newTyped(g.c, searchv1alpha1.SchemeGroupVersion.WithResource("resourceregistries"), "", g.SearchV1alpha1Interface.ResourceRegistries(),
		func() *searchv1alpha1.ResourceRegistry { return &searchv1alpha1.ResourceRegistry{} }, func() *searchv1alpha1.ResourceRegistryList { return &searchv1alpha1.ResourceRegistryList{} })
}

// WorkV1alpha1 implements the generated clientset's WorkV1alpha1 in process.
func (c *Clientset) WorkV1alpha1() clientworkv1alpha1.WorkV1alpha1Interface {
	return workV1alpha1{WorkV1alpha1Interface: c.Clientset.WorkV1alpha1(), c: c}
}

type workV1alpha1 struct {
	clientworkv1alpha1.WorkV1alpha1Interface
	c *Clientset
}

func (g workV1alpha1) ClusterResourceBindings() clientworkv1alpha1.ClusterResourceBindingInterface {
	return newTyped(g.c, workv1alpha1.SchemeGroupVersion.WithResource("clusterresourcebindings"), "", g.WorkV1alpha1Interface.ClusterResourceBindings(),
		func() *workv1alpha1.ClusterResourceBinding { return &workv1alpha1.ClusterResourceBinding{} }, func() *workv1alpha1.ClusterResourceBindingList { return &workv1alpha1.ClusterResourceBindingList{} })
}

func (g workV1alpha1) ResourceBindings(namespace string) clientworkv1alpha1.ResourceBindingInterface {
	return newTyped(g.c, workv1alpha1.SchemeGroupVersion.WithResource("resourcebindings"), namespace, g.WorkV1alpha1Interface.ResourceBindings(namespace),
		func() *workv1alpha1.ResourceBinding { return &workv1alpha1.ResourceBinding{} }, func() *workv1alpha1.ResourceBindingList { return &workv1alpha1.ResourceBindingList{} })
}

func (g workV1alpha1) Works(namespace string) clientworkv1alpha1.WorkInterface {
	return newTyped(g.c, workv1alpha1.SchemeGroupVersion.WithResource("works"), namespace, g.WorkV1alpha1Interface.Works(namespace),
		func() *workv1alpha1.Work { return &workv1alpha1.Work{} }, func() *workv1alpha1.WorkList { return &workv1alpha1.WorkList{} })
}

// WorkV1alpha2 implements the generated clientset's WorkV1alpha2 in process.
func (c *Clientset) WorkV1alpha2() clientworkv1alpha2.WorkV1alpha2Interface {
	return workV1alpha2{WorkV1alpha2Interface: c.Clientset.WorkV1alpha2(), c: c}
}

type workV1alpha2 struct {
	clientworkv1alpha2.WorkV1alpha2Interface
	c *Clientset
}

func (g workV1alpha2) ClusterResourceBindings() clientworkv1alpha2.ClusterResourceBindingInterface {
	return newTyped(g.c, workv1alpha2.SchemeGroupVersion.WithResource("clusterresourcebindings"), "", g.WorkV1alpha2Interface.ClusterResourceBindings(),
		func() *workv1alpha2.ClusterResourceBinding { return &workv1alpha2.ClusterResourceBinding{} }, func() *workv1alpha2.ClusterResourceBindingList { return &workv1alpha2.ClusterResourceBindingList{} })
}

func (g workV1alpha2) ResourceBindings(namespace string) clientworkv1alpha2.ResourceBindingInterface {
	return newTyped(g.c, workv1alpha2.SchemeGroupVersion.WithResource("resourcebindings"), namespace, g.WorkV1alpha2Interface.ResourceBindings(namespace),
		func() *workv1alpha2.ResourceBinding { return &workv1alpha2.ResourceBinding{} }, func() *workv1alpha2.ResourceBindingList { return &workv1alpha2.ResourceBindingList{} })
}

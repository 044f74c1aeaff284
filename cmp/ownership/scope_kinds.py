"""Which kinds are cluster-scoped and which namespaced: the built-in tables `scope` answers from.

The Kubernetes API of 1.29 through 1.34, and the best-known CRDs of popular projects, as data. A kind
that is in neither table (and whose group is not wholly cluster-scoped) has no known scope.
"""

from __future__ import annotations

from cmp.model import GroupKind


def _group_kinds(group: str, *kinds: str) -> frozenset[GroupKind]:
    return frozenset((group, kind) for kind in kinds)


# ---------------------------------------------------------------------------
# Built-in Kubernetes kinds, 1.29 through 1.34.  A kind that was served in any
# of these releases (alpha APIs included) is listed; scope never changes
# between versions of a kind, so one row covers them all.
# ---------------------------------------------------------------------------

BUILTIN_CLUSTER_SCOPED: frozenset[GroupKind] = (
    # core/v1
    _group_kinds("", "ComponentStatus", "Namespace", "Node", "PersistentVolume")
    # admission control
    | _group_kinds(
        "admissionregistration.k8s.io",
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
        "MutatingAdmissionPolicy",
        "MutatingAdmissionPolicyBinding",
    )
    # API extension and aggregation
    | _group_kinds("apiextensions.k8s.io", "CustomResourceDefinition")
    | _group_kinds("apiregistration.k8s.io", "APIService")
    # authentication and authorization reviews (create-only, never stored)
    | _group_kinds("authentication.k8s.io", "TokenReview", "SelfSubjectReview")
    | _group_kinds(
        "authorization.k8s.io",
        "SubjectAccessReview",
        "SelfSubjectAccessReview",
        "SelfSubjectRulesReview",
    )
    # RBAC
    | _group_kinds("rbac.authorization.k8s.io", "ClusterRole", "ClusterRoleBinding")
    # certificates
    | _group_kinds("certificates.k8s.io", "CertificateSigningRequest", "ClusterTrustBundle")
    # API priority and fairness
    | _group_kinds("flowcontrol.apiserver.k8s.io", "FlowSchema", "PriorityLevelConfiguration")
    # storage-version bookkeeping of the API server
    | _group_kinds("internal.apiserver.k8s.io", "StorageVersion")
    | _group_kinds("storagemigration.k8s.io", "StorageVersionMigration")
    # networking
    | _group_kinds("networking.k8s.io", "IngressClass", "IPAddress", "ServiceCIDR")
    # nodes and scheduling
    | _group_kinds("node.k8s.io", "RuntimeClass")
    | _group_kinds("scheduling.k8s.io", "PriorityClass")
    # storage
    | _group_kinds(
        "storage.k8s.io",
        "CSIDriver",
        "CSINode",
        "StorageClass",
        "VolumeAttachment",
        "VolumeAttributesClass",
    )
    # dynamic resource allocation (ResourceClass: 1.29 and 1.30 only)
    | _group_kinds(
        "resource.k8s.io",
        "DeviceClass",
        "DeviceTaintRule",
        "ResourceClass",
        "ResourceSlice",
    )
)

BUILTIN_NAMESPACED: frozenset[GroupKind] = (
    # core/v1
    _group_kinds(
        "",
        "Binding",
        "ConfigMap",
        "Endpoints",
        "Event",
        "LimitRange",
        "PersistentVolumeClaim",
        "Pod",
        "PodTemplate",
        "ReplicationController",
        "ResourceQuota",
        "Secret",
        "Service",
        "ServiceAccount",
    )
    # workloads
    | _group_kinds(
        "apps",
        "ControllerRevision",
        "DaemonSet",
        "Deployment",
        "ReplicaSet",
        "StatefulSet",
    )
    | _group_kinds("batch", "CronJob", "Job")
    | _group_kinds("autoscaling", "HorizontalPodAutoscaler")
    | _group_kinds("policy", "PodDisruptionBudget")
    # RBAC and authorization
    | _group_kinds("rbac.authorization.k8s.io", "Role", "RoleBinding")
    | _group_kinds("authorization.k8s.io", "LocalSubjectAccessReview")
    # networking and service discovery
    | _group_kinds("networking.k8s.io", "Ingress", "NetworkPolicy")
    | _group_kinds("discovery.k8s.io", "EndpointSlice")
    # coordination and events
    | _group_kinds("coordination.k8s.io", "Lease", "LeaseCandidate")
    | _group_kinds("events.k8s.io", "Event")
    # storage and certificates
    | _group_kinds("storage.k8s.io", "CSIStorageCapacity")
    | _group_kinds("certificates.k8s.io", "PodCertificateRequest")
    # dynamic resource allocation (the last three: alpha APIs of 1.29 to 1.31)
    | _group_kinds(
        "resource.k8s.io",
        "ResourceClaim",
        "ResourceClaimTemplate",
        "PodSchedulingContext",
        "ResourceClaimParameters",
        "ResourceClassParameters",
    )
)


# ---------------------------------------------------------------------------
# Well-known custom resources.  Each row matches the ``spec.scope`` of the
# project's own CRD manifest.  These only matter when a render uses a kind
# without shipping its CRD (the usual case: CRDs are installed once, apart).
#
# Projects whose CRDs are all namespaced, so they add nothing below: Argo CD,
# Flux, Istio, Linkerd, MetalLB, the Prometheus operator and Velero.
# Deliberately absent: Crossplane ``ProviderConfig``, whose group differs per
# provider and which is namespaced for Crossplane v2 providers.
# ---------------------------------------------------------------------------

CRD_CLUSTER_SCOPED: frozenset[GroupKind] = (
    # cert-manager and trust-manager
    _group_kinds("cert-manager.io", "ClusterIssuer")
    | _group_kinds("trust.cert-manager.io", "Bundle")
    | _group_kinds("trust-manager.io", "ClusterBundle")
    # OPA Gatekeeper (its ``Config`` is namespaced; constraints: see
    # CLUSTER_SCOPED_GROUPS)
    | _group_kinds("templates.gatekeeper.sh", "ConstraintTemplate")
    | _group_kinds("mutations.gatekeeper.sh", "Assign", "AssignImage", "AssignMetadata", "ModifySet")
    | _group_kinds("expansion.gatekeeper.sh", "ExpansionTemplate")
    | _group_kinds("externaldata.gatekeeper.sh", "Provider")
    | _group_kinds("syncset.gatekeeper.sh", "SyncSet")
    # Kyverno and the policy-report API it writes
    | _group_kinds(
        "kyverno.io",
        "ClusterPolicy",
        "ClusterCleanupPolicy",
        "GlobalContextEntry",
        "ClusterAdmissionReport",
        "ClusterBackgroundScanReport",
    )
    | _group_kinds(
        "policies.kyverno.io",
        "DeletingPolicy",
        "GeneratingPolicy",
        "ImageValidatingPolicy",
        "MutatingPolicy",
        "ValidatingPolicy",
    )
    | _group_kinds("reports.kyverno.io", "ClusterEphemeralReport")
    | _group_kinds("wgpolicyk8s.io", "ClusterPolicyReport")
    # External Secrets Operator
    | _group_kinds(
        "external-secrets.io",
        "ClusterExternalSecret",
        "ClusterPushSecret",
        "ClusterSecretStore",
    )
    | _group_kinds("generators.external-secrets.io", "ClusterGenerator")
    # Karpenter and its AWS and Azure providers (Provisioner, Machine and
    # AWSNodeTemplate are the pre-v1beta1 API)
    | _group_kinds("karpenter.sh", "NodePool", "NodeClaim", "NodeOverlay", "Provisioner", "Machine")
    | _group_kinds("karpenter.k8s.aws", "EC2NodeClass", "AWSNodeTemplate")
    | _group_kinds("karpenter.azure.com", "AKSNodeClass")
    # Argo Workflows and Argo Rollouts
    | _group_kinds("argoproj.io", "ClusterWorkflowTemplate", "ClusterAnalysisTemplate")
    # Cilium
    | _group_kinds(
        "cilium.io",
        "CiliumBGPAdvertisement",
        "CiliumBGPClusterConfig",
        "CiliumBGPNodeConfig",
        "CiliumBGPNodeConfigOverride",
        "CiliumBGPPeerConfig",
        "CiliumBGPPeeringPolicy",
        "CiliumCIDRGroup",
        "CiliumClusterwideEnvoyConfig",
        "CiliumClusterwideNetworkPolicy",
        "CiliumEgressGatewayPolicy",
        "CiliumEndpointSlice",
        "CiliumExternalWorkload",
        "CiliumIdentity",
        "CiliumL2AnnouncementPolicy",
        "CiliumLoadBalancerIPPool",
        "CiliumNode",
        "CiliumPodIPPool",
    )
    # Calico: the CRD group, the v3 API group, and the Tigera operator
    | _group_kinds(
        "crd.projectcalico.org",
        "BGPConfiguration",
        "BGPFilter",
        "BGPPeer",
        "BlockAffinity",
        "CalicoNodeStatus",
        "ClusterInformation",
        "FelixConfiguration",
        "GlobalNetworkPolicy",
        "GlobalNetworkSet",
        "HostEndpoint",
        "IPAMBlock",
        "IPAMConfig",
        "IPAMHandle",
        "IPPool",
        "IPReservation",
        "KubeControllersConfiguration",
        "StagedGlobalNetworkPolicy",
        "Tier",
    )
    | _group_kinds(
        "projectcalico.org",
        "BGPConfiguration",
        "BGPFilter",
        "BGPPeer",
        "BlockAffinity",
        "CalicoNodeStatus",
        "ClusterInformation",
        "FelixConfiguration",
        "GlobalNetworkPolicy",
        "GlobalNetworkSet",
        "HostEndpoint",
        "IPAMBlock",
        "IPAMConfiguration",
        "IPAMHandle",
        "IPPool",
        "IPReservation",
        "KubeControllersConfiguration",
        "StagedGlobalNetworkPolicy",
        "Tier",
    )
    | _group_kinds(
        "operator.tigera.io",
        "APIServer",
        "Goldmane",
        "ImageSet",
        "Installation",
        "ManagementClusterConnection",
        "TigeraStatus",
        "Whisker",
    )
    # Gateway API and the network-policy API of SIG Network
    | _group_kinds("gateway.networking.k8s.io", "GatewayClass")
    | _group_kinds(
        "policy.networking.k8s.io",
        "AdminNetworkPolicy",
        "BaselineAdminNetworkPolicy",
        "ClusterNetworkPolicy",
    )
    # Crossplane (ControllerConfig: v1 only; apiextensions Usage: v1 only)
    | _group_kinds(
        "pkg.crossplane.io",
        "Configuration",
        "ConfigurationRevision",
        "ControllerConfig",
        "DeploymentRuntimeConfig",
        "Function",
        "FunctionRevision",
        "ImageConfig",
        "Lock",
        "Provider",
        "ProviderRevision",
    )
    | _group_kinds(
        "apiextensions.crossplane.io",
        "CompositeResourceDefinition",
        "Composition",
        "CompositionRevision",
        "EnvironmentConfig",
        "ManagedResourceActivationPolicy",
        "ManagedResourceDefinition",
        "Usage",
    )
    | _group_kinds("protection.crossplane.io", "ClusterUsage")
    | _group_kinds("ops.crossplane.io", "CronOperation", "Operation", "WatchOperation")
    # CSI volume snapshots
    | _group_kinds("snapshot.storage.k8s.io", "VolumeSnapshotClass", "VolumeSnapshotContent")
    | _group_kinds(
        "groupsnapshot.storage.k8s.io",
        "VolumeGroupSnapshotClass",
        "VolumeGroupSnapshotContent",
    )
    # Knative
    | _group_kinds("networking.internal.knative.dev", "ClusterDomainClaim")
    # Tekton (ClusterTask was removed from Pipelines in 2024)
    | _group_kinds("tekton.dev", "ClusterTask")
    | _group_kinds("triggers.tekton.dev", "ClusterInterceptor", "ClusterTriggerBinding")
    # Kueue
    | _group_kinds(
        "kueue.x-k8s.io",
        "AdmissionCheck",
        "ClusterQueue",
        "Cohort",
        "MultiKueueCluster",
        "MultiKueueConfig",
        "ProvisioningRequestConfig",
        "ResourceFlavor",
        "Topology",
        "WorkloadPriorityClass",
    )
    # KEDA
    | _group_kinds("keda.sh", "ClusterTriggerAuthentication")
    | _group_kinds("eventing.keda.sh", "ClusterCloudEventSource")
    # Trivy operator
    | _group_kinds(
        "aquasecurity.github.io",
        "ClusterComplianceReport",
        "ClusterConfigAuditReport",
        "ClusterInfraAssessmentReport",
        "ClusterRbacAssessmentReport",
        "ClusterSbomReport",
        "ClusterVulnerabilityReport",
    )
    # KubeVirt
    | _group_kinds(
        "instancetype.kubevirt.io",
        "VirtualMachineClusterInstancetype",
        "VirtualMachineClusterPreference",
    )
    | _group_kinds("migrations.kubevirt.io", "MigrationPolicy")
    # NVIDIA GPU operator and Node Feature Discovery
    | _group_kinds("nvidia.com", "ClusterPolicy", "NVIDIADriver")
    | _group_kinds("nfd.k8s-sigs.io", "NodeFeatureRule")
    # Volcano
    | _group_kinds("scheduling.volcano.sh", "Queue")
    | _group_kinds("topology.volcano.sh", "HyperNode")
    # AWS Load Balancer Controller
    | _group_kinds("elbv2.k8s.aws", "IngressClassParams")
)

CLUSTER_SCOPED_GROUPS: frozenset[str] = frozenset(
    {
        # Gatekeeper generates one cluster-scoped kind per ConstraintTemplate.
        "constraints.gatekeeper.sh",
    }
)
"""API groups in which every kind is cluster-scoped, whatever its name."""

CRD_NAMESPACED: frozenset[GroupKind] = (
    # cert-manager
    _group_kinds("cert-manager.io", "Certificate", "CertificateRequest", "Issuer")
    | _group_kinds("acme.cert-manager.io", "Challenge", "Order")
    # OPA Gatekeeper
    | _group_kinds("config.gatekeeper.sh", "Config")
    # Kyverno and policy reports
    | _group_kinds("kyverno.io", "CleanupPolicy", "Policy", "PolicyException", "UpdateRequest")
    | _group_kinds(
        "policies.kyverno.io",
        "NamespacedDeletingPolicy",
        "NamespacedGeneratingPolicy",
        "NamespacedImageValidatingPolicy",
        "NamespacedMutatingPolicy",
        "NamespacedValidatingPolicy",
        "PolicyException",
    )
    | _group_kinds("reports.kyverno.io", "EphemeralReport")
    | _group_kinds("wgpolicyk8s.io", "PolicyReport")
    # External Secrets Operator
    | _group_kinds("external-secrets.io", "ExternalSecret", "PushSecret", "SecretStore")
    # Argo CD, Argo Workflows, Argo Rollouts
    | _group_kinds(
        "argoproj.io",
        "AnalysisRun",
        "AnalysisTemplate",
        "AppProject",
        "Application",
        "ApplicationSet",
        "CronWorkflow",
        "Experiment",
        "Rollout",
        "Workflow",
        "WorkflowEventBinding",
        "WorkflowTemplate",
    )
    # Cilium
    | _group_kinds(
        "cilium.io",
        "CiliumEndpoint",
        "CiliumEnvoyConfig",
        "CiliumLocalRedirectPolicy",
        "CiliumNetworkPolicy",
        "CiliumNodeConfig",
    )
    # Calico
    | _group_kinds(
        "crd.projectcalico.org",
        "NetworkPolicy",
        "NetworkSet",
        "StagedKubernetesNetworkPolicy",
        "StagedNetworkPolicy",
    )
    | _group_kinds(
        "projectcalico.org",
        "NetworkPolicy",
        "NetworkSet",
        "StagedKubernetesNetworkPolicy",
        "StagedNetworkPolicy",
    )
    # Gateway API
    | _group_kinds(
        "gateway.networking.k8s.io",
        "BackendTLSPolicy",
        "GRPCRoute",
        "Gateway",
        "HTTPRoute",
        "ReferenceGrant",
        "TCPRoute",
        "TLSRoute",
        "UDPRoute",
    )
    # Crossplane v2
    | _group_kinds("protection.crossplane.io", "Usage")
    # CSI volume snapshots
    | _group_kinds("snapshot.storage.k8s.io", "VolumeSnapshot")
    | _group_kinds("groupsnapshot.storage.k8s.io", "VolumeGroupSnapshot")
    # Istio
    | _group_kinds(
        "networking.istio.io",
        "DestinationRule",
        "EnvoyFilter",
        "Gateway",
        "ProxyConfig",
        "ServiceEntry",
        "Sidecar",
        "VirtualService",
        "WorkloadEntry",
        "WorkloadGroup",
    )
    | _group_kinds(
        "security.istio.io",
        "AuthorizationPolicy",
        "PeerAuthentication",
        "RequestAuthentication",
    )
    | _group_kinds("telemetry.istio.io", "Telemetry")
    | _group_kinds("extensions.istio.io", "WasmPlugin")
    # Prometheus operator
    | _group_kinds(
        "monitoring.coreos.com",
        "Alertmanager",
        "AlertmanagerConfig",
        "PodMonitor",
        "Probe",
        "Prometheus",
        "PrometheusAgent",
        "PrometheusRule",
        "ScrapeConfig",
        "ServiceMonitor",
        "ThanosRuler",
    )
    # KEDA
    | _group_kinds("keda.sh", "ScaledJob", "ScaledObject", "TriggerAuthentication")
    | _group_kinds("eventing.keda.sh", "CloudEventSource")
    # Kueue
    | _group_kinds("kueue.x-k8s.io", "LocalQueue", "Workload")
    # Tekton
    | _group_kinds(
        "tekton.dev",
        "CustomRun",
        "Pipeline",
        "PipelineRun",
        "StepAction",
        "Task",
        "TaskRun",
    )
    | _group_kinds(
        "triggers.tekton.dev",
        "EventListener",
        "Interceptor",
        "Trigger",
        "TriggerBinding",
        "TriggerTemplate",
    )
    # Trivy operator
    | _group_kinds(
        "aquasecurity.github.io",
        "ConfigAuditReport",
        "ExposedSecretReport",
        "InfraAssessmentReport",
        "RbacAssessmentReport",
        "SbomReport",
        "VulnerabilityReport",
    )
    # KubeVirt
    | _group_kinds("kubevirt.io", "KubeVirt", "VirtualMachine", "VirtualMachineInstance")
    | _group_kinds(
        "instancetype.kubevirt.io",
        "VirtualMachineInstancetype",
        "VirtualMachinePreference",
    )
    # Knative Serving
    | _group_kinds(
        "serving.knative.dev",
        "Configuration",
        "DomainMapping",
        "Revision",
        "Route",
        "Service",
    )
    # MetalLB
    | _group_kinds(
        "metallb.io",
        "BFDProfile",
        "BGPAdvertisement",
        "BGPPeer",
        "Community",
        "IPAddressPool",
        "L2Advertisement",
    )
    # Velero
    | _group_kinds(
        "velero.io",
        "Backup",
        "BackupStorageLocation",
        "Restore",
        "Schedule",
        "VolumeSnapshotLocation",
    )
)

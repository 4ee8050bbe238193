"""``mlpipe.entities``: mirror of ``azure.ai.ml.entities``, the names a pipeline script touches.

Steps and settings run locally; compute, workspace and asset entities describe
this machine or are registered in the runs folder (see ``MLClient``). azure-ai-ml's other
entities (endpoints, deployments, schedules, datastores, connections, ...) can be imported;
making one raises ``NotAvailableLocally`` naming it (:data:`NOT_LOCAL`).

Mirror module: it only re-exports (the code lives in mlpipe.sdk). Not to be confused with the
same-named modules under ``mlpipe.sdk`` / ``mlpipe.schema``; docs/architecture.md lists every
mirror.
"""

from __future__ import annotations

from typing import Any

from mlpipe.sdk.assets import Data, Model
from mlpipe.sdk.components import CommandComponent, ParallelComponent, PipelineComponent
from mlpipe.sdk.datastores import (
    AccountKeyConfiguration,
    AzureBlobDatastore,
    AzureDataLakeGen2Datastore,
    NoneCredentialConfiguration,
    SasTokenConfiguration,
)
from mlpipe.sdk.entities import (
    BatchRetrySettings,
    CommandJobLimits,
    Environment,
    JobResourceConfiguration,
    QueueSettings,
    RetrySettings,
)
from mlpipe.sdk.identities import (
    AmlTokenConfiguration,
    JobService,
    JupyterLabJobService,
    ManagedIdentityConfiguration,
    MpiDistribution,
    PyTorchDistribution,
    RayDistribution,
    SshJobService,
    TensorBoardJobService,
    TensorFlowDistribution,
    UserIdentityConfiguration,
    VsCodeJobService,
)
from mlpipe.sdk.job import PipelineJob, PipelineJobSettings
from mlpipe.sdk.nodes import CommandNode, Component, ParallelNode, SweepNode
from mlpipe.sdk.resources import (
    AmlCompute,
    BuildContext,
    Compute,
    ComputeInstance,
    ResourceConfiguration,
    Workspace,
)
from mlpipe.sdk.running import Job
from mlpipe.unavailable import Unavailable

Command = CommandNode
Parallel = ParallelNode
Sweep = SweepNode

# azure-ai-ml 1.35's other entities: they need a workspace (or a runtime mlpipe does not have).
NOT_LOCAL = ("APIKeyConnection", "AadCredentialConfiguration", "AcceleratorMap",
             "AccessKeyConfiguration", "AlertNotification",
             "AmlComputeNodeInfo", "AmlComputeSshSettings", "ApiKeyConfiguration", "Asset",
             "AssignedUserConfiguration", "AutoPauseSettings", "AutoScaleSettings",
             "AzureAISearchConfig", "AzureAISearchConnection", "AzureAIServicesConnection",
             "AzureBlobStoreConnection", "AzureContentSafetyConnection",
             "AzureDataLakeGen1Datastore", "AzureFileDatastore",
             "AzureMLBatchInferencingServer", "AzureMLOnlineInferencingServer",
             "AzureOpenAIConnection", "AzureOpenAIDeployment", "AzureSpeechServicesConnection",
             "BaseEnvironment", "BaselineDataRange", "BatchDeployment", "BatchEndpoint",
             "BatchJob", "CapabilityHost", "CapabilityHostKind", "CategoricalDriftMetrics",
             "CertificateConfiguration", "CodeConfiguration", "CommandJob", "ComputeConfiguration",
             "ComputeInstanceSshSettings", "ComputePowerAction", "ComputeRuntime",
             "ComputeSchedules", "ComputeStartStopSchedule", "ContainerRegistryCredential",
             "CreatedByType", "CronTrigger", "CustomApplications", "CustomInferencingServer",
             "CustomModelFineTuningJob", "CustomMonitoringMetricThreshold",
             "CustomMonitoringSignal", "CustomerManagedKey", "DataAsset", "DataAvailabilityStatus",
             "DataCollector", "DataColumn", "DataColumnType", "DataDriftMetricThreshold",
             "DataDriftSignal", "DataImport", "DataQualityMetricThreshold",
             "DataQualityMetricsCategorical", "DataQualityMetricsNumerical", "DataQualitySignal",
             "DataSegment", "Datastore", "DefaultActionType", "DefaultScaleSettings", "Deployment",
             "DeploymentCollection", "DeploymentTemplate", "DeploymentTemplateReference",
             "DiagnoseRequestProperties", "DiagnoseResponseResult", "DiagnoseResponseResultValue",
             "DiagnoseResult", "DiagnoseWorkspaceParameters", "Endpoint", "EndpointAadToken",
             "EndpointAuthKeys", "EndpointAuthToken", "EndpointConnection", "EndpointsSettings",
             "FADProductionData", "Feature", "FeatureAttributionDriftMetricThreshold",
             "FeatureAttributionDriftSignal", "FeatureSet", "FeatureSetBackfillMetadata",
             "FeatureSetBackfillRequest", "FeatureSetMaterializationMetadata",
             "FeatureSetSpecification", "FeatureStore", "FeatureStoreEntity",
             "FeatureStoreSettings", "FeatureWindow", "FixedInputData", "FqdnDestination",
             "GenerationSafetyQualityMonitoringMetricThreshold", "GenerationSafetyQualitySignal",
             "GenerationTokenStatisticsMonitorMetricThreshold", "GenerationTokenStatisticsSignal",
             "GitSource", "Hub", "IPRule", "IdentityConfiguration", "ImageMetadata",
             "ImageSettings", "ImportDataSchedule", "Index", "IndexDataSource",
             "IndexModelConfiguration", "InputPort", "IntellectualProperty", "IsolationMode",
             "JobResources", "JobSchedule", "KubernetesCompute", "KubernetesOnlineDeployment",
             "KubernetesOnlineEndpoint", "LlmData", "LocalSource", "ManagedNetwork",
             "ManagedNetworkProvisionStatus", "ManagedOnlineDeployment", "ManagedOnlineEndpoint",
             "MarketplacePlan", "MarketplaceSubscription", "MaterializationComputeResource",
             "MaterializationSettings", "MaterializationStore", "MaterializationType",
             "MicrosoftOneLakeConnection", "ModelBatchDeployment", "ModelBatchDeploymentSettings",
             "ModelConfiguration", "ModelPackage", "ModelPackageInput",
             "ModelPerformanceClassificationThresholds", "ModelPerformanceMetricThreshold",
             "ModelPerformanceRegressionThresholds", "ModelPerformanceSignal", "MonitorDefinition",
             "MonitorFeatureFilter", "MonitorInputData", "MonitorSchedule", "MonitoringTarget",
             "NetworkAcls", "NetworkSettings", "NotebookAccessKeys",
             "Notification", "NumericalDriftMetrics", "OneLakeArtifact",
             "OneLakeConnectionArtifact", "OneLakeDatastore", "OnlineDeployment", "OnlineEndpoint",
             "OnlineRequestSettings", "OnlineScaleSettings", "OpenAIConnection", "OutboundRule",
             "PackageInputPathId", "PackageInputPathUrl", "PackageInputPathVersion",
             "ParallelTask", "ParameterizedCommand", "PatTokenConfiguration", "Pipeline",
             "PipelineComponentBatchDeployment", "PredictionDriftMetricThreshold",
             "PredictionDriftSignal", "PrivateEndpoint", "PrivateEndpointDestination",
             "ProbeSettings", "ProductionData", "Project", "RecurrencePattern",
             "RecurrenceTrigger", "ReferenceData", "Registry", "RegistryRegionDetails",
             "RequestLogging", "Resource", "ResourceRequirementsSettings", "ResourceSettings",
             "Route", "Schedule", "ScheduleState",
             "ScheduleTriggerResult", "ScriptReference", "SerpConnection",
             "ServerlessComputeSettings", "ServerlessConnection", "ServerlessEndpoint",
             "ServerlessSparkCompute", "ServiceInstance", "ServicePrincipalConfiguration",
             "ServiceTagDestination", "SetupScripts", "Spark", "SparkComponent", "SparkJob",
             "SparkJobEntry", "SparkJobEntryType", "SparkResourceConfiguration", "StaticInputData",
             "SynapseSparkCompute", "SystemCreatedAcrAccount",
             "SystemCreatedStorageAccount", "SystemData", "TargetUtilizationScaleSettings",
             "TrailingInputData", "TritonInferencingServer", "UnsupportedCompute", "Usage",
             "UsageName", "UsageUnit", "UsernamePasswordConfiguration", "ValidationResult",
             "VirtualMachineCompute", "VirtualMachineSshSettings", "VmSize", "VolumeSettings",
             "WorkspaceConnection", "WorkspaceKeys", "WorkspaceModelReference")


def __getattr__(name: str) -> Any:
    if name in NOT_LOCAL:
        return Unavailable(f"azure.ai.ml.entities.{name}")
    raise AttributeError(f"module 'azure.ai.ml.entities' (mlpipe's mirror) has no attribute "
                         f"{name!r}")


__all__ = ["AccountKeyConfiguration", "AmlCompute", "AzureBlobDatastore",
           "AzureDataLakeGen2Datastore", "NoneCredentialConfiguration", "SasTokenConfiguration",
           "AmlTokenConfiguration", "BatchRetrySettings", "BuildContext", "Command",
           "CommandComponent", "CommandJobLimits", "Component", "Compute", "ComputeInstance",
           "Data", "Environment", "Job", "JobResourceConfiguration", "JobService",
           "JupyterLabJobService", "ManagedIdentityConfiguration", "Model", "MpiDistribution",
           "Parallel", "ParallelComponent", "PipelineComponent", "PipelineJob",
           "PipelineJobSettings", "PyTorchDistribution", "QueueSettings", "RayDistribution",
           "ResourceConfiguration", "RetrySettings", "SshJobService", "Sweep",
           "TensorBoardJobService",
           "TensorFlowDistribution", "UserIdentityConfiguration", "VsCodeJobService", "Workspace"]

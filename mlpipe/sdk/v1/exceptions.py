"""``azureml.exceptions``: v1's exception classes, so ``except ComputeTargetException:`` and
``except UserErrorException:`` blocks of published code run as written."""

from __future__ import annotations


class AzureMLException(Exception):
    """v1's base exception (``azureml.exceptions.AzureMLException``)."""

    def __init__(self, exception_message: str = "", *args: object, **kwargs: object) -> None:
        super().__init__(exception_message, *args)
        self.message = exception_message


class UserErrorException(AzureMLException):
    """A mistake in the caller's code or data."""


class ActivityFailedException(AzureMLException):
    """v1's error from ``wait_for_completion`` when the run did not finish."""


class ComputeTargetException(AzureMLException):
    """A compute target that cannot be found or made (never raised locally: every compute
    name is this machine)."""


class ModelNotFoundException(AzureMLException):
    """``Model(ws, name)`` of a model the local asset store does not have."""


class RunConfigurationException(AzureMLException):
    """A run configuration v1 rejects."""


class ExperimentExecutionException(AzureMLException):
    """An experiment that could not be run."""


class WebserviceException(AzureMLException):
    """A web service call (deployments are not available locally)."""


class ProjectSystemException(AzureMLException):
    """A workspace or project that cannot be found."""


class WorkspaceException(ProjectSystemException):
    """A workspace that cannot be found or made."""


class AuthenticationException(AzureMLException):
    """Authentication failed (never raised locally: no credentials are needed)."""


class ServiceException(AzureMLException):
    """An error answer from the Azure ML service."""


__all__ = ["ActivityFailedException", "AuthenticationException", "AzureMLException",
           "ComputeTargetException", "ExperimentExecutionException", "ModelNotFoundException",
           "ProjectSystemException", "RunConfigurationException", "ServiceException",
           "UserErrorException", "WebserviceException", "WorkspaceException"]

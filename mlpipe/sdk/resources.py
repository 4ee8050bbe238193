"""Workspace-side entities of ``azure.ai.ml.entities`` that a local run describes or records:
``AmlCompute``, ``ComputeInstance``, ``ResourceConfiguration``, ``BuildContext``, ``Workspace``.
"""

from __future__ import annotations

import os
import platform
from typing import Any, ClassVar

from mlpipe.cores import core_count
from mlpipe.sdk.assets import Resource

LOCATION = "local"


class ResourceConfiguration(Resource):
    """``azure.ai.ml.entities.ResourceConfiguration``: ``instance_count``, ``instance_type``."""

    _fields = ("instance_count", "instance_type", "properties")

    def __init__(self, *, instance_count: int | None = None, instance_type: str | None = None,
                 properties: dict[str, Any] | None = None, **kwargs: Any) -> None:
        self._set(dict(instance_count=instance_count, instance_type=instance_type,
                       properties=properties), kwargs)


class BuildContext(Resource):
    """``azure.ai.ml.entities.BuildContext``: a Docker build folder (recorded, never built)."""

    _fields = ("dockerfile_path", "path")

    def __init__(self, *, dockerfile_path: str | None = None,
                 path: str | os.PathLike[str] | None = None) -> None:
        self._set(dict(dockerfile_path=dockerfile_path,
                       path=None if path is None else os.fspath(path)), {})


class Compute(Resource):
    """Base of the compute entities: ``name``, ``type``, ``size``, ``location``, ``tags``."""

    _fields: ClassVar[tuple[str, ...]] = ("name", "type", "description", "size", "location",
                                          "provisioning_state", "tags")
    _type = "compute"

    def __init__(self, name: str, location: str | None = None, description: str | None = None,
                 resource_id: str | None = None, tags: dict[str, Any] | None = None,
                 *, size: str | None = None, **kwargs: Any) -> None:
        self.resource_id = resource_id
        self._set(dict(name=name, type=self._type, description=description, size=size,
                       location=location or LOCATION,
                       provisioning_state=kwargs.pop("provisioning_state", "Succeeded"),
                       tags=tags), kwargs)


class AmlCompute(Compute):
    """``azure.ai.ml.entities.AmlCompute``: a cluster (locally: this machine's cores)."""

    _fields = (*Compute._fields, "min_instances", "max_instances", "idle_time_before_scale_down",
               "tier")
    _type = "amlcompute"

    def __init__(self, *, name: str, description: str | None = None, size: str | None = None,
                 tags: dict[str, Any] | None = None, ssh_public_access_enabled: bool | None = None,
                 ssh_settings: Any = None, min_instances: int | None = 0,
                 max_instances: int | None = 4, network_settings: Any = None,
                 idle_time_before_scale_down: int | None = 120, identity: Any = None,
                 tier: str | None = None, enable_node_public_ip: bool = True,
                 **kwargs: Any) -> None:
        super().__init__(name=name, description=description, size=size, tags=tags, **kwargs)
        self.min_instances = min_instances
        self.max_instances = max_instances
        self.idle_time_before_scale_down = idle_time_before_scale_down
        self.tier = tier
        self.identity = identity


class ComputeInstance(Compute):
    """``azure.ai.ml.entities.ComputeInstance``: one machine."""

    _fields = (*Compute._fields, "state")
    _type = "computeinstance"

    def __init__(self, *, name: str, description: str | None = None, size: str | None = None,
                 tags: dict[str, Any] | None = None, **kwargs: Any) -> None:
        state = kwargs.pop("state", "Running")
        super().__init__(name=name, description=description, size=size, tags=tags, **kwargs)
        self.state = state


def this_machine(name: str) -> AmlCompute:
    """The compute ``name`` as a local run sees it: one node with this machine's cores."""
    cores = core_count()
    return AmlCompute(name=name, size=f"local ({cores} cores, {platform.machine() or 'cpu'})",
                      min_instances=1, max_instances=1,
                      description="mlpipe runs every step on this machine")


class Workspace(Resource):
    """``azure.ai.ml.entities.Workspace`` as the local stand-in describes itself."""

    _fields = ("name", "description", "display_name", "location", "resource_group", "tags")

    def __init__(self, *, name: str, description: str | None = None,
                 tags: dict[str, str] | None = None, display_name: str | None = None,
                 location: str | None = None, resource_group: str | None = None,
                 **kwargs: Any) -> None:
        self._set(dict(name=name, description=description, tags=tags, display_name=display_name,
                       location=location or LOCATION, resource_group=resource_group), kwargs)


__all__ = ["AmlCompute", "BuildContext", "Compute", "ComputeInstance", "ResourceConfiguration",
           "Workspace", "this_machine"]

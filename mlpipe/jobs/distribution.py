"""A distributed command step (``distribution:``) run here as a world of one process.

Azure ML starts a distributed command under a launcher that describes the world to each
process through environment variables, and published training scripts read them as
they are (``int(os.environ["WORLD_SIZE"])``, ``json.loads(os.environ["TF_CONFIG"])``).
Locally the command runs once, as rank 0 of a world of one, with the same variables:

- ``pytorch``: ``MASTER_ADDR``, ``MASTER_PORT``, ``WORLD_SIZE``, ``NODE_RANK``, ``RANK``,
  ``LOCAL_RANK`` (and ``LOCAL_WORLD_SIZE``), what ``torch.distributed``'s ``env://`` reads;
- ``tensorflow``: ``TF_CONFIG`` naming one worker (this process), no parameter server;
- ``mpi``: Open MPI's ``OMPI_COMM_WORLD_RANK``/``_SIZE``/``_LOCAL_RANK``/``_LOCAL_SIZE``/
  ``_NODE_RANK`` as ``mpirun -np 1`` sets them;
- ``ray``: nothing (a script's ``ray.init()`` starts a local cluster).

The step's own ``environment_variables`` win over these.
"""

from __future__ import annotations

import json
import socket

LOCALHOST = "127.0.0.1"


def launcher_environment(kind: str | None) -> dict[str, str]:
    """The variables Azure's launcher of ``kind`` sets, for rank 0 of a world of one."""
    if kind == "pytorch":
        return {"MASTER_ADDR": LOCALHOST, "MASTER_PORT": str(free_port()), "WORLD_SIZE": "1",
                "NODE_RANK": "0", "RANK": "0", "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "1"}
    if kind == "tensorflow":
        config = {"cluster": {"worker": [f"{LOCALHOST}:{free_port()}"]},
                  "task": {"type": "worker", "index": 0}}
        return {"TF_CONFIG": json.dumps(config)}
    if kind == "mpi":
        return {f"OMPI_COMM_WORLD_{name}": value for name, value in
                (("RANK", "0"), ("SIZE", "1"), ("LOCAL_RANK", "0"), ("LOCAL_SIZE", "1"),
                 ("NODE_RANK", "0"))}
    return {}


def free_port() -> int:
    """A TCP port on the loopback address that no process listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((LOCALHOST, 0))
        port: int = probe.getsockname()[1]
        return port


__all__ = ["launcher_environment"]

"""The free parameters `iorelay calibrate` can fit: where each lives in a platform document, its
kind and its search bounds. A table of its own so that the command line can list them without
loading the fitting engine (numpy, pandas, scipy)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Parameter:
    """One free parameter: where it lives in the platform document, its kind, and its bounds."""

    name: str
    # "rate" (bytes/s), "duration" (s), "count" (an integer, fitted rounded) or "number" (a
    # plain number, a share)
    kind: str
    low: float
    high: float
    start: float | None = None  # where the fit starts when the platform has no value


FREE_PARAMETERS: dict[str, Parameter] = {
    p.name: p
    for p in (
        Parameter("compute.nic", "rate", 1e8, 1e11),
        Parameter("ionode.nic", "rate", 1e8, 1e11),
        Parameter("ionode.request_overhead", "duration", 1e-7, 1e-1),
        Parameter("storage.nic", "rate", 1e7, 1e11),
        Parameter("storage.device.seek", "duration", 1e-6, 1e-1),
        Parameter("storage.device.bw", "rate", 1e6, 1e11),
        Parameter("storage.device.write", "duration", 1e-7, 1e-1, start=1e-4),
        Parameter("storage.token_handoff", "duration", 1e-6, 1.0, start=1e-3),
        Parameter("storage.range_token", "duration", 1e-6, 1.0, start=1e-3),
        Parameter("storage.metanode_update", "duration", 1e-7, 1.0, start=1e-4),
        Parameter("storage.metanode_bw", "rate", 1e6, 1e11, start=1e8),
        Parameter("storage.metanode_share", "number", 0.05, 5.0, start=0.5),
        Parameter("network.latency", "duration", 1e-7, 1e-2),
        Parameter("network.link", "rate", 1e7, 1e11),
        Parameter("network.storage_gateway_nic", "rate", 1e7, 1e11),
        Parameter("ionode.slots", "count", 1, 64),
        Parameter("storage.file_writes_per_client", "count", 1, 64, start=64),
        Parameter("storage.channels", "count", 1, 64, start=1),
        Parameter("storage.file_writes", "count", 1, 64, start=64),
        # Processor time on the machine's shared cores (the platform's cpu section and cores).
        Parameter("cpu.direct_call", "duration", 1e-7, 1e-2, start=1e-5),
        Parameter("cpu.forward_request", "duration", 1e-7, 1e-2, start=5e-6),
        Parameter("cpu.copy", "rate", 1e8, 1e11, start=1e10),
        Parameter("cpu.ionode_request", "duration", 1e-7, 1e-2, start=5e-6),
        Parameter("cpu.ionode_call", "duration", 1e-7, 1e-2, start=1e-5),
    )
}
# The device's time per access by size (storage.device's access=...): one value per request size
# of the cells, fitted apart from the others (fit_access_times), so it is named on its own.
ACCESS_TIMES = "storage.device.access"
ACCESS_BOUNDS_S = (1e-7, 10.0)
DEFAULT_PARAMETERS = (
    "ionode.request_overhead",
    "storage.nic",
    "storage.device.seek",
    "storage.device.bw",
    "storage.token_handoff",
)

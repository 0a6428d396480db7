"""iorelay's Python tooling: starts daemons, runs workloads through the interposer, reports.

The C++ core (iorelayd, libiorelay, the interposer) is reached through processes and files only.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("iorelay")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = ["__version__"]

"""The HBase data-store driver, in parts: `driver` (HBaseDriver: the operations, started and
observed; wiring from metctl's settings), `topology` (what is where: servers, regions, region
metrics), `restart` (profiles and RegionServer restarts), `errors` (HBase's exceptions in
metctl's words). The names other packages use are importable from here."""
from actuator.hbase.driver import HBaseDriver, client_settings_from, open_hbase_driver
from actuator.hbase.errors import split_refusal
from actuator.hbase.restart import PROFILE_KEY, CommandRestarter, Restarter, default_settings_for
from actuator.hbase.topology import (
    SYSTEM_NAMESPACE, UNKNOWN_PROFILE, HBaseTopology, RegionMetricsRow, host_port, server_id_of,
)

__all__ = ["PROFILE_KEY", "SYSTEM_NAMESPACE", "UNKNOWN_PROFILE", "CommandRestarter", "HBaseDriver",
           "HBaseTopology", "RegionMetricsRow", "Restarter", "client_settings_from",
           "default_settings_for", "host_port", "open_hbase_driver", "server_id_of",
           "split_refusal"]

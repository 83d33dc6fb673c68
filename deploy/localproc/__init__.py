"""What every local test cluster (deploy/local_hbase, deploy/local_cassandra) shares: free
ports, processes it owns (started, recognised and stopped by PID and conf dir only), log tails,
its state file with the lock around every change, and the `LocalCluster` base that ties them
together. Standard library only: `cluster.py fetch` runs on a bare python3 before any venv."""
from deploy.localproc.cluster import ClusterError, LocalCluster
from deploy.localproc.process import cpu_s, free_port, pid_alive, pid_owned, port_free, rss_mb, tail
from deploy.localproc.state import StateFile

__all__ = ["ClusterError", "LocalCluster", "StateFile", "cpu_s", "free_port", "pid_alive", "pid_owned", "port_free",
           "rss_mb", "tail"]

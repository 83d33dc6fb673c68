"""A simulated HBase-like cluster: metric source and actuator target for demos and evaluation.

    settings.py    every constant of the model, with its unit and source (the `simulator:` section)
    scenario.py    scenario files: initial cluster, YCSB workloads A–F (MET §3.1), phases
    capacity.py    cost of an operation by operation and node profile; Che's LRU cache model
    cluster.py     the facade: one cluster stepped in time, deterministic for a seed; the
                   modules below do each part of a step
      regions.py     per-region arrays and their geometry (key ranges, splits)
      nodes.py       VMs and RegionServers: states and timed transitions
      store.py       the store's operations (move, restart, compact, split, decommission,
                     launch, terminate) and the events that complete them
      balancer.py    initial placement and HBase's stock balancer
      background.py  transfers and compactions and the capacity they take
      cache.py       block-cache and page-cache hit ratios per region
      demand.py      service demands per workload and station, delays, requests per region
      solver.py      the queueing network (approximate MVA), pure functions over arrays
      metrics.py     host metrics, RegionServer call time, the live view, the recording
    adapters.py    the cluster behind monitor.source.MetricsSource and the actuator's
                   InfrastructureDriver / DataStoreDriver protocols, plus a clock whose sleep
                   advances the simulation
The harness that wires the cluster to the real collector, executor and control loop is
controller/harness.py (simulator/ imports nothing from controller/).
"""

"""A simulated HBase-like cluster: metric source and actuator target for demos and evaluation.

    settings.py  every constant of the model, with its unit and source (the `simulator:` section)
    scenario.py  scenario files: initial cluster, YCSB workloads A–F (MET §3.1), phases
    capacity.py  cost of an operation by operation and node profile; Che's LRU cache model
    cluster.py   the cluster itself: regions, nodes, closed-loop clients (approximate MVA),
                 elasticity actions with their delays and costs; deterministic for a seed
    adapters.py  the cluster behind monitor.source.MetricsSource and the actuator's
                 InfrastructureDriver / DataStoreDriver protocols, plus a clock whose sleep
                 advances the simulation
The harness that wires the cluster to the real collector, executor and control loop is
controller/harness.py (simulator/ imports nothing from controller/).
"""

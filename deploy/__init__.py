"""Deployment pieces: the scripts and modules that start real local clusters (HBase, Cassandra,
ZooKeeper) for the tests, benches and demos, and the files a production install uses (systemd,
container, cloud-init, node bootstrap). Not part of the metctl distribution."""

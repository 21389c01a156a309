"""disk-io: the node's storage under the path the test names, measured by the real ``fio``."""

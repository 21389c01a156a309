"""``python -m runners.nccl.agent <host> <command>``: mpirun's rsh agent (see launch.py)."""

import os
import sys

from runners.nccl.launch import agent_main

if __name__ == "__main__":
    sys.exit(agent_main(sys.argv[1:], os.environ))

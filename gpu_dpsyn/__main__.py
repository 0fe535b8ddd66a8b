import sys

from gpu_dpsyn.startup import interrupted

try:  # (python -m gpu_dpsyn is always the command: Ctrl-C while it imports is one line)
    from gpu_dpsyn.cli import main
except KeyboardInterrupt:
    interrupted()

sys.exit(main())

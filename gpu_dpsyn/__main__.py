import sys

try:  # (python -m gpu_dpsyn is always the command: Ctrl-C while it imports is one line)
    from gpu_dpsyn.cli import main
except KeyboardInterrupt:
    print("gpu-dpsyn: interrupted", file=sys.stderr)
    sys.exit(130)

sys.exit(main())

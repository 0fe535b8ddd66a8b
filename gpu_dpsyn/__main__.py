import sys

from gpu_dpsyn.cli import main

sys.exit(main())

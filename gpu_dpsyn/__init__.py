"""gpu_dpsyn: differentially private synthetic tables (DPSyn / PrivSyn) on GPU or CPU."""
from gpu_dpsyn.startup import interrupted_on_start

try:  # (Ctrl-C while the command imports: one line, not a traceback)
    from gpu_dpsyn.data.inference import infer_schema
    from gpu_dpsyn.data.schema import Schema, load_schema
    from gpu_dpsyn.errors import (BackendError, BudgetExceededError, DataError, DPSynError,
                                  LargeDomainWarning, NonPrivateSchemaWarning,
                                  PrivacyParameterError, SchemaError)
    from gpu_dpsyn.synthesizer import Synthesizer
    from gpu_dpsyn.version import __version__
except KeyboardInterrupt:
    interrupted_on_start()
    raise

__all__ = ["Synthesizer", "Schema", "load_schema", "infer_schema", "NonPrivateSchemaWarning",
           "LargeDomainWarning", "DPSynError", "DataError", "SchemaError",
           "PrivacyParameterError", "BudgetExceededError", "BackendError", "__version__"]

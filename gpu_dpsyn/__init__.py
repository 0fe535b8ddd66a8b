"""gpu_dpsyn: differentially private synthetic tables (DPSyn / PrivSyn) on GPU or CPU."""
from .api import Synthesizer
from .errors import (BackendError, BudgetExceededError, DataError, DPSynError,
                     PrivacyParameterError, SchemaError)
from .inference import LargeDomainWarning, NonPrivateSchemaWarning, infer_schema
from .schema import Schema, load_schema

__version__ = "0.1.0"
__all__ = ["Synthesizer", "Schema", "load_schema", "infer_schema", "NonPrivateSchemaWarning",
           "LargeDomainWarning",
           "DPSynError", "DataError", "SchemaError", "PrivacyParameterError",
           "BudgetExceededError", "BackendError"]

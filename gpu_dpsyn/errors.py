"""Errors that name the problem in the user's terms."""


class DPSynError(ValueError):
    """Base class: bad input, bad schema, bad parameters."""


class SchemaError(DPSynError):
    """The schema file or object is malformed."""


class DataError(DPSynError):
    """The data does not match the schema (columns, values, NaN, empty)."""


class PrivacyParameterError(DPSynError):
    """epsilon / delta / sensitivity out of range."""


class BudgetExceededError(DPSynError):
    """A measurement would spend more privacy budget than is left."""


class BackendError(DPSynError):
    """The requested backend is not available on this machine."""


class SamplerError(DPSynError):
    """A noise sampler could not finish; nothing was released (fail closed)."""


class ClusterError(DPSynError):
    """The Dask cluster failed or gave no result in time."""


class ParameterError(DPSynError):
    """A tuning parameter (iterations, alpha, max_cells, ...) is out of range."""


class SeededNoiseWarning(UserWarning):
    """Measurement noise was derived from a user seed: fine for tests, never for two
    published releases."""


class NonPrivateSchemaWarning(UserWarning):
    """The schema holds values read off the private data itself (infer-schema's draft):
    not differentially private until they are replaced with public facts."""


class LargeDomainWarning(UserWarning):
    """A pair of columns has more cells than max_cells: PrivSyn cannot measure it, so the
    two columns' joint distribution is not modelled (from the schema alone: public)."""


class RowCountWarning(UserWarning):
    """The DP estimate of the row count is dominated by the privacy noise, or was clamped
    to [1, the schema's public "max_rows"]."""


class LargeDeltaWarning(UserWarning):
    """delta is large enough that the guarantee may simply fail for an individual with
    that probability: it should be well below 1/n for n individuals."""

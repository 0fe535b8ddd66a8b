"""Tables in and out: the schema, its inference from data, encoding to integer codes,
output dtypes and reading/writing files."""

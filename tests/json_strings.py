"""Every string of a JSON value, for the tests that look for paths in records."""


def strings(x):
    """Every string in a JSON value, keys included."""
    if isinstance(x, dict):
        return [s for k, v in x.items() for s in [k] + strings(v)]
    if isinstance(x, list):
        return [s for v in x for s in strings(v)]
    return [x] if isinstance(x, str) else []

"""No-op stand-in for wandb (Weights & Biases), which Debian does not package.
Vidur only calls it when a wandb project/group is configured (we configure none), so
`run` stays None and every `if wandb.run:` branch is skipped, as with the real package
when wandb is not initialised."""
run = None


def init(*args, **kwargs):
    raise RuntimeError("wandb stub: logging to wandb is not available here")


def log(*args, **kwargs):
    pass


class Table:
    def __init__(self, *args, **kwargs):
        pass


class _Plot:
    def __getattr__(self, name):
        def _f(*args, **kwargs):
            return None
        return _f


plot = _Plot()

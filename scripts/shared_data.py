"""The project's full data collection (../shared/data beside the checkout), which the validation
scripts compare against. The data the shipped configs read is in the repository's data/
(docs/data.md); these scripts need more of the collection than that, and stop with this message
where it is missing."""
import os
import sys


def require(path, script):
    """Exit with a clear message unless `path` (the --data folder) exists."""
    if not os.path.isdir(path):
        sys.exit(f"{os.path.basename(script)}: {os.path.abspath(path)} is missing. This script "
                 "validates against the project's full data collection (../shared/data beside "
                 "the checkout, or give --data); a clone has only data/, what the shipped configs "
                 "read (docs/data.md).")

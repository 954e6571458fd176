"""plotly_express is a legacy alias package that re-exports plotly.express (from Debian's
python3-plotly); this shim does the same."""
from plotly.express import *  # noqa: F401,F403

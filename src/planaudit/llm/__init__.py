"""The one door to every model: litellm calls, cache, retries, token and cost accounting.

litellm fetches its price map from the network at import unless told to use the copy
it ships, so a model without configured prices would be priced by whatever the network
returned that day (and a machine without network waits on retries). Prices come from
the config or from the installed, pinned litellm's bundled map, never from the network:
the variable is set here, over any value it had, and every import of litellm in
planaudit is in a module that imports this package first. Each call records which of
the two priced it (`Call.price_source`, a row's `price_source`).
"""

import os

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

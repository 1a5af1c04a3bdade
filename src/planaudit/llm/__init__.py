"""The one door to every model: litellm calls, cache, retries, token and cost accounting.

litellm fetches its price map from the network at import unless told to use the
local copy; nothing in planaudit may touch the network implicitly, so the
variable is set before litellm is ever imported.
"""

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

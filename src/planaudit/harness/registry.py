"""What `[project.entry-points.inspect_ai] planaudit` loads: the tasks and the reference
model provider, each registered by its decorator on import."""

from planaudit.harness.acpbench import acpbench
from planaudit.harness.curriculum import curriculum
from planaudit.harness.offline import offline
from planaudit.harness.online import online
from planaudit.harness.reference import ReferenceAPI

__all__ = ["ReferenceAPI", "acpbench", "curriculum", "offline", "online"]
